"""Comparing an answer with what is expected: :func:`check` and :func:`mismatch`.

:func:`check` is what a lesson's own code may call with an answer and either the
expected value or a ``test`` function; it says the verdict in a sentence
(:mod:`.sentences`).  The comparisons (:func:`close`, :func:`nested_shape`,
:func:`is_open`) serve the graded checks too (:mod:`.common`, :mod:`.registry`).
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ..i18n import _
from .sentences import OPEN, say


def _as_plain(value: Any) -> Any:
    """Tensors and arrays become nested lists; everything else is left alone."""
    if hasattr(value, "detach") and hasattr(value, "tolist"):
        return value.detach().tolist()
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):
        return value.tolist()
    if isinstance(value, tuple):
        return [_as_plain(v) for v in value]
    if isinstance(value, list):
        return [_as_plain(v) for v in value]
    return value


def nested_shape(value: Any) -> tuple[int, ...]:
    """The shape of nested lists (the lengths along the first elements)."""
    shape: list[int] = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def close(a: Any, b: Any, tol: float) -> bool:
    """Whether two plain values (nested lists of numbers, bools, strings) agree:
    numbers within ``tol``, strings without regard to case or surrounding blanks."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return a == b


def is_open(answer: Any) -> bool:
    """Whether the answer is ``...`` or holds one (in a list, tuple or dict)."""
    if answer is Ellipsis:
        return True
    if isinstance(answer, (list, tuple, dict)):
        values = answer.values() if isinstance(answer, dict) else answer
        return any(is_open(v) for v in values)
    return False


def mismatch(answer: Any, expected: Any, tol: float = 1e-6) -> str | None:
    """Why ``answer`` is not ``expected``, in a sentence; None when they agree.

    Numbers agree within ``tol`` (relative or absolute); tensors, arrays, lists
    and tuples are compared element by element after a shape check; strings
    without regard to case or surrounding blanks."""
    got, want = _as_plain(answer), _as_plain(expected)
    if isinstance(want, list):
        if not isinstance(got, list):
            return _("a single value ({got}) was given where {n} values were expected").format(
                got=repr(got), n=len(want))
        if nested_shape(got) != nested_shape(want):
            return _("the shape is {got}, but it should be {want}").format(
                got=nested_shape(got), want=nested_shape(want))
    elif isinstance(got, list):
        return _("{n} values were given where one value was expected").format(n=len(got))
    if isinstance(want, bool) and not isinstance(got, bool):
        return _("the answer should be True or False, not {got}").format(got=repr(got))
    if close(got, want, tol):
        return None
    return _("{got} is not the right value").format(got=repr(got))


def check(title: str, answer: Any, expected: Any = None, *,
          test: Callable[[Any], str | None] | None = None, hint: str = "",
          why: str = "", tol: float = 1e-6) -> None:
    """Print whether ``answer`` solves exercise ``title`` (returns nothing, so a
    check cell shows the sentence alone).

    Either ``expected`` (compared with :func:`mismatch`) or ``test`` (a function
    that returns None for a good answer, :data:`OPEN` for one not given yet,
    else what is wrong in words) decides.
    ``hint`` is printed with a wrong answer, ``why`` with a right one."""
    if is_open(answer):
        return _say_open(title)
    try:
        problem = test(answer) if test is not None else mismatch(answer, expected, tol)
    except Exception as err:  # the learner's answer broke the test itself
        problem = _("checking it raised {error}").format(error=f"{type(err).__name__}: {err}")
    if problem == OPEN:
        return _say_open(title)
    if problem:
        line = _("{title}: not quite: {problem}.").format(title=title, problem=problem)
        if hint:  # no blank after a full-width full stop (Chinese)
            line += ("" if line.endswith("。") else " ") + _("Hint: {hint}").format(hint=hint)
        return say(line, solved=False)
    say(_("{title}: correct.").format(title=title) + (f" {why}" if why else ""), solved=True)


def _say_open(title: str) -> None:
    say(_("{title}: not answered yet. Replace the ... in the exercise cell with your "
          "answer, run that cell, then run this one again.").format(title=title), solved=False)
