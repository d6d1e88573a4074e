"""The checks of Lesson 2 (the dynamic graph): ``next_functions`` and what
each node saves for backward.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_


def _short(names):
    return [n.split("::")[-1] if isinstance(n, str) else n for n in names]


def l02_ex1(top, mul):
    for label, given, want in (("z.grad_fn", top, ["SinBackward0", "AccumulateGrad"]),
                               (N_("the multiplication node"), mul, ["AccumulateGrad", None])):
        label = _(label)
        if not isinstance(given, (list, tuple)):
            return _("the answer for {label} should be a list, one entry per input").format(
                label=label)
        if _short(given) != want:
            return _("the list for {label} is not right").format(label=label)
    return None


def l02_ex2(ratio, squashed, cubed):
    for label, given, want in (("a / d", ratio, ["other", "self"]), ("a.tanh()", squashed,
                                                                     ["result"]),
                               ("a ** 3", cubed, ["exponent", "self"])):
        if not isinstance(given, (list, tuple)) or not all(isinstance(n, str) for n in given):
            return _("the answer for {label} should be a list of names").format(label=label)
        if sorted(given) != want:
            return _("the names for {label} are not right").format(label=label)
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson02.ex1": (("my_top", "my_mul"), ("list", "list"), l02_ex1),
    "lesson02.ex2": (("my_ratio", "my_squashed", "my_cubed"), ("names", "names", "names"), l02_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson02.ex1": (
        N_("Exercise 1"),
        N_("There is one entry per input of the forward operation, in order: the backward "
           "node that made a computed input, AccumulateGrad for a leaf that requires grad, "
           "None for a constant."),
        N_("z = sin(k * c) + k: the addition's inputs came from SinBackward0 and from the "
           "leaf k. The product's inputs are the tracked leaf k (AccumulateGrad) and the "
           "constant c (None).")),
    "lesson02.ex2": (
        N_("Exercise 2"),
        N_("Write down each derivative and list what it is computed from: d(a/d)/da = 1/d "
           "and d(a/d)/dd = -a/d**2; tanh'(a) = 1 - tanh(a)**2; d(a**n)/da = n * a**(n-1). "
           "The names are self, other, result and exponent."),
        N_("Division needs both inputs (self and other), tanh reuses its own output "
           "(result), and the power needs its base (self) and the exponent.")),
}
