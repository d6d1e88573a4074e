"""The checks of Lesson 1 (tracking gradients): leaves, requires_grad, and
the first ``.grad``.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, near


def l01_ex1(leaves, requires):
    truth = {"is_leaf": {"k", "u"}, "requires_grad": {"u", "s", "f"}}
    for flag, names in zip(("is_leaf", "requires_grad"), (leaves, requires)):
        if not isinstance(names, (list, tuple, set)) or not all(
                isinstance(n, str) and n in "kusf" and n for n in names):
            return _("give each answer as a list of names taken from {names}").format(
                names="['f', 'k', 's', 'u']")
        if set(names) != truth[flag]:
            return _("your {flag} list is not right").format(flag=flag)
    return None


def l01_ex2(u_grad, k_grad):
    if k_grad is not None:
        return N_("k.grad is not right: think about whether backward() fills .grad for a leaf "
                  "that does not require grad")
    return None if near(u_grad, [12.0, -10.0]) else _("u.grad is not right")


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson01.ex1": (("my_leaves", "my_requires_grad"), ("names", "names"), l01_ex1),
    "lesson01.ex2": (("my_u_grad", "my_k_grad"), ("numbers", "any"), l01_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson01.ex1": (
        N_("Exercise 1"),
        N_("A leaf is a tensor you created yourself rather than computed from tracked "
           "tensors; requires_grad spreads from an input that requires it to every result "
           "computed from it."),
        N_("k and u are leaves, because you created them. Only u asked for tracking, and "
           "requires_grad spread from u to s and f, which are computed and therefore not "
           "leaves.")),
    "lesson01.ex2": (
        N_("Exercise 2"),
        N_("Differentiate k_i * u_i**2 by u_i, with k held fixed."),
        N_("df/du = 2 k u = (12, -10), and the constant k gets no gradient: its .grad stays "
           "None.")),
}
