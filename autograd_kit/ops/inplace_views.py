"""In-place view changes: ``x.t_()``, ``x.transpose_(0, 1)``, ``x.squeeze_()``,
``x.unsqueeze_(0)``.

The tensor itself becomes the view: the same memory seen with another shape.
Each ``_..._array`` function gives the new array, what its node saves, and how
to take the same view of any array (which a view of ``x`` needs to be
refreshed); :func:`_inplace_view` turns one into a Tensor method.  The methods
are attached to Tensor through ``INPLACE_VIEWS`` (see ``module_forms.py``).
"""
from __future__ import annotations

from .. import backend
from ..grad_mode import is_grad_enabled
from ._rules import record, rule
from .dims import wrap_dim


def _t_array(a):
    if a.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a.T, {}, lambda b: b.T


def _transpose_array(a, dim0, dim1):
    d0, d1 = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
    fn = (lambda b: b.swapaxes(d0, d1)) if a.ndim > 1 else (lambda b: b)
    return fn(a), {"dim0": d0, "dim1": d1}, fn


def _squeeze_array(a, dim=None):
    if dim is None:
        shape = tuple(s for s in a.shape if s != 1)
        return a.reshape(shape), {"self_sym_sizes": a.shape}, lambda b: b.reshape(shape)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(wrap_dim(d, a.ndim) for d in dims)
    shape = tuple(s for i, s in enumerate(a.shape) if not (i in dims and s == 1))
    return a.reshape(shape), {"dim": dims, "self_sym_sizes": a.shape}, \
        lambda b: b.reshape(shape)


def _unsqueeze_array(a, dim):
    d = wrap_dim(dim, a.ndim + 1)
    xp = backend.xp_of(a)
    return xp.expand_dims(a, d), {"dim": d}, lambda b: xp.expand_dims(b, d)


def _inplace_view(make, node):
    """``x.t_()``, ``x.unsqueeze_(0)``...: x itself becomes the view (the same
    memory seen with another shape).  Checked as any in-place op (a leaf that
    requires grad is refused); the version counter moves on, and x's history
    gets the view's node (TBackward1, UnsqueezeBackward1...)."""
    def method(self, *args, **kwargs):
        from .. import errors
        from .inplace_check import _check
        try:
            _check(self)
            new, saved, view_fn = make(self._data, *args, **kwargs)
        except Exception as err:
            raise errors.short(err)
        if is_grad_enabled() and self.requires_grad:
            cls = node or (SqueezeBackward4 if "dim" in saved else SqueezeBackward3)
            self._grad_fn = record(cls, new, (self,), **saved)._grad_fn
        self._data = new
        self._vc.value += 1
        if self._base is not None:
            prev = self._view[0]
            self._view = (lambda a, prev=prev, fn=view_fn: fn(prev(a)), self._vc.value)
        return self
    return method


# Backward formulas: g is the gradient of the output; one formula per input.
# the in-place forms t_(), transpose_(), squeeze_(), unsqueeze_() (PyTorch's names)
TBackward1 = rule("TBackward1", "", self="t(g)")
TransposeBackward1 = rule("TransposeBackward1", "dim0 dim1", self="transpose(g, dim0, dim1)")
SqueezeBackward3 = rule("SqueezeBackward3", "self_sym_sizes",
                        self="unsqueeze_to(g, self_sym_sizes)")
SqueezeBackward4 = rule("SqueezeBackward4", "dim self_sym_sizes",
                        self="unsqueeze_to(g, self_sym_sizes, dim)")
UnsqueezeBackward1 = rule("UnsqueezeBackward1", "dim", self="squeeze(g, dim)")
INPLACE_VIEWS = {
    "t_": _inplace_view(_t_array, TBackward1),
    "transpose_": _inplace_view(_transpose_array, TransposeBackward1),
    "swapdims_": _inplace_view(_transpose_array, TransposeBackward1),
    "swapaxes_": _inplace_view(_transpose_array, TransposeBackward1),
    "squeeze_": _inplace_view(_squeeze_array, None),
    "unsqueeze_": _inplace_view(_unsqueeze_array, UnsqueezeBackward1),
}
