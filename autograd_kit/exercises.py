"""Checking a learner's answer to a lesson exercise, in words.

A lesson exercise is three cells:

1. a code cell tagged ``exercise`` where the learner replaces ``...`` with an
   answer (``my_grad = ...``);
2. a code cell tagged ``exercise-check`` that calls :func:`check`;
3. a markdown cell tagged ``solution`` holding a folded ``<details>`` block with
   one ```` ```python ```` fence: the code that would go into cell 1.

Run untouched, the check says the exercise is still open.  The test suite swaps
each solution into its exercise cell and runs the lesson again to see every
check answer "correct".

:func:`check` never raises: a lesson run top to bottom carries on past an open or
wrong exercise, and what is wrong is said in a sentence, not a traceback.
"""
from __future__ import annotations

import math
from typing import Any, Callable

OPEN = "not answered yet"
WRONG = "not quite"
RIGHT = "correct"


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


def _shape(value: Any) -> tuple[int, ...]:
    shape: list[int] = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _close(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return a == b


def _is_open(answer: Any) -> bool:
    if answer is Ellipsis:
        return True
    if isinstance(answer, (list, tuple, dict)):
        values = answer.values() if isinstance(answer, dict) else answer
        return any(_is_open(v) for v in values)
    return False


def mismatch(answer: Any, expected: Any, tol: float = 1e-6) -> str | None:
    """Why ``answer`` is not ``expected``, in a sentence; None when they agree.

    Numbers agree within ``tol`` (relative or absolute); tensors, arrays, lists
    and tuples are compared element by element after a shape check; strings
    without regard to case or surrounding blanks."""
    got, want = _as_plain(answer), _as_plain(expected)
    if isinstance(want, list):
        if not isinstance(got, list):
            return f"a single value ({got!r}) was given where {len(want)} values were expected"
        if _shape(got) != _shape(want):
            return f"the shape is {_shape(got)}, but it should be {_shape(want)}"
    elif isinstance(got, list):
        return f"{len(got)} values were given where one value was expected"
    if isinstance(want, bool) and not isinstance(got, bool):
        return f"the answer should be True or False, not {got!r}"
    if _close(got, want, tol):
        return None
    return f"{got!r} is not the right value"


def check(title: str, answer: Any, expected: Any = None, *,
          test: Callable[[Any], str | None] | None = None, hint: str = "",
          why: str = "", tol: float = 1e-6) -> None:
    """Print whether ``answer`` solves exercise ``title`` (returns nothing, so a
    check cell shows the sentence alone).

    Either ``expected`` (compared with :func:`mismatch`) or ``test`` (a function
    that returns None for a good answer, else what is wrong in words) decides.
    ``hint`` is printed with a wrong answer, ``why`` with a right one."""
    if _is_open(answer):
        print(f"{title}: {OPEN}. Replace the ... in the exercise cell with your answer, "
              "run that cell, then run this one again.")
        return
    try:
        problem = test(answer) if test is not None else mismatch(answer, expected, tol)
    except Exception as err:  # the learner's answer broke the test itself
        problem = f"checking it raised {type(err).__name__}: {err}"
    if problem:
        print(f"{title}: {WRONG}: {problem}." + (f" Hint: {hint}" if hint else ""))
        return
    print(f"{title}: {RIGHT}." + (f" {why}" if why else ""))
