"""Cheap wrong answers score nothing; right answers written another way score.

Every exercise of every lesson, in the three editions, is graded the way an
assignment's graded cell grades it (:data:`autograd_kit.course.nbgrader.GRADED`,
run in the notebook's namespace after the lesson's own code): first with its
folded solution, then with the cheap wrong answers a learner would try: the
``...`` left in, an object that claims to equal anything, a redefined ``check``
or ``grade``, a patched ``autograd_kit.exercises`` or engine, a function that
returns the numbers a right answer gives on the lesson's data, a backward that
ignores ``g``, one ``backward()`` where two were asked for, finite differences
where autograd was asked for.
"""
from __future__ import annotations

import contextlib
import copy
import io
import math
import os
from pathlib import Path

import pytest

from autograd_kit.course import find_lessons

pytestmark = pytest.mark.slow  # (each case runs a lesson's code: left out of the quick loop)
from autograd_kit.course.nbgrader import GRADED, exercise_key

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LANGUAGES = ("en", "zh", "ru")


def _run(source: str, ns: dict) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(source, "<cell>", "exec"), ns)


def namespace_before(lesson, ex, solved=True) -> dict:
    """The notebook's namespace when exercise ``ex``'s answer cell is reached: the
    lesson's code run in order, earlier exercises solved, check cells left out."""
    ns: dict = {}
    checks = {e.check_cell for e in lesson.exercises}
    answers = {e.answer_cell: e for e in lesson.exercises}
    old = os.getcwd()
    os.chdir(lesson.path.parent)
    try:
        for i, cell in enumerate(lesson.notebook.cells[:ex.answer_cell]):
            if cell.cell_type != "code" or i in checks or cell.source.lstrip().startswith("%"):
                continue
            source = answers[i].solution if i in answers else cell.source
            try:
                _run(source, ns)
            except Exception:
                pass            # a cell meant to raise (tagged raises-exception)
    finally:
        os.chdir(old)
    return ns


def graded(ns: dict, lesson, ex) -> bool:
    """Whether the graded cell gives the point (it raises when it does not)."""
    return said_by_grader(ns, lesson, ex) is None


def said_by_grader(ns: dict, lesson, ex) -> str | None:
    """The sentence the graded cell fails with; None when it gives the point."""
    try:
        _run(GRADED.format(key=exercise_key(lesson, ex.number)), ns)
    except AssertionError as err:
        return str(err)
    return None


def printed_by_lesson(ns: dict, lesson, ex) -> str:
    """What the lesson's own check cell prints for the answer in ``ns``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(f"from autograd_kit.exercises import grade\n"
             f"grade({exercise_key(lesson, ex.number)!r}, globals())", ns)
    return out.getvalue()


#: a wrong answer of the right kind, per kind of answer (see ``_EXERCISES``)
PLAUSIBLE = {"number": "123.0", "numbers": "[123.0, -7.0]", "list": "['x', None]",
             "names": "['x']", "function": "lambda *a, **k: 123.0", "any": "123.0",
             "class": "type('Wrong', (Function,), {'forward': staticmethod(lambda ctx, *x: "
                      "x[0] * 1), 'backward': staticmethod(lambda ctx, g: g)})"}


def plausible(key: str) -> str:
    import autograd_kit.exercises as E
    names, kinds, _test = E._EXERCISES[key]
    head = "from autograd_kit.autograd import Function\n" if "class" in kinds else ""
    return head + "\n".join(f"{n} = {PLAUSIBLE[k]}" for n, k in zip(names, kinds))


def pasted_feedback(lesson, ex, ns) -> list[str]:
    """Answers made of the numbers the feedback to a wrong answer shows."""
    import re

    import autograd_kit.exercises as E
    key = exercise_key(lesson, ex.number)
    names, kinds, _test = E._EXERCISES[key]
    if not set(kinds) <= {"number", "numbers"}:
        return []
    attempt = dict(ns)
    _run(plausible(key), attempt)
    sentence = re.split("[:：]", printed_by_lesson(attempt, lesson, ex), 1)[-1]  # no title
    numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", sentence)] or [0.0]
    out = []
    for n in sorted(set(numbers)):
        out.append("\n".join(f"{name} = {[n] * 2 if kind == 'numbers' else n!r}"
                              for name, kind in zip(names, kinds)))
    out.append("\n".join(f"{name} = {numbers if kind == 'numbers' else numbers[0]!r}"
                          for name, kind in zip(names, kinds)))
    return out


def cases():
    """Every English exercise; of an edition, the exercises where something the
    grader reads can differ from the English ones: a solution whose comments or
    strings are translated, or feedback (in the edition's language) whose numbers
    a learner could paste.  Everything else an edition runs is the English code
    token for token (``tests/test_editions.py``): the same cheats would prove
    nothing new."""
    import autograd_kit.exercises as E
    english = {lesson.key: lesson for lesson in find_lessons(LESSONS, "en")}
    out = []
    for lang in LANGUAGES:
        for lesson in find_lessons(LESSONS, lang):
            for ex in lesson.exercises:
                if lang != "en":
                    same = english[lesson.key].exercises[ex.number - 1].solution == ex.solution
                    kinds = E._EXERCISES[exercise_key(lesson, ex.number)][1]
                    if same and not set(kinds) <= {"number", "numbers"}:
                        continue
                out.append(pytest.param(lesson, ex, id=f"{lang}/{lesson.key}/ex{ex.number}"))
    return out


ALWAYS_EQUAL = """
class _Anything(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = float.__hash__
"""

#: redefinitions and patches of what a check might use; each comes with an undo
TAMPERING = [
    'def check(*a, **k): print("correct")\ndef grade(*a, **k): print("correct")\n'
    'mismatch = lambda *a, **k: None',
    "import autograd_kit.exercises as _e\n_e.grade = lambda *a, **k: None\n"
    "_e.check = lambda *a, **k: None\n_e.mismatch = lambda *a, **k: None",
    "import math\nmath.isclose = lambda *a, **k: True",
    "import autograd_kit\nautograd_kit.autograd.grad = lambda *a, **k: (a[1],)\n"
    "autograd_kit.Tensor.backward = lambda self, *a, **k: None",
    "import builtins\n_real_isinstance = isinstance\n"
    "builtins.isinstance = lambda o, t: True if t is list else _real_isinstance(o, t)",
    "import numpy\nnumpy.any = lambda *a, **k: False\nnumpy.allclose = lambda *a, **k: True",
    "import autograd_kit.gradcheck as _g\n"
    "_g.numerical_jacobian = _g.analytical_jacobian",
    "import operator, math\nmath.isclose = operator.eq",
]
#: the tamperings the grader must notice (the others it makes harmless by importing afresh)
NOTICED = TAMPERING[2:]


@contextlib.contextmanager
def undone():
    """Put back whatever a tampering snippet patched."""
    import builtins

    import autograd_kit
    import autograd_kit.autograd
    import numpy

    import autograd_kit.gradcheck
    saved = [(math, "isclose", math.isclose), (builtins, "isinstance", builtins.isinstance),
             (numpy, "any", numpy.any), (numpy, "allclose", numpy.allclose),
             (autograd_kit.gradcheck, "numerical_jacobian",
              autograd_kit.gradcheck.numerical_jacobian),
             (autograd_kit.autograd, "grad", autograd_kit.autograd.grad),
             (autograd_kit.Tensor, "backward", autograd_kit.Tensor.backward)]
    import sys
    module = sys.modules["autograd_kit.exercises"]
    saved += [(module, k, getattr(module, k)) for k in ("grade", "check", "mismatch")]
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def wrong_values(lesson, ex, ns) -> list[str]:
    """Cheap wrong answers for this exercise, as code for its answer cell."""
    import autograd_kit.exercises as E
    key = exercise_key(lesson, ex.number)
    names, kinds, _test = E._EXERCISES[key]
    out = [lesson.notebook.cells[ex.answer_cell].source]            # ... left in
    out.append(ALWAYS_EQUAL + "\n".join(f"{n} = _Anything(1.0)" for n in names))
    if "function" in kinds:
        # what the solution returns on the lesson's data, pasted as a constant
        solved = dict(ns)
        _run(ex.solution, solved)
        fn = solved[names[kinds.index("function")]]
        with contextlib.suppress(Exception):
            value = {"lesson03.ex3": None, "lesson05.ex3": None, "lesson13.ex1": None,
                     "lesson13.ex2": None}.get(key, ...)
            if value is ...:
                args = {"lesson06.ex3": lambda: fn(), "lesson06.ex4":
                        lambda: fn(solved["ak"].tensor(0.5, requires_grad=True)),
                        "lesson07.ex3": lambda: None, "lesson09.ex2": lambda: None,
                        "lesson10.ex3": lambda: fn(solved["make_model"](), solved["optim"].SGD(
                            solved["make_model"]().parameters(), lr=0.1), 5),
                        "lesson11.ex3": lambda: fn(lambda t: 2 * t ** 3 - t ** 2 + 4 * t, -1.0),
                        "lesson10.ex1": lambda: None, "lessonA.ex1": lambda: fn(solved["glow"]),
                        "lessonB.ex2": lambda: fn([1.0, 2.0], "cpu", solved["ak"].float64)}
                value = args[key]()
                if hasattr(value, "tolist"):
                    value = value.tolist()
                out.append(f"def {names[0]}(*a, **k):\n    return {value!r}")
    extra = CHEATS.get(key)
    if extra:
        out += extra
    return out


CHEATS = {
    # a backward that ignores g; a hard-coded tensor
    "lesson12.ex5": ["""
class MyMean(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.input_shape = x.shape
        ctx.count = x.numel()
        return x.sum() / ctx.count

    @staticmethod
    def backward(ctx, g):
        return ak.ones(ctx.input_shape, dtype=ak.float64) / ctx.count
""", """
class MyMean(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.input_shape = x.shape
        ctx.count = x.numel()
        return x.sum() / ctx.count

    @staticmethod
    def backward(ctx, g):
        return g * ak.full((3, 2), 1 / 6, dtype=ak.float64)
"""],
    "lesson12.ex2": ["""
class MyReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ak.tensor([0.0, 0.0, 1.0, 1.0], dtype=ak.float64)
"""],
    "lesson12.ex1": ["""
class MyExp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, g):
        (result,) = ctx.saved_tensors
        return result
"""],
    "lesson12.ex3": ["""
class MyDiv(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return 1 / b, -a / b ** 2
"""],
    "lesson12.ex4": ["""
class MySigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + (-x).exp())
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return s * (1 - s)
"""],
    # the engine's backward() instead of a walk by hand
    "lesson03.ex3": ["""
def my_backward(root):
    root.backward()
"""],
    # hooks that only look, or change the gradient in place
    "lesson05.ex3": ["""
def clip(grad):
    print(grad)

def remember(grad):
    seen.append(grad)
    return grad * 0
"""],
    # a repair that hides the normalisation from autograd
    "lesson09.ex2": ["""
def scaled_score(x):
    y = (x.exp() / x.exp().sum()).detach()
    return ((y * 3 + 1) * x).sum()
"""],
    # the body is not cut off
    "lesson07.ex3": ["""
def train_head_only(model, x):
    features = (model["body"] @ x).tanh()
    loss = ((model["head"] * features).sum() - 1) ** 2
    loss.backward()
"""],
    # one backward() over the whole batch
    "lesson06.ex4": ["""
def accumulated_grad(w):
    ((w * xs - ys) ** 2).sum().backward()
    return w.grad
"""],
    # a hand-coded gradient, no autograd
    "lesson06.ex3": ["""
def fit_slope(steps=30, lr=0.05):
    w = 0.0
    for _ in range(steps):
        grad = (2 * (w * sizes - prices) * sizes).mean().item()
        w -= lr * grad
    return w
"""],
    # finite differences
    "lesson11.ex3": ["""
def second_derivative(fn, at, eps=1e-4):
    value = lambda x: fn(ak.tensor(x, dtype=ak.float64)).item()
    return (value(at + eps) - 2 * value(at) + value(at - eps)) / eps ** 2
"""],
    # --- lesson 13: a closure with numbers typed in, = instead of +=, out.grad left out
    "lesson13.ex1": ["""
def div(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data / other.data, (self, other), "/")

    def _backward():
        self.grad += 0.5 * out.grad
        other.grad += -0.25 * out.grad
    out._backward = _backward
    return out
""", """
def div(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data / other.data, (self, other), "/")

    def _backward():
        self.grad = out.grad / other.data
        other.grad = -self.data / other.data ** 2 * out.grad
    out._backward = _backward
    return out
""", """
def div(self, other):
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data / other.data, (self, other), "/")

    def _backward():
        self.grad += 1 / other.data
        other.grad += -self.data / other.data ** 2
    out._backward = _backward
    return out
"""],
    # the lesson's recursive walk; an order without the topological rule; no
    # set of placed Values (a shared Value runs twice); only the root's closure
    "lesson13.ex2": ["""
def backward(self):
    order, placed = [], set()

    def place(v):
        if v not in placed:
            placed.add(v)
            for child in v._prev:
                place(child)
            order.append(v)
    place(self)
    self.grad = 1.0
    for v in reversed(order):
        v._backward()
""", """
def backward(self):
    queue, seen = [self], {self}
    self.grad = 1.0
    while queue:
        v = queue.pop(0)
        v._backward()
        for child in v._prev:
            if child not in seen:
                seen.add(child)
                queue.append(child)
""", """
def backward(self):
    order, stack = [], [self]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(v._prev)
    self.grad = 1.0
    for v in order:
        v._backward()
""", """
def backward(self):
    self.grad = 1.0
    self._backward()
"""],
    # --- end of lesson 13
    # a train that does not train the model it is given
    "lesson10.ex3": ["""
def train(model, optimizer, epochs):
    other = make_model()
    opt = optim.SGD(other.parameters(), lr=0.1)
    losses = []
    for _ in range(epochs):
        loss = loss_fn(other(inputs), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
"""],
}

#: right answers written differently from the folded solutions
OTHER_RIGHT = {
    "lesson12.ex5": """
class MyMean(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.input_shape = x.shape
        ctx.count = x.numel()
        return x.sum() / ctx.count

    @staticmethod
    def backward(ctx, g):
        return ak.ones(ctx.input_shape, dtype=ak.float64) * (g / ctx.count)
""",
    "lesson03.ex1": "my_dL_dh, my_w_grad, my_x_grad = 5, 7.5, ak.tensor(10.0)",
    "lesson06.ex3": """
def fit_slope(steps=30, lr=0.05):
    w = ak.tensor(0.0, requires_grad=True)
    for _ in range(steps):
        if w.grad is not None:
            w.grad.zero_()
        ((w * sizes - prices) ** 2).mean().backward()
        with ak.no_grad():
            w.sub_(lr * w.grad)
    return w.item()
""",
    "lesson11.ex3": """
def second_derivative(fn, at):
    t = ak.tensor(float(at), dtype=ak.float64, requires_grad=True)
    y = fn(t)
    dy = ak.autograd.grad(y, t, create_graph=True)[0]
    dy.backward()
    return t.grad
""",
    "lesson08.ex1": 'my_refused = ("d", "a ")',
    "lesson01.ex1": 'my_leaves, my_requires_grad = ("u", "k"), {"f", "s", "u"}',
    "lesson04.ex1": "import numpy\nmy_jacobian = numpy.array([[1, 1], [4, 3]])",
    "lesson06.ex4": """
def accumulated_grad(w):
    for half in (slice(0, 2), slice(2, 4)):
        ((w * xs[half] - ys[half]) ** 2).sum().backward()
    return w.grad.item()
""",
    "lessonB.ex1": 'my_answer = ([5, 4], "torch.float32")',
    # --- lesson 13: the shares written another way; Kahn's order (count the uses first)
    "lesson13.ex1": """
def div(self, other):
    if not isinstance(other, Value):
        other = Value(other)
    out = Value(self.data / other.data, (self, other), "/")

    def _backward():
        self.grad = self.grad + out.grad * (1.0 / other.data)
        other.grad -= out.grad * self.data / (other.data * other.data)
    out._backward = _backward
    return out
""",
    "lesson13.ex2": """
def backward(self):
    uses, seen, todo = {}, {self}, [self]
    while todo:
        v = todo.pop()
        for child in v._prev:
            uses[child] = uses.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                todo.append(child)
    self.grad = 1
    ready = [self]
    while ready:
        v = ready.pop()
        v._backward()
        for child in v._prev:
            uses[child] -= 1
            if uses[child] == 0:
                ready.append(child)
""",
    # --- end of lesson 13
    "lesson12.ex2": """
class MyReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x > 0)
""",
    "lesson10.ex3": """
def train(model, optimizer, epochs):
    history = []
    while len(history) < epochs:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        history.append(float(loss))
    return history
""",
}


@pytest.mark.parametrize("lesson, ex", cases())
def test_cheap_answers_score_nothing_and_right_ones_score(lesson, ex):
    key = exercise_key(lesson, ex.number)
    ns = namespace_before(lesson, ex)
    right = dict(ns)
    _run(ex.solution, right)
    assert graded(right, lesson, ex), f"{key}: the folded solution must get the point"
    if lesson.language != "en":  # (see cases(): only what the edition changes)
        for answer in pasted_feedback(lesson, ex, ns):
            attempt = dict(ns)
            _run(answer, attempt)
            assert not graded(attempt, lesson, ex), f"{key}: this scored:\n{answer}"
        return
    if key in OTHER_RIGHT:
        other = dict(ns)
        _run(OTHER_RIGHT[key], other)
        assert graded(other, lesson, ex), f"{key}: a right answer written differently"
    untouched = lesson.notebook.cells[ex.answer_cell].source
    cheats = wrong_values(lesson, ex, ns) + pasted_feedback(lesson, ex, ns)
    for answer in [plausible(key), *cheats]:
        attempt = dict(ns)
        if answer == untouched:
            with contextlib.suppress(Exception):
                _run(answer, attempt)
        else:
            _run(answer, attempt)           # a cheat that does not even run proves nothing
        assert not graded(attempt, lesson, ex), f"{key}: this scored:\n{answer}"
    for tampering in TAMPERING:
        for answer in (plausible(key), ALWAYS_EQUAL + "\n".join(
                f"{n} = _Anything(1.0)" for n in __import__(
                    "autograd_kit.exercises", fromlist=["x"])._EXERCISES[key][0])):
            attempt = dict(ns)
            with undone():
                _run(answer, attempt)
                _run(tampering, attempt)
                said = said_by_grader(attempt, lesson, ex)
            assert said is not None, f"{key}: scored with\n{tampering}"
            if tampering in NOTICED:
                with undone():
                    attempt = dict(ns)
                    _run(tampering, attempt)
                    _run(ex.solution, attempt)
                    assert not graded(attempt, lesson, ex), (
                        f"{key}: a right answer in a tampered notebook scored:\n{tampering}")


def test_the_tampering_is_named(monkeypatch):
    import autograd_kit.exercises as E
    monkeypatch.setattr(math, "isclose", lambda *a, **k: True)
    assert E._tampered() == "math.isclose"
    monkeypatch.undo()
    import operator
    monkeypatch.setattr(math, "isclose", operator.eq)
    assert E._tampered() == "math.isclose"
    monkeypatch.undo()
    assert E._tampered() is None
