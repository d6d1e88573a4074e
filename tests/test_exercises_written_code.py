"""The code-writing exercises of Lesson 10 and the appendices, and their checks.

``sgd_step(params, lr)`` (Lesson 10), ``count_boxes(output)`` (Appendix A) and
``make_leaf(values, device, dtype)`` (Appendix B): the folded solution and a right
answer written another way pass; the answer cell left untouched says "not
answered yet"; every cheap wrong answer a learner would try says "not quite"
with the misconception it shows, each time (the checks draw new numbers on every
call), and scores nothing when graded.
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

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
#: key -> (lesson file, the id prefix of the exercise's cells)
WHERE = {"lesson10.ex1": ("10_training_a_network.ipynb", "6a53c292"),
         "lessonA.ex1": ("A_pictures_of_graphs.ipynb", "cell-42"),
         "lessonB.ex2": ("B_gpu_with_cupy.ipynb", "eefec22c")}


def cell(key: str, part: str):
    name, prefix = WHERE[key]
    nb = nbformat.read(LESSONS / name, as_version=4)
    return next(c for c in nb.cells if c.get("id") == f"{prefix}-{part}")


def solution(key: str) -> str:
    return re.search(r"```python\n(.*?)```", cell(key, "solution").source, re.DOTALL).group(1)


def said(key: str, source: str) -> str:
    """What the lesson's check cell says for the answer ``source``."""
    ns: dict = {"ak": ak}
    exec(compile(source, "<answer>", "exec"), ns)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exercises.grade(key, ns)
    return out.getvalue()


def step(body: str) -> str:
    return "def sgd_step(params, lr):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines())


def walk(body: str) -> str:
    return "def count_boxes(output):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines())


def leaf(body: str) -> str:
    return "def make_leaf(values, device, dtype):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines())


RIGHT = {
    "lesson10.ex1": [step("""
for p in params:
    if p.grad is not None:
        p.data -= lr * p.grad       # the old way, outside the graph
        p.grad.zero_()              # zeros instead of None
"""), step("""
with ak.no_grad():
    for p in list(params):
        if p.grad is not None:
            p.copy_(p - lr * p.grad)
            p.grad = None
""")],
    "lessonA.ex1": [walk("""
nodes = {}
def visit(fn):                       # recursion, with a dict of ids
    if fn is None or id(fn) in nodes:
        return
    nodes[id(fn)] = fn
    for nxt, _ in fn.next_functions:
        visit(nxt)
visit(output.grad_fn)
leaves = sum(1 for fn in nodes.values() if type(fn).__name__ == "AccumulateGrad")
return len(nodes) + leaves + 1
""")],
    "lessonB.ex2": [leaf("return ak.tensor(values).to(device, dtype).requires_grad_()"),
                    leaf("t = ak.tensor(values, dtype=dtype, device=device)\n"
                         "t.requires_grad = True\nreturn t")],
}

_UPDATE = "if p.grad is not None:\n        p -= lr * p.grad\n        p.grad = None"
#: key -> {cheap wrong answer: words the check must say about it}
WRONG = {
    "lesson10.ex1": {
        step("for p in params:\n    " + _UPDATE): "refused: recording was on",
        step("with ak.no_grad():\n    for p in params:\n        if p.grad is not None:\n"
             "            p = p - lr * p.grad\n            p.grad = None"):
            "did not move.*new tensors",
        step("with ak.no_grad():\n    for p in params:\n        if p.grad is not None:\n"
             "            p += lr * p.grad\n            p.grad = None"): "uphill",
        step("with ak.no_grad():\n    for p in params:\n        if p.grad is not None:\n"
             "            p -= p.grad\n            p.grad = None"): "whole gradient",
        step("with ak.no_grad():\n    for p in params:\n        if p.grad is not None:\n"
             "            p -= lr * p.grad"): "not cleared.*add to them",
        step("with ak.no_grad():\n    for p in params:\n        if p.grad is not None:\n"
             "            p -= lr * p.grad\nfor p in params:\n    p.grad = None"):
            "generator runs out",
        step("with ak.no_grad():\n    for p in params:\n        p -= lr * p.grad\n"
             "        p.grad = None"): "grad is None",
        step("opt = ak.optim.SGD(params, lr=lr)\nopt.step()\nopt.zero_grad()"):
            "asked an optimizer",
        step("with ak.no_grad():\n    for p in params:\n        if p.grad is not None:\n"
             "            p -= 0.5 * lr * p.grad\n            p.grad = None"):
            "not by lr times",
        step("for p in params:\n    p.requires_grad_(False)\n    if p.grad is not None:\n"
             "        p -= lr * p.grad\n        p.grad = None"): "no longer a leaf",
    },
    "lessonA.ex1": {
        walk("boxes, todo = 1, [output.grad_fn]\nwhile todo:\n    fn = todo.pop()\n"
             "    if fn is None:\n        continue\n    boxes += 2 if hasattr(fn, 'variable') "
             "else 1\n    todo.extend(n for n, _ in fn.next_functions)\nreturn boxes"):
            "once per path",
        walk("seen, todo = set(), [output.grad_fn]\nwhile todo:\n    fn = todo.pop()\n"
             "    if fn is None or fn in seen:\n        continue\n    seen.add(fn)\n"
             "    todo.extend(n for n, _ in fn.next_functions)\nreturn len(seen) + 1"):
            "leaves are missing",
        walk("seen, todo, boxes = set(), [output.grad_fn], 0\nwhile todo:\n    fn = todo.pop()\n"
             "    if fn is None or fn in seen:\n        continue\n    seen.add(fn)\n"
             "    boxes += 2 if hasattr(fn, 'variable') else 1\n"
             "    todo.extend(n for n, _ in fn.next_functions)\nreturn boxes"): "one box short",
        walk("seen, todo, boxes = set(), [output.grad_fn], 1\nwhile todo:\n    fn = todo.pop()\n"
             "    if fn is None:\n        boxes += 1\n        continue\n    if fn in seen:\n"
             "        continue\n    seen.add(fn)\n    boxes += 2 if hasattr(fn, 'variable') "
             "else 1\n    todo.extend(n for n, _ in fn.next_functions)\nreturn boxes"):
            "None in next_functions",
        walk("return ak.make_dot(output).source.count('label=')"): "drew the picture",
        walk("return 8"): "for some graphs",
        walk("return 8.5"): "whole number",
    },
    "lessonB.ex2": {
        leaf("return ak.tensor(values, requires_grad=True).to(device, dtype)"):
            "not a leaf.*ToCopyBackward0",
        leaf("return ak.tensor(values, device=device, dtype=dtype)"): "does not require grad",
        leaf("return ak.tensor(values, device=device, requires_grad=True)"): "dtype",
        leaf("return ak.tensor(values, dtype=dtype, requires_grad=True) * 1"): "not a leaf",
        leaf("return ak.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)"): "values",
        leaf("return values"): "should return a tensor",
    },
}
CASES = [pytest.param(key, source, words, id=f"{key}-{k}")
         for key, table in WRONG.items() for k, (source, words) in enumerate(table.items())]


@pytest.mark.parametrize("key", list(WHERE))
def test_the_stored_notebook_shows_the_exercise_open(key):
    assert exercises.OPEN in said(key, cell(key, "answer").source)


@pytest.mark.parametrize("key", list(WHERE))
def test_the_solution_is_correct(key):
    assert f": {exercises.RIGHT}." in said(key, solution(key))


@pytest.mark.parametrize("key,source", [(k, s) for k, sources in RIGHT.items() for s in sources])
def test_a_right_answer_written_another_way_is_correct(key, source):
    assert f": {exercises.RIGHT}." in said(key, source)


@pytest.mark.parametrize("key,source,words", CASES)
def test_a_cheap_wrong_answer_is_named(key, source, words):
    for _repeat in range(3):                       # new numbers each call, same verdict
        out = said(key, source)
        assert f": {exercises.WRONG}:" in out, out
        assert re.search(words, out, re.DOTALL), out


@pytest.mark.parametrize("key,source,words", CASES)
def test_a_cheap_wrong_answer_scores_nothing_when_graded(key, source, words):
    ns: dict = {"ak": ak}
    exec(compile(source, "<answer>", "exec"), ns)
    with pytest.raises(exercises.ExerciseNotSolved):
        exercises.grade(key, ns, graded=True)


def test_the_checks_put_back_what_they_watch():
    from autograd_kit.optim.optimizer import Optimizer
    from autograd_kit.optim.sgd import SGD
    from autograd_kit.viz import model
    before = (Optimizer.step, Optimizer.zero_grad, vars(SGD).get("step"), model._Builder.add)
    for key, table in WRONG.items():
        for source in table:
            said(key, source)
    assert (Optimizer.step, Optimizer.zero_grad, vars(SGD).get("step"),
            model._Builder.add) == before
    assert ak.is_grad_enabled()


def test_the_solution_agrees_with_pytorch_sgd():
    """What the check asks of sgd_step is what PyTorch's SGD does: a parameter
    without a gradient untouched, the others moved and their gradients None."""
    torch = pytest.importorskip("torch")
    used, unused = torch.tensor([1.0, -2.0], requires_grad=True), torch.ones(2, requires_grad=True)
    (used * torch.tensor([3.0, 4.0])).sum().backward()
    opt = torch.optim.SGD([used, unused], lr=0.5)
    opt.step()
    opt.zero_grad()
    assert used.tolist() == [-0.5, -4.0] and unused.tolist() == [1.0, 1.0]
    assert used.grad is None and unused.grad is None


def test_the_leaf_trap_is_pytorch_s_too():
    """In PyTorch as in the kit: asking for gradients, then converting, hands back
    a copy that is not a leaf, and backward() fills the original's .grad."""
    torch = pytest.importorskip("torch")
    for lib in (ak, torch):
        original = lib.tensor([1.0, 2.0], requires_grad=True)
        copy = original.to(lib.float64)
        (copy * 3).sum().backward()
        assert not copy.is_leaf and copy.grad_fn.name() == "ToCopyBackward0"
        assert original.grad.tolist() == [3.0, 3.0]
