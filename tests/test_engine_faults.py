"""The engine under faults: paused passes that are dropped, threads, Ctrl-C.

Whatever happens to a backward pass -- abandoned half-way, run by several
threads at once, interrupted -- grad mode must be exactly what the caller had,
Python's garbage collector must be on again if it was on, and no gradient may
be lost.  (PyTorch's engine is C++ and gives all three; these tests need no
PyTorch: the expected gradients are known by hand.)
"""
import gc
import os
import sys
import threading

import pytest

import autograd_kit as ak
from autograd_kit.grad_mode import is_grad_enabled, no_grad, set_grad_enabled

KIT = os.path.dirname(ak.__file__) + os.sep


def small_graph():
    x = ak.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return x, (x.exp() * x).sum()


# -- a paused backward_steps generator --------------------------------------------
@pytest.mark.parametrize("advanced_in, dropped_in", [(False, True), (True, False),
                                                     (False, False), (True, True)])
@pytest.mark.parametrize("how", ["close", "del"])
def test_a_dropped_pass_leaves_the_callers_grad_mode(advanced_in, dropped_in, how):
    _, y = small_graph()
    steps = ak.autograd.backward_steps(y)
    with set_grad_enabled(advanced_in):
        next(steps)
        assert is_grad_enabled() is advanced_in  # paused: the caller's mode
    with set_grad_enabled(dropped_in):
        if how == "close":
            steps.close()
        else:
            del steps
            gc.collect()
        assert is_grad_enabled() is dropped_in
    assert is_grad_enabled()


def test_a_pass_dropped_by_another_thread_leaves_both_threads_modes():
    _, y = small_graph()
    steps = ak.autograd.backward_steps(y)
    with no_grad():
        next(steps)  # the generator last saw grad mode off, in this thread
    seen = []

    def other():
        seen.append(is_grad_enabled())
        steps.close()
        seen.append(is_grad_enabled())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [True, True]
    assert is_grad_enabled()


def test_a_paused_pass_follows_the_callers_changes_of_mode():
    x, y = small_graph()
    steps = ak.autograd.backward_steps(y)
    for i, _step in enumerate(steps):
        with set_grad_enabled(i % 2 == 0):
            assert is_grad_enabled() is (i % 2 == 0)
    assert is_grad_enabled()
    assert x.grad is not None


def test_the_stepper_keeps_the_callers_grad_mode():
    pytest.importorskip("ipywidgets")
    from autograd_kit.widgets import BackwardStepper
    _, y = small_graph()
    stepper = BackwardStepper(y)
    for move in (lambda: stepper.go_to(2), stepper.back, stepper.reset,
                 lambda: stepper.go_to(stepper.total), stepper.reset, stepper.step):
        with no_grad():
            move()
            assert not is_grad_enabled()
        move()
        assert is_grad_enabled()


# -- threads -------------------------------------------------------------------------
GRAPHS = {  # the loss, and its gradient for w = [1, 2, 3] worked out by hand
    "sum": (lambda w: w.sum(), [1.0, 1.0, 1.0]),          # a read-only broadcast 1
    "square": (lambda w: (w * w).sum(), [2.0, 4.0, 6.0]),
    "two paths": (lambda w: (w * 2).sum() + (w * 3).sum(), [5.0, 5.0, 5.0]),
    "hook": (lambda w: (w * 4).sum(), [4.0, 4.0, 4.0]),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_threads_sharing_a_leaf_lose_no_gradient(name):
    make, one = GRAPHS[name]
    n_threads, rounds = 4, 60
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for _ in range(rounds):
            w = ak.tensor([1.0, 2.0, 3.0], requires_grad=True)
            if name == "hook":
                w.register_hook(lambda g: g)  # accumulation through AccumulateGrad.apply
            losses = [make(w) for _ in range(n_threads)]
            start, failures = threading.Barrier(n_threads), []

            def work(loss):
                start.wait()
                try:
                    loss.backward()
                except Exception as err:  # e.g. numpy's "output array is read-only"
                    failures.append(err)

            threads = [threading.Thread(target=work, args=(loss,)) for loss in losses]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert failures == []
            assert w.grad.tolist() == [n_threads * v for v in one]
    finally:
        sys.setswitchinterval(old_interval)


def test_threads_with_create_graph_and_grad_lose_nothing():
    w = ak.tensor([1.0, 2.0], requires_grad=True)
    n = 8
    start = threading.Barrier(n)

    def work():
        start.wait()
        (g,) = ak.autograd.grad((w ** 3).sum(), w, create_graph=True)
        g.sum().backward()  # d/dw of 3 w^2 summed: 6 w

    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert w.grad.tolist() == [n * 6.0, n * 12.0]


def test_grad_stays_the_same_tensor_and_a_held_array_is_not_written_into():
    w = ak.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    grad = w.grad
    held = w.grad.numpy()
    (w * 3).sum().backward()
    assert w.grad is grad and grad.tolist() == [6.0, 6.0]
    assert held.tolist() in ([3.0, 3.0], [6.0, 6.0])  # (either, but never a failure)


# -- Ctrl-C ------------------------------------------------------------------------
def interrupted(k, call):
    """Run ``call`` with a KeyboardInterrupt raised as the k-th function of the kit
    starts (where Python delivers Ctrl-C: as a function starts, after a call
    returns).  Returns how many kit functions started."""
    count = [0]

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(KIT):
            count[0] += 1
            if count[0] == k:
                raise KeyboardInterrupt
        return None

    sys.settrace(tracer)
    try:
        call()
    except KeyboardInterrupt:
        pass
    except Exception:  # an interrupt some code below turned into another error
        pass
    finally:
        sys.settrace(None)
    return count[0]


CALLS = {
    "backward": lambda x, y: y.backward(),
    "grad": lambda x, y: ak.autograd.grad(y, x),
    "create_graph": lambda x, y: ak.autograd.grad(y, x, create_graph=True),
    "steps": lambda x, y: list(ak.autograd.backward_steps(y)),
}


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("mode", [True, False])
@pytest.mark.parametrize("name", list(CALLS))
def test_ctrl_c_anywhere_in_a_pass_restores_gc_and_grad_mode(name, mode):
    if sys.gettrace() is not None:
        pytest.skip("a tracer (coverage, debugger) is already installed")
    call = CALLS[name]
    assert gc.isenabled()
    with set_grad_enabled(mode):
        n = interrupted(0, lambda: call(*small_graph()))
    assert n > 10
    broken = []
    for k in range(1, n + 1):
        with set_grad_enabled(mode):
            x, y = small_graph()
            interrupted(k, lambda: call(x, y))
            if is_grad_enabled() is not mode or not gc.isenabled():
                broken.append((k, is_grad_enabled(), gc.isenabled()))
        gc.enable()
    assert broken == []


@pytest.mark.parametrize("where", ["leaf hook", "tensor hook", "node pre-hook",
                                   "node post-hook"])
@pytest.mark.parametrize("mode", [True, False])
def test_ctrl_c_from_a_hook_restores_gc_and_grad_mode(where, mode):
    def stop(*args):
        assert not gc.isenabled()  # the pass runs with the collector paused
        raise KeyboardInterrupt

    x = ak.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = (h.exp() * h).sum()
    if where == "leaf hook":
        x.register_hook(stop)
    elif where == "tensor hook":
        h.register_hook(stop)
    elif where == "node pre-hook":
        y.grad_fn.register_prehook(stop)
    else:
        h.grad_fn.register_hook(stop)
    with set_grad_enabled(mode):
        with pytest.raises(KeyboardInterrupt):
            y.backward(retain_graph=True)
        assert is_grad_enabled() is mode and gc.isenabled()
        with pytest.raises(KeyboardInterrupt):
            ak.autograd.grad(y, x)
        assert is_grad_enabled() is mode and gc.isenabled()


def test_a_caller_who_turned_gc_off_keeps_it_off():
    x, y = small_graph()
    gc.disable()
    try:
        y.backward()
        assert not gc.isenabled()
    finally:
        gc.enable()
