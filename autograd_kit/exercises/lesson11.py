"""The checks of Lesson 11 (higher order and gradcheck): a second
derivative, a Hessian, and a ``second_derivative`` of the learner's own that
must differentiate twice with autograd.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, Counted, near, num, numpy_rng, shape_words


def l11_ex1(value):
    return None if near(value, -14.0) else _("the value is not right")


def l11_ex2(hessian):
    return None if near(hessian, [[8.0, 11.0], [11.0, 2.0]]) else shape_words(hessian, (2, 2))


def l11_ex3(candidate):
    import math as m
    if not callable(candidate):
        return N_("second_derivative should be a function, defined with "
                  "def second_derivative(fn, at)")
    rng = numpy_rng()
    a, b, c = (float(v) for v in rng.uniform(-2.0, 2.0, 3))
    cases = [(lambda t: a * t ** 3 + b * t ** 2 + c * t, lambda t: 6 * a * t + 2 * b),
             (lambda t: (t * a / 2).exp(), lambda t: (a / 2) ** 2 * m.exp(a * t / 2)),
             (lambda t: (t * b).sin(), lambda t: -b * b * m.sin(b * t))]
    for fn, exact in cases:
        at = float(rng.uniform(-1.5, 1.5))
        with Counted() as runs:
            got = candidate(fn, at)
        try:
            got = num(got)
        except TypeError:
            return _("it should return the second derivative as a number")
        want = exact(at)
        if abs(got - want) > 1e-3 * max(1.0, abs(want)):
            return _("for some functions and points it does not return the second derivative")
        if runs.runs < 2:
            return _("the value is close, but autograd did not compute it: differentiate twice "
                     "with autograd.grad instead of using differences of values")
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson11.ex1": (("my_second_derivative",), ("number",), l11_ex1),
    "lesson11.ex2": (("my_hessian",), ("numbers",), l11_ex2),
    "lesson11.ex3": (("second_derivative",), ("function",), l11_ex3),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson11.ex1": (
        N_("Exercise 1"),
        N_("Differentiate twice: q'(t) = 6t^2 - 2t + 4, then differentiate that once more "
           "and put t = -1."),
        N_("q'(t) = 6t^2 - 2t + 4 and q''(t) = 12t - 2 = -14 at t = -1.")),
    "lesson11.ex2": (
        N_("Exercise 2"),
        N_("Row i is the gradient of the i-th entry of the gradient. First find dh/da = "
           "2ab^2 + 3b and dh/db = 2a^2 b + 3a, then differentiate each by a and by b."),
        N_("h_aa = 2b^2 = 8, h_ab = h_ba = 4ab + 3 = 11, h_bb = 2a^2 = 2.")),
    "lesson11.ex3": (
        N_("Exercise 3"),
        N_("The second call can only differentiate what the first call recorded. Which "
           "argument makes autograd.grad record the computation of the gradient?"),
        N_("With create_graph=True the first gradient is built from recorded operations, so "
           "it has a grad_fn and can be differentiated again.")),
}
