"""The names a backward formula may use, besides Tensor methods.

Formulas in the rule tables are strings such as ``"g * result * (1 - result)"``;
they are compiled with this dictionary as their globals.  Helpers here are
small and written with Tensor operations (so double backward works); masks
that only *select* elements are built as constants.
"""
from __future__ import annotations

import builtins

from .. import backend
from ..tensor import Tensor

ENV: dict = {"__builtins__": builtins}


def _const(array) -> Tensor:
    return Tensor._make(array)


def pow_backward(g, self, exponent):
    """d/dx x^n = n x^(n-1)  (and 0 where n == 0)."""
    if isinstance(exponent, Tensor):
        return where(exponent == 0, 0.0, g * exponent * self ** (exponent - 1))
    if exponent == 0:
        return zeros_like(self)
    return g * exponent * self ** (exponent - 1)


def where(cond, a, b):
    from .shape import where as _where
    return _where(cond, a, b)


def log_or_zero(self, exponent):
    """log(x) for d/dn x^n = x^n log x, taken as 0 where x == 0 and n >= 0."""
    mask = _const((self._data == 0) & (exponent._data >= 0))
    return where(mask, 1.0, self).log()


def inside(self, lo, hi):
    """1 where lo <= x <= hi (the gradient of clamp passes), else 0."""
    a = self._data
    mask = backend.xp_of(a).ones(a.shape, dtype=bool)
    if lo is not None:
        mask &= a >= lo
    if hi is not None:
        mask &= a <= hi
    return _const(mask.astype(a.dtype))


def zeros_like(t):
    return _const(backend.xp_of(t._data).zeros_like(t._data))


def unsqueeze_dims(g, dims, keepdim):
    """Put back the dimensions a reduction removed, as size 1, so g broadcasts."""
    if keepdim:
        return g
    shape = list(g.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return g.reshape(shape)


def evenly_distribute(g, self, result):
    """max()/min() of everything: g is shared equally by all elements that tie."""
    mask = self._data == result._data
    return g * _const((mask / mask.sum()).astype(self._data.dtype))


def place_at(g, indices, dim, keepdim, sizes):
    """max(dim)/min(dim): g goes to the position each index points at."""
    xp = backend.xp_of(g._data)
    idx = indices._data if keepdim else xp.expand_dims(indices._data, dim)
    positions = xp.arange(sizes[dim]).reshape([-1 if i == dim else 1 for i in range(len(sizes))])
    return unsqueeze_dims(g, (dim,), keepdim) * _const((positions == idx).astype(g._data.dtype))


def ties_half(a, b):
    """1 where a wins, 1/2 where a and b tie, 0 where b wins (maximum/minimum)."""
    x, y = a._data, b._data
    xp = backend.xp_of(x)
    return _const(xp.where(x > y, 1.0, xp.where(x == y, 0.5, 0.0)).astype(x.dtype))


def spread_to_extremes(g, self, result, dim, keepdim):
    """amax/amin: g shared equally by the elements equal to the extreme."""
    r = result._data if keepdim else backend.xp_of(result._data).expand_dims(result._data, dim)
    mask = self._data == r
    share = mask / mask.sum(axis=dim, keepdims=True)
    return unsqueeze_dims(g, dim, keepdim) * _const(share.astype(self._data.dtype))


def product_of_others(self, result, dims):
    """d(x1 x2 ... xn)/dxi = the product of all the other x's.

    That is result / xi when no x is zero (differentiable again); with zeros it
    is computed directly, as exclusive products from both ends."""
    a = self._data
    xp = backend.xp_of(a)
    if not (a == 0).any():
        return result / self
    axes = tuple(range(a.ndim)) if dims is None else dims
    flat_axis = a.ndim if len(axes) > 1 or dims is None else axes[0]
    if flat_axis == a.ndim:  # several axes: move them to the end and flatten them
        rest = [i for i in range(a.ndim) if i not in axes]
        moved = xp.transpose(a, rest + list(axes))
        shaped = moved.reshape(moved.shape[:len(rest)] + (-1,))
        others = _exclusive_products(shaped, -1, xp).reshape(moved.shape)
        others = xp.transpose(others, xp.argsort(xp.asarray(rest + list(axes))).tolist())
    else:
        others = _exclusive_products(a, flat_axis, xp)
    return _const(others)


def _exclusive_products(a, axis, xp):
    ones = xp.ones_like(xp.take(a, [0], axis=axis))
    left = xp.cumprod(xp.concatenate([ones, a], axis=axis), axis=axis)
    right = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(a, axis)], axis=axis), axis=axis),
                    axis)
    n = a.shape[axis]
    return (xp.take(left, range(n), axis=axis) * xp.take(right, range(1, n + 1), axis=axis))


def mm_mat2_grad(g, mat1, mat2):
    """mat1ᵀ @ g, laid out like ``mat2``: when mat2 is a transposed view (``W.t()``
    in ``nn.Linear``), compute (gᵀ @ mat1)ᵀ so that transposing it back for W is
    free and W's gradient is stored without a strided copy (as PyTorch does)."""
    if mat2._data.ndim == 2 and not mat2._data.flags.c_contiguous and \
            mat2._data.flags.f_contiguous:
        return (g.mT @ mat1).mT
    return mat1.mT @ g


def count_of(t, dims):
    n = 1
    for d in dims:
        n *= t.shape[d]
    return n


def select_key(dim, index):
    return (slice(None),) * dim + (index, Ellipsis)


def slice_key(dim, start, end, step):
    return (slice(None),) * dim + (slice(start, end, step),)


def zero_at(g, indices):
    """g with the entries at ``indices`` set to 0 (they were overwritten)."""
    mask = backend.xp_of(g._data).ones(g._data.shape, dtype=g._data.dtype)
    mask[indices] = 0
    return g * _const(mask)


def split_sizes(g, sizes, dim):
    """Cut g along ``dim`` into pieces of the given sizes (backward of cat)."""
    pieces, start = [], 0
    for s in sizes:
        pieces.append(g.narrow(dim, start, s))
        start += s
    return pieces


def repeat_backward(g, repeats, sizes):
    """Sum the copies that ``repeat`` made back onto the original."""
    lead = len(repeats) - len(sizes)
    full = (1,) * lead + tuple(sizes)
    inter = []
    for r, s in zip(repeats, full):
        inter += [r, s]
    g = g.reshape(inter).sum(tuple(range(0, 2 * len(full), 2)))
    return g.reshape(sizes)


def inverse_permutation(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


def _install():
    from . import convert, indexing, loss, reduce, unary
    ENV.update({
        "scale_for": loss.scale_for, "nll_grad": loss.nll_grad, "to_device": convert.to_device,
        "pow_backward": pow_backward, "log_or_zero": log_or_zero, "inside": inside,
        "zeros_like": zeros_like, "unsqueeze_dims": unsqueeze_dims,
        "evenly_distribute": evenly_distribute, "place_at": place_at,
        "ties_half": ties_half, "spread_to_extremes": spread_to_extremes,
        "count_of": count_of, "select_key": select_key, "slice_key": slice_key,
        "zero_at": zero_at, "split_sizes": split_sizes, "repeat_backward": repeat_backward,
        "inverse_permutation": inverse_permutation, "where": where,
        "product_of_others": product_of_others, "mm_mat2_grad": mm_mat2_grad,
        "gather_view": indexing.gather_view,
        "scatter_view": indexing.scatter_view, "embed": indexing.embed,
        "sum_to": reduce.sum_to, "log": unary.log, "exp": unary.exp,
    })
