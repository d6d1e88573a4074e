"""Every graded exercise of the lessons, by name (``"lesson03.ex1"``).

Each lesson's module holds its checks and two tables, which are merged here:
:data:`EXERCISES` (name -> the answer names read from the notebook, the kind of
answer each must be for the ready test, and the test) and :data:`TEXT` (name ->
the title, the hint shown with a wrong answer, and the words shown with a right
one; marked for the catalogs, translated where they are shown).
"""
from __future__ import annotations

from ..i18n import _
from . import (appendix_a, appendix_b, lesson00, lesson01, lesson02, lesson03, lesson04,
               lesson05, lesson06, lesson07, lesson08, lesson09, lesson10, lesson11, lesson12,
               lesson13, lesson14, lesson15)
from .checking import is_open
from .common import num

#: the modules of the lessons' checks, in the order of the course
LESSONS = (lesson00, lesson01, lesson02, lesson03, lesson04, lesson05, lesson06, lesson07,
           lesson08, lesson09, lesson10, lesson11, lesson12, lesson13, lesson14, lesson15,
           appendix_a, appendix_b)

#: name -> (answer names, kinds for the ready test, the test)
EXERCISES = {name: entry for lesson in LESSONS for name, entry in lesson.EXERCISES.items()}
#: name -> (title, hint, why)
TEXT = {name: words for lesson in LESSONS for name, words in lesson.TEXT.items()}


class NotAnswered(Exception):
    """An answer name is missing or still ``...``."""


def answers(exercise: str, namespace) -> tuple:
    """The values of ``exercise``'s answer names in ``namespace`` (read as a plain
    dict: nothing of the notebook's runs); :class:`NotAnswered` when one is missing
    or still ``...``."""
    names = EXERCISES[exercise][0]
    try:
        values = tuple(dict.__getitem__(namespace, n) for n in names)
    except (KeyError, TypeError):
        raise NotAnswered() from None
    if any(is_open(v) for v in values):
        raise NotAnswered()
    return values


def kind_problem(value, kind: str) -> str | None:
    """The ready test: is this a kind of answer the exercise can take?"""
    if kind == "number":
        try:
            num(value)
        except TypeError:
            return _("it should be a number")
    elif kind in ("numbers", "list", "names"):
        sets = (set, frozenset) if kind == "names" else ()  # (names: a set is a list too)
        if not (isinstance(value, (list, tuple, *sets)) or hasattr(value, "tolist")):
            return _("it should be a list")
    elif kind == "function" and not callable(value):
        return _("it should be a function, defined with def")
    elif kind == "class" and not isinstance(value, type):
        return _("it should be a class")
    return None
