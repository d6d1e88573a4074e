"""The backward engine: order, Step records, hooks, grad(), grad mode, memory.

``backward_steps()`` is the engine; ``backward()`` and ``autograd.grad()``
exhaust it.  These tests look at the records it yields and at everything that
consumes them.
"""
import gc
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograd_kit as torch
import graph_builder
from autograd_kit.autograd import Function, GraphSnapshot, backward_steps
from autograd_kit import backend

ACC = "torch::autograd::AccumulateGrad"


# ------------------------------------------------------ a random graph --
ENGINE_OPS = [
    lambda a, b: a + b, lambda a, b: a - b * 0.5, lambda a, b: a * b,
    lambda a, b: a / (b * b + 1), lambda a, b: (a * 0.3).exp(),
    lambda a, b: (a * a + 1).log(), lambda a, b: a.tanh() * b,
    lambda a, b: a.sigmoid(), lambda a, b: (a * a + 0.5) ** 1.5,
    lambda a, b: a.sum(1, keepdim=True) * b, lambda a, b: a.mean(0) * b,
    lambda a, b: a[:, 1:2] * b, lambda a, b: (a @ b.T) @ a * 0.1,
    lambda a, b: (a - 1).relu() + b, lambda a, b: torch.cat([a[:, :1], b[:, 1:]], 1),
    lambda a, b: a.reshape(3, 2).reshape(2, 3) * b, lambda a, b: -a + b.sqrt(),
    lambda a, b: 1 - a * b, lambda a, b: a.sin() * b.cos(),
    lambda a, b: torch.where(a > b, a, b * 2), lambda a, b: a.softmax(1) * b,
    lambda a, b: a[0:1].expand(2, 3) * b, lambda a, b: a.max(1, keepdim=True)[0] * b,
    graph_builder.iadd, graph_builder.imul_view,
]


def random_graph(seed, device="cpu", n_ops=10, data=None):
    """Three float64 leaves and ``n_ops`` mixed operations (shared subexpressions,
    broadcasting, views, reductions, in-place ops on non-leaves); ``data`` gives
    the leaves other values (for finite differences)."""
    return graph_builder.build(torch, ENGINE_OPS, seed, n_ops, device, data)


def leaf_grads(leaves):
    return [None if t.grad is None else t.grad.tolist() for t in leaves]


# ------------------------------------------------------- long chains --
def test_100000_node_chain(device):
    x = torch.tensor(1.5, requires_grad=True, device=device)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    limit = sys.getrecursionlimit()
    y.backward()
    assert x.grad.item() == 1.0
    assert sys.getrecursionlimit() == limit
    del y                             # freeing a long chain must not overflow either


# ------------------------------------------------------------ order --
def _layered(device):
    """x's AccumulateGrad is made first (by ``keep``, which is not in the loss), so
    by creation order it would run last; PyTorch runs it as soon as it is ready."""
    w = torch.tensor([1., 2.], requires_grad=True, device=device)
    x = torch.tensor([3., 4.], requires_grad=True, device=device)
    keep = x * 1              # creates x's AccumulateGrad (held weakly by x)
    e = w.exp()
    m = x * 2
    return w, x, keep, (m + e).sum()


def test_order_is_deterministic(device):
    runs = []
    for _ in range(2):
        w, x, keep, loss = _layered(device)
        runs.append([s.node.name() for s in backward_steps(loss)])
    assert runs[0] == runs[1]
    assert runs[0] == ["SumBackward0", "AddBackward0", "MulBackward0", ACC, "ExpBackward0",
                       ACC]


def test_accumulate_grad_runs_as_soon_as_ready(device):
    w, x, keep, loss = _layered(device)
    steps = list(backward_steps(loss))
    # ready after MulBackward0, x's AccumulateGrad runs before ExpBackward0 (which
    # was ready earlier and is newer than x's AccumulateGrad)
    assert steps[3].node.name() == ACC and steps[3].node.variable is x
    assert steps[3].node is keep.grad_fn.next_functions[0][0]
    assert steps[4].node is loss.grad_fn.next_functions[0][0].next_functions[1][0]
    assert steps[5].node.variable is w
    assert x.grad.tolist() == [2., 2.]


@pytest.mark.parametrize("seed", range(12))
def test_accumulate_grad_follows_the_step_that_readied_it(seed):
    leaves, loss = random_graph(seed)
    steps = list(backward_steps(loss))
    delivered = {}            # node -> index of the last step that sent it a gradient
    for s in steps:
        for nxt, _ in s.node.next_functions:
            if nxt is not None:
                delivered[nxt] = s.index
    for s in steps:
        if s.node.name() == ACC:
            between = steps[delivered[s.node] + 1:s.index]
            assert all(b.node.name() == ACC for b in between)


@pytest.mark.parametrize("seed", range(6))
def test_same_graph_same_order(seed):
    orders = []
    for _ in range(2):
        _, loss = random_graph(seed)
        orders.append([s.node.name() for s in backward_steps(loss)])
    assert orders[0] == orders[1]


# ------------------------------------------------------- Step records --
def _diamond(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    w = torch.tensor([3., 4.], requires_grad=True, device=device)
    a = x * w
    b = a + x
    return x, w, a, (b * a).sum()


def test_step_fields(device):
    x, w, a, loss = _diamond(device)
    steps = list(backward_steps(loss))
    assert [s.index for s in steps] == list(range(len(steps)))
    by_node = {s.node: s for s in steps}
    for s in steps:
        # the incoming gradient is the sum of what arrived
        total = s.contributions[0]
        for c in s.contributions[1:]:
            total = total + c
        assert total.tolist() == s.grad_in.tolist()
        if s.node.name() != ACC:
            assert len(s.grads_out) == len(s.node.next_functions)
            for (nxt, _), g in zip(s.node.next_functions, s.grads_out, strict=True):
                if nxt is None:
                    continue
                # what this step sent is one of the contributions the target received
                assert any(c is g for c in by_node[nxt].contributions)
        else:
            assert s.grads_out == ()
    acc_x = by_node[a.grad_fn.next_functions[0][0]]
    assert len(acc_x.contributions) == 2                  # two paths reach x
    assert acc_x.grad_in.tolist() == [24., 80.]
    (leaf, old, new), = acc_x.leaves
    assert leaf is x and old is None and new is x.grad
    assert x.grad.tolist() == [24., 80.] and w.grad.tolist() == [7., 36.]


def test_step_leaves_old_and_new_grads(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    loss = (x * x).sum()
    list(backward_steps(loss, retain_graph=True))
    steps = list(backward_steps(loss, retain_graph=True))
    (leaf, old, new), = steps[-1].leaves
    assert leaf is x
    assert old.tolist() == [2., 4.] and new.tolist() == [4., 8.]
    assert new is x.grad


def test_step_released_names(device):
    x, w, a, loss = _diamond(device)
    kept = {s.node.name(): s.released for s in backward_steps(loss, retain_graph=True)}
    assert all(r == [] for r in kept.values())
    released = [(s.node.name(), s.released) for s in backward_steps(loss)]
    assert released == [("SumBackward0", []), ("MulBackward0", ["self", "other"]),
                        ("AddBackward0", []), ("MulBackward0", ["self", "other"]),
                        (ACC, []), (ACC, [])]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = a.grad_fn._saved_self


def test_released_only_after_the_node_ran(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * x
    z = y.exp()
    gen = backward_steps(z.sum())
    first = next(gen)
    assert first.node.name() == "SumBackward0"
    assert y.grad_fn._saved_self is x                 # not yet reached: still there
    second = next(gen)
    assert second.node is z.grad_fn and second.released == ["result"]
    assert y.grad_fn._saved_self is x
    list(gen)
    with pytest.raises(RuntimeError):
        _ = y.grad_fn._saved_self


def test_step_retained(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    y.retain_grad()
    steps = list(backward_steps((y * y).sum()))
    step = next(s for s in steps if s.node is y.grad_fn)
    (t, g), = step.retained
    assert t is y and g.tolist() == [6., 12.] and y.grad is g


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_backward_steps_equal_backward(seed):
    a_leaves, a_loss = random_graph(seed)
    b_leaves, b_loss = random_graph(seed)
    a_loss.backward()
    for _ in backward_steps(b_loss):
        pass
    assert leaf_grads(a_leaves) == leaf_grads(b_leaves)
    assert any(g is not None for g in leaf_grads(a_leaves))


@pytest.mark.parametrize("seed", range(15))
def test_random_graphs_match_central_differences(seed):
    leaves, loss = random_graph(seed, n_ops=6)
    loss.backward()
    values = [t.detach().numpy().copy() for t in leaves]
    for i, leaf in enumerate(leaves):
        if leaf.grad is None:
            continue
        num = np.zeros(leaf.shape)
        for idx in np.ndindex(*leaf.shape):
            plus = [v.copy() for v in values]
            minus = [v.copy() for v in values]
            plus[i][idx] += 1e-6
            minus[i][idx] -= 1e-6
            with torch.no_grad():
                f_plus = random_graph(seed, n_ops=6, data=plus)[1].item()
                f_minus = random_graph(seed, n_ops=6, data=minus)[1].item()
            num[idx] = (f_plus - f_minus) / 2e-6
        assert np.allclose(leaf.grad.tolist(), num, rtol=1e-4, atol=1e-6)


# ----------------------------------------------------------- snapshots --
def test_graph_snapshot_restores_grads_and_saved_buffers(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x.exp()
    h = y * x
    h.retain_grad()
    loss = h.sum()
    snap = GraphSnapshot(loss)
    loss.backward()
    first = x.grad.tolist()
    assert h.grad.tolist() == [1., 1.]
    with pytest.raises(RuntimeError):
        _ = y.grad_fn._saved_result
    snap.restore()
    assert x.grad is None and h.grad is None
    assert np.allclose(y.grad_fn._saved_result.tolist(), np.exp([1., 2.]))
    loss.backward()                                   # works again
    assert x.grad.tolist() == first


def test_graph_snapshot_restores_earlier_grads(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    snap = GraphSnapshot(loss)
    loss.backward()
    assert x.grad.tolist() == [4., 8.]
    snap.restore()
    assert x.grad.tolist() == [2., 4.]


# ------------------------------------------------------- accumulation --
def test_accumulation_across_backward_calls(device):
    x = torch.tensor(3., requires_grad=True, device=device)
    loss = 2 * x * x
    loss.backward(retain_graph=True)
    assert x.grad.item() == 12.
    loss.backward()
    assert x.grad.item() == 24.


def test_zeroing_between_calls(device):
    x = torch.tensor(3., requires_grad=True, device=device)
    (2 * x * x).backward()
    x.grad.zero_()
    (x * 5).backward()
    assert x.grad.item() == 5.
    x.grad = None
    (x * 7).backward()
    assert x.grad.item() == 7.


def test_retain_grad_on_intermediates(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    y.retain_grad()
    z = y * y
    z.retain_grad()
    assert y.retains_grad and z.retains_grad and not x.retains_grad
    z.sum().backward()
    assert y.grad.tolist() == [6., 12.]
    assert z.grad.tolist() == [1., 1.]
    assert x.grad.tolist() == [18., 36.]
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"


def test_retained_grad_accumulates(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    y.retain_grad()
    loss = (y * y).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert y.grad.tolist() == [12., 24.]


# --------------------------------------------------------------- hooks --
def test_tensor_hook_modifies_gradient_and_can_be_removed(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    seen = []

    def hook(g):
        seen.append(g.tolist())
        return g * 10
    handle = y.register_hook(hook)
    y.sum().backward()
    assert seen == [[1., 1.]]
    assert x.grad.tolist() == [30., 30.]
    handle.remove()
    x.grad = None
    y2 = x * 3
    y2.sum().backward()
    assert x.grad.tolist() == [3., 3.] and len(seen) == 1


def test_hook_removed_from_same_tensor(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    h = y.register_hook(lambda g: g * 10)
    h.remove()
    y.sum().backward()
    assert x.grad.tolist() == [3., 3.]


def test_hook_sees_summed_gradient_once(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 2
    calls = []
    y.register_hook(lambda g: calls.append(g.tolist()))
    (y * y + y).sum().backward()
    assert calls == [[5., 9.]]
    assert x.grad.tolist() == [10., 18.]


def test_leaf_hooks(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    calls = []
    h = x.register_hook(lambda g: calls.append(g.tolist()) or g * 2)
    (x * x + x).sum().backward()
    assert calls == [[3., 5.]]
    assert x.grad.tolist() == [6., 10.]
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3., 3.] and len(calls) == 1


def test_leaf_hook_applies_to_autograd_grad(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    x.register_hook(lambda g: g * 2)
    (g,) = torch.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [6., 6.]
    assert x.grad is None


def test_hook_order_tensor_hook_retain_grad_prehook(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    log = []
    y.retain_grad()
    y.register_hook(lambda g: log.append(("tensor", g.tolist())) or g + 1)
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.sum().backward()
    assert log == [("tensor", [1., 1.]), ("pre", [2., 2.])]
    assert y.grad.tolist() == [2., 2.]        # retain_grad sees the hooked gradient
    assert x.grad.tolist() == [6., 6.]


def test_node_prehook_and_hook(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    log = []
    y.grad_fn.register_hook(lambda gi, go: log.append(
        ("post", [None if g is None else g.tolist() for g in gi], [g.tolist() for g in go])))
    pre = y.grad_fn.register_prehook(
        lambda go: log.append(("pre", [g.tolist() for g in go])) or (go[0] * 2,))
    y.sum().backward()
    assert log == [("pre", [[1., 1.]]), ("post", [[6., 6.], None], [[2., 2.]])]
    assert x.grad.tolist() == [6., 6.]
    pre.remove()
    x.grad = None
    log.clear()
    z = x * 3
    z.grad_fn.register_prehook(lambda go: None)          # None: keep the gradient
    z.sum().backward()
    assert x.grad.tolist() == [3., 3.]


def test_node_hook_can_replace_grad_inputs(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, None))
    y.sum().backward()
    assert x.grad.tolist() == [30., 30.]


def test_node_hook_handle_removes(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 3
    calls = []
    h = y.grad_fn.register_hook(lambda gi, go: calls.append(1))
    h.remove()
    y.sum().backward()
    assert calls == []


# ------------------------------------------------------- autograd.grad --
def test_grad_allow_unused_and_does_not_touch_grad(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    w = torch.tensor([3., 4.], requires_grad=True, device=device)
    u = torch.tensor([1., 1.], requires_grad=True, device=device)
    y = (x * x * w).sum()
    gx, gu = torch.autograd.grad(y, [x, u], allow_unused=True)
    assert gx.tolist() == [6., 16.] and gu is None
    assert x.grad is None and w.grad is None and u.grad is None
    assert not gx.requires_grad


def test_grad_materialize_grads(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    u = torch.tensor([1., 1.], requires_grad=True, device=device)
    gx, gu = torch.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert gx.tolist() == [2., 2.] and gu.tolist() == [0., 0.]


def test_grad_create_graph_second_derivative(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = (x ** 3).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3., 12.]
    assert g.requires_grad and g.grad_fn is not None
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6., 12.]
    assert x.grad is None


def test_backward_create_graph(device):
    x = torch.tensor(2., requires_grad=True, device=device)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x ** 3).backward(create_graph=True)
    assert x.grad.item() == 12. and x.grad.requires_grad
    first = x.grad
    x.grad = None
    first.backward()
    assert x.grad.item() == 12.                     # d/dx 3x^2 = 6x


def test_grad_outputs(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    (g,) = torch.autograd.grad(x * x, x, grad_outputs=torch.tensor([1., 10.], device=device))
    assert g.tolist() == [2., 40.]
    (g,) = torch.autograd.grad((x * 2).sum(), x, grad_outputs=torch.tensor(2., device=device))
    assert g.tolist() == [4., 4.]


def test_grad_with_respect_to_non_leaf(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    h = x * 3
    y = (h * h).sum()
    gh, gx = torch.autograd.grad(y, [h, x], retain_graph=True)
    assert gh.tolist() == [6., 12.] and gx.tolist() == [18., 36.]
    (gh2,) = torch.autograd.grad(y, h)
    assert gh2.tolist() == [6., 12.]
    assert x.grad is None


def test_grad_retain_graph(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = (x * x).sum()
    a = torch.autograd.grad(y, x, retain_graph=True)
    b = torch.autograd.grad(y, x)
    assert a[0].tolist() == b[0].tolist() == [2., 4.]
    with pytest.raises(RuntimeError, match="a second time"):
        torch.autograd.grad(y, x)


def test_backward_inputs_leaf(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    w = torch.tensor([3., 4.], requires_grad=True, device=device)
    (x * w).sum().backward(inputs=[x])
    assert x.grad.tolist() == [3., 4.] and w.grad is None


def test_backward_inputs_non_leaf(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = h.grad
    assert g is not None and g.tolist() == [4., 8.]
    assert caught == []          # an input of backward() is expected to get a .grad
    assert x.grad is None


def test_backward_of_leaf_itself(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    x.backward(torch.tensor([3., 4.], device=device))
    assert x.grad.tolist() == [3., 4.]


def test_backward_with_gradient_vector(device):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=device)
    y = x * torch.tensor([1., 2.], device=device)
    y.backward(torch.tensor([[1., 0.], [0., 1.]], device=device))
    assert x.grad.tolist() == [[1., 0.], [0., 2.]]


# ------------------------------------------------------------ grad mode --
def test_no_grad_enable_grad_contexts(device):
    x = torch.ones(2, requires_grad=True, device=device)
    with torch.no_grad():
        y = x * 2
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            z = x * 2
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    assert z.requires_grad and z.grad_fn.name() == "MulBackward0"


def test_grad_mode_decorators(device):
    x = torch.ones(2, requires_grad=True, device=device)

    @torch.no_grad()
    def off():
        return x * 2

    @torch.enable_grad()
    def on():
        return x * 2

    @torch.set_grad_enabled(False)
    def off2():
        return x * 2

    assert not off().requires_grad
    assert not off2().requires_grad
    with torch.no_grad():
        assert on().requires_grad
    assert torch.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context(device):
    x = torch.ones(2, requires_grad=True, device=device)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_no_grad_restored_after_exception(device):
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()


def test_grad_mode_is_per_thread(device):
    x = torch.ones(2, requires_grad=True, device=device)
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with torch.no_grad():
            inside.set()
            release.wait(5)
            seen["worker"] = (x * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(5)
    seen["main"] = ((x * 2).requires_grad, torch.is_grad_enabled())
    release.set()
    t.join(5)
    assert seen == {"main": (True, True), "worker": False}


def test_new_thread_starts_with_grad_enabled(device):
    seen = []
    with torch.no_grad():
        t = threading.Thread(target=lambda: seen.append(torch.is_grad_enabled()))
        t.start()
        t.join(5)
    assert seen == [True]


# -------------------------------------------------------------- memory --
def test_saved_tensors_released_after_backward(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * x
    e = y.exp()
    e.sum().backward()
    for fn, name in ((y.grad_fn, "_saved_self"), (y.grad_fn, "_saved_other"),
                     (e.grad_fn, "_saved_result")):
        with pytest.raises(RuntimeError, match="a second time"):
            getattr(fn, name)


def test_intermediates_freed_by_reference_counting(device):
    gc.collect()
    gc.disable()
    try:
        x = torch.tensor([1., 2.], requires_grad=True, device=device)
        h = x.exp()
        tensor_ref, node_ref = weakref.ref(h), weakref.ref(h.grad_fn)
        w = torch.tensor([2., 3.], requires_grad=True, device=device)
        out = (h * w).sum()                      # w needs h: the multiplication saves it
        del h
        assert tensor_ref() is not None          # kept alive as a saved tensor
        out.backward()
        assert tensor_ref() is None              # released with the saved tensors
        assert node_ref() is not None            # still part of out's graph
        del out
        assert node_ref() is None
        assert x.grad.tolist() == pytest.approx([2 * np.e, 3 * np.e ** 2])
    finally:
        gc.enable()


def test_graph_without_backward_freed_by_reference_counting(device):
    gc.collect()
    gc.disable()
    try:
        x = torch.tensor([1., 2.], requires_grad=True, device=device)
        y = x.exp()                       # saves its own result
        z = y * y
        refs = [weakref.ref(t) for t in (y, z, y.grad_fn, z.grad_fn)]
        acc = weakref.ref(z.grad_fn.next_functions[0][0].next_functions[0][0])
        del y, z
        assert all(r() is None for r in refs)
        assert acc() is None                      # the leaf holds it weakly
        assert x.grad is None and x.is_leaf
    finally:
        gc.enable()


# ---------------------------------------------------- custom Functions --
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class MulAdd(Function):
    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b + k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a, None


def test_custom_function(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    assert repr(y) == "tensor([1., 8.], grad_fn=<CubeBackward>)" or device != "cpu"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert x.grad.tolist() == [3., 12.]


def test_custom_function_several_inputs(device):
    a = torch.tensor([1., 2.], requires_grad=True, device=device)
    b = torch.tensor([3., 4.], requires_grad=True, device=device)
    y = MulAdd.apply(a, b, 5.)
    assert y.tolist() == [8., 13.]
    y.sum().backward()
    assert a.grad.tolist() == [3., 4.] and b.grad.tolist() == [1., 2.]


def test_custom_function_next_functions_skip_non_tensor_arguments(device):
    a = torch.tensor([1., 2.], requires_grad=True, device=device)
    b = torch.tensor([3., 4.], requires_grad=True, device=device)
    y = MulAdd.apply(a, b, 5.)
    # PyTorch: one edge per tensor input; the number 5. is not an input of the graph
    assert [f.name() if f else None for f, _ in y.grad_fn.next_functions] == [ACC, ACC]
    y.sum().backward()
    assert a.grad.tolist() == [3., 4.] and b.grad.tolist() == [1., 2.]


def test_custom_function_saved_tensor_version_checked(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    h = x * 1
    y = Cube.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of Add, is at version 1; "
                                           "expected version 0"):
        y.sum().backward()


def test_custom_function_without_grad(device):
    x = torch.tensor([1., 2.], device=device)
    y = Cube.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    with torch.no_grad():
        z = Cube.apply(torch.ones(2, requires_grad=True, device=device))
    assert z.grad_fn is None


# ------------------------------------------------------------ gradcheck --
class WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x          # should be 2 * x


def test_gradcheck_passes_for_correct_function():
    x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Cube.apply, (x,))
    assert torch.autograd.gradcheck(lambda t: (t * t).sum(), (x,))


def test_gradcheck_reports_wrong_function():
    x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    with pytest.raises(torch.autograd.GradcheckError) as info:
        torch.autograd.gradcheck(WrongSquare.apply, (x,))
    assert isinstance(info.value, RuntimeError)
    report = str(info.value)
    assert report.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert ("numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], "
            "dtype=torch.float64)") in report  # (as PyTorch prints its report)
    assert "analytical:tensor([[3., 0.],\n        [0., 6.]], dtype=torch.float64)" in report
    assert x.grad is None


def test_gradcheck_without_raising(capsys):
    x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    assert capsys.readouterr().out == ""  # (quietly, as PyTorch)


# -- a leaf may keep the arriving gradient's array, but never one shared ------
def test_leaf_gradients_never_alias_each_other(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = torch.tensor([3., 4.], requires_grad=True, device=device)
    (x + y).sum().backward()                 # both receive the same incoming gradient
    x.grad.zero_()
    assert y.grad.tolist() == [1., 1.]


def test_leaf_gradient_never_aliases_the_users_gradient(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    v = torch.tensor([5., 6.], device=device)
    (x + 0).backward(v)
    x.grad.mul_(0)
    assert v.tolist() == [5., 6.]


def test_leaf_gradient_never_aliases_a_hooks_copy(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 3).sum().backward()
    x.grad.zero_()
    assert seen[0].tolist() == [3., 3.]


def test_gradient_taken_over_still_accumulates_correctly(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    loss = (x.exp() * 2).sum()
    loss.backward(retain_graph=True)
    first = x.grad.tolist()
    loss.backward()
    assert x.grad.tolist() == pytest.approx([2 * v for v in first])


def test_summed_gradient_taken_over_is_not_shared(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    seen = []
    h = x * 3
    h.register_hook(lambda g: seen.append(g))
    (h + x * 5).sum().backward()            # x receives two contributions, summed
    x.grad.zero_()
    assert seen[0].tolist() == [1., 1.]


def test_multiplying_by_the_broadcast_one_of_sum_keeps_values(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    t = x.tanh()
    (t * x).sum().backward()                # d/dx (x tanh x) = tanh x + x (1 - tanh² x)
    expected = [np.tanh(v) + v * (1 - np.tanh(v) ** 2) for v in (1., 2., 3.)]
    assert x.grad.tolist() == pytest.approx(expected, rel=1e-6)
    assert t.tolist() == pytest.approx([np.tanh(v) for v in (1., 2., 3.)], rel=1e-6)


def test_borrowed_gradient_is_not_a_forward_value(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    w = torch.tensor([3., 4.], requires_grad=True, device=device)
    (x * w).sum().backward()                # w's gradient is x's values
    w.grad.zero_()
    assert x.tolist() == [1., 2.] and x.grad.tolist() == [3., 4.]


def test_borrowed_gradient_read_later_in_the_pass_is_unchanged(device):
    b = torch.tensor([1., 2.], requires_grad=True, device=device)
    u = torch.tensor([1., 1.], requires_grad=True, device=device)
    w = torch.tensor([5., 7.], requires_grad=True, device=device)
    # b's AccumulateGrad runs before the MulBackward0 that reads the same
    # gradient; b then receives a second gradient, added while MulBackward0 waits
    ((u + b) * w + b * 2).sum().backward()
    assert b.grad.tolist() == [7., 9.]
    assert u.grad.tolist() == [5., 7.] and w.grad.tolist() == [2., 3.]


def test_borrowed_gradients_settle_when_the_pass_fails(device):
    a = torch.tensor([1., 2.], requires_grad=True, device=device)
    b = torch.tensor([3., 4.], requires_grad=True, device=device)
    c = torch.tensor([1., 1.], requires_grad=True, device=device)
    e = (c * 1).exp()
    older = e.sum()                         # runs after the a + b branch
    e.add_(1)                               # exp's saved result is now stale
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ((a + b).sum() + older).backward()
    assert a.grad.tolist() == [1., 1.] and b.grad.tolist() == [1., 1.]
    a.grad.zero_()                          # a and b received the same array
    assert b.grad.tolist() == [1., 1.]


@pytest.mark.parametrize("order", ["shared-first", "shared-last"])
def test_summing_contributions_never_writes_into_a_shared_one(device, order):
    """Gradients arriving at one node are added up, in place when an array is
    the engine's alone; one that also went to another node must stay as it was."""
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = torch.tensor([3., 4.], requires_grad=True, device=device)
    h = x * 1
    if order == "shared-first":  # the newest node runs first: k's node, then m's
        m = h * 5
        k = h + y                # AddBackward0 sends one array to h's node and to y
    else:
        k = h + y
        m = h * 5
    (m + k).sum().backward()
    assert y.grad.tolist() == [1., 1.]
    assert x.grad.tolist() == [6., 6.]


def test_summing_three_contributions(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    h = x * 1
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))
    (h * 2 + h * 3 + h * 4).sum().backward()
    assert seen == [[9., 9.]]
    assert h.grad.tolist() == [9., 9.] and x.grad.tolist() == [9., 9.]
    x.grad.zero_()
    assert h.grad.tolist() == [9., 9.]


def test_formula_writes_only_into_a_gradient_nobody_else_holds(device):
    """``g * R`` may be computed in g's own memory when the engine alone holds g
    (for arrays of 256 KiB and more); a gradient shared with another node, a
    leaf or a forward value is left as is."""
    n = 100_000                                # 400 KB of float32: big enough
    base = np.linspace(-1.0, 2.0, n, dtype=np.float32)
    positive = (base > 0).astype(np.float32)

    def leaf(values):
        return torch.tensor(values, requires_grad=True, device=device)

    x, y, b = leaf(base), leaf(base + 5), leaf(base + 9)
    (x.relu() + y * 1).sum().backward()       # one array to ReluBackward0 and to y's path
    assert np.array_equal(x.grad.cpu().numpy(), positive)
    assert np.array_equal(y.grad.cpu().numpy(), np.ones(n, np.float32))
    x.grad = None
    (b + x.relu()).sum().backward()            # one array to b's .grad and to ReluBackward0
    assert np.array_equal(b.grad.cpu().numpy(), np.ones(n, np.float32))
    assert np.array_equal(x.grad.cpu().numpy(), positive)
    x.grad = None
    t = x.relu()
    (t * x).sum().backward()                   # t's gradient is x's own values
    assert np.array_equal(x.detach().cpu().numpy(), base)
    assert np.array_equal(x.grad.cpu().numpy(), 2 * np.maximum(base, 0))
    x.grad = None
    (x * 3).relu().sum().backward()            # here the engine alone holds g: reused
    assert np.array_equal(x.grad.cpu().numpy(), 3 * (base > 0).astype(np.float32))


def test_without_trusted_reference_counts_the_engine_copies(device, monkeypatch):
    """Where ``sys.getrefcount`` cannot be trusted, nothing is reused: same
    gradients, and no leaf's .grad shares memory with anything."""
    from autograd_kit import accumulate
    from autograd_kit.ops import _rules

    def run():
        n = 70_000
        x = torch.tensor(np.linspace(-1, 1, n, dtype=np.float32), requires_grad=True,
                         device=device)
        b = torch.tensor(np.ones(n, dtype=np.float32), requires_grad=True, device=device)
        ((x * 3).relu() + b + x * 2).sum().backward()
        return x, b

    x1, b1 = run()
    monkeypatch.setattr(accumulate, "EXACT", False)
    monkeypatch.setattr(_rules, "EXACT", False)
    x2, b2 = run()
    assert np.array_equal(x1.grad.cpu().numpy(), x2.grad.cpu().numpy())
    assert np.array_equal(b1.grad.cpu().numpy(), b2.grad.cpu().numpy())
    arrays = [x2._data, b2._data, x2.grad._data, b2.grad._data]
    for i, a in enumerate(arrays):
        for other in arrays[i + 1:]:
            assert not backend.xp_of(a).shares_memory(a, other)


def test_paused_backward_steps_leaves_the_callers_grad_mode(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    steps = backward_steps((x * x).sum())
    next(steps)                                   # paused after the first node
    assert torch.is_grad_enabled()
    assert (x * 3).requires_grad                  # the notebook keeps recording
    with torch.no_grad():
        next(steps)                               # the caller's no_grad is respected
        assert not torch.is_grad_enabled()
    list(steps)
    assert torch.is_grad_enabled()
    assert x.grad.tolist() == [2., 4.]


# -- the array helpers the plain backward pass relies on ----------------------
def test_multiply_into_writes_in_place_only_when_the_product_fits():
    from autograd_kit import backend
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = backend.multiply_into(a, np.array([1, 0, 2], dtype=np.float32))
    assert out is a and a.tolist() == [[0., 0., 4.], [3., 0., 10.]]
    small = np.ones(3, dtype=np.float32)
    wider = backend.multiply_into(small, np.ones((2, 3), dtype=np.float32))  # broadcasts up
    assert wider is not small and wider.shape == (2, 3) and small.tolist() == [1., 1., 1.]
    real = np.ones(2, dtype=np.float32)
    mixed = backend.multiply_into(real, np.array([1j, 2j]))                # cannot be cast
    assert mixed is not real and mixed.dtype.kind == "c" and real.tolist() == [1., 1.]


def test_sum_to_and_fit_array_undo_broadcasting():
    from autograd_kit import backend
    g = np.ones((4, 2, 3), dtype=np.float64)
    assert backend.sum_to(g, (1, 3)).tolist() == [[8., 8., 8.]]
    assert backend.sum_to(g, (3,)).tolist() == [8., 8., 8.]
    fitted = backend.fit_array(g, (2, 3), np.dtype(np.float32), g)
    assert fitted.shape == (2, 3) and fitted.dtype == np.float32 and fitted[0, 0] == 4.
    filled = backend.fit_array(0.5, (2,), np.dtype(np.float32), g)
    assert filled.tolist() == [0.5, 0.5] and filled.dtype == np.float32
