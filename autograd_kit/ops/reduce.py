"""Reductions: sum, mean, max/min, amax/amin, var/std, softmax and friends.

A reduction maps many numbers to fewer, so its backward *spreads* the gradient
back: ``sum`` copies g to every element it added (dL/dx_i = g), ``mean`` copies
g/N, ``max`` sends g only to the element(s) that won.  ``keepdim=False`` removed
the reduced dimensions; the formulas put them back (``unsqueeze_dims``) before
spreading.
"""
from __future__ import annotations

import builtins
import math
from collections import namedtuple

from ._rules import RESULT, record, rule
from ._warn import warn
from .. import backend, errors
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor, scalar_type_name
from .dims import check_not_empty, normalize_dims, wrap_dim  # noqa: F401

values_indices = namedtuple("values_indices", ["values", "indices"])


_sum = backend.reduce_sum


def _sum_dtype(a):
    return backend.int64.np if a.dtype.kind in "biu" else None


def check_grad_dtype(x, dt) -> None:
    """A reduction asked for an integer result of a tensor that requires grad:
    PyTorch refuses (no gradient can flow through integers)."""
    if dt is not None and dt.kind not in "fc" and x.requires_grad and is_grad_enabled():
        raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(dt)}")


def _summed_in(x, dtype):
    """The dtype a sum of ``x`` accumulates in: the one asked for (refused for an
    integer result of a tensor that requires grad), else int64 for integers and
    booleans, else x's own (None)."""
    if dtype is None:
        return _sum_dtype(x._data)
    dt = backend.np_dtype(dtype)
    check_grad_dtype(x, dt)
    return dt


def sum(x, dim=None, keepdim=False, dtype=None):  # noqa: A001 - PyTorch's name
    a = x._data
    dt = _summed_in(x, dtype)
    if dim is None and not keepdim:
        return record(SumBackward0, _sum(a, None, dt), (x,), self_sym_sizes=a.shape)
    dims = normalize_dims(dim, a.ndim)
    out = _sum(a, dims, dt, keepdim)
    return record(SumBackward1, out, (x,), dim=dims, keepdim=keepdim, self_sym_sizes=a.shape)


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs left out (counted as 0).  Its gradient is sum's, 0 where
    the input is NaN: a left-out element does not move the result."""
    a = x._data
    dims = None if dim is None else normalize_dims(dim, a.ndim)
    out = backend.reduce_nansum(a, dims, _summed_in(x, dtype), keepdim and dims is not None)
    return record(NansumBackward0, out, (x,), self=x, dim=dims, keepdim=keepdim)


def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """The mean of the elements that are not NaN: ``nansum`` divided by how many
    there are (``DivBackward0`` on ``NansumBackward0``); NaN where there are none."""
    a = x._data
    if a.dtype.kind not in "fc":
        raise RuntimeError("nanmean(): expected input to have floating point or complex "
                           f"dtype but got {scalar_type_name(a.dtype)}")
    dims = None if dim is None else normalize_dims(dim, a.ndim)
    xp = backend.xp_of(a)
    count = _sum(~xp.isnan(a), dims, backend.int64.np, keepdim and dims is not None)
    return nansum(x, dim, keepdim, dtype=dtype) / Tensor._make(count)


def sum_to(g, shape):
    """Sum ``g`` down to ``shape``: the one place where broadcasting is undone.

    Broadcasting copied an input along new leading axes and along axes of
    size 1; each copy received its own gradient, so the input's gradient is
    their sum.  (Which axes: ``backend.broadcast_axes``, shared with the
    array version ``backend.sum_to``.)"""
    lead, axes = backend.broadcast_axes(g._data.shape, shape)
    if axes:
        g = sum(g, axes, keepdim=True)
    return g.reshape(shape) if lead else g


def sum_to_size(x, *size):
    """``Tensor.sum_to_size(*size)``: x summed down to ``size`` (sizes as
    arguments or one sequence), which x must be expandable from."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    shape = tuple(int(n) for n in shape)
    have = tuple(x.shape)
    fits = len(shape) <= len(have) and all(
        n == m or n == 1 for n, m in zip(reversed(shape), reversed(have)))
    if not fits:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    return sum_to(x, shape)


def mean(x, dim=None, keepdim=False, dtype=None):
    """The average: the sum divided by the count N (N = 0 gives NaN, as in PyTorch)."""
    a = x._data
    if dtype is not None:
        dt = backend.np_dtype(dtype)
        if dt.kind not in "fc":
            raise RuntimeError(errors.MEAN_DTYPE.format(what="Optional",
                                                        got=scalar_type_name(dt)))
        a = a.astype(dt, copy=False)
    elif a.dtype.kind not in "fc":
        raise RuntimeError(errors.MEAN_DTYPE.format(what="Input",
                                                    got=scalar_type_name(a.dtype)))
    if dim is None and not keepdim:
        out = backend.reduce_mean(a)
        return record(MeanBackward0, out, (x,), self_sym_sizes=a.shape, numel=a.size)
    dims = normalize_dims(dim, a.ndim)
    count = 1
    for d in dims:
        count *= a.shape[d]
    out = backend.reduce_mean(a, dims, keepdim)
    return record(MeanBackward1, out, (x,), dim=dims, keepdim=keepdim,
                  self_sym_sizes=a.shape, count=count)


def _extreme(x, dim, keepdim, which: str):
    a, xp = x._data, backend.xp_of(x._data)
    if dim is None:
        check_not_empty(which, a, None)
        out = a.max() if which == "max" else a.min()
        node = MaxBackward1 if which == "max" else MinBackward1
        return record(node, out, (x,), self=x, result=RESULT)
    d = wrap_dim(dim, a.ndim)
    check_not_empty(which, a, (d,))
    if a.ndim == 0:  # a 0-d tensor is its own extreme, at index 0
        indices = Tensor._make(xp.zeros((), dtype=backend.int64.np))
        values = record(MaxBackward0 if which == "max" else MinBackward0, a.copy(), (x,),
                        indices=indices, dim=0, keepdim=keepdim, self_sym_sizes=())
        return values_indices(values, indices)
    idx = a.argmax(axis=d) if which == "max" else a.argmin(axis=d)
    if keepdim:
        idx = xp.expand_dims(idx, d)
    vals = xp.take_along_axis(a, idx if keepdim else xp.expand_dims(idx, d), axis=d)
    if not keepdim:
        vals = vals.squeeze(d)
    node = MaxBackward0 if which == "max" else MinBackward0
    indices = Tensor._make(idx.astype(backend.int64.np))
    values = record(node, vals, (x,), indices=indices, dim=d, keepdim=keepdim,
                    self_sym_sizes=a.shape)
    return values_indices(values, indices)


def _check_dim_arg(name, x, dim):
    if dim is not None and not isinstance(dim, builtins.int):  # max(x, 2.0): no such form
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(dim).__name__})")


def max(x, dim=None, keepdim=False):  # noqa: A001
    """``max()`` of everything, ``max(dim)`` -> (values, indices), or ``max(a, b)``."""
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    _check_dim_arg("max", x, dim)
    return _extreme(x, dim, keepdim, "max")


def min(x, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        return minimum(x, dim)
    _check_dim_arg("min", x, dim)
    return _extreme(x, dim, keepdim, "min")


def _two_tensors(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' must be Tensor, not {type(other).__name__}")


def maximum(a, b):
    from .arith import _binary
    _two_tensors("maximum", b)
    # (arguments swapped: of two equal elements, 0.0 and -0.0, PyTorch keeps the
    # first and numpy the second; a sqrt or log after it sees which zero it is)
    return _binary(MaximumBackward0, lambda p, q: backend.xp_of(p).maximum(q, p), a, b,
                   ("self", "other"))


def minimum(a, b):
    from .arith import _binary
    _two_tensors("minimum", b)
    return _binary(MinimumBackward0, lambda p, q: backend.xp_of(p).minimum(q, p), a, b,
                   ("self", "other"))  # (swapped, as in maximum)


def _given(dim):
    return None if dim is None or dim == () else (dim,) if isinstance(dim, int) else dim


def amax(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim)
    check_not_empty("amax", x._data, _given(dim))
    out = x._data.max(axis=dims, keepdims=keepdim)
    return record(AmaxBackward0, out, (x,), self=x, result=RESULT, dim=dims, keepdim=keepdim)


def amin(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim)
    check_not_empty("amin", x._data, _given(dim))
    out = x._data.min(axis=dims, keepdims=keepdim)
    return record(AminBackward0, out, (x,), self=x, result=RESULT, dim=dims, keepdim=keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _variance(name, x, dim, unbiased, keepdim, correction):
    """sum((x - mean)²) / (N - correction), and the settings, for var and std.

    Written out rather than numpy's ``var``: N - correction <= 0 then simply
    divides by 0 (inf or NaN, as in PyTorch), without numpy's warnings."""
    if isinstance(dim, bool):  # var(False): the old positional ``unbiased``
        dim, unbiased = None, dim
    a = x._data
    if a.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    c = _correction(unbiased, correction)
    dims = normalize_dims(dim, a.ndim)
    n = 1
    for d in dims:
        n *= a.shape[d]
    if n:
        wide = a.astype(backend.float64.np) if a.dtype.kind == "f" and a.dtype.itemsize < 8 \
            else a
        dev = wide - backend.reduce_mean(wide, dims, True)
    else:
        dev = a
    if dev.dtype.kind == "f" and dev.dtype.itemsize < 8:
        dev = dev.astype(backend.float64.np)  # squares of 1e20 fit (PyTorch: a wider sum)
    kept = 1
    for d in range(a.ndim):
        kept *= 1 if d in dims else a.shape[d]
    if a.size / builtins.max(kept, 1) - c <= 0:  # (PyTorch's count: numel in / numel out)
        warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
             "less than the reduction factor (input numel divided by output numel).")
    out = _sum(dev * dev, dims, None, keepdim) / builtins.max(n - c, 0)
    return backend.xp_of(a).asarray(out), dims, c  # (the caller casts to a's dtype)


def spread_array(kind, x, dim, unbiased, keepdim, correction, name=None):
    """The value of ``var`` (kind "var") or ``std`` as an array of x's dtype,
    with the dims and the correction; ``name`` is the function the warning
    about no degrees of freedom names (``var_mean`` for var_mean)."""
    out, dims, c = _variance(name or kind, x, dim, unbiased, keepdim, correction)
    if kind == "std":  # (sqrt first: the variance of float16 values may not fit
        out = backend.xp_of(out).sqrt(out)  # a float16, their std does)
    return out.astype(x._data.dtype, copy=False), dims, c


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    out, dims, c = spread_array("var", x, dim, unbiased, keepdim, correction)
    return record(VarBackward0, out, (x,), self=x, dim=None if dim is None else dims,
                  correction=c, keepdim=keepdim)


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    out, dims, c = spread_array("std", x, dim, unbiased, keepdim, correction)
    return record(StdBackward0, out, (x,), self=x, dim=None if dim is None else dims,
                  correction=c, keepdim=keepdim, result=RESULT)


def _softmax_input(x, dim, name):
    """The array softmax works on, the axis, and the dim as PyTorch records it."""
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    a = x._data
    d = wrap_dim(dim, a.ndim)
    if a.dtype.kind not in "fc" and a.size:  # (no kernel runs for an empty tensor)
        kernel = "lastdim_kernel_impl" if d == a.ndim - 1 else "kernel_impl"
        raise NotImplementedError(f'"{name}_{kernel}" not implemented for '
                                  f"'{scalar_type_name(a.dtype)}'")
    return a, (d if a.ndim else None), d


def _in_dtype(x, dtype):
    """``x.to(dtype)`` (recorded, ``ToCopyBackward0``), as PyTorch converts the
    input of a softmax given a ``dtype`` before it runs."""
    return x if dtype is None else x.to(backend.to_dtype(backend.np_dtype(dtype)))


def softmax(x, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed stably (max subtracted)."""
    x = _in_dtype(x, dtype)
    a, axis, d = _softmax_input(x, dim, "softmax")
    if not a.size:
        return record(SoftmaxBackward0, a.copy(), (x,), result=RESULT, dim=d)
    xp = backend.xp_of(a)
    e = xp.exp(a - backend.reduce_max(a, axis, True))
    return record(SoftmaxBackward0, e / _sum(e, axis, None, True), (x,),
                  result=RESULT, dim=d)


def log_softmax(x, dim, dtype=None):
    x = _in_dtype(x, dtype)
    a, axis, d = _softmax_input(x, dim, "log_softmax")
    if not a.size:
        return record(LogSoftmaxBackward0, a.copy(), (x,), result=RESULT, dim=d)
    xp = backend.xp_of(a)
    shifted = a - backend.reduce_max(a, axis, True)
    out = shifted - xp.log(_sum(xp.exp(shifted), axis, None, True))
    return record(LogSoftmaxBackward0, out, (x,), result=RESULT, dim=d)


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))), computed as m + log(sum(exp(x - m))) with m the max, so
    that exp cannot overflow; an infinite m is left out (as PyTorch does), so a
    row [inf, 1] gives inf and a row of -inf gives -inf, not NaN."""
    a = x._data
    if a.dtype.kind not in "fc":  # integers: computed in the default float type
        a = a.astype(backend.get_default_dtype().np)
    xp = backend.xp_of(a)
    dims = normalize_dims(dim, a.ndim)
    m = backend.reduce_max(a, dims, True)  # (-inf over no elements)
    m = xp.where(xp.isinf(m), 0, m).astype(a.dtype, copy=False)
    out = xp.log(_sum(xp.exp(a - m), dims, None, True)) + m
    if not keepdim:
        out = out.squeeze(dims) if dims else out
    return record(LogsumexpBackward0, out, (x,), self=x, result=RESULT, dim=dims,
                  keepdim=keepdim)


def prod(x, dim=None, keepdim=False, *, dtype=None):
    """The product of the elements (along one ``dim``); integers and booleans
    multiply in int64, as in PyTorch."""
    a = x._data
    if dtype is not None:
        dt = backend.np_dtype(dtype)
        check_grad_dtype(x, dt)
        a = a.astype(dt, copy=False)
    elif a.dtype.kind in "biu":
        a = a.astype(backend.int64.np)
    if dim is None:
        return record(ProdBackward0, backend.reduce_prod(a), (x,), self=x, result=RESULT)
    if not isinstance(dim, builtins.int):
        raise TypeError(f"prod() received an invalid combination of arguments - got "
                        f"({type(dim).__name__}), but expected (int dim, bool keepdim)")
    dims = normalize_dims(dim, a.ndim)
    out = backend.reduce_prod(a, dims, keepdim)
    return record(ProdBackward1, out, (x,), self=x, result=RESULT, dim=dims, keepdim=keepdim)


def norm(x, p=2, dim=None, keepdim=False, dtype=None):
    """The vector p-norm (sum |x|^p)^(1/p): p=2 the Euclidean length sqrt(sum x²),
    p=1 the sum of |x|, p=inf the largest |x|, p=0 the count of non-zeros."""
    a = x._data
    if p is None or p == "fro":
        p = 2
    if dtype is not None:
        a = a.astype(backend.np_dtype(dtype))
    half = a.dtype.itemsize < 4 and a.dtype.kind == "f"
    if half:  # float16 is summed in float32 (|x|^p would overflow), as in PyTorch
        a = a.astype(backend.float32.np)
    if a.dtype.kind not in "fc":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {scalar_type_name(a.dtype)}")
    xp = backend.xp_of(a)
    dims = normalize_dims(dim, a.ndim)
    if p != 0 and a.size and math.prod(a.shape[d] for d in dims) == 1:
        # one element per norm: |x| itself, as PyTorch gives it (no |x|^p to overflow)
        out = _sum(xp.abs(a), dims, None, keepdim)
    elif p == 2:
        out = xp.sqrt(_sum(a * a, dims, None, keepdim))
    else:
        m = xp.abs(a)
        if p in (float("inf"), float("-inf")):
            word = "inf" if p > 0 else "-inf"
            if a.size == 0 and (dim is None or dim == ()):
                raise RuntimeError(errors.NORM_INF_EMPTY.format(ord=word))
            for d in dims:
                if a.shape[d] == 0:
                    raise RuntimeError(errors.NORM_INF_EMPTY_DIM.format(ord=word, dim=d))
            out = m.max(axis=dims, keepdims=keepdim) if p > 0 else \
                m.min(axis=dims, keepdims=keepdim)
        elif p == 0:
            out = _sum(m != 0, dims, None, keepdim).astype(a.dtype)
        elif p == 1:
            out = _sum(m, dims, None, keepdim)
        else:
            out = _sum(m ** p, dims, None, keepdim) ** (1.0 / p)
    return record(LinalgVectorNormBackward0,
                  xp.asarray(out, dtype=x._data.dtype if half else a.dtype), (x,), self=x,
                  result=RESULT, ord=float(p), dim=None if dim is None else dims,
                  keepdim=keepdim)  # (no dim given: PyTorch saves None)


# Backward formulas: g is the gradient of the output; one formula per input.
SumBackward0 = rule("SumBackward0", "self_sym_sizes", self="expand(g, self_sym_sizes)")
NansumBackward0 = rule("NansumBackward0", "self dim keepdim",
                       self="nansum_backward(in_dtype_of(g, self), self, dim, keepdim)")
SumBackward1 = rule("SumBackward1", "dim keepdim self_sym_sizes",
                    self="expand(unsqueeze_dims(g, dim, keepdim), self_sym_sizes)")
MeanBackward0 = rule("MeanBackward0", "self_sym_sizes numel",
                     self="expand_over(g, self_sym_sizes, numel)")
MeanBackward1 = rule("MeanBackward1", "dim keepdim self_sym_sizes count",
                     self="div_scalar(expand(unsqueeze_dims(g, dim, keepdim), self_sym_sizes),"
                          " count)")
MaxBackward1 = rule("MaxBackward1", "self result", self="evenly_distribute(g, self, result)")
MinBackward1 = rule("MinBackward1", "self result", self="evenly_distribute(g, self, result)")
MaxBackward0 = rule("MaxBackward0", "indices dim keepdim self_sym_sizes",
                    self="place_at(g, indices, dim, keepdim, self_sym_sizes)")
MinBackward0 = rule("MinBackward0", "indices dim keepdim self_sym_sizes",
                    self="place_at(g, indices, dim, keepdim, self_sym_sizes)")
MaximumBackward0 = rule("MaximumBackward0", "self other",
                        self="ties_half(g, self, other)", other="ties_half(g, other, self)")
MinimumBackward0 = rule("MinimumBackward0", "self other",
                        self="ties_half(g, other, self)", other="ties_half(g, self, other)")
AmaxBackward0 = rule("AmaxBackward0", "self result dim keepdim",
                     self="spread_to_extremes(g, self, result, dim, keepdim)")
AminBackward0 = rule("AminBackward0", "self result dim keepdim",
                     self="spread_to_extremes(g, self, result, dim, keepdim)")
VarBackward0 = rule("VarBackward0", "self dim correction keepdim",
                    self="var_backward(g, self, dim, correction, keepdim)")
StdBackward0 = rule("StdBackward0", "self dim correction keepdim result",
                    self="std_backward(g, self, result, dim, correction, keepdim)")
SoftmaxBackward0 = rule("SoftmaxBackward0", "result dim",
                        self="softmax_backward_data(g, result, dim)")
LogSoftmaxBackward0 = rule("LogSoftmaxBackward0", "result dim",
                           self="log_softmax_backward_data(g, result, dim)")
LogsumexpBackward0 = rule("LogsumexpBackward0", "self result dim keepdim",
                          self="unsqueeze_dims(g, dim, keepdim)"
                               " * exp(self - unsqueeze_dims(result, dim, keepdim))")
LinalgVectorNormBackward0 = rule(
    "LinalgVectorNormBackward0", "self result ord dim keepdim",
    self="norm_backward(unsqueeze_dims(g, dim, keepdim), self,"
         " unsqueeze_dims(result, dim, keepdim), ord, dim)")
ProdBackward0 = rule("ProdBackward0", "self result",
                     self="prod_backward(g, in_dtype_of(self, g), result, None, False)")
ProdBackward1 = rule("ProdBackward1", "self result dim keepdim",
                     self="prod_backward(g, in_dtype_of(self, g), result, dim, keepdim)")
