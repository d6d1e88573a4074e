"""Backward passes from several threads at once.

Two pieces of state are shared by every thread: Python's cycle collector
switch (the engine pauses the collector during a pass) and a leaf's cached
``AccumulateGrad`` node.  Both must come out right under any interleaving, so
these tests make interleavings likely: the threads start together at a barrier
and the interpreter switches threads as often as it can.
"""
from __future__ import annotations

import gc
import sys
import threading

import pytest

import autograd_kit as ak


@pytest.fixture
def busy_switching():
    """Switch threads every microsecond (the default is every 5 ms)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _together(n, work):
    """Run ``work(i)`` in ``n`` threads released at the same moment; re-raise
    the first error any of them met."""
    barrier = threading.Barrier(n)
    errors = []

    def run(i):
        barrier.wait()
        try:
            work(i)
        except BaseException as err:  # noqa: BLE001 (handed back to the test)
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("call", ["backward", "grad"])
def test_the_collector_is_on_after_passes_from_many_threads(busy_switching, call):
    assert gc.isenabled()

    def work(i):
        for _ in range(20):
            x = ak.ones(3, requires_grad=True)
            y = ((x * (i + 1)).exp() * x).sum()
            if call == "backward":
                y.backward()
            else:
                ak.autograd.grad(y, x)

    for _ in range(15):
        _together(4, work)
        assert gc.isenabled()


def test_the_collector_stays_off_if_it_was_off(busy_switching):
    gc.disable()
    try:
        def work(i):
            x = ak.ones(2, requires_grad=True)
            (x * 2).sum().backward()
        _together(4, work)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_pass_that_fails_in_one_thread_does_not_leave_the_collector_off(busy_switching):
    def work(i):
        x = ak.ones(2, requires_grad=True)
        y = x * 2
        if i % 2:
            y.register_hook(lambda g: 1 / 0)
            with pytest.raises(ZeroDivisionError):
                y.sum().backward()
        else:
            y.sum().backward()

    for _ in range(20):
        _together(4, work)
        assert gc.isenabled()


def test_grad_from_many_threads_on_one_fresh_leaf(busy_switching):
    """Every thread reaches the same leaf through its own graph; all of them
    must find the one AccumulateGrad node the graphs were built with."""
    for _ in range(100):
        x = ak.tensor([1.0, 2.0], requires_grad=True)
        results = {}

        def work(i):
            (g,) = ak.autograd.grad((x * (i + 1)).sum(), x)
            results[i] = g.tolist()

        _together(4, work)
        assert results == {i: [i + 1.0, i + 1.0] for i in range(4)}


def test_one_accumulator_per_leaf_whoever_asks_first(busy_switching):
    from autograd_kit.graph import grad_accumulator
    for _ in range(100):
        x = ak.ones(2, requires_grad=True)
        seen = [None] * 6
        kept = []  # (the nodes are weakly cached: hold them while comparing)

        def work(i):
            node = grad_accumulator(x)
            kept.append(node)
            seen[i] = id(node)
        _together(6, work)
        assert len(set(seen)) == 1


def test_backward_from_many_threads_adds_up(busy_switching):
    x = ak.zeros(4, requires_grad=True)

    def work(i):
        for _ in range(25):
            (x * 1.0 + x).sum().backward()

    _together(4, work)
    assert x.grad.tolist() == [200.0] * 4


# -- the same races with their windows held open ------------------------------------
# A race needs a thread switch at one exact moment; these tests make that moment
# last a millisecond, so an unguarded read-then-write fails every time.
class _Choreographed:
    """The ``gc`` module as the engine sees it, with the one bad interleaving
    forced: thread "B" asks whether the collector is on while thread "A"'s
    pass holds it off, and hears the answer only after A has finished."""

    def __init__(self):
        self.a_inside = threading.Event()
        self.a_done = threading.Event()

    def isenabled(self):
        if threading.current_thread().name != "B":
            return gc.isenabled()
        self.a_inside.wait(2)
        answer = gc.isenabled()
        self.a_done.wait(0.5)  # (an engine that serialises the switch makes A wait)
        return answer

    def disable(self):
        gc.disable()

    def enable(self):
        gc.enable()


def test_the_collector_switch_when_one_pass_ends_inside_anothers_start(monkeypatch):
    import time

    from autograd_kit import gc_pause  # (the engine's switch of the collector)
    fake = _Choreographed()
    monkeypatch.setattr(gc_pause, "gc", fake)

    def inside_a(g):
        fake.a_inside.set()
        time.sleep(0.05)  # B starts its pass now

    def a():
        x = ak.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(inside_a)
        y.sum().backward()
        fake.a_done.set()

    def b():
        fake.a_inside.wait(2)
        x = ak.ones(2, requires_grad=True)
        (x * 3).sum().backward()

    threads = [threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled()


def test_one_accumulator_per_leaf_under_a_slow_constructor(monkeypatch):
    import time

    from autograd_kit import graph
    real = graph.AccumulateGrad

    def slow(tensor):
        time.sleep(0.001)  # another thread may ask for the same leaf meanwhile
        return real(tensor)

    monkeypatch.setattr(graph, "AccumulateGrad", slow)
    for _ in range(10):
        x = ak.ones(2, requires_grad=True)
        seen, kept = [None] * 4, []

        def work(i):
            node = graph.grad_accumulator(x)
            kept.append(node)
            seen[i] = id(node)
        _together(4, work)
        assert len(set(seen)) == 1


def test_in_place_ops_of_many_threads_each_save_their_own_clone(busy_switching):
    """An in-place op saves a clone of the old value it reads (CloneBackward0);
    the op's note of which value that is belongs to its own thread, so ops
    running together neither miss their clone nor take another thread's."""
    from autograd_kit.ops._rules import ORIGINAL
    seen = {}

    def work(i):
        for k in range(30):
            a = ak.tensor([float(i + 1), 2.0], requires_grad=True)
            b = ak.tensor([3.0, float(k + 1)], requires_grad=True)
            c = a * 1.0
            c.mul_(b)
            saved = c.grad_fn._saved_self
            chain = (saved.grad_fn.name(), saved.grad_fn.next_functions[0][0].name())
            seen[(i, k)] = (chain, saved.tolist())
    _together(6, work)
    assert ORIGINAL.old is None
    for (i, _k), (chain, old) in seen.items():
        assert chain == ("CloneBackward0", "MulBackward0")
        assert old == [float(i + 1), 2.0]
