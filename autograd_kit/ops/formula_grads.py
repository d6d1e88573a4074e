"""The longer words of the formula tables: the backward of a power, a norm, a
variance, a max or a sort (where each gradient goes back to), a trace, gelu...

Each is one function that accepts Tensors or plain arrays and answers in the
same kind, as every word of :mod:`formula_env` does (read that module first:
it has the short words these are written with).  Importing this module adds
them to the formulas' namespace, ``formula_env.ENV``.
"""
from __future__ import annotations

import builtins
import math

from .. import backend
from ..tensor import Tensor
from .formula_env import (ENV, OPS, _is_tensor, _like, _raw, _xp, abs, count_of,  # noqa: A004
                          div_or_zero, exp, expand, inside, log, masked_fill, mean, reshape,
                          restore_dims, select_key, sgn, sum, t, unsqueeze_dims, where,
                          zeros_like)


def pow_backward(g, self, exponent):
    """d/dx x^n = n x^(n-1)  (and 0 where n == 0).  A number n is a Scalar in
    PyTorch's formula: n x^(n-1) is MulBackward1 on Tensors."""
    mul_scalar, sub_scalar = OPS.mul_scalar, OPS.sub_scalar
    if not (_is_tensor(exponent) or backend.is_array_or_scalar(exponent)):  # a number
        if exponent == 0 and exponent.__class__ is not bool:  # (PyTorch: x ** False is
            return zeros_like(self)  # differentiated by the general rule, NaN at x = 0)
        if exponent == 0.5:  # x^-0.5 as 1/sqrt(x), as PyTorch computes it (NaN at -inf)
            if not _is_tensor(self):
                return g * 0.5 / (self ** 0.5)
            record = OPS.record
            PowBackward0 = OPS.PowBackward0
            a = self._data
            power = record(PowBackward0, 1 / _xp(a).sqrt(a), (self,), self=self, exponent=-0.5)
            return g * mul_scalar(power, 0.5)
        return g * mul_scalar(self ** (exponent - 1), exponent)
    return where(_raw(exponent) == 0, 0.0, g * (exponent * self ** sub_scalar(exponent, 1)))


def pow_exponent_grad(g, self, exponent, result):
    """d/dn x^n = x^n log x, taken as 0 where x == 0 and n >= 0 (there x^n is 0
    or 1 whatever n does).  The 0 is chosen by ``where``, as PyTorch does, so a
    second derivative still meets log 0 = -inf there (and gives NaN, as
    PyTorch's does).  ``2 ** x`` keeps its base as a number: its log is a number."""
    mul_scalar = OPS.mul_scalar  # (result * log(base): a Scalar, MulBackward1)
    if self.__class__ in (builtins.int, builtins.float):
        if self != 0:
            return g * mul_scalar(result, math.log(self) if self > 0 else math.nan)
        return g * where(_raw(exponent) >= 0, 0.0, mul_scalar(result, -math.inf))
    mask = (_raw(self) == 0) & (_raw(exponent) >= 0)
    return g * where(mask, 0.0, result * log(self))


def index_fill_of(g, dim, index):
    """g with 0 in the slices along ``dim`` that ``index`` names (what they held
    was overwritten by the fill): PyTorch's ``g.index_fill(dim, index, 0)``."""
    if _is_tensor(g):
        index_fill = OPS.index_fill
        return index_fill(g, dim, index, 0)
    out = g.copy()
    out[select_key(dim, _raw(index).reshape(-1)) if g.ndim else ()] = 0
    return out


def select_indices(g, dim, index):
    """The slices of g along ``dim`` at ``index``, each named index once (the
    value of an index fill went into each of them once)."""
    once = _xp(_raw(index)).unique(_raw(index).reshape(-1))
    if _is_tensor(g) and g.ndim:  # PyTorch's index_select (IndexSelectBackward0)
        index_select = OPS.index_select
        return index_select(g, dim, Tensor._make(once))
    return g[select_key(dim, once) if g.ndim else ()]


def trace_backward(g, sizes):
    """The gradient of a trace: g on the main diagonal of a zero matrix of
    ``sizes``.  PyTorch's way: an index fill of a flat zero tensor at every
    (m + 1)-th element, viewed as the matrix (IndexFillBackward1, ViewBackward0)."""
    n, m = sizes
    k = builtins.min(n, m)  # (the diagonal's length: every (m + 1)-th element, k of them)
    if _is_tensor(g):
        arange, zeros = OPS.arange, OPS.zeros
        index_fill = OPS.index_fill
        flat = zeros(n * m, dtype=g.dtype, device=g.device)
        at = arange(0, k * (m + 1), m + 1, device=g.device)
        return index_fill(flat, 0, at, g).view(n, m)
    xp = _xp(g)
    flat = xp.zeros(n * m, dtype=g.dtype)
    flat[:k * (m + 1):m + 1] = g
    return flat.reshape(n, m)


def logit_backward(g, self, eps):
    """g / (x (1 - x)) where the input was used as it is: inside [eps, 1 - eps]
    (0 outside, where logit clamped it), or inside [0, 1] without eps (NaN
    outside, where logit itself is NaN) -- PyTorch's formula, the same on Tensors."""
    lo, hi, other = (0.0, 1.0, math.nan) if eps is None else (eps, 1.0 - eps, 0.0)
    one = 1 if eps is None or not _is_tensor(self) else \
        _like(self, _xp(_raw(self)).ones_like(_raw(self)))  # (PyTorch: a tensor of 1s here)
    return where(inside(self, lo, hi), g / (self * (one - self)), other)


def logit(x):
    """log(x / (1 - x)) (recorded as LogitBackward0 on Tensors)."""
    if _is_tensor(x):
        recorded = OPS.logit
        return recorded(x)
    return _xp(x).log(x / (1 - x))


def atan2_recip(self, other):
    """1 / (self² + other²), shared by both gradients of atan2, and 0 where both
    are 0 (atan2 has no derivative at the origin; PyTorch gives 0 there).  On
    Tensors PyTorch's graph: ReciprocalBackward0 under MaskedFillBackward0."""
    denominator = self * self + other * other
    if _is_tensor(denominator):
        recip = denominator.reciprocal()
    else:
        recip = 1 / denominator
    return masked_fill(recip, _raw(denominator) == 0, 0)


def norm_backward(g, self, result, ord, dim):  # noqa: A002 - PyTorch's name
    """d/dx of the p-norm r = (sum |x|^p)^(1/p):  sign(x) |x|^(p-1) / r^(p-1).
    p=2 gives x / r, p=1 gives sign(x); p=inf sends g to the largest |x| (shared
    by ties); a zero norm gets gradient 0 (g and result come unsqueezed)."""
    if ord == 0:
        return zeros_like(self)
    if ord == 1:
        return sgn(self) * g
    if ord == 2:  # (on arrays g / r first: one division of the small reduced array;
        if _is_tensor(g):  # at a zero norm PyTorch's g * 0, NaN for an inf or NaN g)
            return g * div_or_zero(self, result)
        share = div_or_zero(g, result)
        return self * _xp(share).where(result == 0, g * 0, share)
    if ord in (float("inf"), float("-inf")):
        s, r = _raw(self), _raw(result)
        xp = _xp(s)
        hit = (xp.abs(s) == r) | (xp.isnan(s) & xp.isnan(r))
        count = hit.sum(axis=dim, keepdims=True)
        if _is_tensor(g):  # (PyTorch's order: (g / count) * mask)
            return sgn(self) * (g / _like(g, count) * _like(g, hit))
        return sgn(self) * (g * (hit / count).astype(s.dtype))
    # sign(x) |x|^(p-1) in PyTorch's three forms (so a second derivative, and
    # its rounding, is PyTorch's): x |x|^(p-2) from p = 2 up, a product without
    # sign(); sign(x) |x|^(p-1) below; with 0 at x = 0 for p < 1
    if ord >= 2:
        scaled = self * abs(self) ** (ord - 2)
    elif ord > 1:
        scaled = sgn(self) * abs(self) ** (ord - 1)
    else:
        scaled = sgn(self) * masked_fill(abs(self) ** (ord - 1), _raw(self) == 0, 0)
    if ord < 1:  # r^(1-p) is 0 at r = 0 (no division): as PyTorch computes it
        return scaled * g * result ** (1 - ord)
    return scaled * div_or_zero(g, result ** (ord - 1))


def evenly_distribute(g, self, result):
    """max()/min() of everything: g is shared equally by all elements that tie
    (if the result is NaN, by the NaNs: they are what made it)."""
    s, r = _raw(self), _raw(result)
    xp = _xp(s)
    mask = xp.isnan(s) if s.dtype.kind in "fc" and xp.isnan(r) else s == r
    if _is_tensor(g):  # PyTorch's: zeros, filled with g / count where the mask is
        fill = OPS.masked_fill
        zeros = _like(g, xp.zeros(s.shape, dtype=_raw(g).dtype))
        return fill(zeros, _like(g, mask), g / _like(g, mask.sum()))
    return g * (mask / mask.sum()).astype(s.dtype)


def place_at(g, indices, dim, keepdim, sizes):
    """max(dim), min(dim), median(dim) and sort: each gradient goes back to the
    position its index points at, into zeros (PyTorch's
    ``value_selecting_reduction_backward``: ``zeros.scatter(dim, indices, g)``,
    a choice, not a product, so an infinite g stays out of the others)."""
    scatter_into_zeros = OPS.scatter_into_zeros
    if not keepdim and sizes:  # put the reduced dimension back, in g and in the indices
        idx = _raw(indices)
        indices = _like(g, _xp(idx).expand_dims(idx, dim))
        g = unsqueeze_dims(g, (dim,), False)
    return scatter_into_zeros(g, sizes, dim, indices)


def ties_half(g, a, b):
    """g where a wins (a > b), g/2 where a and b tie, 0 where b wins (maximum and
    minimum).  Written as a choice, not a product, so that an infinite g does not
    turn the losers' 0 into NaN.  A NaN wins against anything (it is the
    result), so both sides of a NaN get g.  (PyTorch's order: the halves chosen
    first, then the losers' places filled with 0.)"""
    div_scalar = OPS.div_scalar
    x, y = _raw(a), _raw(b)
    return masked_fill(where(x == y, div_scalar(g, 2), g), x < y, 0)


def spread_to_extremes(g, self, result, dim, keepdim):
    """amax/amin: g shared equally by the elements equal to the extreme."""
    r, s = _raw(result), _raw(self)
    r = r if keepdim else _xp(r).expand_dims(r, dim)
    mask = s == r
    count = mask.sum(axis=dim, keepdims=True)
    if _is_tensor(g):  # PyTorch's scale_grad_by_count: (g / count) * mask
        return restore_dims(g, dim, keepdim) / _like(g, count) * _like(g, mask)
    return restore_dims(g, dim, keepdim) * (mask / count).astype(s.dtype)


def mm_mat2_grad(g, mat1, mat2):
    """mat1ᵀ @ g, laid out like ``mat2``: when mat2 is a transposed view (``W.t()``
    in ``nn.Linear``), compute (gᵀ @ mat1)ᵀ so that transposing it back for W is
    free and W's gradient is stored without a strided copy (as PyTorch does)."""
    m = _raw(mat2)
    if not m.flags.c_contiguous and m.flags.f_contiguous:
        return t(t(g) @ mat1)
    return t(mat1) @ g


def std_backward(g, self, result, dim, correction, keepdim):
    """The std's gradient is the variance's, times d sqrt(v)/dv = 1/(2 std); 0
    where the std is 0, as PyTorch chooses.  (Recorded even without degrees of
    freedom left, where the variance's is a constant: as in PyTorch.)"""
    mul_scalar = OPS.mul_scalar
    g = masked_fill(g / mul_scalar(result, 2), _raw(result) == 0, 0)
    return var_backward(g, self, dim, correction, keepdim, constant_without_dof=False)


def var_backward(g, self, dim, correction, keepdim, constant_without_dof=True):
    """2 (x - mean) / (N - correction), times g.  With no degrees of freedom
    left in ``var()`` of a whole tensor (one element, none), PyTorch's gradient
    is a constant (NaN, or empty): not differentiable again."""
    whole = dim is None or not self.ndim  # (var() with no dim: PyTorch saves dim=None)
    dims = tuple(range(self.ndim)) if dim is None else dim
    dof = count_of(self, dims) - correction
    if dof <= 0 and whole and _is_tensor(g) and constant_without_dof:
        return _like(g, var_backward(_raw(g), _raw(self), dims, correction, keepdim))
    if dof <= 0 and whole and not (_is_tensor(g) or _is_tensor(self)):
        return g * without_dof(self)
    if whole:
        centered = self - mean(self)
    else:
        g = unsqueeze_dims(g, dims, keepdim) if self.ndim > 1 else g
        centered = self - mean(self, dims, True)
    mul_scalar = OPS.mul_scalar  # ((2 / dof) g, a Scalar times g, as PyTorch writes it)
    return mul_scalar(g, 2.0 / dof if dof else math.inf) * centered


def mean_backward(g, self, dims, keepdim):
    """A mean's gradient: g put back over the reduced dims, divided by their
    count (PyTorch's ``sum_backward(g) / N``: a DivBackward1 on Tensors)."""
    div_scalar = OPS.div_scalar
    return div_scalar(expand(unsqueeze_dims(g, dims, keepdim), tuple(self.shape)),
                      count_of(self, dims))


def without_dof(self):
    """2 / (N - correction) with no degrees of freedom left is infinite, and
    PyTorch's gradient of a whole-tensor variance there is g times this
    constant: NaN where x equals its mean (inf * 0), inf where it does not (a
    NaN or an infinity among the elements)."""
    if _is_tensor(self):
        return _like(self, without_dof(_raw(self)))
    xp = _xp(self)
    return xp.where(self == mean(self), xp.full_like(self, math.nan),
                    xp.full_like(self, math.inf))


TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def gelu_slope(x, approximate):
    """d/dx gelu(x) = Φ(x) + x φ(x) (φ the normal density); for the tanh form the
    derivative of 0.5 x (1 + tanh(k (x + c x³)))."""
    if approximate == "tanh":
        k, c = math.sqrt(2.0 / math.pi), 0.044715
        u = k * (x + c * x * x * x)
        t = u.tanh() if _is_tensor(u) else _xp(u).tanh(u)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)
    if _is_tensor(x):
        erf = OPS.erf
        cdf = 0.5 * (1 + erf(x * (1 / math.sqrt(2.0))))
    else:
        _erf_array = OPS._erf_array
        cdf = 0.5 * (1 + _erf_array(x * (1 / math.sqrt(2.0))))
    return cdf + x * exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))


def zero_at(g, indices):
    """g with the entries at ``indices`` set to 0 (they were overwritten).  On
    Tensors PyTorch's ``g.index_put(indices, 0)`` (IndexPutBackward0)."""
    if _is_tensor(g):
        index_put = OPS.index_put
        return index_put(g, indices, 0)
    ga = _raw(g)
    mask = _xp(ga).ones(ga.shape, dtype=ga.dtype)
    mask[indices] = 0
    return g * _like(g, mask)


def split_sizes(g, sizes, dim):
    """Cut g along ``dim`` into pieces of the given sizes (backward of cat)."""
    pieces, start = [], 0
    for s in sizes:
        if s is None:  # a 1-D empty tensor that cat left out: an empty gradient
            a = _raw(g)
            pieces.append(_like(g, _xp(a).zeros((0,), dtype=a.dtype)))
            continue
        key = (slice(None),) * (dim % g.ndim) + (slice(start, start + s),)
        pieces.append(g[key])
        start += s
    return pieces


def unbind(g, dim):
    """The slices of g along ``dim`` (backward of stack)."""
    if _is_tensor(g):  # (one select each, as PyTorch: SelectBackward0 nodes)
        return [g.select(dim, i) for i in range(g.shape[dim])]
    return [g[(slice(None),) * (dim % g.ndim) + (i,)] for i in range(g.shape[dim])]


def repeat_backward(g, repeats, sizes):
    """Sum the copies that ``repeat`` made back onto the original, in PyTorch's
    steps: the new leading dimensions summed away one by one, then each repeated
    dimension split into (copies, size) and all the copies summed at once."""
    if 0 in repeats:
        a = _raw(g)
        return _like(g, _xp(a).zeros(tuple(sizes), dtype=a.dtype))
    lead = len(repeats) - len(sizes)
    for _ in range(lead):
        g = sum(g, 0)
    split, copies = [], []
    for r, s in zip(repeats[lead:], sizes):
        if r != 1:
            copies.append(len(split))
            split.append(r)
        split.append(s)
    return sum(reshape(g, split), tuple(copies)) if copies else g


_WORDS = (logit, logit_backward, index_fill_of, select_indices, trace_backward, norm_backward,
          atan2_recip, pow_backward, pow_exponent_grad, evenly_distribute, place_at, ties_half,
          spread_to_extremes, var_backward, std_backward, mean_backward, mm_mat2_grad, zero_at,
          split_sizes, unbind, repeat_backward, gelu_slope)


ENV.update({fn.__name__: fn for fn in _WORDS})
ENV["TWO_OVER_SQRT_PI"] = TWO_OVER_SQRT_PI
