"""Gather and scatter along one dimension: ``x.gather(dim, index)``,
``x.scatter(dim, index, src)``, ``x.scatter_add(dim, index, src)``.

``index`` has as many dimensions as ``x``; each of its elements names a
position along ``dim``, the other coordinates being its own.  For a 2-d
``index`` and ``dim = 1``::

    gather:       out[i][j] = x[i][index[i][j]]
    scatter:      out[i][index[i][j]] = src[i][j]      (the rest of out is x)
    scatter_add:  out[i][index[i][j]] += src[i][j]

So gather and scatter_add are each other's transpose, which is all their
backward formulas say: the gradient of a gather adds ``g`` back at the
positions it read (a scatter_add into zeros), the gradient of a scatter_add's
``src`` gathers ``g`` from the positions it wrote.  A scatter *overwrites*:
the old values at the written positions get no gradient (``g`` with zeros
scattered in), and each ``src`` element gets the ``g`` of the place it was
written to.  ``max(dim)``, ``median(dim)`` and ``sort`` send their gradient
back the same way -- a scatter into zeros (PyTorch's
``value_selecting_reduction_backward``).

``index`` may be smaller than ``x`` (and than ``src``) in every dimension but
``dim``; only the block it covers is read or written.
"""
from __future__ import annotations

import builtins

from .. import backend
from ..tensor import Tensor
from ._rules import record, rule
from .formula_env import _is_tensor, _raw
from .dims import wrap_dim


def _open_grid(index, dim, like):
    """The key that reads ``a[..., index[i, j, ...], ...]`` with ``index``
    along ``dim`` and each other dimension's own coordinate (an open grid), on
    the device of the array ``like`` it will index (an index may live on the CPU)."""
    index = backend.move_like(index, like)
    xp = backend.xp_of(index)
    n = index.ndim
    key = [xp.arange(s).reshape([-1 if i == k else 1 for i in range(n)])
           for k, s in enumerate(index.shape)]
    key[dim] = index
    return tuple(key)


def _block(a, shape):
    """The leading block of ``a`` of the given shape (what an index covers)."""
    return a[tuple(slice(0, s) for s in shape)]


def _index_array(op, index):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    idx = _raw(index)
    if idx.dtype not in (backend.int64.np, backend.int32.np):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    return idx


def _sizes(a):
    return list(a.shape) if a.ndim else [1]


def _checked(op, x, dim, index, src=None):
    """(dim, index array, x array, src array or None), each 0-d array as 1-d,
    after PyTorch's checks and in its words: dimensions, sizes, bounds."""
    idx = _index_array(op, index)
    a = x._data
    d = wrap_dim(dim, x.ndim)
    whose = "input" if op == "gather" else "self"
    if builtins.max(idx.ndim, 1) != builtins.max(a.ndim, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {whose} "
                           "tensor")
    a1, i1 = a.reshape(_sizes(a)), idx.reshape(_sizes(idx))
    s1 = None
    if src is not None:
        s = src._data
        if s.ndim:
            wrap_dim(dim, s.ndim)  # (dim must name a dimension of src too)
        if builtins.max(s.ndim, 1) != i1.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        s1 = s.reshape(_sizes(s))
    too_big = any(i1.shape[k] > a1.shape[k] for k in range(i1.ndim) if k != d) or (
        s1 is not None and any(i1.shape[k] > s1.shape[k] for k in range(i1.ndim)))
    if too_big:
        if op == "gather":
            k = next(k for k in range(i1.ndim) if k != d and i1.shape[k] > a1.shape[k])
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self {list(a.shape)} "
                               f"apart from dimension {d}")
        tail = "" if s1 is None else \
            f" and to be no larger size than src {list(src._data.shape)}"
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                           f"{list(a.shape)} apart from dimension {d}{tail}")
    if i1.size:
        host = backend.to_host(i1)
        bad = host[(host < 0) | (host >= a1.shape[d])]
        if bad.size:
            raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for "
                               f"dimension {d} with size {a1.shape[d]}")
    return d, i1, a1, s1


def gather(x, dim, index, *, sparse_grad=False):
    """``out[..., j, ...] = x[..., index[..., j, ...], ...]`` along ``dim``
    (GatherBackward0: its gradient adds ``g`` back where each value was read)."""
    if sparse_grad:
        raise NotImplementedError("gather(sparse_grad=True): autograd_kit has no sparse "
                                  "tensors; use sparse_grad=False")
    d, idx, a, _ = _checked("gather", x, dim, index)
    out = a[_open_grid(idx, d, a)].reshape(index._data.shape)
    return record(GatherBackward0, out, (x,), dim=d, index=index, self=x, sparse_grad=False)


def scatter(x, dim, index, src=None, value=None, *, reduce=None):
    """``x`` with ``src[..., j, ...]`` (or the number ``value``) written at
    ``index[..., j, ...]`` along ``dim`` (ScatterBackward0 for a tensor src,
    ScatterBackward1 for a number)."""
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) has no backward; use scatter_add, "
                                  "or scatter without reduce")
    if src is None:
        src, value = value, None
    if src is None:
        raise TypeError("scatter() missing 1 required argument: 'src' or 'value'")
    if isinstance(src, Tensor):
        return _scatter_tensor(ScatterBackward0, x, dim, index, src, "scatter")
    from .shape import fill_value
    d, idx, a, _ = _checked("scatter", x, dim, index)
    out = a.copy()
    out[_open_grid(idx, d, out)] = fill_value(src, a.dtype)
    return record(ScatterBackward1, out.reshape(x._data.shape), (x,), dim=d, index=index)


def scatter_add(x, dim, index, src):
    """``x`` with ``src[..., j, ...]`` added at ``index[..., j, ...]`` along
    ``dim``; values sent to one place add up (ScatterAddBackward0)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    return _scatter_tensor(ScatterAddBackward0, x, dim, index, src, "scatter_add")


def _scatter_tensor(node, x, dim, index, src, op):
    if src._data.dtype != x._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d, idx, a, s = _checked(op, x, dim, index, src)
    out = a.copy()
    if not backend.same_device(out, s):
        from .. import errors
        raise errors.DeviceMismatchError(x.device, src.device)
    key, part = _open_grid(idx, d, out), _block(s, idx.shape)
    if node is ScatterAddBackward0:
        backend.xp_of(out).add.at(out, key, part)
    else:
        out[key] = part
    return record(node, out.reshape(x._data.shape), (x, src), dim=d, index=index)


# ------------------------------------------------- words of the formulas ---
def _grid(index, dim, like):
    """The open grid of a saved index (a Tensor or, in a plain backward, an array)."""
    idx = _raw(index)
    return _open_grid(idx.reshape(_sizes(idx)), dim, like)


def _into_zeros(g, sizes, dim, index, adding):
    """Zeros of ``sizes`` (an array) with g written, or added, at ``index``."""
    out = backend.xp_of(g).zeros(tuple(sizes) or (1,), dtype=g.dtype)
    key, part = _grid(index, dim, out), g.reshape(_sizes(g))
    if adding:
        backend.xp_of(out).add.at(out, key, part)
    else:
        out[key] = part
    return out.reshape(tuple(sizes))


def gather_along(g, dim, index):
    """``g.gather(dim, index)``: the gradient of each element that was written
    at (scatter) or added at (scatter_add) those positions."""
    if _is_tensor(g):
        return gather(g, dim, index)
    return g.reshape(_sizes(g))[_grid(index, dim, g)].reshape(_raw(index).shape)


def scatter_zeros(g, dim, index):
    """``g.scatter(dim, index, 0)``: g with the overwritten positions zeroed."""
    if _is_tensor(g):
        return scatter(g, dim, index, 0)
    out = g.reshape(_sizes(g)).copy()
    out[_grid(index, dim, out)] = 0
    return out.reshape(g.shape)


def gather_backward(g, self, dim, index):
    """A gather's gradient: ``g`` added, into zeros of the input's shape, at
    the positions each value was read from (PyTorch: ``zeros.scatter_add``)."""
    sizes = tuple(self.shape)
    if _is_tensor(g):
        from .creation import zeros
        return scatter_add(zeros(sizes, dtype=g.dtype, device=g.device), dim, index, g)
    return _into_zeros(g, sizes, dim, index, adding=True)


def scatter_into_zeros(g, sizes, dim, index):
    """Zeros of ``sizes`` with ``g`` written at ``index`` along ``dim``: how
    max(dim), median(dim) and sort send each gradient back to the element it
    came from (PyTorch's ``zeros.scatter(dim, indices, g)``, ScatterBackward0)."""
    if _is_tensor(g):
        from .creation import zeros
        return scatter(zeros(sizes, dtype=g.dtype, device=g.device), dim, index, g)
    return _into_zeros(g, sizes, dim, index, adding=False)


# Backward formulas: g is the gradient of the output; one formula per input.
GatherBackward0 = rule("GatherBackward0", "dim index self sparse_grad",
                       self="gather_backward(g, self, dim, index)")
ScatterBackward0 = rule("ScatterBackward0", "dim index",
                        self="scatter_zeros(g, dim, index)", src="gather_along(g, dim, index)")
ScatterBackward1 = rule("ScatterBackward1", "dim index", self="scatter_zeros(g, dim, index)")
ScatterAddBackward0 = rule("ScatterAddBackward0", "dim index",
                           self="g", src="gather_along(g, dim, index)")
