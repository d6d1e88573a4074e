"""More elementwise functions: log1p, expm1, log2, log10, tan, sinh, cosh, sgn, and cumsum.

As in ``unary.py``, each derivative is a product with f'(x):

    log1p  1/(1 + x)        expm1  e^x = y + 1      log2   1/(x ln 2)
    log10  1/(x ln 10)      tan    1 + y²           sinh   cosh x     cosh   sinh x
    sgn    0 (the sign of a real number: -1, 0 or 1, a step function)

``cumsum`` (running sum along ``dim``) is the odd one out: output i adds inputs
0..i, so input j receives the gradients of outputs j..n-1 -- a running sum taken
from the other end.
"""
from __future__ import annotations

import math

from .. import backend
from ._rules import RESULT, record, rule
from .formula_env import ENV, _is_tensor
from .dims import wrap_dim
from .unary import _float, _xp


def log1p(x):
    return record(Log1PBackward0, _xp(x).log1p(_float(x)), (x,), self=x)


def expm1(x):
    return record(Expm1Backward0, _xp(x).expm1(_float(x)), (x,), result=RESULT)


def log2(x):
    return record(Log2Backward0, _xp(x).log2(_float(x)), (x,), self=x)


def log10(x):
    return record(Log10Backward0, _xp(x).log10(_float(x)), (x,), self=x)


def tan(x):
    return record(TanBackward0, _xp(x).tan(_float(x)), (x,), result=RESULT)


def sinh(x):
    return record(SinhBackward0, _xp(x).sinh(_float(x)), (x,), self=x)


def cosh(x):
    return record(CoshBackward0, _xp(x).cosh(_float(x)), (x,), self=x)


def sgn(x):
    """The sign, as ``sign`` computes it; PyTorch's name for its complex-safe
    form, which ``abs`` differentiates with (SgnBackward0)."""
    from .unary import sign
    out = sign(x)  # (PyTorch saves x and the result; a real sign's gradient needs neither)
    if out._grad_fn is None:
        return out
    return record(SgnBackward0, out._data, (x,), self=x, result=RESULT)


def running_input(x, dim, dtype=None):
    """(array, axis) of a running sum or product along ``dim``: cast to
    ``dtype``, or (integers and booleans) to int64, as PyTorch accumulates."""
    a = x._data
    d = wrap_dim(dim, a.ndim) if a.ndim else 0
    if dtype is not None:
        a = a.astype(backend.np_dtype(dtype))
    elif a.dtype.kind in "biu":
        a = a.astype(backend.int64.np)
    return a, d


def cumsum(x, dim, dtype=None):
    a, d = running_input(x, dim, dtype)
    out = a.cumsum(axis=d) if a.ndim else a.copy()
    return record(CumsumBackward0, out, (x,), dim=d)


# ------------------------------------------------- words of the formulas ---
def reverse_cumsum(g, dim):
    """Σ_{i ≥ j} g_i along dim: flip, running sum, flip back."""
    if _is_tensor(g):
        if g.ndim == 0:
            return g
        return cumsum(g.flip(dim), dim).flip(dim)
    if g.ndim == 0:
        return g
    xp = backend.xp_of(g)
    return xp.flip(xp.flip(g, dim).cumsum(axis=dim), dim)


def cosh_of(x):
    return x.cosh() if _is_tensor(x) else backend.xp_of(x).cosh(x)


def sinh_of(x):
    return x.sinh() if _is_tensor(x) else backend.xp_of(x).sinh(x)


ENV.update({"reverse_cumsum": reverse_cumsum, "cosh_of": cosh_of, "sinh_of": sinh_of,
            "LN2": math.log(2.0), "LN10": math.log(10.0)})

# Backward formulas: g is the gradient of the output; one formula per input.
Log1PBackward0 = rule("Log1PBackward0", "self", self="g / add_scalar(self, 1)")
Expm1Backward0 = rule("Expm1Backward0", "result", self="g * add_scalar(result, 1)")
Log2Backward0 = rule("Log2Backward0", "self", self="g / mul_scalar(self, LN2)")
Log10Backward0 = rule("Log10Backward0", "self", self="g / mul_scalar(self, LN10)")
TanBackward0 = rule("TanBackward0", "result", self="g * add_scalar(result ** 2, 1)")
SgnBackward0 = rule("SgnBackward0", "self result", self="zeros_like(g)")
SinhBackward0 = rule("SinhBackward0", "self", self="g * cosh_of(self)")
CoshBackward0 = rule("CoshBackward0", "self", self="g * sinh_of(self)")
CumsumBackward0 = rule("CumsumBackward0", "dim", self="reverse_cumsum(g, dim)")
