"""Elementwise functions of one tensor: exp, log, trig, activations, clamp...

For ``y = f(x)`` applied element by element, the chain rule is a plain product:
x receives ``g * f'(x)``.  Where f' is cheaper to write with the output
(``exp``: f' = y; ``tanh``: f' = 1 - y²; ``sigmoid``: f' = y(1 - y)), forward
saves ``result`` instead of ``self``.
"""
from __future__ import annotations

from ._rules import RESULT, record, rule
from .. import backend


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
    return record(ReluBackward0, _xp(x).maximum(x._data, 0), (x,), result=RESULT)


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
    out = _xp(x).clip(d, min, max).astype(dt, copy=False)
    return record(ClampBackward1, out, (x,), self=x, min=min, max=max)


def clamp_min(x, min):  # noqa: A002
    return clamp(x, min=min)


def clamp_max(x, max):  # noqa: A002
    return clamp(x, max=max)


def sign(x):
    """-1, 0 or 1 (0 at NaN, as in PyTorch; numpy's sign gives NaN)."""
    d = x._data
    out = (d > 0).astype(d.dtype) - (d < 0) if d.dtype.kind == "f" else \
        d.copy() if d.dtype.kind == "b" else _xp(x).sign(d)
    return record(SignBackward0, out, (x,))


def floor(x):
    return record(FloorBackward0, _xp(x).floor(x._data), (x,))


def ceil(x):
    return record(CeilBackward0, _xp(x).ceil(x._data), (x,))


def round(x, decimals=0):  # noqa: A001
    return record(RoundBackward0, _xp(x).round(x._data, decimals), (x,))


def leaky_relu(x, negative_slope=0.01):
    xp = _xp(x)
    out = xp.where(x._data > 0, x._data, x._data * negative_slope).astype(x._data.dtype)
    return record(LeakyReluBackward0, out, (x,), self=x, negative_slope=negative_slope)


# Backward formulas: g is the gradient of the output; one formula per input.
ExpBackward0 = rule("ExpBackward0", "result", self="g * result")
LogBackward0 = rule("LogBackward0", "self", self="g / self")
SinBackward0 = rule("SinBackward0", "self", self="g * cos(self)")
CosBackward0 = rule("CosBackward0", "self", self="-g * sin(self)")
TanhBackward0 = rule("TanhBackward0", "result", self="g * (1 - result * result)")
SigmoidBackward0 = rule("SigmoidBackward0", "result", self="g * result * (1 - result)")
ReluBackward0 = rule("ReluBackward0", "result", self="g * (result != 0)")  # (NaN passes g:
# the output is 0 where x <= 0, else x itself, NaN included, as in PyTorch)
SqrtBackward0 = rule("SqrtBackward0", "result", self="g / (2 * result)")
RsqrtBackward0 = rule("RsqrtBackward0", "result", self="-0.5 * g * result ** 3")
AbsBackward0 = rule("AbsBackward0", "self", self="g * sign(self)")
ReciprocalBackward0 = rule("ReciprocalBackward0", "result", self="-g * result * result")
ClampBackward1 = rule("ClampBackward1", "self min max",
                      self="g * inside(self, min, max)")
SignBackward0 = rule("SignBackward0", "", self="zeros_like(g)")
FloorBackward0 = rule("FloorBackward0", "", self="zeros_like(g)")
CeilBackward0 = rule("CeilBackward0", "", self="zeros_like(g)")
RoundBackward0 = rule("RoundBackward0", "", self="zeros_like(g)")
LeakyReluBackward0 = rule("LeakyReluBackward0", "self negative_slope",
                          self="where(self > 0, g, g * negative_slope)")
