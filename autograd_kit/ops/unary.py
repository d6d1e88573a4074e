"""Elementwise functions of one tensor: exp, log, trig, activations, clamp...

For ``y = f(x)`` applied element by element, the chain rule is a plain product:
x receives ``g * f'(x)``.  Where f' is cheaper to write with the output
(``exp``: f' = y; ``tanh``: f' = 1 - y²; ``sigmoid``: f' = y(1 - y)), forward
saves ``result`` instead of ``self``.
"""
from __future__ import annotations

import math

from ._rules import RESULT, record, rule
from .. import backend
from ..tensor import scalar_type_name


def _xp(t):
    return backend.xp_of(t._data)


def _float(t):
    """Integer inputs to exp, log... compute in the default float type, as in PyTorch."""
    d = t._data
    return d if d.dtype.kind in "fc" else d.astype(backend.get_default_dtype().np)


def exp(x):
    return record(ExpBackward0, _xp(x).exp(_float(x)), (x,), result=RESULT)


def log(x):
    return record(LogBackward0, _xp(x).log(_float(x)), (x,), self=x)


def logit(x, eps=None):
    """log(x / (1 - x)), the inverse of sigmoid; with ``eps``, x is first
    clamped to [eps, 1 - eps] (and the gradient is 0 outside)."""
    xp, a = _xp(x), _float(x)
    if eps is not None:
        a = xp.clip(a, eps, 1 - eps)
    return record(LogitBackward0, xp.log(a / (1 - a)), (x,), self=x,
                  eps=None if eps is None else float(eps))


def sin(x):
    return record(SinBackward0, _xp(x).sin(_float(x)), (x,), self=x)


def cos(x):
    return record(CosBackward0, _xp(x).cos(_float(x)), (x,), self=x)


def tanh(x):
    return record(TanhBackward0, _xp(x).tanh(_float(x)), (x,), result=RESULT)


def sigmoid(x):
    xp, d = _xp(x), _float(x)
    out = xp.exp(-xp.logaddexp(0, -d)).astype(d.dtype, copy=False)  # 1/(1+e^-x), stable
    return record(SigmoidBackward0, out, (x,), result=RESULT)


def relu(x):
    out = _xp(x).maximum(x._data, 0)
    if out.dtype is not x._data.dtype and x._data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return record(ReluBackward0, out, (x,), result=RESULT)


def _floats_only(x, kernel):
    """PyTorch's refusal of an integer or boolean input to a float-only kernel."""
    if x._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(x._data.dtype)}'")


def sqrt(x):
    return record(SqrtBackward0, _xp(x).sqrt(_float(x)), (x,), result=RESULT)


def rsqrt(x):
    return record(RsqrtBackward0, 1 / _xp(x).sqrt(_float(x)), (x,), result=RESULT)


def abs(x):  # noqa: A001 - PyTorch's name
    if x._data.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return record(AbsBackward0, _xp(x).abs(x._data), (x,), self=x)


def reciprocal(x):
    return record(ReciprocalBackward0, 1 / _float(x), (x,), result=RESULT)


def square(x):
    from .arith import pow
    return pow(x, 2)


def clamp(x, min=None, max=None):  # noqa: A002 - PyTorch's names
    """Limit values to [min, max]; the gradient passes only where x was inside."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    d = x._data
    dt = d.dtype  # PyTorch's result type: an int tensor clamped to 0.5 becomes float
    for bound in (min, max):
        if bound is not None and not hasattr(bound, "_data"):
            dt = backend.promote(d.astype(dt, copy=False), backend.scalar_array(bound, d))
    if dt.kind in "iu" and d.dtype == dt:  # integer bounds in the tensor's type (wrapped)
        min, max = (None if v is None else backend.scalar_array(v, d) for v in (min, max))
    xp = _xp(x)
    if hasattr(min, "_data") or hasattr(max, "_data"):
        out = xp.clip(d, min, max)
    else:  # max(x, min), then min(., max), the bound first: of two equal values (0.0 and
        out = d  # -0.0) numpy keeps the second, PyTorch x's own
        if min is not None:
            out = xp.maximum(min, out)
        if max is not None:
            out = xp.minimum(max, out)
    out = out.astype(dt, copy=False)
    return record(ClampBackward1, out, (x,), self=x, min=min, max=max)


def clamp_min(x, min):  # noqa: A002
    out = clamp(x, min=min)  # (its own node in PyTorch: ClampMinBackward0)
    if out._grad_fn is not None:
        out = record(ClampMinBackward0, out._data, (x,), self=x, min=min)
    return out


def clamp_max(x, max):  # noqa: A002
    out = clamp(x, max=max)
    if out._grad_fn is not None:
        out = record(ClampMaxBackward0, out._data, (x,), self=x, max=max)
    return out


def sign(x):
    """-1, 0 or 1 (0 at NaN, as in PyTorch; numpy's sign gives NaN)."""
    d = x._data
    out = (d > 0).astype(d.dtype) - (d < 0) if d.dtype.kind == "f" else \
        d.copy() if d.dtype.kind == "b" else _xp(x).sign(d)
    return record(SignBackward0, out, (x,))


def floor(x):
    if x._data.dtype.kind == "b":
        raise NotImplementedError("\"floor_vml_cpu\" not implemented for 'Bool'")
    return record(FloorBackward0, _xp(x).floor(x._data), (x,))


def ceil(x):
    if x._data.dtype.kind == "b":
        raise NotImplementedError("\"ceil_vml_cpu\" not implemented for 'Bool'")
    return record(CeilBackward0, _xp(x).ceil(x._data), (x,))


def round(x, decimals=0):  # noqa: A001
    if x._data.dtype.kind == "b" or (decimals and x._data.dtype.kind != "f"):
        raise NotImplementedError(f'"round_cpu" not implemented for '
                                  f"'{scalar_type_name(x._data.dtype)}'")
    return record(RoundBackward1 if decimals else RoundBackward0,
                  _xp(x).round(x._data, decimals), (x,))


def positive(x):
    """``+x``: x itself (refused for booleans, as in PyTorch)."""
    if x._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


def leaky_relu(x, negative_slope=0.01):
    _floats_only(x, "leaky_relu_cpu")
    xp = _xp(x)
    out = xp.where(x._data > 0, x._data, x._data * negative_slope).astype(x._data.dtype)
    return record(LeakyReluBackward0, out, (x,), self=x, negative_slope=negative_slope)


def leaky_relu_into(x, negative_slope=0.01):
    """The value of the in-place form ``leaky_relu_``: its node keeps the output
    (LeakyReluBackward1), as in PyTorch, since the input is overwritten."""
    _floats_only(x, "leaky_relu_cpu")
    xp = _xp(x)
    out = xp.where(x._data > 0, x._data, x._data * negative_slope).astype(x._data.dtype)
    return record(LeakyReluBackward1, out, (x,), result=RESULT, negative_slope=negative_slope)


# -- recorded backward steps (what a second derivative differentiates) --------
def threshold_backward(g, result, threshold):
    """relu's gradient on Tensors: g where the output is above the threshold."""
    out = _xp(g).where(result._data <= threshold, 0, g._data)
    return record(ThresholdBackwardBackward0, out, (g, result), self=result,
                  threshold=threshold)


def leaky_relu_backward(g, x, negative_slope):
    out = _xp(g).where(x._data > 0, g._data, g._data * negative_slope)
    return record(LeakyReluBackwardBackward0, out, (g, x), self=x,
                  negative_slope=negative_slope)


# -- more activations: softplus, elu, gelu -----------------------------------
def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(βx)) / β, smooth relu; x itself where βx > threshold."""
    _floats_only(x, "softplus_cpu")
    a = x._data
    xp = _xp(x)
    z = a * beta
    out = xp.where(z > threshold, a, xp.log1p(xp.exp(xp.minimum(z, threshold))) / beta)
    return record(SoftplusBackward0, out.astype(a.dtype, copy=False), (x,), self=x, beta=beta,
                  threshold=threshold)


def elu(x, alpha=1.0):
    """x where x > 0, α(e^x - 1) elsewhere."""
    _floats_only(x, "elu_cpu")
    a = x._data
    xp = _xp(x)
    out = xp.where(a > 0, a, alpha * xp.expm1(xp.minimum(a, 0)))
    return record(EluBackward0, out.astype(a.dtype, copy=False), (x,), self=x, alpha=alpha)


def erf(x):
    """The error function, 2/√π ∫_0^x e^(-t²) dt (Python's math.erf, element by element)."""
    a = _float(x)
    return record(ErfBackward0, _erf_array(a), (x,), self=x)


def _erf_array(a):
    if not backend.is_array(a):  # (a numpy scalar, from arithmetic on 0-d arrays)
        a = backend.np.asarray(a)
    if a.__class__ is backend.ndarray:
        return backend.np.asarray(backend.np.frompyfunc(math.erf, 1, 1)(a)).astype(a.dtype) \
            if a.size else a.copy()
    return _erf_series(a)


def _erf_series(a):
    """erf on any array module, from its series with positive terms only,
    erf(x) = 2/√π e^(-x²) Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)): no cancellation, so
    accurate to the last digits for |x| <= 6 (beyond, erf is ±1 in float64)."""
    xp = backend.xp_of(a)
    x = xp.clip(a.astype(backend.float64.np), -6.0, 6.0)
    term = x.copy()
    total = x.copy()
    x2 = x * x
    for n in range(1, 160):
        term = term * (2.0 * x2 / (2 * n + 1))
        total = total + term
    out = total * xp.exp(-x2) * (2.0 / math.sqrt(math.pi))
    out = xp.where(xp.isnan(a), a, out)
    return out.astype(a.dtype)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x, approximate="none"):
    """x·Φ(x), Φ the normal distribution's CDF (0.5(1 + erf(x/√2))); with
    ``approximate="tanh"``, Φ(x) ≈ 0.5(1 + tanh(√(2/π)(x + 0.044715x³)))."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    _floats_only(x, "GeluKernelImpl")
    a = x._data
    xp = _xp(x)
    if approximate == "tanh":
        out = 0.5 * a * (1 + xp.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a ** 3)))
    else:
        out = 0.5 * a * (1 + _erf_array(a * (1 / math.sqrt(2.0))))
    return record(GeluBackward0, out.astype(a.dtype, copy=False), (x,), self=x,
                  approximate=approximate)


# Backward formulas: g is the gradient of the output; one formula per input.
ExpBackward0 = rule("ExpBackward0", "result", self="g * result")
LogBackward0 = rule("LogBackward0", "self", self="g / self")
LogitBackward0 = rule("LogitBackward0", "self eps", self="logit_backward(g, self, eps)")
SinBackward0 = rule("SinBackward0", "self", self="g * cos(self)")
CosBackward0 = rule("CosBackward0", "self", self="g * -sin(self)")
TanhBackward0 = rule("TanhBackward0", "result", self="tanh_backward(g, result)")
SigmoidBackward0 = rule("SigmoidBackward0", "result", self="sigmoid_backward(g, result)")
ReluBackward0 = rule("ReluBackward0", "result", self="threshold_backward(g, result, 0)")
# (the output is 0 where x <= 0, else x itself, NaN included: NaN passes g, as in PyTorch)
ThresholdBackwardBackward0 = rule("ThresholdBackwardBackward0", "self threshold",
                                  grad_output="threshold_backward(g, self, threshold)",
                                  self="zeros_like(g)")
SqrtBackward0 = rule("SqrtBackward0", "result", self="g / mul_scalar(result, 2)")
RsqrtBackward0 = rule("RsqrtBackward0", "result", self="mul_scalar(g, -0.5) * result ** 3")
AbsBackward0 = rule("AbsBackward0", "self", self="g * sgn(self)")
ReciprocalBackward0 = rule("ReciprocalBackward0", "result", self="-g * (result * result)")
ClampBackward1 = rule("ClampBackward1", "self min max", self="clamp_grad(g, self, min, max)")
ClampMinBackward0 = rule("ClampMinBackward0", "self min", self="clamp_grad(g, self, min, None)")
ClampMaxBackward0 = rule("ClampMaxBackward0", "self max", self="clamp_grad(g, self, None, max)")
SignBackward0 = rule("SignBackward0", "", self="zeros_like(g)")
FloorBackward0 = rule("FloorBackward0", "", self="zeros_like(g)")
CeilBackward0 = rule("CeilBackward0", "", self="zeros_like(g)")
RoundBackward0 = rule("RoundBackward0", "", self="zeros_like(g)")
RoundBackward1 = rule("RoundBackward1", "", self="zeros_like(g)")  # (round(decimals=n))
LeakyReluBackward0 = rule("LeakyReluBackward0", "self negative_slope",
                          self="leaky_relu_backward(g, self, negative_slope)")
LeakyReluBackward1 = rule("LeakyReluBackward1", "result negative_slope",
                          self="leaky_relu_backward(g, result, negative_slope)")
LeakyReluBackwardBackward0 = rule("LeakyReluBackwardBackward0", "self negative_slope",
                                  grad_output="leaky_relu_backward(g, self, negative_slope)",
                                  self="zeros_like(g)")
# softplus, elu and gelu have backward kernels of their own (kernels.py), recorded
# as one node each under create_graph=True.  (elu's kernel, PyTorch's choices: at
# 0 the slope is alpha, a constant -- its second derivative is 0 there -- and a
# NaN input takes the slope 1 of the positive side.)
SoftplusBackward0 = rule("SoftplusBackward0", "self beta threshold",
                         self="softplus_backward(g, self, beta, threshold)")
EluBackward0 = rule("EluBackward0", "self alpha",
                    self="elu_backward(g, alpha, 1, 1, False, self)")
ErfBackward0 = rule("ErfBackward0", "self",
                    self="mul_scalar(exp(-(self ** 2)), TWO_OVER_SQRT_PI) * g")
GeluBackward0 = rule("GeluBackward0", "self approximate",
                     self="gelu_backward(g, self, approximate)")
