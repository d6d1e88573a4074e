"""The checks of Lesson 8 (in-place operations): which in-place lines are
refused, and a gradient through in-place changes.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, near


_LINES = {"A": "a += 1", "B": "b += 1", "C": "c.mul_(2)", "D": "params[0].zero_()",
          "E": "with ak.no_grad(): a += 1", "F": "a = a + 1"}
_ACCEPTED = {
    "B": N_("b is computed from a, not a leaf, so the change is recorded and b gets a new "
            "grad_fn (Rule 2)"),
    "C": N_("c does not require grad, so there is nothing to record"),
    "E": N_("under no_grad nothing is recorded, so a stays a leaf and only its version goes up"),
    "F": N_("a = a + 1 is not in place: it makes a new tensor and moves the name a to it"),
}


def l08_ex1(refused):
    if isinstance(refused, str):
        refused = [refused]
    if not isinstance(refused, (list, tuple, set)) or not all(isinstance(x, str) for x in refused):
        return N_('give the answer as a list of letters, such as ["B"]')
    given = {x.strip().upper() for x in refused}
    unknown = sorted(given - set(_LINES))
    if unknown:
        return _("there is no line {letter}: the lines are A to F").format(letter=unknown[0])
    for letter in sorted(given - {"A", "D"}):
        return _("line {letter} runs without an error: {why}").format(
            letter=letter, why=_(_ACCEPTED[letter]))
    if given != {"A", "D"}:
        return _("a line that is refused is missing from your list")
    return None


def l08_ex2(q_grad):
    return None if near(q_grad, 24.0) else _("the value is not right")


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson08.ex1": (("my_refused",), ("any",), l08_ex1),
    "lesson08.ex2": (("my_q_grad",), ("number",), l08_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson08.ex1": (
        N_("Exercise 1"),
        N_("Ask of each line: does it change a tensor in place, is that tensor a leaf that "
           "requires grad, and is recording on?"),
        N_("Only A and D change the leaf a in place while recording is on; D reaches it "
           "through the list. B changes a computed tensor, C one that does not require "
           "grad, E runs with recording off, and F is not in place at all.")),
    "lesson08.ex2": (
        N_("Exercise 2"),
        N_("The in-place operations on r are recorded like ordinary ones, so r = (3q - "
           "2)**2. Differentiate that with the chain rule."),
        N_("r = (3q - 2)^2, so dr/dq = 6 (3q - 2) = 24 at q = 2.")),
}
