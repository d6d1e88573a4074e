"""Checking a learner's answer to a lesson exercise, in words.

A lesson exercise is three cells:

1. a code cell tagged ``exercise`` where the learner replaces ``...`` with an
   answer (``my_grad = ...``);
2. a code cell tagged ``exercise-check`` that calls :func:`check`;
3. a markdown cell tagged ``solution`` holding a folded ``<details>`` block with
   one ```` ```python ```` fence: the code that would go into cell 1.

Run untouched, the check says the exercise is still open: the answer is
``...`` (or holds one), or a ``test`` function returns :data:`OPEN` (as
:func:`backward_problem` does for a ``backward`` that still returns ``...``).  The test suite swaps
each solution into its exercise cell and runs the lesson again to see every
check answer "correct".

:func:`check` never raises in a lesson: a lesson run top to bottom carries on past
an open or wrong exercise, and what is wrong is said in a sentence, not a traceback.
An assignment graded by nbgrader (:mod:`autograd_kit.course`) switches on
:func:`grading`, and then that same sentence is raised, so the cell scores nothing.
The sentences come in the learner's language (:mod:`autograd_kit.i18n`);
:data:`OPEN`, :data:`WRONG` and :data:`RIGHT` are the English words, which a
``test`` function returns and compares (``problem == OPEN``) in every language.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from .i18n import _

OPEN = "not answered yet"
WRONG = "not quite"
RIGHT = "correct"


class ExerciseNotSolved(AssertionError):
    """What :func:`check` raises in grading mode for an open or wrong answer.

    An autograder (nbgrader) gives a test cell its points when the cell runs
    without an error, so grading turns the sentence the learner would read into
    the error's message.  IPython shows it as one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


_grading = {"on": False}


def grading(on: bool = True) -> None:
    """Switch grading mode on (or off): from then on :func:`check` raises
    :class:`ExerciseNotSolved` with its sentence instead of printing it when an
    answer is open or wrong.  The assignments of :mod:`autograd_kit.course`
    switch it on in their test cells; a lesson never does."""
    _grading["on"] = bool(on)


def _say(sentence: str, solved: bool) -> None:
    if _grading["on"] and not solved:
        raise ExerciseNotSolved(sentence)
    print(sentence)


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
            return _("a single value ({got}) was given where {n} values were expected").format(
                got=repr(got), n=len(want))
        if _shape(got) != _shape(want):
            return _("the shape is {got}, but it should be {want}").format(
                got=_shape(got), want=_shape(want))
    elif isinstance(got, list):
        return _("{n} values were given where one value was expected").format(n=len(got))
    if isinstance(want, bool) and not isinstance(got, bool):
        return _("the answer should be True or False, not {got}").format(got=repr(got))
    if _close(got, want, tol):
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
    if _is_open(answer):
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
        return _say(line, solved=False)
    _say(_("{title}: correct.").format(title=title) + (f" {why}" if why else ""), solved=True)


def _say_open(title: str) -> None:
    _say(_("{title}: not answered yet. Replace the ... in the exercise cell with your "
           "answer, run that cell, then run this one again.").format(title=title), solved=False)


# --- exercises that ask for a backward formula -------------------------------------

def _dims(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _call_backward(fn_cls, inputs):
    """Run ``fn_cls.apply`` on ``inputs`` and call its ``backward`` by hand with a
    gradient of ones, so that whatever it returns (``...``, a number, a tensor of
    the wrong shape) can be looked at before the engine uses it."""
    from . import backend
    from .tensor import Tensor
    out = fn_cls.apply(*inputs)
    node = getattr(out, "grad_fn", None)
    if node is None or not hasattr(node, "ctx"):
        return None, _("apply() gave a result without a grad_fn: did forward return a tensor?")
    ones = Tensor._make(backend.xp_of(out._data).ones(out._data.shape, dtype=out._data.dtype))
    try:
        grads = fn_cls.backward(node.ctx, ones)
    except Exception as err:
        if not node.ctx._to_save and ("unpack" in str(err) or isinstance(err, IndexError)):
            return None, _("backward reads ctx.saved_tensors, but forward saved nothing: "
                           "call ctx.save_for_backward(...) in forward")
        return None, _("calling backward raised {error}").format(
            error=f"{type(err).__name__}: {err}")
    return (grads if isinstance(grads, tuple) else (grads,)), None


def _shape_problem(grads, inputs) -> str | None:
    from .tensor import Tensor
    if len(grads) != len(inputs):
        return _("backward returned {grads} gradient(s), but forward takes {inputs} input(s): "
                 "return one per input, in order").format(grads=len(grads), inputs=len(inputs))
    for i, (grad, x) in enumerate(zip(grads, inputs)):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if grad is None:
            return _("backward returned None for input {i}, which requires a gradient").format(
                i=i)
        if not isinstance(grad, Tensor):
            return _("the gradient for input {i} is a {type}, not a tensor: build it from g "
                     "and the saved tensors").format(i=i, type=type(grad).__name__)
        if tuple(grad.shape) != tuple(x.shape):
            return _("the gradient for input {i} has shape {got}, but input {i} has shape "
                     "{want}: a gradient has its input's shape (one number per input "
                     "element)").format(i=i, got=_dims(grad.shape), want=_dims(x.shape))
    return None


def _value_problem(fn_cls, inputs, atol=1e-5, rtol=1e-3) -> str | None:
    """Where gradcheck's two Jacobians differ most, said with the numbers."""
    from .gradcheck import analytical_jacobian, numerical_jacobian
    numerical = numerical_jacobian(fn_cls.apply, inputs)
    analytical = analytical_jacobian(fn_cls.apply, inputs)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        n, a = n[0], a[0]                # one output
        bad = abs(a - n) > atol + rtol * abs(n)
        if bad.any():
            r, c = divmod(int((abs(a - n) * bad).argmax()), n.shape[1])
            value = inputs[i].detach().reshape(-1)[c].item()
            return _("gradcheck disagrees for input {i}: at element [{c}] of input {i} (value "
                     "{value}), d out[{r}] / d input{i}[{c}] is {numerical} by central "
                     "differences, but your backward gives {analytical} ({bad} of {size} Jacobian "
                     "entries differ)").format(
                i=i, value=f"{value:.6g}", r=r, c=c, numerical=f"{n[r, c]:.6g}",
                analytical=f"{a[r, c]:.6g}", bad=int(bad.sum()), size=bad.size)
    return None


def backward_problem(fn_cls, inputs) -> str | None:
    """What is wrong with the ``backward`` of the custom Function ``fn_cls``, in
    words; None when gradcheck agrees with it on ``inputs`` (float64 tensors).

    In order: :data:`OPEN` while backward still returns ``...``; forward saved
    nothing that backward reads; the wrong number, kind or shape of gradients;
    then gradcheck's Jacobians, naming the entry where they differ most.  Meant
    as ``check(title, MyFn, test=lambda fn: backward_problem(fn, inputs))``."""
    inputs = tuple(inputs)
    grads, problem = _call_backward(fn_cls, inputs)
    if problem:
        return problem
    if any(g is Ellipsis for g in grads):
        return OPEN
    problem = _shape_problem(grads, inputs)
    if problem:
        return problem
    return _value_problem(fn_cls, inputs)
