"""Elements by mask: ``x.masked_select(mask)`` and ``x.masked_scatter(mask,
source)``.

``masked_select`` lists, in order, the elements of ``x`` where ``mask`` is
True (x and mask broadcast together); ``masked_scatter`` writes the first
elements of ``source``, in order, into those places.  Each is the other's
transpose:

    masked_select, for x:        zeros.masked_scatter(mask, g)
    masked_scatter, for x:       g with 0 where mask (those places were overwritten)
    masked_scatter, for source:  g.masked_select(mask), padded with zeros to the
                                 source's shape (its elements past the count of
                                 Trues were never used): PyTorch's kernel
                                 ``masked_scatter_backward``, recorded as one node
"""
from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor, scalar_type_name
from ._rules import check_broadcast, record, rule
from ._warn import warn
from .formula_env import ENV, _is_tensor, _raw


def _bool_mask(op, mask):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask._data.dtype != backend.bool.np:
        if op == "masked_scatter" and mask._data.dtype == backend.uint8.np:
            warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is now "
                 "deprecated,please use a mask with dtype torch.bool instead.")
        if op == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {scalar_type_name(mask._data.dtype)}")
    return mask._data


def _saved_mask(mask, like):
    """The mask to keep: itself, or (a CPU mask of a GPU tensor) a copy on that
    device, for the formulas."""
    m = mask._data
    return mask if backend.same_device(m, like) else Tensor._make(backend.move_like(m, like))


def _together(a, m):
    """x and mask broadcast against each other (PyTorch's words if they can't)."""
    check_broadcast(m, a)  # (PyTorch names the mask "tensor a")
    shape = tuple(backend.broadcast_shapes(a.shape, m.shape))
    xp = backend.xp_of(a)
    return xp.broadcast_to(a, shape), xp.broadcast_to(backend.move_like(m, a), shape)


def masked_select(x, mask):
    """The elements of x where mask is True, as a 1-d tensor (MaskedSelectBackward0)."""
    m = _bool_mask("masked_select", mask)
    a, mb = _together(x._data, m)
    return record(MaskedSelectBackward0, a[mb], (x,), mask=_saved_mask(mask, a), self=x)


def masked_scatter(x, mask, source):
    """x with source's first elements written, in order, where mask is True
    (MaskedScatterBackward0)."""
    if not isinstance(source, Tensor):
        raise TypeError(f"masked_scatter(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    a, s = x._data, source._data
    if s.dtype != a.dtype:  # (PyTorch's order: the dtypes, the shapes, then the mask's kind)
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{scalar_type_name(a.dtype)} and {scalar_type_name(s.dtype)}")
    if isinstance(mask, Tensor):
        check_broadcast(mask._data, a)
    m = _bool_mask("masked_scatter", mask)
    ab, mb = _together(a, m)
    count = int(mb.sum())
    if s.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = ab.copy()
    out[mb] = s.reshape(-1)[:count]
    return record(MaskedScatterBackward0, out, (x, source), mask=_saved_mask(mask, a),
                  source_sym_sizes=s.shape)


# ------------------------------------------------- words of the formulas ---
def _mask_over(mask, a):
    """The (saved) mask as a bool array broadcast over array ``a``, on its device."""
    return backend.xp_of(a).broadcast_to(backend.move_like(_raw(mask), a), a.shape)


def _mask_tensor(mask):
    return mask if _is_tensor(mask) else Tensor._make(mask)


def masked_scatter_into_zeros(g, mask, shape):
    """Zeros of ``shape`` with g's first elements written, in order, where mask
    (broadcast to ``shape``) is True: a masked_scatter into zeros (on Tensors
    recorded, MaskedScatterBackward0).  The backward of masked_select, and the
    backward kernel's gradient for its g."""
    shape = tuple(shape)
    if _is_tensor(g):
        from .creation import zeros
        return masked_scatter(zeros(shape, dtype=g.dtype, device=g.device), _mask_tensor(mask), g)
    out = backend.xp_of(g).zeros(shape, dtype=g.dtype)
    where = _mask_over(mask, out)
    out[where] = g.reshape(-1)[:int(where.sum())]
    return out


def masked_select_backward(g, self, mask):
    """masked_select's gradient: g back where mask is True, zeros elsewhere (of
    x and mask's common shape)."""
    return masked_scatter_into_zeros(
        g, mask, backend.broadcast_shapes(tuple(self.shape), tuple(mask.shape)))


def masked_scatter_backward(g, mask, sizes):
    """The gradient of the source: g where mask is True, in order, padded with
    zeros to the source's ``sizes`` (on Tensors the recorded kernel)."""
    ga = _raw(g)
    xp = backend.xp_of(ga)
    picked = ga[_mask_over(mask, ga)]
    flat = xp.zeros(math.prod(sizes), dtype=ga.dtype)
    flat[:picked.size] = picked
    out = flat.reshape(tuple(sizes))
    if _is_tensor(g):
        return record(MaskedScatterBackwardBackward0, out, (g,), mask=mask, _sizes=ga.shape)
    return out


def masked_select_of(g, mask):
    """g's elements where mask is True (MaskedSelectBackward0 on Tensors): what a
    masked fill's value receives, summed."""
    if _is_tensor(g):
        return masked_select(g, _mask_tensor(mask))
    return g[_mask_over(mask, g)]


ENV.update({"masked_select_of": masked_select_of,
            "masked_select_backward": masked_select_backward,
            "masked_scatter_backward": masked_scatter_backward,
            "masked_scatter_into_zeros": masked_scatter_into_zeros})

# Backward formulas: g is the gradient of the output; one formula per input.
MaskedSelectBackward0 = rule("MaskedSelectBackward0", "mask self",
                             self="masked_select_backward(g, self, mask)")
MaskedScatterBackward0 = rule("MaskedScatterBackward0", "mask source_sym_sizes",
                              self="masked_fill(g, mask, 0)",
                              source="masked_scatter_backward(g, mask, source_sym_sizes)")
MaskedScatterBackwardBackward0 = rule("MaskedScatterBackwardBackward0", "mask _sizes",
                                      grad_output="masked_scatter_into_zeros(g, mask, _sizes)")
