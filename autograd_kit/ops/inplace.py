"""In-place operations: ``x.add_(1)``, ``x += 1``, ``x[0] = y``, ``x.zero_()``...

An in-place op overwrites memory other parts of the graph may depend on, so:

1. **Check first, then change.**  A leaf that requires grad (or a view of one)
   may not be modified while grad mode is on: its ``.grad`` would describe a
   value that no longer exists.  Shape and dtype are checked too.  A failed
   operation leaves the tensor, its version and its graph as they were.
2. **Compute out of place, then write back.**  The new value is computed by the
   ordinary op on an alias holding the *old* value, so the node it records
   keeps what it needs; the result is then copied into the tensor's memory.
3. **Bump the version counter.**  Every saved tensor that shares this memory
   now knows it is stale; backward through it raises PyTorch's
   "modified by an inplace operation" error.
4. **Rebase the graph.**  The tensor's ``grad_fn`` becomes the new node.  For a
   view, its base gets a ``CopySlices`` node: the base's gradient passes
   through unchanged outside the view, and through the op inside it.
"""
from __future__ import annotations

from .. import backend, errors
from ..graph import Node, edge
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor
from ._rules import as_tensor_pair, record, rule


def _check(t) -> None:
    if not is_grad_enabled():
        return
    if t._rg and t.grad_fn is None:
        raise errors.LeafInplaceError(t)
    base = t._base
    if base is not None and base[0]._rg and base[0].grad_fn is None:
        raise errors.LeafInplaceError(t, view=True)


def inplace(t, compute, *args):
    """Run ``compute(old_value, *args)`` and store the result into ``t``."""
    _check(t)
    recording = is_grad_enabled() and (t._rg or any(
        isinstance(a, Tensor) and a._rg for a in args))
    if recording:
        old = Tensor._make(t._data.copy(), t._rg, t.grad_fn)
        new = compute(old, *args)
    else:
        with no_grad():
            new = compute(t, *args)
    nd, td = new._data, t._data
    if nd.shape != td.shape:
        raise RuntimeError(errors.INPLACE_SHAPE.format(out=list(td.shape), bshape=list(nd.shape)))
    if nd.dtype != td.dtype and not _castable(nd.dtype, td.dtype):
        raise RuntimeError(errors.INPLACE_CAST.format(src=_cap(nd.dtype), dst=_cap(td.dtype)))
    # -- commit: nothing below can fail --------------------------------------
    td[...] = nd
    t._vc.value += 1
    if recording and new.grad_fn is not None:
        if t._base is None:
            t.grad_fn, t._rg = new.grad_fn, True
        else:
            _rebase_view(t, new.grad_fn)
    return t


def _castable(src, dst) -> bool:
    order = "biufc"
    return order.index(src.kind if src.kind != "u" else "i") <= order.index(
        dst.kind if dst.kind != "u" else "i")


def _cap(np_dt) -> str:
    return {"f": "Float", "i": "Long", "b": "Bool", "c": "ComplexFloat", "u": "Byte"}[
        np_dt.kind] if np_dt.itemsize != 8 or np_dt.kind != "f" else "Double"


def _rebase_view(view, fn_node) -> None:
    base, view_fn = view._base
    cs = CopySlices(edge(base), view_fn, fn_node, base._data.shape)
    base.grad_fn, base._rg = cs, True
    alias = AsStridedBackward0.__new__(AsStridedBackward0)
    Node.__init__(alias, ((cs, 0),))
    alias._saved = {"view_fn": view_fn, "size": base._data.shape}
    view.grad_fn, view._rg = alias, True


class CopySlices(Node):
    """The base of a view that was modified in place.

    Outside the view the base's gradient flows on unchanged (to the base's old
    history); inside the view it goes through the in-place op's own node
    (``fn``), whose first input is the view's old value."""

    __slots__ = ("view_fn", "fn", "size")

    def __init__(self, base_edge, view_fn, fn, size):
        super().__init__((base_edge,) + fn.next_functions[1:])
        self.view_fn, self.fn, self.size = view_fn, fn, size

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, g):
        from .shape import gather_view, scatter_view
        inside = gather_view(g, self.view_fn)            # the gradient of the new view
        grads = self.fn.apply(inside)                     # through the in-place op
        base = g - scatter_view(inside, self.size, self.view_fn)  # outside the view: as is
        if grads[0] is not None:                          # inside: the old view's share
            base = base + scatter_view(grads[0], self.size, self.view_fn)
        return (base,) + tuple(grads[1:])

    def release_saved(self):
        return self.fn.release_saved()

    def snapshot_saved(self):
        return self.fn.snapshot_saved()

    def restore_saved(self, snapshot):
        self.fn.restore_saved(snapshot)

    def saved_names(self):
        return self.fn.saved_names()


class AsStridedBackward0(Node):
    """The grad_fn a view gets after an in-place change: it is now a window onto
    its (rebased) base, so its gradient is placed into a zero base-shaped tensor."""

    __slots__ = ()

    def apply(self, g):
        from .shape import scatter_view
        return (scatter_view(g, self._saved["size"], self._saved["view_fn"]),)


# ------------------------------------------------------ the in-place ops ---
def copy(old, src):
    """Out-of-place ``copy_``: src broadcast to old's shape and cast to its dtype."""
    if not isinstance(src, Tensor):
        src = Tensor._make(backend.scalar_array(src, old._data))
    xp = backend.xp_of(old._data)
    data = src._data if backend.device_of(src._data) == backend.device_of(old._data) else \
        backend.move(src._data, backend.device_of(old._data))
    out = xp.broadcast_to(data, old._data.shape).astype(old._data.dtype, copy=True)
    return record(CopyBackwards, out, (old, src))


def fill(old, value):
    """Out-of-place ``fill_``: every element becomes ``value`` (a number or a 0-d
    tensor, which then receives the sum of the gradient)."""
    full = backend.xp_of(old._data).full_like
    if isinstance(value, Tensor):
        return record(FillBackward1, full(old._data, value.item()), (old, value))
    return record(FillBackward0, full(old._data, value), (old,))


def setitem(t, key, value):
    """``t[key] = value``: a copy into a view for basic keys (CopySlices), an
    index_put for integer-array or mask keys (IndexPutBackward0)."""
    from .shape import _as_index, _is_basic, getitem, index_put
    k = key if isinstance(key, tuple) else (key,)
    k = tuple(_as_index(i) for i in k)
    if all(_is_basic(i) for i in k):
        view = getitem(t, k)
        if view is t or view._base is None:
            return inplace(t, copy, value)
        inplace(view, copy, value)
        return t
    _check(t)
    return inplace(t, lambda old, v: index_put(old, k, v), value)


CopyBackwards = rule("CopyBackwards", "", self="zeros_like(g)", src="g")
FillBackward0 = rule("FillBackward0", "", self="zeros_like(g)")
FillBackward1 = rule("FillBackward1", "", self="zeros_like(g)", value="g.sum()")


def make_inplace(fn):
    """``x.op_(...)`` from the out-of-place ``op(x, ...)``."""
    def method(self, *args, **kwargs):
        return inplace(self, lambda old, *a: fn(old, *a, **kwargs), *args)
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of ``{fn.__name__}``: changes this tensor's memory."
    return method


def random_fill(t, sample):
    """``uniform_``/``normal_``: overwrite with random numbers (no gradient)."""
    _check(t)
    t._data[...] = sample(t._data.shape).astype(t._data.dtype, copy=False)
    t._vc.value += 1
    return t


__all__ = ["inplace", "copy", "fill", "setitem", "make_inplace", "random_fill",
           "CopySlices", "as_tensor_pair"]
