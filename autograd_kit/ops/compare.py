"""Comparisons and logic: ``==``, ``<``, ``&``, ``argmax``, ``isfinite``...

Their results are booleans or indices, which have no gradient: they never join
the graph (``requires_grad=False``), exactly as in PyTorch.
"""
from __future__ import annotations

import builtins
import operator

from .. import backend
from ..tensor import Tensor, scalar_type_name
from ._rules import as_tensor_pair, check_broadcast
from .dims import check_not_empty, wrap_dim

_NOT_OPERANDS = (str, bytes, type(None), dict, set)
# the kernels PyTorch names when an op does not exist for a dtype
_KERNELS = {operator.and_: "bitwise_and_cpu", operator.or_: "bitwise_or_cpu",
            operator.xor: "bitwise_xor_cpu", operator.floordiv: "div_floor_cpu",
            operator.mod: "remainder_cpu"}


def _no_grad_binary(op):
    def fn(a, b):
        if isinstance(b, _NOT_OPERANDS) or isinstance(a, _NOT_OPERANDS):
            return NotImplemented  # ``t == "a"`` is False, ``t < "a"`` a TypeError
        a, b, da, db = as_tensor_pair(a, b)
        try:
            out = op(da, db)
        except (ValueError, TypeError):
            check_broadcast(da, db)  # PyTorch's words for shapes that cannot broadcast
            if op in _KERNELS:
                bad = da if da.dtype.kind not in "biu" else db
                raise NotImplementedError(f'"{_KERNELS[op]}" not implemented for '
                                          f"'{scalar_type_name(bad.dtype)}'") from None
            raise
        return Tensor._make(backend.xp_of(da).asarray(out))
    fn.__name__ = op.__name__
    return fn


eq, ne = _no_grad_binary(operator.eq), _no_grad_binary(operator.ne)
lt, le = _no_grad_binary(operator.lt), _no_grad_binary(operator.le)
gt, ge = _no_grad_binary(operator.gt), _no_grad_binary(operator.ge)
logical_and_, logical_or_, logical_xor_ = (_no_grad_binary(operator.and_),
                                           _no_grad_binary(operator.or_),
                                           _no_grad_binary(operator.xor))
def _trunc(x, y):
    """x / y rounded towards zero, in x's (promoted) type."""
    xp = backend.xp_of(x)
    if x.dtype.kind == "f":
        return xp.trunc(x / y).astype(x.dtype, copy=False)
    q = x // y
    return q + ((x % y != 0) & ((x < 0) != (y < 0))).astype(q.dtype)


_KERNELS[_trunc] = "div_trunc_cpu"
_floor_divide = _no_grad_binary(operator.floordiv)
_remainder = _no_grad_binary(operator.mod)
_trunc_divide = _no_grad_binary(_trunc)


def _kind(t) -> str:
    if isinstance(t, Tensor):
        return t._data.dtype.kind
    return "b" if isinstance(t, bool) else "i" if isinstance(t, int) else "f"


def _integer_division(fn, kernel):
    """``a // b`` and ``a % b``: integers refuse a zero divisor (numpy gives 0 and a
    warning); booleans are refused; floats give inf or NaN, as in PyTorch."""
    def op(a, b):
        kinds = _kind(a) + _kind(b)
        if kinds == "bb":
            if isinstance(a, Tensor) and isinstance(b, Tensor):
                check_broadcast(a, b)  # (shapes are refused first)
            raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
        out = fn(a, b)
        if out is not NotImplemented and out._data.size and \
                builtins.all(k in "biu" for k in kinds) and (
                bool((b._data == 0).any()) if isinstance(b, Tensor) else b == 0):
            raise RuntimeError("ZeroDivisionError")
        return out
    op.__name__ = fn.__name__
    return op


floor_divide = _integer_division(_floor_divide, "div_floor_cpu")
remainder = _integer_division(_remainder, "remainder_cpu")
trunc_divide = _integer_division(_trunc_divide, "div_trunc_cpu")


def logical_not(x):
    return Tensor._make(~x._data if x._data.dtype.kind == "b" else x._data == 0)


def bitwise_not(x):
    """``~x``: logical not of booleans, the bits flipped for integers (-x - 1)."""
    a = x._data
    if a.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return Tensor._make(~a)


def _logical(name, op):
    def fn(a, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' must be Tensor, not "
                            f"{type(other).__name__}")
        a, b, da, db = as_tensor_pair(a, other)
        try:
            out = op(da != 0, db != 0)
        except ValueError:
            check_broadcast(da, db)
            raise
        return Tensor._make(backend.xp_of(da).asarray(out))
    fn.__name__ = name
    return fn


logical_and = _logical("logical_and", operator.and_)
logical_or = _logical("logical_or", operator.or_)
logical_xor = _logical("logical_xor", operator.xor)


def _arg_extreme(x, dim, keepdim, name):
    a = x._data
    xp = backend.xp_of(a)
    if a.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        check_not_empty(name, a, None)
        i = a.argmax() if name == "argmax" else a.argmin()
        return Tensor._make(xp.asarray(i).astype("int64"))
    d = wrap_dim(dim, a.ndim)
    check_not_empty(name, a, (d,))
    if a.ndim == 0:  # a 0-d tensor: its one element, at index 0
        return Tensor._make(xp.zeros((), dtype="int64"))
    i = a.argmax(axis=d, keepdims=keepdim) if name == "argmax" else \
        a.argmin(axis=d, keepdims=keepdim)
    return Tensor._make(i.astype("int64"))


def argmax(x, dim=None, keepdim=False):
    return _arg_extreme(x, dim, keepdim, "argmax")


def argmin(x, dim=None, keepdim=False):
    return _arg_extreme(x, dim, keepdim, "argmin")


def isfinite(x):
    return Tensor._make(backend.xp_of(x._data).isfinite(x._data))


def isnan(x):
    return Tensor._make(backend.xp_of(x._data).isnan(x._data))


def _all_or_any(x, dim, keepdim, which):
    """True where all (any) elements along ``dim`` are non-zero; a uint8 tensor
    answers in uint8 (0 or 1), as in PyTorch."""
    a = x._data
    if dim is None:
        axis = None
    elif isinstance(dim, (tuple, list)):
        axis = tuple(wrap_dim(d, a.ndim) for d in dim)
    else:
        axis = wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        axis = None
    out = a.all(axis=axis, keepdims=keepdim) if which == "all" else \
        a.any(axis=axis, keepdims=keepdim)
    if keepdim and a.ndim == 0:
        out = out.reshape(())
    out = backend.xp_of(a).asarray(out)
    return Tensor._make(out.astype(a.dtype) if a.dtype.name == "uint8" else out)


def all(x, dim=None, keepdim=False):  # noqa: A001
    return _all_or_any(x, dim, keepdim, "all")


def any(x, dim=None, keepdim=False):  # noqa: A001
    return _all_or_any(x, dim, keepdim, "any")


def equal(a, b) -> bool:
    return a.shape == b.shape and bool((a._data == b._data).all())


def _close_pair(a, b):
    if not isinstance(b, Tensor):
        raise TypeError(f"isclose(): argument 'other' must be Tensor, not {type(b).__name__}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{scalar_type_name(a._data.dtype)} did not match "
                           f"{scalar_type_name(b._data.dtype)}")
    a, b, da, db = as_tensor_pair(a, b)
    check_broadcast(da, db)
    return da, db


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    da, db = _close_pair(a, b)
    return bool(backend.xp_of(da).allclose(da, db, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    da, db = _close_pair(a, b)
    return Tensor._make(backend.xp_of(da).isclose(da, db, rtol, atol, equal_nan))


def nonzero(x, as_tuple=False):
    if x._data.ndim == 0:  # a 0-d tensor: one row (or none) of no indices
        n = int(bool(x._data))
        return (Tensor._make(backend.xp_of(x._data).zeros(n, "int64")),) if as_tuple else \
            Tensor._make(backend.xp_of(x._data).zeros((n, 0), "int64"))
    idx = backend.xp_of(x._data).nonzero(x._data)
    if as_tuple:
        return tuple(Tensor._make(i) for i in idx)
    return Tensor._make(backend.xp_of(x._data).stack(idx, axis=1).astype("int64"))
