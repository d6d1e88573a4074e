"""The check of Lesson 15 (non-differentiable points and NaN traps), registered by
:mod:`.registry`.

The learner's answer is ``safe_sqrt(x)``: the square root of ``x`` where ``x > 0``
and 0 elsewhere, written with the kit's operations so that neither the value nor
the gradient holds a NaN or an infinity, whatever ``x`` holds.  Wanted, element by
element, for an upstream gradient ``g``::

    value     sqrt(x)           where x > 0,   0 (exactly) where x <= 0
    x.grad    g / (2 sqrt(x))   where x > 0,   0 (exactly) where x <= 0

In the spirit of ``gradcheck``, the check makes its own tensors each time
(float32 and float64, random shapes) holding exact zeros, ``-0.0``, negatives,
tiny positives (down to 1e-30), ordinary numbers and huge ones (up to 1e30), and
sends a random upstream gradient back; nothing is taken from the notebook.

Why "exactly 0" where ``x <= 0``, and a relative tolerance elsewhere: the usual
shortcut of adding a small epsilon before the root (``(x + 1e-8).sqrt()``) hides
the NaN by answering a different question.  Its value at 0 is ``sqrt(eps)``, not
0, and its slope there is ``1 / (2 sqrt(eps))``, a huge finite number where the
function asked for is flat; near 0 (the tiny positives) both value and slope are
off by far more than rounding.  The exact operations (``where``, ``relu``) give
exact zeros, so no tolerance is needed there, and elsewhere the tolerance is a
few hundred roundings of the dtype (1e-5 for float32, 1e-9 for float64).

The comparisons use plain Python floats (``tolist()``), not numpy or ``math``
helpers that a notebook could patch.  What is wrong is said as a misconception,
never as the code that would fix it.
"""
from __future__ import annotations

from .common import N_, python_rng, still_open
from .sentences import OPEN


_TOLERANCE = {"float32": 1e-5, "float64": 1e-9}


def _numbers(rng, n: int) -> list:
    """``n`` numbers (n >= 12) with every kind of trouble in them, shuffled."""
    out = [0.0, 0.0, -0.0]
    out += [-rng.uniform(1e-3, 5.0) for _ in range(3)]
    out += [-(10 ** rng.uniform(-30, -4)), -(10 ** rng.uniform(4, 30))]
    out += [10 ** rng.uniform(-30, -8) for _ in range(2)]
    out += [10 ** rng.uniform(8, 30)]
    out += [rng.uniform(0.01, 100.0) for _ in range(n - len(out))]
    rng.shuffle(out)
    return out


def _upstream(rng, n: int) -> list:
    return [rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 2.0) for _ in range(n)]


def _flat(values) -> list:
    """A nested list (from ``tolist()``) as one flat list of floats."""
    if not isinstance(values, list):
        return [float(values)]
    out = []
    for v in values:
        out += _flat(v)
    return out


def _bad(v: float) -> bool:
    """NaN or an infinity (``v != v`` is true for NaN only)."""
    return v != v or v in (float("inf"), float("-inf"))


def _close(got: float, want: float, tol: float) -> bool:
    return not _bad(got) and abs(got - want) <= tol * abs(want)


def _trial(safe_sqrt, rng, dtype_name: str) -> str | None:
    import autograd_kit as ak

    rows = rng.choice((1, 2, 3))
    cols = rng.randint(12, 16)
    numbers = [v for _row in range(rows) for v in _numbers(rng, cols)]
    ups = _upstream(rng, rows * cols)
    dtype = getattr(ak, dtype_name)

    def shaped(values):
        return [values[r * cols:(r + 1) * cols] for r in range(rows)] if rows > 1 else values

    x = ak.tensor(shaped(numbers), dtype=dtype, requires_grad=True)
    xs = _flat(x.detach().tolist())          # the numbers as the dtype holds them
    out = safe_sqrt(x)
    if not isinstance(out, ak.Tensor):
        return N_("safe_sqrt should return a tensor of the kit, made from x with the kit's "
                  "operations")
    if tuple(out.shape) != tuple(x.shape):
        return N_("the result does not have the shape of x: safe_sqrt works element by "
                  "element")
    problem = _value_problem(xs, _flat(out.detach().tolist()), _TOLERANCE[dtype_name])
    if problem:
        return problem
    if not out.requires_grad or out.grad_fn is None:
        return N_("the values are right, but the result is not connected to x in the graph, "
                  "so no gradient can reach x: it was computed from a detached copy or from "
                  "plain numbers")
    g = ak.tensor(shaped(ups), dtype=out.dtype)     # (a result promoted to float64 is fine)
    gs = _flat(g.tolist())
    out.backward(g)
    if x.grad is None:
        return N_("after backward x.grad is still None: no gradient reached x")
    return _grad_problem(xs, gs, _flat(x.grad.tolist()), _TOLERANCE[dtype_name])


def _value_problem(xs: list, got: list, tol: float) -> str | None:
    """Which value is wrong, most telling first: a NaN kept, a small shift at 0 (an
    epsilon), a wrong root, a number other than 0 where x <= 0."""
    pairs = list(zip(xs, got))
    if any(v != v for x, v in pairs if x <= 0):
        return N_("the result is NaN for some x <= 0: where x <= 0 the answer is 0, "
                  "and a NaN kept in the value is not 0")
    if any(x == 0 and 0 < abs(v) < 1e-2 for x, v in pairs):
        return N_("at x = 0 the result is not exactly 0: a small number added before "
                  "the square root shifts both the value and the slope near 0")
    if not all(_close(v, x ** 0.5, tol) for x, v in pairs if x > 0):
        return N_("for positive x the result is not the square root of x")
    if any(v != 0 for x, v in pairs if x <= 0):
        return N_("for some x <= 0 the result is not 0: safe_sqrt is 0 wherever x <= 0")
    return None


def _grad_problem(xs: list, gs: list, grads: list, tol: float) -> str | None:
    inside = [(x, g, d) for x, g, d in zip(xs, gs, grads) if x > 0]
    outside = [(x, d) for x, _g, d in zip(xs, gs, grads) if x <= 0]
    if any(d != d for _x, d in outside):
        return N_("the values are right, but the gradient is NaN where x <= 0: the square "
                  "root is still taken of numbers <= 0 there, and its infinite or NaN slope "
                  "times the 0 that the branch receives is NaN, not 0")
    if any(_bad(d) for _x, d in outside):
        return N_("the values are right, but the gradient is infinite at x = 0: the square "
                  "root's slope there is infinite, and an operation before it passed it on "
                  "to x instead of stopping it")
    if any(d != 0 for _x, d in outside):
        return N_("the gradient is not 0 where x <= 0, although safe_sqrt is constant there")
    if any(_bad(d) for _x, _g, d in inside):
        return N_("the gradient is NaN or infinite for some positive x")
    if all(_close(d, 0.5 / x ** 0.5, tol) for x, _g, d in inside):
        return N_("for positive x the gradient does not grow with the upstream gradient "
                  "that backward sends in")
    if not all(_close(d, g * 0.5 / x ** 0.5, tol) for x, g, d in inside):
        return N_("for positive x the gradient is not the slope of the square root, "
                  "1 / (2 sqrt(x)), times the upstream gradient")
    return None


def l15_ex1(safe_sqrt) -> str | None:
    if not callable(safe_sqrt):
        return N_("safe_sqrt should be a function, defined with def safe_sqrt(x)")
    if still_open(safe_sqrt):
        return OPEN
    rng = python_rng()
    for dtype_name in ("float64", "float32", "float64", "float32"):
        problem = _trial(safe_sqrt, rng, dtype_name)
        if problem:
            return problem
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson15.ex1": (("safe_sqrt",), ("function",), l15_ex1),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson15.ex1": (
        N_("Exercise 1 (a square root without NaN)"),
        N_("the gradient that where sends to the branch it did not pick is 0, but 0 times "
           "an infinite or NaN slope is NaN: make the input of the square root harmless "
           "where x <= 0 before taking the root, then pick."),
        N_("No infinite or NaN slope is left on any path from the result back to x, so the "
           "zeros sent to the unused branch stay zeros.")),
}
