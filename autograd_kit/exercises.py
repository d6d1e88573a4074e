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
In a notebook a sentence is shown as HTML that wraps at word boundaries (with
the same text as ``text/plain``); elsewhere it is printed.
The sentences come in the learner's language (:mod:`autograd_kit.i18n`);
:data:`OPEN`, :data:`WRONG` and :data:`RIGHT` are the English words, which a
``test`` function returns and compares (``problem == OPEN``) in every language.
"""
from __future__ import annotations

import html
import math
import re
import unicodedata
from contextlib import contextmanager
from typing import Any, Callable, Iterator

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
        # lines that fit: a notebook front end breaks a long line of an error
        # anywhere ("he/lp"), and nbgrader's feedback page cuts it at the edge
        return wrap_lines(f"{type(self).__name__}: {self}")


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
    show_sentence(sentence)


# -- how a sentence is shown -------------------------------------------------------------

#: JupyterLab shows printed text with ``word-break: break-all``, so a sentence
#: wraps in the middle of a word; as HTML with this style it wraps between words
#: (and between Chinese characters), keeping its own line breaks
SENTENCE_STYLE = "white-space: pre-wrap; overflow-wrap: break-word; word-break: normal"


def sentence_html(sentence: str) -> str:
    """The sentence as an HTML block that wraps at word boundaries; every
    character of it escaped (an answer quoted in it may hold ``<`` or ``&``)."""
    return (f'<div class="ak-check" style="{SENTENCE_STYLE}">'
            f"{html.escape(sentence, quote=True)}</div>")


def _in_notebook() -> bool:
    """Whether this runs in a notebook's kernel (not a terminal or plain Python)."""
    import sys
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def show_sentence(sentence: str) -> None:
    """Say ``sentence``: in a notebook as :func:`sentence_html` (``text/plain``
    holds the same sentence: JupyterLab breaks printed text anywhere, "he/lp"),
    elsewhere printed."""
    if not _in_notebook():
        print(sentence)
        return
    from IPython.display import display
    display({"text/plain": sentence, "text/html": sentence_html(sentence)}, raw=True)


_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
#: the pieces a line may break between: a word with the blanks before it, or one
#: Chinese character with the punctuation that must stay after it
_PIECES = re.compile(rf"\s*(?:[{_CJK}][，。：；、！？）》」』]*|[^\s{_CJK}]+)|\s+")


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_lines(text: str, width: int = 76) -> list[str]:
    """``text`` as lines of at most ``width`` columns (a Chinese character takes
    two), broken between words and between Chinese characters; a single word
    longer than that keeps a line of its own."""
    lines = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for piece in _PIECES.findall(paragraph):
            if line.strip() and _columns(line + piece.rstrip()) > width:
                lines.append(line.rstrip())
                line, piece = "", piece.lstrip()
            line += piece
        lines.append(line.rstrip())
    return lines


@contextmanager
def held_until_graded() -> Iterator[Callable[..., None]]:
    """Around a lesson cell of an assignment whose output would give an answer
    away (:mod:`autograd_kit.course` wraps such cells in it)::

        with held_until_graded() as show:
            L.backward()
            show(w.grad, x.grad)     # what the lesson's cell showed as its result

    The code runs either way, since later cells may use what it computes.  What it
    prints or shows appears only while nbgrader grades the notebook (it sets
    ``NBGRADER_EXECUTION=autograde``), so the learner reads it in the feedback;
    before that, nothing tells the answer, not even whether an answer is right.
    ``show(...)`` shows its value as a cell's last line would (nothing for None)."""
    import os
    from IPython.display import display

    def show(*values) -> None:
        value = values[0] if len(values) == 1 else values
        if value is not None:
            display(value)

    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        yield show
        return
    from IPython.utils.capture import capture_output
    with capture_output(stdout=True, stderr=False, display=True):
        yield show


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


def _call_backward(fn_cls, inputs, upstream=None):
    """Run ``fn_cls.apply`` on ``inputs`` and call its ``backward`` by hand with a
    gradient of ones (or ``upstream``, a host array of the output's shape), so
    that whatever it returns (``...``, a number, a tensor of the wrong shape) can
    be looked at before the engine uses it."""
    from . import backend
    from .tensor import Tensor
    out = fn_cls.apply(*inputs)
    node = getattr(out, "grad_fn", None)
    if node is None or not hasattr(node, "ctx"):
        return None, _("apply() gave a result without a grad_fn: did forward return a tensor?")
    if upstream is None:
        upstream = backend.xp_of(out._data).ones(out._data.shape, dtype=out._data.dtype)
    else:  # (an array on the host: moved to the output's device)
        upstream = backend.move(upstream, out.device)
    ones = Tensor._make(upstream)
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
    return _value_problem(fn_cls, inputs) or _upstream_problem(fn_cls, inputs)


def _upstream_problem(fn_cls, inputs, atol=1e-5, rtol=1e-3) -> str | None:
    """backward called with a random upstream gradient ``g`` must give ``g``
    times the Jacobian (a backward that ignores ``g`` agrees with gradcheck's
    Jacobian rows only where ``g`` is one)."""
    import numpy as np
    from .gradcheck import numerical_jacobian
    out = fn_cls.apply(*inputs)
    rng = np.random.default_rng()
    g = (rng.uniform(0.5, 2.0, out._data.shape) * rng.choice([-1.0, 1.0], out._data.shape))
    g = np.asarray(g, dtype=out._data.dtype)
    grads, problem = _call_backward(fn_cls, inputs, upstream=g)
    if problem:
        return problem
    numerical = numerical_jacobian(fn_cls.apply, inputs)
    for i, (grad, x) in enumerate(zip(grads, inputs)):
        if grad is None or not getattr(x, "requires_grad", False):
            continue
        want = g.reshape(-1) @ np.asarray(numerical[i][0])
        got = np.asarray(grad.detach().tolist(), dtype=float).reshape(-1)
        if got.shape != want.shape or np.any(abs(got - want) > atol + rtol * abs(want)):
            return _("with an upstream gradient g other than ones, the gradient for input {i} "
                     "is not g times the local derivative: backward must use g").format(i=i)
    return None


# --- graded checks: one per exercise, in the package -------------------------------------
#
# A lesson's check cell and an assignment's graded cell both call :func:`grade`
# with the exercise's name and the notebook's namespace.  ``grade`` reads only the
# answer names of that exercise from the namespace; everything else (the lesson's
# tensors, models, the reference values) it builds itself, from this module, so a
# learner who rebinds ``check``, ``ak`` or ``np``, or pastes a number from the
# feedback, changes nothing it relies on.  Where the exercise is about *how*
# (a loop that trains, a backward that uses ``g``, gradients that accumulate) the
# check gives fresh random inputs and watches what the answer does.

def N_(message: str) -> str:
    """Marks a message for the catalogs; it is translated where it is shown."""
    return message


class _Open(Exception):
    """An answer name is missing or still ``...``."""


def _rng():
    import numpy as np
    return np.random.default_rng(int.from_bytes(__import__("os").urandom(8), "little"))


def _ak():
    import autograd_kit
    return autograd_kit


def _num(value) -> float:
    """A plain float from a number, a one-element tensor or array; TypeError else."""
    if isinstance(value, bool) or value is None:
        raise TypeError("not a number")
    if type(value) in (int, float):
        return float(value)
    if hasattr(value, "tolist"):
        plain = value.detach().tolist() if hasattr(value, "detach") else value.tolist()
        while isinstance(plain, list) and len(plain) == 1:
            plain = plain[0]
        if type(plain) in (int, float):
            return float(plain)
    raise TypeError("not a number")


def _near(a, b, tol=1e-6) -> bool:
    try:
        got = _plain(a)
    except TypeError:
        return False
    return _close(got, _plain(b), tol)


def _plain(value):
    """Nested lists of plain numbers, strings, bools and None; TypeError for other
    kinds (an object that says it equals everything is not an answer)."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (list, tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and type(value).__module__.split(".")[0] in ("autograd_kit",
                                                                              "numpy", "torch"):
        plain = value.detach().tolist() if hasattr(value, "detach") else value.tolist()
        return _plain(plain)
    raise TypeError(type(value).__name__)


class _Counted:
    """Counts the backward passes run (``backward()`` and ``autograd.grad``) inside."""

    def __enter__(self):
        from . import engine
        self.engine, self.original, self.runs = engine, engine.backward_steps, 0

        def counted(*args, **kwargs):
            self.runs += 1
            return self.original(*args, **kwargs)
        engine.backward_steps = counted
        return self

    def __exit__(self, *exc):
        self.engine.backward_steps = self.original
        return False


def _with_globals(fn, values: dict):
    """Run with ``values`` put into the globals of ``fn`` (the learner's notebook),
    then put back what was there: the answer is tried on the check's own data."""
    space = getattr(fn, "__globals__", None)

    class Swap:
        def __enter__(self):
            self.before = {k: space[k] for k in values if space is not None and k in space}
            if space is not None:
                space.update(values)

        def __exit__(self, *exc):
            if space is not None:
                for k in values:
                    space.pop(k, None)
                space.update(self.before)
            return False
    return Swap()


# -- the exercises, lesson by lesson --------------------------------------------------------

def _l00_ex1(width_grad):
    return None if _near(width_grad, 2.5) else _("the value is not right")


def _l01_ex1(leaves, requires):
    truth = {"is_leaf": {"k", "u"}, "requires_grad": {"u", "s", "f"}}
    for flag, names in zip(("is_leaf", "requires_grad"), (leaves, requires)):
        if not isinstance(names, (list, tuple, set)) or not all(
                isinstance(n, str) and n in "kusf" and n for n in names):
            return _("give each answer as a list of names taken from {names}").format(
                names="['f', 'k', 's', 'u']")
        if set(names) != truth[flag]:
            return _("your {flag} list is not right").format(flag=flag)
    return None


def _l01_ex2(u_grad, k_grad):
    if k_grad is not None:
        return N_("k.grad is not right: think about whether backward() fills .grad for a leaf "
                  "that does not require grad")
    return None if _near(u_grad, [12.0, -10.0]) else _("u.grad is not right")


def _short(names):
    return [n.split("::")[-1] if isinstance(n, str) else n for n in names]


def _l02_ex1(top, mul):
    for label, given, want in (("z.grad_fn", top, ["SinBackward0", "AccumulateGrad"]),
                               (N_("the multiplication node"), mul, ["AccumulateGrad", None])):
        label = _(label)
        if not isinstance(given, (list, tuple)):
            return _("the answer for {label} should be a list, one entry per input").format(
                label=label)
        if _short(given) != want:
            return _("the list for {label} is not right").format(label=label)
    return None


def _l02_ex2(ratio, squashed, cubed):
    for label, given, want in (("a / d", ratio, ["other", "self"]), ("a.tanh()", squashed,
                                                                     ["result"]),
                               ("a ** 3", cubed, ["exponent", "self"])):
        if not isinstance(given, (list, tuple)) or not all(isinstance(n, str) for n in given):
            return _("the answer for {label} should be a list of names").format(label=label)
        if sorted(given) != want:
            return _("the names for {label} are not right").format(label=label)
    return None


def _l03_ex1(dL_dh, w_grad, x_grad):
    if not _near(dL_dh, 5.0):
        if _near(dL_dh, 6.0):
            return N_("dL/dh: you followed only the path through the square; h is also "
                      "subtracted directly")
        return N_("dL/dh is not right")
    if not _near(w_grad, 7.5):
        return N_("dL/dh is right, but w.grad is not: one more link, times dh/dw = x")
    if not _near(x_grad, 10.0):
        return N_("dL/dh is right, but x.grad is not: one more link, times dh/dx = w")
    return None


def _l03_ex2(pieces, m_grad, k_grad):
    if not isinstance(pieces, (list, tuple)):
        return N_("the pieces should be a list, one number per path from m to N")
    if len(pieces) != 2:
        return _("you gave {n} piece(s): count the paths from m to N").format(n=len(pieces))
    try:
        mine = sorted(_num(p) for p in pieces)
    except TypeError:
        return N_("the pieces are not right")
    if not _near(mine, [-1.0, 0.25]):
        return N_("the pieces are not right")
    if not _near(m_grad, -0.75):
        return N_("the pieces are right, but m.grad is not: think about what AccumulateGrad "
                  "does with the pieces it receives")
    if not _near(k_grad, 4.0):
        return N_("k.grad is not right: k is used once, in k * m")
    return None


def _l03_ex3(candidate):
    from collections import Counter
    ak = _ak()
    from .graph import Node
    if not callable(candidate):
        return N_("my_backward should be a function, defined with def my_backward(root)")
    rng = _rng()

    def two_graphs(vals):
        w = ak.tensor(vals[0], requires_grad=True)
        x = ak.tensor(vals[1], requires_grad=True)
        h = w * x
        a = ak.tensor(vals[2:4], requires_grad=True)
        b = ak.tensor(vals[4:6], requires_grad=True)
        c = ak.tensor(vals[6:8])
        return [(h ** 2 - h, {"w": w, "x": x}),
                (((a * c).sin() + a * b * b).sum(), {"a": a, "b": b})]
    for _trial in range(2):
        vals = [float(v) for v in rng.uniform(0.3, 2.0, 8)]
        for (root, leaves), (ref_root, ref_leaves) in zip(two_graphs(vals), two_graphs(vals)):
            ref_root.backward()
            calls = Counter()
            original = Node.__call__

            def counted(node, *grads):
                calls[node] += 1
                return original(node, *grads)
            Node.__call__ = counted
            try:
                with _Counted() as engine_runs:
                    candidate(root)
            except AttributeError as err:
                if "NoneType" in str(err):
                    return N_("it stopped at a None in next_functions: that entry is an input "
                              "that needs no gradient (a constant); skip it")
                raise
            finally:
                Node.__call__ = original
            for name, leaf in leaves.items():
                if leaf.grad is None:
                    return _("afterwards {name}.grad is still None: the walk must reach the "
                             "AccumulateGrad nodes and call them too (calling one adds into its "
                             "leaf's .grad)").format(name=name)
                if not _near(leaf.grad, ref_leaves[name].grad, 1e-5):
                    return _("afterwards {name}.grad is not what backward() gives").format(
                        name=name)
            if not calls or engine_runs.runs:
                return N_("the gradients are right, but no node was called by hand: walk "
                          "next_functions and call each node yourself instead of calling "
                          "backward()")
            twice = [node.name().split("::")[-1] for node, n in calls.items() if n > 1]
            if twice:
                return _("the gradients are right, but a {node} node ran more than once: wait "
                         "until all of a node's gradients have arrived (its count reaches "
                         "zero), then run it once on their sum").format(node=twice[0])
    return None


def _l04_ex1(jacobian):
    if _near(jacobian, [[1.0, 1.0], [4.0, 3.0]]):
        return None
    if _near(jacobian, [[1.0, 4.0], [1.0, 3.0]]):
        return N_("that is the transpose: each row should belong to one output, each column "
                  "to one input")
    return _shape_words(jacobian, (2, 2))


def _shape_words(answer, shape):
    try:
        got = _plain(answer)
    except TypeError:
        return _("the answer should be numbers, not a {kind}").format(kind=type(answer).__name__)
    if _shape(got) != shape:
        return _("the shape is {got}, but it should be {want}").format(got=_shape(got),
                                                                      want=shape)
    return _("the value is not right")


def _l04_ex2(vjp):
    if _near(vjp, [-2.0, -1.0]):
        return None
    if _near(vjp, [1.0, 5.0]):
        return N_("that is J v, the Jacobian-vector product of forward mode; backward "
                  "computes v^T J")
    return _shape_words(vjp, (2,))


def _l05_ex1(order):
    want = ["z", "q", "r", "s"]
    if not isinstance(order, (list, tuple)) or not all(isinstance(n, str) for n in order) \
            or sorted(order) != sorted(want):
        return _("give a list holding each of the names {names} once").format(
            names="['q', 'r', 's', 'z']")
    if order[0] != want[0]:
        return N_("the first hook to fire belongs to the tensor closest to the output")
    if list(order).index("r") < list(order).index("q"):
        return N_("r's hook cannot fire before q's: q's node still has to send r its share "
                  "of the gradient")
    return None if list(order) == want else _("the order is not right")


def _l05_ex2(clipped, plain):
    if not _near(plain, 20.0):
        return N_("the gradient without the hook is not right: dz/ds = dz/dr times dr/ds")
    if _near(clipped, 4.0):
        return None
    if _near(clipped, 1.0):
        return N_("1 is the clipped gradient at r; s.grad is one more link further back")
    if _near(clipped, plain):
        return N_("with the hook, s.grad changes: the hook replaces the gradient at r before "
                  "it moves on to s")
    return N_("the clipped s.grad is not right")


def _l05_ex3(clip, remember, seen):
    ak = _ak()
    rng = _rng()
    if not callable(clip):
        return _("{name} should be a function of one argument, the gradient").format(name="clip")
    if not callable(remember):
        return _("{name} should be a function of one argument, the gradient").format(
            name="remember")
    for _trial in range(3):
        c = ak.tensor([float(v) for v in rng.uniform(-4.0, 4.0, 5)])
        x = ak.tensor([1.0] * 5, requires_grad=True)
        x.register_hook(clip)
        (x * c).sum().backward()
        if _near(x.grad, c):
            return N_("x.grad is unchanged: a hook changes a gradient by returning the new one "
                      "(return grad.clamp(...)), not by changing it in place or printing it")
        if not _near(x.grad, c.clamp(-1.0, 1.0)):
            return _("with clip, x.grad is not the clipped gradient: clip should return the "
                     "gradient clamped to [-1, 1]")
        if not isinstance(seen, list):
            return _("seen should stay the list that remember appends to")
        seen.clear()
        x = ak.tensor([float(v) for v in rng.uniform(-3.0, 3.0, 4)], requires_grad=True)
        h = x * 3
        h.register_hook(remember)
        (h * h).sum().backward()
        if not seen:
            return N_("seen is empty after backward: remember must append the gradient it "
                      "receives")
        if len(seen) > 1:
            return _("seen holds {n} entries after one backward: append once per call").format(
                n=len(seen))
        if not _near(seen[0], 2 * h.detach(), 1e-5):
            return _("seen[0] is not the gradient arriving at h")
        if not _near(x.grad, 6 * h.detach(), 1e-5):
            return N_("remember changed the gradient on its way to x: a hook that only watches "
                      "returns None, so the gradient goes on unchanged")
    seen.clear()
    return None


def _l06_ex1(m_grad):
    if _near(m_grad, 11.0):
        return None
    if _near(m_grad, 4.0):
        return N_("the new graph's 4 is added to what .grad already holds; it does not replace it")
    if _near(m_grad, 25.0):
        return N_("zero_() empties .grad: the first two passes no longer count")
    if _near(m_grad, 7.0):
        return N_("(4 * m) is a new graph, but its backward still adds into m.grad")
    return _("the value is not right")


def _l06_ex2(without, with_zeroing):
    if not _near(with_zeroing, -1.0, 1e-5):
        return N_("version (B) is not right: with zeroing, every step uses the gradient 5")
    if not _near(without, -4.0, 1e-5):
        if _near(without, with_zeroing):
            return N_("version (A) differs from (B): without zeroing, p.grad keeps growing from "
                      "step to step")
        return N_("version (A) is not right: write down p.grad in each of the four steps")
    return None


def _l06_ex3(candidate):
    ak = _ak()
    if not callable(candidate):
        return N_("fit_slope should be a function, defined with def fit_slope(steps=30, lr=0.05)")
    rng = _rng()

    def reference(sizes, prices, steps, lr=0.05, zero=True):
        w = ak.tensor(0.0, requires_grad=True)
        for _step in range(steps):
            loss = ((w * sizes - prices) ** 2).mean()
            loss.backward()
            with ak.no_grad():
                w -= lr * w.grad
            if zero:
                w.grad = None
        return w.item()
    for steps in (int(rng.integers(8, 15)), int(rng.integers(20, 31))):
        sizes = ak.tensor([float(v) for v in rng.uniform(0.5, 3.0, 3)])
        prices = ak.tensor([float(v) for v in rng.uniform(1.0, 6.0, 3)])
        with _with_globals(candidate, {"sizes": sizes, "prices": prices}), _Counted() as runs:
            got = candidate(steps=steps)
        if _near(got, reference(sizes, prices, steps), 1e-4):
            if runs.runs < steps:
                return _("the value is right, but autograd did not compute the gradients: call "
                         "backward() on the loss in every step")
            continue
        if _near(got, reference(sizes, prices, steps, zero=False), 1e-4):
            return N_("that is what the loop without zeroing gives: every step still adds its "
                      "gradient to those of all earlier steps; clear w.grad once per step")
        if _near(got, 0.0):
            return N_("w never moved from 0: the gradient was cleared after backward but before "
                      "the update used it; clear it after the update, or before backward")
        return _("for other data or another number of steps it does not give what the fixed "
                 "loop gives: it must compute from sizes, prices and steps")
    return None


def _l06_ex4(candidate):
    ak = _ak()
    if not callable(candidate):
        return N_("accumulated_grad should be a function, defined with def accumulated_grad(w)")
    rng = _rng()
    for _trial in range(2):
        xs = ak.tensor([float(v) for v in rng.uniform(0.2, 3.0, 4)])
        ys = ak.tensor([float(v) for v in rng.uniform(0.5, 5.0, 4)])
        w_value = float(rng.uniform(-1.0, 4.0))

        def half_grad(part):
            w = ak.tensor(w_value, requires_grad=True)
            ((w * xs[part] - ys[part]) ** 2).sum().backward()
            return w.grad.item()
        whole = half_grad(slice(0, 4))
        w = ak.tensor(w_value, requires_grad=True)
        with _with_globals(candidate, {"xs": xs, "ys": ys}), _Counted() as runs:
            got = candidate(w)
        if got is None:
            return N_("it returned None: return w.grad after the second backward()")
        if _near(got, whole, 1e-5):
            if runs.runs != 2 or not _near(w.grad, whole, 1e-5):
                return _("the value is right, but not by accumulation: call backward() once per "
                         "half, on the w you were given, and let w.grad add the two up")
            continue
        if _near(got, half_grad(slice(2, 4)), 1e-5):
            return N_("that is the second half's gradient alone: the first half's was thrown "
                      "away between the two backward() calls; here .grad should add them up")
        if _near(got, whole / 2, 1e-5):
            return N_("that is half the whole batch's gradient: take the sum of squared errors "
                      "of each half, not the mean (two means of two points average, they don't "
                      "add up)")
        return _("it does not give the whole batch's gradient: it must compute it from w, xs "
                 "and ys")
    return None


def _l07_ex1(flags):
    want = [False, True, False, False]
    if not isinstance(flags, (list, tuple)) or len(flags) != 4 or not all(
            isinstance(f, bool) for f in flags):
        return _("the answer should be a list of four True or False values")
    return None if list(flags) == want else _("the value is not right")


def _l07_ex2(grads):
    return None if _near(grads, [8.0, 4.0]) else _shape_words(grads, (2,))


def _l07_ex3(candidate):
    ak = _ak()
    if not callable(candidate):
        return N_("train_head_only should be a function, defined with def train_head_only(model, x)")
    rng = _rng()
    for _trial in range(2):
        body = [[float(v) for v in row] for row in rng.uniform(-1.0, 1.0, (4, 3))]
        head = [float(v) for v in rng.uniform(-1.0, 1.0, 4)]
        x_in = ak.tensor([float(v) for v in rng.uniform(-2.0, 2.0, 3)])
        model = {"body": ak.tensor(body, requires_grad=True),
                 "head": ak.tensor(head, requires_grad=True)}
        ref = {"body": ak.tensor(body, requires_grad=True),
               "head": ak.tensor(head, requires_grad=True)}
        features = (ref["body"].detach() @ x_in).tanh()
        ((ref["head"] * features).sum() - 1).pow(2).backward()
        try:
            candidate(model, x_in)
        except RuntimeError as err:
            if "does not require grad and does not have a grad_fn" in str(err):
                return N_("backward found no graph at all (\"element 0 of tensors does not "
                          "require grad\"): the head was cut off too; leave the head's "
                          "computation recorded")
            if "leaf variables" in str(err):
                return N_("requires_grad_(False) works on leaves only: freeze model['body'] "
                          "itself, or detach() the features the body computes")
            raise
        b, h = model["body"], model["head"]
        if h.grad is None and b.grad is None:
            return N_("no weight has a .grad: train_head_only must call backward() on the loss")
        if b.grad is not None:
            return N_("model['body'].grad is filled, so the body would still train: turn its "
                      "requires_grad off, or detach() its output before the head uses it")
        if h.grad is None:
            return N_("model['head'].grad is None: the head must still receive its gradient")
        if not _near(h.grad, ref["head"].grad, 1e-5):
            return N_("the head's gradient is not the one of the given loss: keep the forward "
                      "pass and the loss as they are, and only cut the body off")
    return None


_LINES = {"A": "a += 1", "B": "b += 1", "C": "c.mul_(2)", "D": "params[0].zero_()",
          "E": "with ak.no_grad(): a += 1", "F": "a = a + 1"}
_ACCEPTED = {
    "B": N_("b is computed from a, not a leaf, so the change is recorded and b gets a new "
            "grad_fn (Rule 2)"),
    "C": N_("c does not require grad, so there is nothing to record"),
    "E": N_("under no_grad nothing is recorded, so a stays a leaf and only its version goes up"),
    "F": N_("a = a + 1 is not in place: it makes a new tensor and moves the name a to it"),
}


def _l08_ex1(refused):
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


def _l08_ex2(q_grad):
    return None if _near(q_grad, 24.0) else _("the value is not right")


def _l09_ex1(versions):
    return None if _near(versions, [3, 3, 1]) else _shape_words(versions, (3,))


def _l09_ex2(candidate):
    ak = _ak()
    if not callable(candidate):
        return N_("scaled_score should be a function, defined with def scaled_score(x)")
    rng = _rng()

    def intended(x):
        y = x.exp() / x.exp().sum()
        return ((y * 3 + 1) * x).sum()
    for n in (3, 5):
        values = [float(v) for v in rng.uniform(-2.0, 2.0, n)]
        x = ak.tensor(values, requires_grad=True)
        ref = ak.tensor(values, requires_grad=True)
        want = intended(ref)
        want.backward()
        got = candidate(x)
        if not _near(got, want, 1e-5):
            return _("for other inputs it does not return what the original means: the repair "
                     "must keep what the function computes")
        try:
            got.backward()
        except RuntimeError as err:
            if "modified by an inplace operation" in str(err):
                return N_("backward still stops with 'modified by an inplace operation': a "
                          "tensor that a node saved for backward is still changed in place "
                          "(no_grad does not help: the version counter counts every in-place "
                          "change)")
            raise
        if x.grad is None:
            return N_("backward runs, but x.grad is None: the result no longer depends on x "
                      "through the graph")
        if not _near(x.grad, ref.grad, 1e-5):
            return _("backward runs, but x.grad is not right: the repair hid part of the "
                     "computation from autograd (detach, .data or no_grad); keep it recorded "
                     "and make the change out of place instead")
    return None


def _is_int(value, want) -> bool:
    return type(value) is int and value == want or (type(value) is float and value == want)


def _lA_ex2(count):
    return None if _is_int(count, 2) else _("the value is not right")


def _l10_ex2(scale):
    if _near(scale, 0.5, 1e-4):
        return None
    return _("with that scale, the two halves do not add up to the full-batch gradient")


def _l10_ex3(candidate):
    ak = _ak()
    nn, optim = ak.nn, ak.optim
    if not callable(candidate):
        return N_("train should be a function, defined with def train(model, optimizer, epochs)")
    rng = _rng()
    seed = int(rng.integers(0, 2 ** 31))
    n = int(rng.integers(30, 60))
    inputs = ak.tensor([[float(v)] for v in rng.uniform(-3.0, 3.0, n)])
    targets = ak.tensor([[float(v)] for v in rng.uniform(-1.0, 1.0, n)])
    loss_fn = nn.MSELoss()
    epochs = int(rng.integers(3, 7))

    def make_model():
        ak.manual_seed(seed)
        return nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))

    def reference(zero=True):
        model = make_model()
        opt = optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _epoch in range(epochs):
            loss = loss_fn(model(inputs), targets)
            if zero:
                opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, model
    model = make_model()
    with _with_globals(candidate, {"inputs": inputs, "targets": targets, "loss_fn": loss_fn}):
        got = candidate(model, optim.SGD(model.parameters(), lr=0.1), epochs)
    if got is None:
        return N_("train returned None: return the list of losses, one per epoch")
    if not isinstance(got, (list, tuple)) or len(got) != epochs:
        return _("it should return a list with one loss per epoch")
    if any(getattr(loss, "grad_fn", None) is not None for loss in got):
        return N_("the values are right, but the list holds the loss tensors, each with its "
                  "graph attached: store loss.item(), a plain number (losses kept this way "
                  "before backward() hold every saved tensor of their forward pass)")
    want, trained = reference()
    if _near(got, want, 1e-4):
        if not all(_near(p, q, 1e-4) for p, q in zip(model.parameters(),
                                                      trained.parameters())):
            return _("the losses are right, but the model it was given was not trained: "
                     "step the optimizer it was given")
        return None
    if _near(got, reference(zero=False)[0], 1e-4):
        return N_("that is training without zero_grad(): each step adds its gradient to all "
                  "the earlier ones; clear them once per step")
    if _near(got, [want[0]] * epochs, 1e-4):
        return N_("the loss never changes, so the parameters never moved: step() needs the "
                  "gradients that backward() has just computed (is step() missing, or does "
                  "zero_grad() come between backward() and step()?)")
    return _("for another model and other data it does not return the losses of one step per "
             "epoch on the full batch: it must train the model it is given")


def _lB_ex1(answer):
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[1], str)):
        return N_("the answer should be a pair: the gradient as a list of two numbers, then the "
                  "dtype's name in quotes")
    values, dtype_name = answer
    if not _near(values, [5.0, 4.0]):
        return _("the gradient is not right")
    if dtype_name.strip().replace("torch.", "") != "float32":
        return _("the gradient is right, but that is not its dtype")
    return None


def _l11_ex1(value):
    return None if _near(value, -14.0) else _("the value is not right")


def _l11_ex2(hessian):
    return None if _near(hessian, [[8.0, 11.0], [11.0, 2.0]]) else _shape_words(hessian, (2, 2))


def _l11_ex3(candidate):
    import math as m
    if not callable(candidate):
        return N_("second_derivative should be a function, defined with def second_derivative(fn, at)")
    rng = _rng()
    a, b, c = (float(v) for v in rng.uniform(-2.0, 2.0, 3))
    cases = [(lambda t: a * t ** 3 + b * t ** 2 + c * t, lambda t: 6 * a * t + 2 * b),
             (lambda t: (t * a / 2).exp(), lambda t: (a / 2) ** 2 * m.exp(a * t / 2)),
             (lambda t: (t * b).sin(), lambda t: -b * b * m.sin(b * t))]
    for fn, exact in cases:
        at = float(rng.uniform(-1.5, 1.5))
        with _Counted() as runs:
            got = candidate(fn, at)
        try:
            got = _num(got)
        except TypeError:
            return _("it should return the second derivative as a number")
        want = exact(at)
        if abs(got - want) > 1e-3 * max(1.0, abs(want)):
            return _("for some functions and points it does not return the second derivative")
        if runs.runs < 2:
            return _("the value is close, but autograd did not compute it: differentiate twice "
                     "with autograd.grad instead of using differences of values")
    return None


#: what each class of lesson 12 computes forward (its backward is the exercise)
_L12_FORWARD = {1: lambda x: x.exp(), 2: lambda x: x.clamp(min=0), 3: lambda a, b: a / b,
                4: lambda x: x.sigmoid(), 5: lambda x: x.mean()}


def _backward_trials(fn_cls, make_inputs, forward=None, trials=3) -> str | None:
    for _trial in range(trials):
        inputs = make_inputs()
        if forward is not None:
            try:
                out = fn_cls.apply(*inputs)
            except Exception:
                out = None
            if out is None or not _near(out, forward(*(x.detach() for x in inputs)), 1e-6):
                return N_("forward no longer computes what the lesson's forward computes: "
                          "change only backward")
        problem = backward_problem(fn_cls, inputs)
        if problem:
            return problem
    return None


def _rand_tensor(rng, shape, low=-2.0, high=2.0, away_from_zero=False):
    ak = _ak()
    values = rng.uniform(low, high, shape)
    if away_from_zero:
        values = values + 0.3 * (2 * (values >= 0) - 1)
    return ak.tensor(values.tolist(), dtype=ak.float64, requires_grad=True)


def _l12(index):
    def test(fn_cls):
        rng = _rng()

        def inputs():
            n = int(rng.integers(2, 6))
            if index == 3:
                return (_rand_tensor(rng, n), _rand_tensor(rng, n, 0.5, 3.0, True))
            if index == 5:
                return (_rand_tensor(rng, (int(rng.integers(1, 4)), n)),)
            return (_rand_tensor(rng, n, away_from_zero=(index == 2)),)
        return _backward_trials(fn_cls, inputs, _L12_FORWARD[index])
    return test


#: name -> (answer names, kinds for the ready test, the test)
_EXERCISES = {
    "lesson00.ex1": (("my_width_grad",), ("number",), _l00_ex1),
    "lesson01.ex1": (("my_leaves", "my_requires_grad"), ("names", "names"), _l01_ex1),
    "lesson01.ex2": (("my_u_grad", "my_k_grad"), ("numbers", "any"), _l01_ex2),
    "lesson02.ex1": (("my_top", "my_mul"), ("list", "list"), _l02_ex1),
    "lesson02.ex2": (("my_ratio", "my_squashed", "my_cubed"), ("names",) * 3, _l02_ex2),
    "lesson03.ex1": (("my_dL_dh", "my_w_grad", "my_x_grad"), ("number",) * 3, _l03_ex1),
    "lesson03.ex2": (("my_m_pieces", "my_m_grad", "my_k_grad"), ("numbers", "number", "number"),
                     _l03_ex2),
    "lesson03.ex3": (("my_backward",), ("function",), _l03_ex3),
    "lesson04.ex1": (("my_jacobian",), ("numbers",), _l04_ex1),
    "lesson04.ex2": (("my_vjp",), ("numbers",), _l04_ex2),
    "lesson05.ex1": (("my_order",), ("names",), _l05_ex1),
    "lesson05.ex2": (("my_s_grad_clipped", "my_s_grad_plain"), ("number",) * 2, _l05_ex2),
    "lesson05.ex3": (("clip", "remember", "seen"), ("function", "function", "list"), _l05_ex3),
    "lesson06.ex1": (("my_m_grad",), ("number",), _l06_ex1),
    "lesson06.ex2": (("my_p_without_zeroing", "my_p_with_zeroing"), ("number",) * 2, _l06_ex2),
    "lesson06.ex3": (("fit_slope",), ("function",), _l06_ex3),
    "lesson06.ex4": (("accumulated_grad",), ("function",), _l06_ex4),
    "lesson07.ex1": (("my_flags",), ("list",), _l07_ex1),
    "lesson07.ex2": (("my_grads",), ("numbers",), _l07_ex2),
    "lesson07.ex3": (("train_head_only",), ("function",), _l07_ex3),
    "lesson08.ex1": (("my_refused",), ("any",), _l08_ex1),
    "lesson08.ex2": (("my_q_grad",), ("number",), _l08_ex2),
    "lesson09.ex1": (("my_versions",), ("numbers",), _l09_ex1),
    "lesson09.ex2": (("scaled_score",), ("function",), _l09_ex2),
    "lessonA.ex2": (("my_saved_count",), ("number",), _lA_ex2),
    "lesson10.ex2": (("my_scale",), ("number",), _l10_ex2),
    "lesson10.ex3": (("train",), ("function",), _l10_ex3),
    "lessonB.ex1": (("my_answer",), ("list",), _lB_ex1),
    "lesson11.ex1": (("my_second_derivative",), ("number",), _l11_ex1),
    "lesson11.ex2": (("my_hessian",), ("numbers",), _l11_ex2),
    "lesson11.ex3": (("second_derivative",), ("function",), _l11_ex3),
    "lesson12.ex1": (("MyExp",), ("class",), _l12(1)),
    "lesson12.ex2": (("MyReLU",), ("class",), _l12(2)),
    "lesson12.ex3": (("MyDiv",), ("class",), _l12(3)),
    "lesson12.ex4": (("MySigmoid",), ("class",), _l12(4)),
    "lesson12.ex5": (("MyMean",), ("class",), _l12(5)),
}


def _answers(exercise: str, namespace) -> tuple:
    names = _EXERCISES[exercise][0]
    try:
        values = tuple(dict.__getitem__(namespace, n) for n in names)
    except (KeyError, TypeError):
        raise _Open() from None
    if any(_is_open(v) for v in values):
        raise _Open()
    return values


def _kind_problem(value, kind: str) -> str | None:
    """The ready test: is this a kind of answer the exercise can take?"""
    if kind == "number":
        try:
            _num(value)
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


def _homes() -> tuple[str, ...]:
    import os
    import sysconfig
    import sys
    homes = {os.path.realpath(sysconfig.get_paths()[k])
             for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    for name, module in list(sys.modules.items()):   # the kit's own folders (widgets too)
        where = getattr(module, "__file__", None)
        if where and (name == "autograd_kit" or name.startswith("autograd_kit.")):
            homes.add(os.path.dirname(os.path.realpath(where)))
    return tuple(h + os.sep for h in homes)


def _foreign(fn, homes, seen) -> bool:
    """Whether a function was written outside the installed packages (in a notebook)."""
    import os
    import types
    if not isinstance(fn, types.FunctionType):
        return False
    where = fn.__code__.co_filename
    if where == "<string>":
        return False     # made from text by the kit (formulas, namedtuples, dataclasses)
    if where not in seen:
        seen[where] = not os.path.realpath(where).startswith(homes)
    return seen[where]


def _tampered() -> str | None:
    """The first function of the kit (or of math/numpy/builtins) that the notebook
    replaced with one of its own, as ``module.name``; None when there is none."""
    import builtins
    import sys
    import types
    homes, seen = _homes(), {}
    modules = [m for n, m in list(sys.modules.items())
               if n == "autograd_kit" or n.startswith("autograd_kit.")]
    modules += [sys.modules.get(n, builtins) for n in ("math", "builtins", "numpy", "operator",
                                                       "copy")]
    for mod in (sys.modules["math"], builtins):   # a C function in another's place
        for name, value in list(vars(mod).items()):
            if isinstance(value, types.BuiltinFunctionType) and value.__name__ != name:
                return f"{mod.__name__}.{name}"
    for mod in modules[:-5]:
        moved = _moved(mod)
        if moved:
            return f"{mod.__name__}.{moved}"
    for mod in modules:
        for name, value in list(vars(mod).items()):
            items = [(name, value)]
            if isinstance(value, type) and value.__module__.startswith("autograd_kit"):
                items += [(f"{name}.{k}", v) for k, v in vars(value).items()]
            for label, item in items:
                item = getattr(item, "__func__", item)
                if _foreign(item, homes, seen):
                    return f"{mod.__name__}.{label}"
    return None


def _moved(module) -> str | None:
    """A name that the module's file defines with ``def`` but that now holds some
    other function (``gradcheck.numerical_jacobian = analytical_jacobian``)."""
    import re
    where = getattr(module, "__file__", None)
    if not where or not where.endswith(".py"):
        return None
    try:
        with open(where, encoding="utf-8") as source:
            defined = re.findall(r"^(?:async )?def (\w+)", source.read(), re.MULTILINE)
    except OSError:
        return None
    space = vars(module)
    for name in defined:
        value = getattr(space.get(name), "__wrapped__", space.get(name))
        code = getattr(value, "__code__", None)
        if code is not None and code.co_name != name:
            return name
    return None


def _say_graded(sentence: str, solved: bool, graded: bool) -> None:
    if (graded or _grading["on"]) and not solved:
        raise ExerciseNotSolved(sentence)
    show_sentence(sentence)


def grade(exercise: str, namespace: dict, *, graded: bool = False) -> None:
    """Check the answer to ``exercise`` (``"lesson03.ex1"``) found in ``namespace``
    (a notebook's ``globals()``), and say whether it is right.

    Only the exercise's answer names are read from ``namespace``; the check and
    everything it compares with come from this module.  ``graded=True`` (the
    assignments' graded cells) raises :class:`ExerciseNotSolved` for an open or
    wrong answer, and gives no points to a notebook that replaced a function of
    the kit with its own."""
    title, hint, why = (_(s) for s in _TEXT[exercise])
    try:
        values = _answers(exercise, namespace)
    except _Open:
        return _say_graded(_open_sentence(title), False, graded)
    if graded:
        changed = _tampered()
        if changed:
            return _say_graded(_("{title}: not graded: this notebook replaced {name}, a "
                                 "function the check relies on; grading uses the kit as "
                                 "installed.").format(title=title, name=changed), False, True)
    for name, value, kind in zip(_EXERCISES[exercise][0], values, _EXERCISES[exercise][1]):
        wrong_kind = _kind_problem(value, kind)     # the sentence ready() says, too
        if wrong_kind:
            return _say_graded(_("{title}: {name}: {problem}.").format(
                title=title, name=name, problem=wrong_kind), False, graded)
    test = _EXERCISES[exercise][2]
    try:
        problem = test(*values)
    except Exception as err:  # the answer broke the test itself
        problem = _("checking it raised {error}").format(error=f"{type(err).__name__}: {err}")
    if problem == OPEN:
        return _say_graded(_open_sentence(title), False, graded)
    if problem:
        line = _("{title}: not quite: {problem}.").format(title=title, problem=_(problem))
        if hint:
            line += ("" if line.endswith("。") else " ") + _("Hint: {hint}").format(hint=hint)
        return _say_graded(line, False, graded)
    line = _("{title}: correct.").format(title=title)
    if why:  # (no space after a Chinese full stop)
        line += ("" if line.endswith("。") else " ") + why
    _say_graded(line, True, graded)


def ready(exercise: str, namespace: dict) -> None:
    """The visible test of an assignment: the answer is there, is not ``...`` and is
    the right kind of thing (a number, a list, a function...).  Raises
    :class:`ExerciseNotSolved` when not, so nbgrader's Validate fails; says
    nothing about whether the answer is right."""
    title = _(_TEXT[exercise][0])
    try:
        values = _answers(exercise, namespace)
    except _Open:
        raise ExerciseNotSolved(_open_sentence(title)) from None
    for name, value, kind in zip(_EXERCISES[exercise][0], values, _EXERCISES[exercise][1]):
        problem = _kind_problem(value, kind)
        if problem:
            raise ExerciseNotSolved(_("{title}: {name}: {problem}.").format(
                title=title, name=name, problem=problem))
    show_sentence(_("{title}: answered. It is checked when your work is graded.").format(
        title=title))


def solved(exercise: str, namespace: dict) -> bool:
    """Whether the answer in ``namespace`` is right (says nothing)."""
    try:
        values = _answers(exercise, namespace)
        return not _EXERCISES[exercise][2](*values)
    except Exception:
        return False


def _open_sentence(title: str) -> str:
    return _("{title}: not answered yet. Replace the ... in the exercise cell with your "
             "answer, run that cell, then run this one again.").format(title=title)


_TEXT = {
    'lesson00.ex1': (N_('Exercise (the rectangle)'),
        N_('area = width * height: what multiplies width?'),
        N_('d(width * height)/d(width) is the height, 2.5.')),
    'lesson01.ex1': (N_('Exercise 1'),
        N_('A leaf is a tensor you created yourself rather than computed from tracked tensors; requires_grad spreads from an input that requires it to every result computed from it.'),
        N_('k and u are leaves, because you created them. Only u asked for tracking, and requires_grad spread from u to s and f, which are computed and therefore not leaves.')),
    'lesson01.ex2': (N_('Exercise 2'),
        N_('Differentiate k_i * u_i**2 by u_i, with k held fixed.'),
        N_('df/du = 2 k u = (12, -10), and the constant k gets no gradient: its .grad stays None.')),
    'lesson02.ex1': (N_('Exercise 1'),
        N_('There is one entry per input of the forward operation, in order: the backward node that made a computed input, AccumulateGrad for a leaf that requires grad, None for a constant.'),
        N_("z = sin(k * c) + k: the addition's inputs came from SinBackward0 and from the leaf k. The product's inputs are the tracked leaf k (AccumulateGrad) and the constant c (None).")),
    'lesson02.ex2': (N_('Exercise 2'),
        N_("Write down each derivative and list what it is computed from: d(a/d)/da = 1/d and d(a/d)/dd = -a/d**2; tanh'(a) = 1 - tanh(a)**2; d(a**n)/da = n * a**(n-1). The names are self, other, result and exponent."),
        N_('Division needs both inputs (self and other), tanh reuses its own output (result), and the power needs its base (self) and the exponent.')),
    'lesson03.ex1': (N_('Exercise 1'),
        N_('Multiply the local derivatives along each path from L to h and add the paths; then multiply by the local derivative of h = w * x.'),
        N_('dL/dh = 2h - 1 = 5 (6 through the square, -1 directly), so w.grad = 5 * 1.5 = 7.5 and x.grad = 5 * 2 = 10.')),
    'lesson03.ex2': (N_('Exercise 2'),
        N_('One piece comes through the product (its local derivative by m is k), the other through the square root (1 / (2 sqrt(m))).'),
        N_('m receives k = -1 and 1 / (2 sqrt(m)) = 0.25, summed to -0.75; k.grad = m = 4.')),
    'lesson03.ex3': (N_('Exercise 3'),
        N_('Count first, then walk: every node waits for as many gradients as arrows lead into it; keep a sum per node, and call a node only when its count reaches zero.'),
        N_('That loop is the heart of every reverse-mode engine: count, wait, run once on the sum, pass on. backward() does the same, plus hooks, retain_graph and freeing saved tensors.')),
    'lesson04.ex1': (N_('Exercise 1'),
        N_('Row i holds the derivatives of output i, first by u0, then by u1. For the product u0 * u1, the derivative by u0 is u1.'),
        N_("Row 0 holds the sum's derivatives (1, 1); row 1 the product's (u1, u0) = (4, 3).")),
    'lesson04.ex2': (N_('Exercise 2'),
        N_('Multiply the row vector (2, -1) by the Jacobian: 2 times row 0, plus -1 times row 1.'),
        N_('(2, -1) times J = 2 * (1, 1) - 1 * (4, 3) = (-2, -1): a weighted sum of the rows of J.')),
    'lesson05.ex1': (N_('Exercise 1'),
        N_("Gradients flow from z back to s, and a tensor's hook fires once its gradient is complete, that is, once every use of the tensor has sent its piece."),
        N_("z fires first, then q; r is used by q and by z, so its gradient is complete only after q's node has run; s comes last.")),
    'lesson05.ex2': (N_('Exercise 2'),
        N_('dz/dr = 2r + 1; the hook clips that value; then the link dr/ds = 4 multiplies what is left.'),
        N_('dz/dr = 2r + 1 = 5 is clipped to 1, so s.grad = 4 * 1 = 4 instead of 4 * 5 = 20.')),
    'lesson05.ex3': (N_('Exercise 3'),
        N_('A hook receives the gradient and may return a replacement (clip) or None (remember). Tensors have clamp(min, max).'),
        N_('Returning a tensor replaces the gradient for everything further back; returning None leaves it as it is. seen[0] now holds a gradient that backward would otherwise drop.')),
    'lesson06.ex1': (N_('Exercise 1'),
        N_('dq/dm = 2m + 1. Follow .grad line by line: every backward adds, zero_() empties.'),
        N_('zero_() wipes the first two passes; then 7 from q and 4 from the new graph add up to 11.')),
    'lesson06.ex2': (N_('Exercise 2'),
        N_('Each backward adds 5 to p.grad, and each step subtracts 0.1 * p.grad from p.'),
        N_('Without zeroing, p.grad is 5, 10, 15 and 20, so the steps are 0.5, 1, 1.5 and 2 (total 5) instead of four steps of 0.5.')),
    'lesson06.ex3': (N_('Exercise 3'),
        N_('backward() adds into w.grad. Where in each step can the old gradient be thrown away without losing the one the update needs?'),
        N_('Clearing w.grad after each update (w.grad = None, or w.grad.zero_()) makes every step use only its own gradient; the slope settles near 2.04, the least-squares answer.')),
    'lesson06.ex4': (N_('Exercise 4'),
        N_('Two forward passes, two backward() calls, and nothing in between that touches w.grad.'),
        N_("The loss over all points is the sum of the two halves' losses, so its gradient is the sum of their gradients, and .grad builds that sum by itself. Training code uses this to fit batches that don't fit in memory: several backward() calls, then one step.")),
    'lesson07.ex1': (N_('Exercise 1'),
        N_('For each line, find the innermost switch around it: that switch alone decides whether the line is recorded. r4 is computed after the enable_grad block has ended.'),
        N_('Only r2 is recorded. r4 is computed from r2, which requires grad, but inside no_grad, so nothing is recorded for it.')),
    'lesson07.ex2': (N_('Exercise 2'),
        N_('A clone stays connected to a, so z is really a * a. A detached copy is a constant that happens to be worth 4, so z is 4a.'),
        N_('With clone() z = a**2 and dz/da = 2a = 8; with detach().clone() b is a constant and dz/da = b = 4.')),
    'lesson07.ex3': (N_('Exercise 3'),
        N_("Either model['body'].requires_grad_(False) before the forward pass, or features = (model['body'] @ x).tanh().detach(): the cut goes between body and head."),
        N_('Only the head is connected to the loss through recorded operations, so only it gets a gradient; an optimizer given the head alone would train just the head.')),
    'lesson08.ex1': (N_('Exercise 1'),
        N_('Ask of each line: does it change a tensor in place, is that tensor a leaf that requires grad, and is recording on?'),
        N_('Only A and D change the leaf a in place while recording is on; D reaches it through the list. B changes a computed tensor, C one that does not require grad, E runs with recording off, and F is not in place at all.')),
    'lesson08.ex2': (N_('Exercise 2'),
        N_('The in-place operations on r are recorded like ordinary ones, so r = (3q - 2)**2. Differentiate that with the chain rule.'),
        N_('r = (3q - 2)^2, so dr/dq = 6 (3q - 2) = 24 at q = 2.')),
    'lesson09.ex1': (N_('Exercise 1'),
        N_("A view shares its base's counter, so count every in-place change made through either name, slice assignment included. A clone starts a counter of its own at 0."),
        N_('buf and its view share one counter, which three in-place changes raised to 3; the clone has its own counter, raised to 1 by add_.')),
    'lesson09.ex2': (N_('Exercise 2'),
        N_('Which node saved the tensor that is changed in place? ExpBackward0 keeps its result y. Compute the normalised y as a new tensor (y = y / y.sum()) instead of overwriting it.'),
        N_('y /= y.sum() overwrote the result that ExpBackward0 saved for its derivative; y = y / y.sum() leaves it intact. z += 1 may stay: nobody saved z.')),
    'lessonA.ex2': (N_('Exercise 2'),
        N_('exp keeps one value; addition keeps none. The product gain * level only needs to send a gradient to gain: which of its two inputs does that gradient need?'),
        N_("ExpBackward0 keeps its result, MulBackward0 keeps level (for gain's gradient), AddBackward0 keeps nothing.")),
    'lesson10.ex2': (N_('Exercise 2'),
        N_('Write the mean over 160 examples in terms of the two means over 80. Without any scale, the two backward passes add up to twice the full-batch gradient.'),
        N_('The mean over 160 is (mean of half A + mean of half B) / 2, so each half gets 0.5.')),
    'lesson10.ex3': (N_('Exercise 3'),
        N_('Per epoch, five things in this order: forward, loss, zero_grad(), backward(), step(); keep loss.item().'),
        N_('Forward, loss, zero_grad, backward, step: the same five lines train every PyTorch model, whatever its size.')),
    'lessonB.ex1': (N_('Exercise 1'),
        N_('Add 3 to the derivative of q0 * q1 for each element. On the way back, ToCopyBackward0 converts the gradient to the dtype of the tensor that was copied.'),
        N_('(3 + q1, 3 + q0) = (5, 4), handed back by ToCopyBackward0 in float32, like p.')),
    'lesson11.ex1': (N_('Exercise 1'),
        N_("Differentiate twice: q'(t) = 6t^2 - 2t + 4, then differentiate that once more and put t = -1."),
        N_("q'(t) = 6t^2 - 2t + 4 and q''(t) = 12t - 2 = -14 at t = -1.")),
    'lesson11.ex2': (N_('Exercise 2'),
        N_('Row i is the gradient of the i-th entry of the gradient. First find dh/da = 2ab^2 + 3b and dh/db = 2a^2 b + 3a, then differentiate each by a and by b.'),
        N_('h_aa = 2b^2 = 8, h_ab = h_ba = 4ab + 3 = 11, h_bb = 2a^2 = 2.')),
    'lesson11.ex3': (N_('Exercise 3'),
        N_('The second call can only differentiate what the first call recorded. Which argument makes autograd.grad record the computation of the gradient?'),
        N_('With create_graph=True the first gradient is built from recorded operations, so it has a grad_fn and can be differentiated again.')),
    'lesson12.ex1': (N_('Exercise 1 (exp)'),
        N_('the local derivative of e^x is the saved result; multiply it by g.'),
        N_('Saving the output is common: tanh and sigmoid do the same.')),
    'lesson12.ex2': (N_('Exercise 2 (ReLU)'),
        N_('the local derivative is 1 where x > 0 and 0 elsewhere; a comparison gives exactly that.'),
        N_("A negative input sends no gradient back: that is how a ReLU unit can 'die'.")),
    'lesson12.ex3': (N_('Exercise 3 (quotient)'),
        N_('return a pair, (gradient for a, gradient for b), each g times its local derivative.'),
        N_('Division is multiplication by 1/b, and d(1/b)/db = -1/b^2.')),
    'lesson12.ex4': (N_('Exercise 4 (sigmoid)'),
        N_('the local derivative is s * (1 - s), with s the saved output.'),
        N_('The largest local derivative is 0.25, at x = 0: one reason deep stacks of sigmoids learn slowly.')),
    'lesson12.ex5': (N_('Exercise 5 (mean)'),
        N_('g is a single number; the answer needs ctx.input_shape (g.expand does that), each element 1/n of g.'),
        N_('Each element moves the mean by 1/n of its own change.')),
}


# --- lesson 13 (build the recorder) -------------------------------------------------------
# Its checks live in their own module; they join the tables here, so that a fresh
# import of this module (as a graded cell makes) knows them too.
from .exercise_checks_recorder import EXERCISES as _L13_EXERCISES  # noqa: E402
from .exercise_checks_recorder import TEXT as _L13_TEXT  # noqa: E402

_EXERCISES.update(_L13_EXERCISES)
_TEXT.update(_L13_TEXT)
# --- end of lesson 13 ----------------------------------------------------------------------


# --- lessons 14 (broadcasting and matmul backward) and 15 (NaN traps) ------------------------
from .exercise_checks_broadcasting import EXERCISES as _L14_EXERCISES  # noqa: E402
from .exercise_checks_broadcasting import TEXT as _L14_TEXT  # noqa: E402
from .exercise_checks_nan_traps import EXERCISES as _L15_EXERCISES  # noqa: E402
from .exercise_checks_nan_traps import TEXT as _L15_TEXT  # noqa: E402

_EXERCISES.update(_L14_EXERCISES)
_TEXT.update(_L14_TEXT)
_EXERCISES.update(_L15_EXERCISES)
_TEXT.update(_L15_TEXT)
# --- end of lessons 14 and 15 ----------------------------------------------------------------


# --- lesson 10's first exercise and the appendices' code exercises ---------------------------
from .exercise_checks_boxes import EXERCISES as _LA_EXERCISES  # noqa: E402
from .exercise_checks_boxes import TEXT as _LA_TEXT  # noqa: E402
from .exercise_checks_leaf import EXERCISES as _LB_EXERCISES  # noqa: E402
from .exercise_checks_leaf import TEXT as _LB_TEXT  # noqa: E402
from .exercise_checks_sgd_step import EXERCISES as _L10_EXERCISES  # noqa: E402
from .exercise_checks_sgd_step import TEXT as _L10_TEXT  # noqa: E402

for _table, _words in ((_L10_EXERCISES, _L10_TEXT), (_LA_EXERCISES, _LA_TEXT),
                       (_LB_EXERCISES, _LB_TEXT)):
    _EXERCISES.update(_table)
    _TEXT.update(_words)
# --- end ------------------------------------------------------------------------------------
