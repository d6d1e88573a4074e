"""Comparisons and logic: ``==``, ``<``, ``&``, ``argmax``, ``isfinite``...

Their results are booleans or indices, which have no gradient: they never join
the graph (``requires_grad=False``), exactly as in PyTorch.
"""
from __future__ import annotations

import operator

from .. import backend
from ..tensor import Tensor
from ._rules import as_tensor_pair


def _no_grad_binary(op):
    def fn(a, b):
        try:
            a, b, da, db = as_tensor_pair(a, b)
        except TypeError:
            return NotImplemented
        return Tensor._make(backend.xp_of(da).asarray(op(da, db)))
    fn.__name__ = op.__name__
    return fn


eq, ne = _no_grad_binary(operator.eq), _no_grad_binary(operator.ne)
lt, le = _no_grad_binary(operator.lt), _no_grad_binary(operator.le)
gt, ge = _no_grad_binary(operator.gt), _no_grad_binary(operator.ge)
logical_and_, logical_or_, logical_xor_ = (_no_grad_binary(operator.and_),
                                           _no_grad_binary(operator.or_),
                                           _no_grad_binary(operator.xor))
floor_divide = _no_grad_binary(operator.floordiv)
remainder = _no_grad_binary(operator.mod)


def logical_not(x):
    return Tensor._make(~x._data if x._data.dtype.kind == "b" else x._data == 0)


def argmax(x, dim=None, keepdim=False):
    a = x._data
    if dim is None:
        return Tensor._make(backend.xp_of(a).asarray(a.argmax()).astype("int64"))
    return Tensor._make(a.argmax(axis=dim, keepdims=keepdim).astype("int64"))


def argmin(x, dim=None, keepdim=False):
    a = x._data
    if dim is None:
        return Tensor._make(backend.xp_of(a).asarray(a.argmin()).astype("int64"))
    return Tensor._make(a.argmin(axis=dim, keepdims=keepdim).astype("int64"))


def isfinite(x):
    return Tensor._make(backend.xp_of(x._data).isfinite(x._data))


def isnan(x):
    return Tensor._make(backend.xp_of(x._data).isnan(x._data))


def all(x, dim=None):  # noqa: A001
    return Tensor._make(backend.xp_of(x._data).asarray(x._data.all(axis=dim)))


def any(x, dim=None):  # noqa: A001
    return Tensor._make(backend.xp_of(x._data).asarray(x._data.any(axis=dim)))


def equal(a, b) -> bool:
    return a.shape == b.shape and bool((a._data == b._data).all())


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(backend.xp_of(a._data).allclose(a._data, b._data, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return Tensor._make(backend.xp_of(a._data).isclose(a._data, b._data, rtol, atol, equal_nan))


def nonzero(x, as_tuple=False):
    idx = backend.xp_of(x._data).nonzero(x._data)
    if as_tuple:
        return tuple(Tensor._make(i) for i in idx)
    return Tensor._make(backend.xp_of(x._data).stack(idx, axis=1).astype("int64"))
