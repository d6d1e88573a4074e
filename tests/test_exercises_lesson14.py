"""Lesson 14's exercise: ``linear_backward(x, w, b, g)`` and its check.

The folded solution and a right answer written another way pass; the answer
cell left untouched says "not answered yet"; every cheap wrong answer a learner
would try (a sum forgotten or replaced by a mean, a transposed weight gradient,
the forward's transpose reused for dx, numbers typed in, autograd asked inside)
says "not quite" with the misconception it shows, in English and in the graded
mode of an assignment.
"""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest

import autograd_kit as ak
from autograd_kit import exercises
from autograd_kit.exercises.lesson14 import l14_ex1

LESSON = Path(__file__).resolve().parent.parent / "lessons" / \
    "14_broadcasting_and_matmul_backward.ipynb"
KEY = "lesson14.ex1"


def cell(cell_id: str):
    nb = nbformat.read(LESSON, as_version=4)
    return next(c for c in nb.cells if c.get("id") == cell_id)


def solution() -> str:
    return re.search(r"```python\n(.*?)```", cell("ex1-solution").source, re.DOTALL).group(1)


def said(source: str) -> str:
    """What the lesson's check cell says for the answer ``source``."""
    ns: dict = {"ak": ak}
    exec(compile(source, "<answer>", "exec"), ns)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exercises.grade(KEY, ns)
    return out.getvalue()


def answer(body: str) -> str:
    return "def linear_backward(x, w, b, g):\n" + "".join(
        f"    {line}\n" for line in body.strip().splitlines())


RIGHT_ANOTHER_WAY = answer("""
dx = (g.unsqueeze(2) * w.unsqueeze(0)).sum(1)
dw = (g.unsqueeze(2) * x.unsqueeze(1)).sum(0)
db = g.T.sum(1)
return dx, dw, db
""")

#: (cheap wrong answer, words the check must say about it)
WRONG = {
    "db is g itself": (answer("return g @ w, g.T @ x, g"), "summed|total|broadcast"),
    "dw transposed": (answer("return g @ w, x.T @ g, g.sum(0)"), "transpose"),
    "dx with the forward's w.T": (answer("return g @ w.T, g.T @ x, g.sum(0)"), "w.T"),
    "db a mean": (answer("return g @ w, g.T @ x, g.mean(0)"), "too small"),
    "db keeps the batch axis": (answer("return g @ w, g.T @ x, g.sum(0, keepdim=True)"),
                                r"shape \(1, \d\), but b has shape \(\d,\)"),
    "numbers typed in": (answer("""
return (ak.tensor([[0.5, -1.0, 2.0]] * 4), ak.tensor([[1.0, 2.0, 3.0]] * 2),
        ak.tensor([4.0, -2.0]))
"""), "same numbers whatever"),
    "backward() inside": (answer("""
x, w, b = (t.detach().requires_grad_() for t in (x, w, b))
y = x @ w.T + b
y.backward(g)
return x.grad, w.grad, b.grad
"""), "asked autograd"),
    "autograd.grad with recording switched back on": (answer("""
x, w, b = (t.detach().requires_grad_() for t in (x, w, b))
with ak.enable_grad():
    y = x @ w.T + b
    return ak.autograd.grad(y, (x, w, b), g)
"""), "asked autograd"),
    "one result missing": (answer("return g @ w, g.T @ x"), "three gradients"),
    "a list instead of a tensor": (answer("return (g @ w).tolist(), g.T @ x, g.sum(0)"),
                                   "should be a tensor"),
    "inputs changed in place": (answer("""
db = g.sum(0)
return g @ w, g.T @ x.mul_(1.0).add_(0.0).mul_(2.0) / 2, db
"""), "in place"),
}


def test_the_stored_notebook_shows_the_exercise_open():
    assert exercises.OPEN in said(cell("ex1-answer").source)


def test_the_solution_is_correct():
    assert f": {exercises.RIGHT}." in said(solution())


def test_a_right_answer_written_another_way_is_correct():
    assert f": {exercises.RIGHT}." in said(RIGHT_ANOTHER_WAY)


def test_numpy_arrays_are_accepted_as_results():
    source = answer("return (g.numpy() @ w.numpy(), g.numpy().T @ x.numpy(), "
                    "g.numpy().sum(0))")
    assert f": {exercises.RIGHT}." in said(source)


@pytest.mark.parametrize("name", list(WRONG))
def test_a_cheap_wrong_answer_is_named(name):
    source, words = WRONG[name]
    for _repeat in range(3):                       # random shapes: the same verdict each time
        out = said(source)
        assert f": {exercises.WRONG}:" in out, out
        assert re.search(words, out), out


@pytest.mark.parametrize("name", list(WRONG))
def test_a_cheap_wrong_answer_scores_nothing_when_graded(name):
    ns: dict = {"ak": ak}
    exec(compile(WRONG[name][0], "<answer>", "exec"), ns)
    with pytest.raises(exercises.ExerciseNotSolved):
        exercises.grade(KEY, ns, graded=True)


def test_the_check_puts_back_what_it_switched_off():
    from autograd_kit import engine
    before = engine.backward_steps
    said(WRONG["backward() inside"][0])
    assert engine.backward_steps is before and ak.is_grad_enabled()


def test_torch_autograd_inside_is_refused_too():
    torch = pytest.importorskip("torch")
    source = answer("""
x, w, b = (torch.tensor(t.numpy(), requires_grad=True) for t in (x, w, b))
with torch.enable_grad():
    y = x @ w.T + b
    y.backward(torch.tensor(g.numpy()))
return x.grad, w.grad, b.grad
""")
    ns: dict = {"ak": ak, "torch": torch}
    exec(compile(source, "<answer>", "exec"), ns)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exercises.grade(KEY, ns)
    assert "asked autograd" in out.getvalue()
    assert torch.is_grad_enabled() and torch.autograd.grad.__module__ == "torch.autograd"


def test_a_non_function_is_refused():
    assert l14_ex1(123.0)
    assert "should be a function" in said("linear_backward = 123.0")
