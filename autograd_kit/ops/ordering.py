"""Ordering: ``sort``, ``argsort``, ``median``.

They choose or reorder elements, so the gradient goes back to the element
each output came from, unchanged: ``sort`` sends each sorted value's gradient
back to its original place (the inverse permutation), ``median(dim)`` sends it
to the element its index names.  ``median()`` of everything shares it equally
among the elements equal to the median, as PyTorch does.

The median of an even count is the *lower* of the two middle values (no
averaging), so it is always an element of the tensor.  Among equal values, the
index chosen is the one a stable sort puts in the middle; PyTorch does not
specify its choice there.  A NaN anywhere makes the median NaN (at the first NaN).
"""
from __future__ import annotations

from collections import namedtuple

from .. import backend
from ..tensor import Tensor
from ._rules import RESULT, record, rule
from .dims import wrap_dim



def _return_type(name: str) -> type:
    """A (values, indices) named tuple printed as PyTorch prints its return types."""
    class ReturnType(namedtuple(name, ["values", "indices"])):
        __slots__ = ()

        def __repr__(self) -> str:
            return (f"torch.return_types.{name}(\nvalues={self.values!r},\n"
                    f"indices={self.indices!r})")
    ReturnType.__name__ = ReturnType.__qualname__ = name
    return ReturnType


sort_result, median_result = _return_type("sort"), _return_type("median")


def _stable_order(a, dim, descending):
    """Indices that sort ``a`` along ``dim`` (NaN last ascending, first descending,
    as in PyTorch); equal values keep their order."""
    xp = backend.xp_of(a)
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable")
    if a.dtype.kind in "bu":  # (-a of an unsigned type wraps around)
        a = a.astype(backend.int64.np)
    # descending and stable: sort the negated values (NaN stays NaN: put it first)
    key = xp.where(xp.isnan(a), -xp.inf, -a) if a.dtype.kind in "fc" else -a
    order = xp.argsort(key, axis=dim, kind="stable")
    if a.dtype.kind in "fc":  # -inf keys of NaN and of +inf: NaN must come first
        nan_first = xp.argsort(~xp.isnan(xp.take_along_axis(a, order, dim)), axis=dim,
                               kind="stable")
        order = xp.take_along_axis(order, nan_first, dim)
    return order


def sort(x, dim=-1, descending=False, stable=False):
    """(values, indices): the elements along ``dim`` in order (``SortBackward0``)."""
    a = x._data
    d = wrap_dim(dim, a.ndim) if a.ndim else 0
    if a.ndim == 0:
        return sort_result(record(SortBackward0, a.copy(), (x,), dim=0,
                                  indices=Tensor._make(backend.xp_of(a).zeros((), "int64")),
                                  self_sym_sizes=a.shape),
                           Tensor._make(backend.xp_of(a).zeros((), "int64")))
    order = _stable_order(a, d, descending)
    indices = Tensor._make(order.astype(backend.int64.np))
    values = backend.xp_of(a).take_along_axis(a, order, d)
    return sort_result(record(SortBackward0, values, (x,), dim=d, indices=indices,
                              self_sym_sizes=a.shape), indices)


def argsort(x, dim=-1, descending=False, stable=False):
    """The indices that would sort ``x`` along ``dim`` (no gradient: they are integers)."""
    a = x._data
    if a.ndim == 0:
        return Tensor._make(backend.xp_of(a).zeros((), backend.int64.np))
    order = _stable_order(a, wrap_dim(dim, a.ndim), descending)
    return Tensor._make(order.astype(backend.int64.np))


def median(x, dim=None, keepdim=False):
    """``median()``: the lower middle value of all elements (``MedianBackward0``);
    ``median(dim)``: (values, indices) along ``dim`` (``MedianBackward1``)."""
    a = x._data
    xp = backend.xp_of(a)
    if dim is None:
        flat = a.reshape(-1)
        if flat.size == 0:  # NaN, cast to the dtype: an integer's lowest value, True...
            return record(MedianBackward0, _nan_as(a.dtype, xp), (x,), self=x, result=RESULT)
        if a.dtype.kind == "b":
            raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        values, _ = _median_along(flat, 0)
        return record(MedianBackward0, values, (x,), self=x, result=RESULT)
    d = wrap_dim(dim, a.ndim) if a.ndim else wrap_dim(dim, 0) * 0
    if a.ndim and a.shape[d] == 0:  # (checked before the dtype, as in PyTorch)
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    if a.dtype.kind == "b":
        raise NotImplementedError("\"median_out\" not implemented for 'Bool'")
    if a.ndim == 0:
        values, idx = a.copy(), xp.zeros((), backend.int64.np)
    else:
        if a.shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        values, idx = _median_along(a, d)
        if keepdim:
            values, idx = xp.expand_dims(values, d), xp.expand_dims(idx, d)
    indices = Tensor._make(idx)
    values = record(MedianBackward1, values, (x,), dim=d, indices=indices, keepdim=keepdim,
                    self_sym_sizes=a.shape)
    return median_result(values, indices)


def _nan_as(dtype, xp):
    """NaN cast to ``dtype`` as PyTorch's kernel casts it (0-d): NaN for floats,
    the lowest value of int32 and int64, 0 for the smaller integers, True for bool."""
    if dtype.kind in "fc":
        return xp.asarray(xp.nan, dtype=dtype)
    if dtype.kind == "b":
        return xp.asarray(True)
    if dtype.itemsize < 4:
        return xp.zeros((), dtype=dtype)
    return xp.asarray(backend.np.iinfo(dtype).min, dtype=dtype)


def _median_along(a, d):
    """The lower median along axis d and its index (NaN, at the first NaN, wins)."""
    xp = backend.xp_of(a)
    order = xp.argsort(a, axis=d, kind="stable")
    middle = xp.take(order, [(a.shape[d] - 1) // 2], axis=d)
    if a.dtype.kind in "fc":
        nan = xp.isnan(a)
        first_nan = xp.expand_dims(nan.argmax(axis=d), d)
        middle = xp.where(xp.expand_dims(nan.any(axis=d), d), first_nan, middle)
    values = xp.take_along_axis(a, middle, d).squeeze(d)
    return values, middle.squeeze(d).astype(backend.int64.np)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False,  # noqa: A002
                 side=None, sorter=None):
    """Where each value of ``input`` would go in ``sorted_sequence`` (sorted along its
    last dimension) to keep it sorted: the index of the first element >= the
    value (> with ``right=True`` or ``side="right"``).  A sequence of several
    dimensions is searched row by row, its leading dims matching input's."""
    seq = sorted_sequence._data
    xp = backend.xp_of(seq)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    if isinstance(input, Tensor):
        values = input._data
    else:
        if seq.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                               "boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({seq.ndim}) and input value's dim(0) numel(1)")
        values = xp.asarray(input)
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, -1)
    if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {list(seq.shape)} "
                           f"and input value tensor {list(values.shape)}")
    how = "right" if right else "left"
    dt = backend.promote(seq, values)
    seq, values = seq.astype(dt, copy=False), values.astype(dt, copy=False)
    if seq.ndim <= 1:
        out = xp.searchsorted(seq.reshape(-1), values, side=how)
    else:
        rows, vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        out = xp.stack([xp.searchsorted(r, v, side=how) for r, v in zip(rows, vals)]) \
            .reshape(values.shape) if rows.shape[0] else xp.zeros(values.shape, "int64")
    out = xp.asarray(out).astype(backend.int32.np if out_int32 else backend.int64.np)
    return Tensor._make(out)


# Backward formulas: g is the gradient of the output; one formula per input.
SortBackward0 = rule("SortBackward0", "dim indices self_sym_sizes",
                     self="place_at(g, indices, dim, True, self_sym_sizes)")
MedianBackward0 = rule("MedianBackward0", "self result",
                       self="evenly_distribute(g, self, result)")
MedianBackward1 = rule("MedianBackward1", "dim indices keepdim self_sym_sizes",
                       self="place_at(g, indices, dim, keepdim, self_sym_sizes)")
