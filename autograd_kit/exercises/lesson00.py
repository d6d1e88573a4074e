"""The check of the index (Lesson 0): the rectangle's gradient."""
from __future__ import annotations

from ..i18n import _
from .common import N_, near


def l00_ex1(width_grad):
    return None if near(width_grad, 2.5) else _("the value is not right")


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson00.ex1": (("my_width_grad",), ("number",), l00_ex1),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson00.ex1": (
        N_("Exercise (the rectangle)"),
        N_("area = width * height: what multiplies width?"),
        N_("d(width * height)/d(width) is the height, 2.5.")),
}
