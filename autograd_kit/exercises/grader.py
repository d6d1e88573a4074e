"""Grading an exercise by its name: :func:`grade`, :func:`ready` and :func:`solved`.

A lesson's check cell and an assignment's graded cell both call :func:`grade`
with the exercise's name and the notebook's namespace.  ``grade`` reads only the
answer names of that exercise from the namespace; everything else (the lesson's
tensors, models, the reference values) its check builds itself, from this
package, so a learner who rebinds ``check``, ``ak`` or ``np``, or pastes a number
from the feedback, changes nothing it relies on.
"""
from __future__ import annotations

from ..i18n import _
from .registry import EXERCISES, TEXT, NotAnswered, answers, kind_problem
from .sentences import OPEN, ExerciseNotSolved, say, show_sentence
from .tamper import tampered


def grade(exercise: str, namespace: dict, *, graded: bool = False) -> None:
    """Check the answer to ``exercise`` (``"lesson03.ex1"``) found in ``namespace``
    (a notebook's ``globals()``), and say whether it is right.

    Only the exercise's answer names are read from ``namespace``; the check and
    everything it compares with come from this package.  ``graded=True`` (the
    assignments' graded cells) raises :class:`ExerciseNotSolved` for an open or
    wrong answer, and gives no points to a notebook that replaced a function of
    the kit with its own."""
    title, hint, why = (_(s) for s in TEXT[exercise])
    try:
        values = answers(exercise, namespace)
    except NotAnswered:
        return say(_open_sentence(title), False, graded)
    if graded:
        changed = tampered()
        if changed:
            return say(_("{title}: not graded: this notebook replaced {name}, a "
                         "function the check relies on; grading uses the kit as "
                         "installed.").format(title=title, name=changed), False, True)
    for name, value, kind in zip(EXERCISES[exercise][0], values, EXERCISES[exercise][1]):
        wrong_kind = kind_problem(value, kind)     # the sentence ready() says, too
        if wrong_kind:
            return say(_("{title}: {name}: {problem}.").format(
                title=title, name=name, problem=wrong_kind), False, graded)
    test = EXERCISES[exercise][2]
    try:
        problem = test(*values)
    except Exception as err:  # the answer broke the test itself
        problem = _("checking it raised {error}").format(error=f"{type(err).__name__}: {err}")
    if problem == OPEN:
        return say(_open_sentence(title), False, graded)
    if problem:
        line = _("{title}: not quite: {problem}.").format(title=title, problem=_(problem))
        if hint:
            line += ("" if line.endswith("。") else " ") + _("Hint: {hint}").format(hint=hint)
        return say(line, False, graded)
    line = _("{title}: correct.").format(title=title)
    if why:  # (no space after a Chinese full stop)
        line += ("" if line.endswith("。") else " ") + why
    say(line, True, graded)


def ready(exercise: str, namespace: dict) -> None:
    """The visible test of an assignment: the answer is there, is not ``...`` and is
    the right kind of thing (a number, a list, a function...).  Raises
    :class:`ExerciseNotSolved` when not, so nbgrader's Validate fails; says
    nothing about whether the answer is right."""
    title = _(TEXT[exercise][0])
    try:
        values = answers(exercise, namespace)
    except NotAnswered:
        raise ExerciseNotSolved(_open_sentence(title)) from None
    for name, value, kind in zip(EXERCISES[exercise][0], values, EXERCISES[exercise][1]):
        problem = kind_problem(value, kind)
        if problem:
            raise ExerciseNotSolved(_("{title}: {name}: {problem}.").format(
                title=title, name=name, problem=problem))
    show_sentence(_("{title}: answered. It is checked when your work is graded.").format(
        title=title))


def solved(exercise: str, namespace: dict) -> bool:
    """Whether the answer in ``namespace`` is right (says nothing)."""
    try:
        values = answers(exercise, namespace)
        return not EXERCISES[exercise][2](*values)
    except Exception:
        return False


def _open_sentence(title: str) -> str:
    return _("{title}: not answered yet. Replace the ... in the exercise cell with your "
             "answer, run that cell, then run this one again.").format(title=title)
