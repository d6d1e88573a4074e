"""The checks of Lesson 13 (build the recorder), registered by :mod:`.registry`.

The learner's answers are two functions that become methods of the lesson's
scalar ``Value``: ``div(self, other)`` (exercise 1, a ``/`` that records its
inputs and a ``_backward`` closure) and ``backward(self)`` (exercise 2, the
whole pass, without recursion).  Neither is tried on the learner's own
``Value`` class: each check makes Values of its own (:class:`CheckValue`, the
same shape: ``data``, ``grad``, ``_prev``, ``_op``, ``_backward``) and, while
the answer runs, the name ``Value`` in the answer's globals is this class.

In the spirit of ``gradcheck``: random numbers, a random upstream gradient,
inputs whose ``grad`` already holds something (a closure that sets instead of
adding loses it), a Value used twice, random graphs with shared parts, and a
chain longer than Python lets a recursive walk go.  What is wrong is said as a
misconception, never as the code that would fix it.
"""
from __future__ import annotations

import math
import random
import sys

from ..i18n import _
from .common import N_, codes, python_rng, still_open
from .sentences import OPEN


def _nothing() -> None:
    """A leaf's ``_backward``: it has no inputs to send anything to."""


class CheckValue:
    """The check's own scalar Value.  Its ``+``, ``*`` and ``tanh`` record their
    inputs and a correct closure; every closure that runs appends its Value to
    ``log`` (a list shared by one graph), so the check sees the order."""

    def __init__(self, data, _children=(), _op="", label="", log=None):
        self.data = data
        self.grad = 0.0
        self._prev = tuple(_children)
        self._op = _op
        self._backward = _nothing
        self.label = label
        self.log = log

    def __repr__(self) -> str:
        return f"Value(data={self.data!r})"

    def _made(self, data, inputs, op, send):
        out = CheckValue(data, inputs, op, log=self.log)

        def _backward():
            if out.log is not None:
                out.log.append(out)
            send(out)
        out._backward = _backward
        return out

    def add(self, other: "CheckValue") -> "CheckValue":
        def send(out):
            self.grad += out.grad
            other.grad += out.grad
        return self._made(self.data + other.data, (self, other), "+", send)

    def mul(self, other: "CheckValue") -> "CheckValue":
        def send(out):
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        return self._made(self.data * other.data, (self, other), "*", send)

    def tanh(self) -> "CheckValue":
        t = math.tanh(self.data)

        def send(out):
            self.grad += (1 - t * t) * out.grad
        return self._made(t, (self,), "tanh", send)


def _away_from_zero(rng: random.Random, low: float, high: float) -> float:
    return rng.choice((-1.0, 1.0)) * rng.uniform(low, high)


def _near(a, b, tol: float = 1e-9) -> bool:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


class _Swapped:
    """``with _Swapped(fn, {"Value": CheckValue}):`` the answer's globals hold
    these names while it runs; what was there is put back after."""

    def __init__(self, fn, values: dict) -> None:
        self.space = getattr(fn, "__globals__", None)
        self.values = values

    def __enter__(self):
        space = self.space
        self.before = {k: space[k] for k in self.values if space is not None and k in space}
        if space is not None:
            space.update(self.values)
        return self

    def __exit__(self, *exc) -> bool:
        if self.space is not None:
            for k in self.values:
                self.space.pop(k, None)
            self.space.update(self.before)
        return False


def _div_once(div, x, y, start_a, start_b, g):
    """``div`` on two fresh Values; ``(out, a, b)`` after one call of
    ``out._backward`` with ``out.grad = g`` and the inputs' grads at the starts,
    or a sentence saying why it cannot be run."""
    a, b = CheckValue(x), CheckValue(y)
    with _Swapped(div, {"Value": CheckValue}):
        out = div(a, b)
        if not isinstance(out, CheckValue):
            return N_("div should return the new Value it made (out), with the quotient as "
                      "its data")
        if not _near(out.data, x / y):
            return N_("the new Value's data is not self.data divided by other.data")
        if {id(c) for c in out._prev} != {id(a), id(b)}:
            return N_("the new Value does not record its two inputs: pass (self, other) as "
                      "its children, so that backward() can find them")
        if out._backward is _nothing:
            return N_("out._backward is still the closure that does nothing, which every "
                      "new Value starts with: define the closure inside div and store it in "
                      "out._backward")
        a.grad, b.grad, out.grad = start_a, start_b, g
        out._backward()
    return out, a, b


def l13_ex1(div) -> str | None:
    if not callable(div):
        return N_("div should be a function, defined with def div(self, other)")
    if still_open(div):
        return OPEN
    rng = python_rng()
    for _trial in range(4):
        x, y = rng.uniform(-3.0, 3.0), _away_from_zero(rng, 0.5, 2.5)
        start_a, start_b = _away_from_zero(rng, 0.2, 1.5), _away_from_zero(rng, 0.2, 1.5)
        g = _away_from_zero(rng, 0.5, 2.0)
        ran = _div_once(div, x, y, start_a, start_b, g)
        if isinstance(ran, str):
            return ran
        _out, a, b = ran
        share_a, share_b = g / y, -g * x / y ** 2
        if _near(a.grad, start_a + share_a) and _near(b.grad, start_b + share_b):
            continue
        if _near(a.grad, start_a) and _near(b.grad, start_b):
            return N_("calling out._backward() changes no grad: the closure must send "
                      "out.grad, times each local derivative, into self.grad and other.grad")
        if _near(a.grad, share_a) or _near(b.grad, share_b):
            return N_("the closure replaces the grad an input already held instead of adding "
                      "to it: an input used elsewhere too would lose the gradient it got "
                      "there")
        if _near(a.grad, start_a + share_a / g) and _near(b.grad, start_b + share_b / g):
            return N_("the gradients do not grow with out.grad: each local derivative must be "
                      "multiplied by the gradient that reached out")
        if not _near(a.grad, start_a + share_a):
            return N_("self.grad does not receive the right amount: the derivative of "
                      "self / other by self is 1 / other")
        return N_("other.grad does not receive the right amount: the derivative of "
                  "self / other by other is -self / other**2")
    return _div_used_twice(div, rng)


def _div_used_twice(div, rng) -> str | None:
    """``a / a`` is 1 whatever ``a`` is, so ``a`` must end with grad 0: the two
    pieces that reach it (+1/a and -1/a, times out.grad) cancel only when added."""
    a = CheckValue(_away_from_zero(rng, 0.5, 2.5))
    g = _away_from_zero(rng, 0.5, 2.0)
    with _Swapped(div, {"Value": CheckValue}):
        out = div(a, a)
        out.grad = g
        out._backward()
    if _near(a.grad, 0.0, 1e-9):
        return None
    return N_("for a / a, which does not change when a does, a.grad should end at 0, the "
              "sum of its two pieces; here the second piece replaced the first: an input's "
              "grad must be added to, never set")


def _random_graph(rng: random.Random):
    """``(root, made, log)``: a few leaves, then 6 to 14 operations on earlier
    Values (picked again and again, sometimes twice by one operation), ending
    with two that use the first operation's result once more, so that one Value
    with inputs is always shared; ``made`` holds every Value in the order it was
    made, ``log`` the closures as they run."""
    log: list = []
    made = [CheckValue(rng.uniform(-1.5, 1.5), log=log) for _leaf in range(rng.randint(2, 4))]
    for _op in range(rng.randint(6, 14)):
        kind = rng.choice(("+", "*", "*", "tanh"))
        a = made[-1] if rng.random() < 0.5 else rng.choice(made)
        if kind == "tanh":
            made.append(a.tanh())
            continue
        b = a if rng.random() < 0.15 else rng.choice(made)
        made.append(a.add(b) if kind == "+" else a.mul(b))
    shared = next(v for v in made if v._prev)
    made.append(made[-1].add(shared))
    made.append(shared.tanh())
    made.append(made[-2].mul(made[-1]))
    return made[-1], made, log


def _below(root) -> list:
    """Every Value ``root`` depends on (itself included), each once."""
    seen, stack, out = {id(root)}, [root], []
    while stack:
        v = stack.pop()
        out.append(v)
        for c in v._prev:
            if id(c) not in seen:
                seen.add(id(c))
                stack.append(c)
    return out


def _order_problem(root, log: list) -> str | None:
    """What is wrong with the order the closures ran in, if anything."""
    nodes = [v for v in _below(root) if v._prev]
    runs: dict[int, int] = {}
    for v in log:
        runs[id(v)] = runs.get(id(v), 0) + 1
    if not log:
        return N_("no Value's _backward ran: after setting self.grad, call the _backward of "
                  "every Value in the order, from its end")
    if any(n > 1 for n in runs.values()):
        return N_("the _backward of a Value used by two others ran twice, so its gradient "
                  "was sent twice: each Value must be in the order once, however many paths "
                  "lead to it")
    if any(id(v) not in runs for v in nodes):
        return N_("some Values' _backward never ran: the order must hold every Value below "
                  "self, found by following _prev again and again")
    when = {id(v): k for k, v in enumerate(log)}
    for v in nodes:
        for c in v._prev:
            if c._prev and when[id(c)] < when[id(v)]:
                return N_("a Value's _backward ran before every Value that uses it had sent "
                          "its part, so it passed on an incomplete gradient: in the order, "
                          "each Value must come after all of its inputs")
    return None


def _one_graph(backward, rng) -> str | None:
    root, made, log = _random_graph(rng)
    root.grad = 1.0
    for v in reversed(made):          # the order they were made in is a topological order
        v._backward()
    want = [v.grad for v in made]
    for v in made:
        v.grad = 0.0
    log.clear()
    with _Swapped(backward, {"Value": CheckValue}):
        backward(root)
    if not _near(root.grad, 1.0):
        return N_("self.grad does not start at 1: the pass begins with the derivative of "
                  "self by itself")
    problem = _order_problem(root, log)
    if problem:
        return problem
    if not all(_near(v.grad, w, 1e-7) for v, w in zip(made, want)):
        return N_("on some graphs the gradients differ from those of the right order")
    return None


def _deep_chain(backward, rng) -> str | None:
    """A chain of additions longer than Python allows nested calls."""
    depth = max(5000, 3 * sys.getrecursionlimit())
    x = v = CheckValue(rng.uniform(-1.0, 1.0))
    for _link in range(depth):
        v = v.add(CheckValue(rng.uniform(-1.0, 1.0)))
    try:
        with _Swapped(backward, {"Value": CheckValue}):
            backward(v)
    except RecursionError:
        return _(N_("on a chain of {n} Values, backward raised RecursionError: Python limits "
                    "how deeply functions may call themselves; build the order with a loop "
                    "and a list used as a stack instead")).format(n=depth)
    if not _near(x.grad, 1.0):
        return _(N_("on a chain of {n} additions the first Value should get grad 1, but it "
                    "gets {got}")).format(n=depth, got=f"{x.grad!r}")
    return None


def l13_ex2(backward) -> str | None:
    if not callable(backward):
        return N_("backward should be a function, defined with def backward(self)")
    if still_open(backward):
        return OPEN
    if any("setrecursionlimit" in code.co_names for code in codes(backward)):
        return N_("raising Python's recursion limit only moves the wall, and a deep enough "
                  "graph crashes Python itself: build the order with a loop and a list used "
                  "as a stack")
    rng = python_rng()
    for _trial in range(5):
        problem = _one_graph(backward, rng)
        if problem:
            return problem
    return _deep_chain(backward, rng)


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson13.ex1": (("div",), ("function",), l13_ex1),
    "lesson13.ex2": (("backward",), ("function",), l13_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson13.ex1": (
        N_("Exercise 1 (division)"),
        N_("as in mul, the closure reads out.grad and adds one share to each input; for "
           "self / other the local derivatives are 1 / other and -self / other**2."),
        N_("Each input gets out.grad times its own local derivative, added to what it "
           "already holds: that is why a / a ends with a.grad = 0.")),
    "lesson13.ex2": (
        N_("Exercise 2 (backward without recursion)"),
        N_("keep a list of Values still to handle; take one off its end, and put it into "
           "the order only once all of its inputs are there, otherwise put it back followed "
           "by its inputs; a set of placed Values stops repeats."),
        N_("The order now comes from a list you manage yourself, so the depth of the graph "
           "no longer matters, as in the kit's engine.")),
}
