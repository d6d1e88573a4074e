"""Reductions: sum, mean, max/min, amax/amin, var/std, softmax and friends.

A reduction maps many numbers to fewer, so its backward *spreads* the gradient
back: ``sum`` copies g to every element it added (dL/dx_i = g), ``mean`` copies
g/N, ``max`` sends g only to the element(s) that won.  ``keepdim=False`` removed
the reduced dimensions; the formulas put them back (``unsqueeze_dims``) before
spreading.
"""
from __future__ import annotations

import builtins
from collections import namedtuple

from ._rules import RESULT, record, rule
from .. import backend
from ..tensor import Tensor

values_indices = namedtuple("values_indices", ["values", "indices"])


def wrap_dim(d: int, ndim: int) -> int:
    """``d`` as a non-negative axis of a tensor with ``ndim`` dimensions (``-1`` is
    the last); a 0-d tensor takes dims 0 and -1, as PyTorch allows.  Out of range:
    PyTorch's ``IndexError``."""
    n = builtins.max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {d})")
    return d % n


def normalize_dims(dim, ndim: int) -> tuple:
    """``dim`` (int, tuple or None) as a sorted tuple of non-negative axes."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    axes = [wrap_dim(d, ndim) for d in dims]
    return tuple(sorted(axes)) if ndim else ()


def _sum_dtype(a):
    return backend.int64.np if a.dtype.kind in "biu" else None


def sum(x, dim=None, keepdim=False, dtype=None):  # noqa: A001 - PyTorch's name
    a = x._data
    dt = backend.np_dtype(dtype) if dtype is not None else _sum_dtype(a)
    if dim is None and not keepdim:
        return record(SumBackward0, a.sum(dtype=dt), (x,), self_sym_sizes=a.shape)
    dims = normalize_dims(dim, a.ndim)
    out = a.sum(axis=dims, keepdims=keepdim, dtype=dt)
    return record(SumBackward1, out, (x,), dim=dims, keepdim=keepdim, self_sym_sizes=a.shape)


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


def mean(x, dim=None, keepdim=False, dtype=None):
    a = x._data
    if a.dtype.kind not in "fc" and dtype is None:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {x.dtype.name.capitalize()}")
    if dim is None and not keepdim:
        return record(MeanBackward0, a.mean(), (x,), self_sym_sizes=a.shape, numel=a.size)
    dims = normalize_dims(dim, a.ndim)
    count = 1
    for d in dims:
        count *= a.shape[d]
    out = a.mean(axis=dims, keepdims=keepdim)
    return record(MeanBackward1, out, (x,), dim=dims, keepdim=keepdim,
                  self_sym_sizes=a.shape, count=count)


def _extreme(x, dim, keepdim, which: str):
    a, xp = x._data, backend.xp_of(x._data)
    if dim is None:
        out = a.max() if which == "max" else a.min()
        node = MaxBackward1 if which == "max" else MinBackward1
        return record(node, out, (x,), self=x, result=RESULT)
    d = normalize_dims(dim, a.ndim)[0] if a.ndim else 0
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


def max(x, dim=None, keepdim=False):  # noqa: A001
    """``max()`` of everything, ``max(dim)`` -> (values, indices), or ``max(a, b)``."""
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    return _extreme(x, dim, keepdim, "max")


def min(x, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        return minimum(x, dim)
    return _extreme(x, dim, keepdim, "min")


def maximum(a, b):
    from .arith import _binary
    return _binary(MaximumBackward0, lambda p, q: backend.xp_of(p).maximum(p, q), a, b,
                   ("self", "other"))


def minimum(a, b):
    from .arith import _binary
    return _binary(MinimumBackward0, lambda p, q: backend.xp_of(p).minimum(p, q), a, b,
                   ("self", "other"))


def amax(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim)
    out = x._data.max(axis=dims, keepdims=keepdim)
    return record(AmaxBackward0, out, (x,), self=x, result=RESULT, dim=dims, keepdim=keepdim)


def amin(x, dim=(), keepdim=False):
    dims = normalize_dims(dim, x.ndim)
    out = x._data.min(axis=dims, keepdims=keepdim)
    return record(AminBackward0, out, (x,), self=x, result=RESULT, dim=dims, keepdim=keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var(False): the old positional ``unbiased``
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = normalize_dims(dim, x.ndim)
    out = x._data.var(axis=dims, ddof=c, keepdims=keepdim)
    return record(VarBackward0, out, (x,), self=x, dim=dims, correction=c, keepdim=keepdim)


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = normalize_dims(dim, x.ndim)
    out = x._data.std(axis=dims, ddof=c, keepdims=keepdim)
    return record(StdBackward0, out, (x,), self=x, dim=dims, correction=c, keepdim=keepdim,
                  result=RESULT)


def softmax(x, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed stably (max subtracted)."""
    a = x._data if dtype is None else x._data.astype(backend.np_dtype(dtype))
    xp = backend.xp_of(a)
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    return record(SoftmaxBackward0, e / e.sum(axis=dim, keepdims=True), (x,),
                  result=RESULT, dim=dim)


def log_softmax(x, dim, dtype=None):
    a = x._data if dtype is None else x._data.astype(backend.np_dtype(dtype))
    xp = backend.xp_of(a)
    shifted = a - a.max(axis=dim, keepdims=True)
    out = shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    return record(LogSoftmaxBackward0, out, (x,), result=RESULT, dim=dim)


def logsumexp(x, dim, keepdim=False):
    a, xp = x._data, backend.xp_of(x._data)
    dims = normalize_dims(dim, a.ndim)
    m = a.max(axis=dims, keepdims=True)
    out = xp.log(xp.exp(a - m).sum(axis=dims, keepdims=True)) + m
    if not keepdim:
        out = out.squeeze(dims) if dims else out
    return record(LogsumexpBackward0, out, (x,), self=x, result=RESULT, dim=dims,
                  keepdim=keepdim)


def prod(x, dim=None, keepdim=False):
    a = x._data
    if dim is None:
        return record(ProdBackward0, a.prod(), (x,), self=x, result=RESULT)
    dims = normalize_dims(dim, a.ndim)
    out = a.prod(axis=dims, keepdims=keepdim)
    return record(ProdBackward1, out, (x,), self=x, result=RESULT, dim=dims, keepdim=keepdim)


def norm(x, p=2, dim=None, keepdim=False):
    """The Euclidean length sqrt(sum x²) (other p: written with differentiable pieces)."""
    if p != 2:
        return sum(x.abs() ** p, dim, keepdim) ** (1.0 / p)
    a = x._data
    dims = normalize_dims(dim, a.ndim)
    out = backend.xp_of(a).sqrt((a * a).sum(axis=dims, keepdims=keepdim))
    return record(LinalgVectorNormBackward0, out, (x,), self=x, result=RESULT, dim=dims,
                  keepdim=keepdim)


# Backward formulas: g is the gradient of the output; one formula per input.
SumBackward0 = rule("SumBackward0", "self_sym_sizes", self="expand(g, self_sym_sizes)")
SumBackward1 = rule("SumBackward1", "dim keepdim self_sym_sizes",
                    self="expand(unsqueeze_dims(g, dim, keepdim), self_sym_sizes)")
MeanBackward0 = rule("MeanBackward0", "self_sym_sizes numel",
                     self="expand(g / numel, self_sym_sizes)")
MeanBackward1 = rule("MeanBackward1", "dim keepdim self_sym_sizes count",
                     self="expand(unsqueeze_dims(g, dim, keepdim), self_sym_sizes) / count")
MaxBackward1 = rule("MaxBackward1", "self result", self="evenly_distribute(g, self, result)")
MinBackward1 = rule("MinBackward1", "self result", self="evenly_distribute(g, self, result)")
MaxBackward0 = rule("MaxBackward0", "indices dim keepdim self_sym_sizes",
                    self="place_at(g, indices, dim, keepdim, self_sym_sizes)")
MinBackward0 = rule("MinBackward0", "indices dim keepdim self_sym_sizes",
                    self="place_at(g, indices, dim, keepdim, self_sym_sizes)")
MaximumBackward0 = rule("MaximumBackward0", "self other",
                        self="g * ties_half(self, other)", other="g * ties_half(other, self)")
MinimumBackward0 = rule("MinimumBackward0", "self other",
                        self="g * ties_half(other, self)", other="g * ties_half(self, other)")
AmaxBackward0 = rule("AmaxBackward0", "self result dim keepdim",
                     self="spread_to_extremes(g, self, result, dim, keepdim)")
AminBackward0 = rule("AminBackward0", "self result dim keepdim",
                     self="spread_to_extremes(g, self, result, dim, keepdim)")
VarBackward0 = rule("VarBackward0", "self dim correction keepdim",
                    self="unsqueeze_dims(g, dim, keepdim) * 2 * (self - mean(self, dim, True))"
                         " / (count_of(self, dim) - correction)")
StdBackward0 = rule("StdBackward0", "self dim correction keepdim result",
                    self="unsqueeze_dims(g / result, dim, keepdim) * (self - mean(self, dim, True))"
                         " / (count_of(self, dim) - correction)")
SoftmaxBackward0 = rule("SoftmaxBackward0", "result dim",
                        self="result * (g - sum(g * result, dim, True))")
LogSoftmaxBackward0 = rule("LogSoftmaxBackward0", "result dim",
                           self="g - exp(result) * sum(g, dim, True)")
LogsumexpBackward0 = rule("LogsumexpBackward0", "self result dim keepdim",
                          self="unsqueeze_dims(g, dim, keepdim)"
                               " * exp(self - unsqueeze_dims(result, dim, keepdim))")
LinalgVectorNormBackward0 = rule(
    "LinalgVectorNormBackward0", "self result dim keepdim",
    self="self * unsqueeze_dims(g / result, dim, keepdim)")
ProdBackward0 = rule("ProdBackward0", "self result",
                     self="g * product_of_others(self, result, None)")
ProdBackward1 = rule("ProdBackward1", "self result dim keepdim",
                     self="unsqueeze_dims(g, dim, keepdim)"
                          " * product_of_others(self, unsqueeze_dims(result, dim, keepdim), dim)")
