"""BackwardStepper on real PyTorch tensors: PyTorch's own pass, recorded with
hooks and replayed.

The oracles are PyTorch itself: the order its engine runs nodes in (watched on
the very same graph by hooks this file registers), hook-free
``torch.autograd.grad`` on an identical graph for the gradient along every edge,
and a plain ``backward()`` for the final ``.grad`` values.
"""
import copy
import re
import subprocess
import sys

import numpy as np
import pytest

from autograd_kit.viz import access
from autograd_kit.widgets import BackwardStepper

from graph_builder import build

torch = pytest.importorskip("torch")

SEEDS = range(8)


def text(html: str) -> str:
    """What the browser would show: tags dropped, entities decoded, svg dropped."""
    import html as h
    html = re.sub(r"<svg\b.*?</svg>", " ", html, flags=re.S)
    html = re.sub(r"</?(div|li|ul|tr|td|th|table|br|pre)\b[^>]*>", " ", html)
    return h.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)))


def grads(leaves):
    return [None if t.grad is None else t.grad.detach().clone() for t in leaves]


def same(a, b):
    """Exactly the same grads (None where None)."""
    assert len(a) == len(b)
    return all((p is None and q is None) or (p is not None and q is not None
                                             and torch.equal(p, q)) for p, q in zip(a, b))


# -- graphs ------------------------------------------------------------------------
BINARY = [torch.add, torch.mul, torch.sub, torch.div, torch.maximum]
UNARY = [torch.sin, torch.tanh, torch.exp, torch.sigmoid]


def recorded_ops(log):
    """Ops for ``graph_builder.build`` that note ``(output, op, inputs)`` in
    ``log``; each makes one node whose edges lead to its inputs, in order."""
    def binary(f):
        def op(a, b):
            out = f(a, b)
            log.append((out, f, (a, b)))
            return out
        return op

    def unary(f):
        def op(a, _b):
            out = f(a)
            log.append((out, f, (a,)))
            return out
        return op
    return [binary(f) for f in BINARY] + [unary(f) for f in UNARY]


def graph(seed, n_ops=8):
    log = []
    leaves, loss = build(torch, recorded_ops(log), seed, n_ops)
    return leaves, loss, log


def mlp(seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                torch.nn.Linear(4, 2), torch.nn.ReLU(),
                                torch.nn.Linear(2, 1))
    return model


def mlp_loss(model, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(5, 3, generator=g)
    y = torch.randn(5, 1, generator=g)
    return torch.nn.functional.mse_loss(model(x), y)


def pytorch_order(loss):
    """The nodes in the order PyTorch runs them, watched by pre-hooks on a plain
    ``backward(retain_graph=True)``; leaves' grads are put back afterwards."""
    nodes, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        stack.extend(m for m, _ in n.next_functions)
    order = []
    handles = [n.register_prehook(lambda _g, n=n: order.append(n)) for n in nodes]
    leaves = [n.variable for n in nodes if hasattr(n, "variable")]
    before = grads(leaves)
    try:
        loss.backward(retain_graph=True)
    finally:
        for h in handles:
            h.remove()
    for t, g in zip(leaves, before):
        t.grad = g
    return order


def is_topological(steps):
    """Every node runs after every node that sends it a gradient."""
    pos = {id(s.node): i for i, s in enumerate(steps)}
    return all(pos[id(nxt)] > i for i, s in enumerate(steps)
               for nxt, _ in s.node.next_functions if nxt is not None and id(nxt) in pos)


# -- order, edges, final grads ----------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_replayed_order_is_pytorchs_execution_order(seed):
    _leaves, loss, _log = graph(seed)
    s = BackwardStepper(loss, retain_graph=True)
    s.run()
    assert s.engine == "torch" and s.total == len(s.steps) > 3
    order = pytorch_order(loss)
    assert [id(st.node) for st in s.steps] == [id(n) for n in order]
    assert is_topological(s.steps)


def test_mlp_order_and_grads():
    model = mlp(0)
    twin = copy.deepcopy(model)
    loss = mlp_loss(model, 1)
    s = BackwardStepper(loss, retain_graph=True)
    names = [access.node_name(st.node) for st in s._source._steps]
    assert names[0] == "MseLossBackward0" and "AddmmBackward0" in names
    assert names.count("AccumulateGrad") == len(list(model.parameters()))
    s.run()
    assert [id(st.node) for st in s.steps] == [id(n) for n in pytorch_order(loss)]
    mlp_loss(twin, 1).backward()
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        assert torch.equal(p.grad, q.grad)
    # what flowed into each parameter's AccumulateGrad is d loss / d parameter
    fresh = mlp(0)  # the same weights, never hooked
    oracle = torch.autograd.grad(mlp_loss(fresh, 1), list(fresh.parameters()))
    into = {id(st.node.variable): st.grad_in for st in s.steps if st.leaves}
    for p, want in zip(model.parameters(), oracle, strict=True):
        torch.testing.assert_close(into[id(p)], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("seed", SEEDS)
def test_edge_gradients_equal_hook_free_autograd_grad(seed):
    """Into each op's node flows d loss / d output; along edge i it sends the
    vector-Jacobian product with input i alone (the other inputs held fixed):
    the op run again on detached copies of its inputs, differentiated by a
    hook-free ``torch.autograd.grad``."""
    _leaves, loss, log = graph(seed)
    s = BackwardStepper(loss)
    s.run()
    step_of = {id(st.node): st for st in s.steps}
    _leaves2, loss2, log2 = graph(seed)  # the same graph again, never hooked
    checked = 0
    for (out, _f, _inputs), (out2, f, inputs2) in zip(log, log2, strict=True):
        st = step_of[id(out.grad_fn)]
        g = torch.autograd.grad(loss2, out2, retain_graph=True)[0]
        torch.testing.assert_close(st.grad_in, g, rtol=1e-12, atol=1e-12)
        alone = [t.detach().requires_grad_() for t in inputs2]
        wants = torch.autograd.grad(f(*alone), alone, g)
        assert len(st.grads_out) == len(wants)
        for got, want in zip(st.grads_out, wants):
            torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("seed", SEEDS)
def test_run_leaves_the_grads_of_a_plain_backward(seed):
    leaves, loss, _ = graph(seed)
    assert all(t.grad is None for t in leaves)  # making the stepper changed nothing
    s = BackwardStepper(loss)
    assert all(t.grad is None for t in leaves)
    s.run()
    leaves2, loss2, _ = graph(seed)
    loss2.backward()
    assert same(grads(leaves), grads(leaves2))
    assert s.finished


def test_contributions_are_summed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    loss = (y * y + y.sin()).sum()  # y's node gets three gradients
    s = BackwardStepper(loss, names={"x": x, "y": y})
    s.run()
    st = next(st for st in s.steps if access.node_name(st.node) == "MulBackward0"
              and st.node is y.grad_fn)
    assert len(st.contributions) == 3  # y * y sends two, y.sin() one
    torch.testing.assert_close(sum(st.contributions), st.grad_in, rtol=1e-12, atol=1e-12)
    s.go_to(st.index + 1)
    assert "3 contributions summed" in text(s.panel.value)


# -- Back / Reset -----------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_back_and_reset_restore_exactly(seed):
    leaves, loss, _ = graph(seed)
    leaves[0].grad = torch.full_like(leaves[0], 0.25)  # an earlier gradient
    start = grads(leaves)
    s = BackwardStepper(loss)
    assert same(grads(leaves), start)
    seen = []
    for _ in range(s.total + 1):
        seen.append(grads(leaves))
        s.step()
    assert not same(seen[-1], start)
    for k in range(s.total, -1, -1):
        s.go_to(k)
        assert same(grads(leaves), seen[k]), k
    s.run()
    s.back()
    assert same(grads(leaves), seen[s.total - 1])
    s.reset()
    assert s.position == 0 and same(grads(leaves), start)
    # the final values are a plain backward's, added to the earlier gradient
    leaves2, loss2, _ = graph(seed)
    leaves2[0].grad = torch.full_like(leaves2[0], 0.25)
    loss2.backward()
    s.run()
    assert same(grads(leaves), grads(leaves2))


def test_panel_and_picture_say_what_pytorch_did():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = (x * w).sum()
    s = BackwardStepper(loss, names={"x": x, "w": w})
    status = text(s.status.value)
    assert "PyTorch's own backward pass, replayed" in status and "hooks" in status
    assert "PyTorch starts at SumBackward0" in text(s.panel.value)
    s.go_to(2)
    panel = text(s.panel.value)
    assert "Step 2 of 4: MulBackward0" in panel
    assert "grad of self = g * other" in panel  # the kit's formula table, same node name
    assert "upstream × local = contribution: [1., 1.] × [3., 4.] = [3., 4.]" in panel
    assert "saved tensors freed: other, self" in panel
    s.step()
    assert re.search(r"(x|w)\.grad: None → \[", text(s.panel.value))
    assert "<svg" in s.picture.value and "#ffd27f" in s.picture.value  # current node


# -- second pass, retain_graph ----------------------------------------------------
def test_second_pass_is_refused_as_pytorch_refuses_it():
    leaves, loss, _ = graph(3)
    s = BackwardStepper(loss)
    s.run()
    after = grads(leaves)
    s.step()  # a second pass
    status = text(s.status.value)
    assert "Trying to backward through the graph a second time" in status
    assert "already used by a backward pass" in status and "PyTorch's message" in status
    assert same(grads(leaves), after)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()  # freed for real, as after a plain backward()
    s.back()
    assert s.position == s.total - 1 and "second time" not in text(s.status.value)


def test_retain_graph_second_pass_accumulates():
    leaves, loss, _ = graph(5)
    s = BackwardStepper(loss, retain_graph=True)
    s.run()
    s.run_again()
    assert "accumulated" in text(s.status.value)
    leaves2, loss2, _ = graph(5)
    loss2.backward(retain_graph=True)
    loss2.backward(retain_graph=True)
    assert same(grads(leaves), grads(leaves2))
    s.reset()
    assert all(t.grad is None for t in leaves)
    loss.backward()  # the graph was kept: a plain backward still runs
    leaves3, loss3, _ = graph(5)
    loss3.backward()
    assert same(grads(leaves), grads(leaves3))


# -- what cannot be shown ---------------------------------------------------------
@pytest.mark.parametrize("make, words", [
    (lambda: torch.tensor([1.0, 2.0]) * 2, "not part of any graph"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True) * 2, "more than one number"),
    (lambda: "loss", "takes a tensor of autograd_kit or PyTorch"),
    (lambda: np.ones(3), "it was given a numpy.ndarray"),
])
def test_what_cannot_be_shown_is_said_in_words(make, words):
    s = BackwardStepper(make())
    status = text(s.status.value)
    assert words in status and "Nothing to step through" in status
    assert "AttributeError" not in status and s.step_button.disabled
    s.step()
    s.run()
    assert s.position == 0


def test_bad_object_gets_the_one_line_error():
    with pytest.raises(TypeError) as err:
        access.backward_pass(torch.nn.Linear(2, 1), None)
    message = str(err.value)
    assert "\n" not in message
    assert message == ("backward_pass takes a tensor of autograd_kit or PyTorch "
                       "(autograd_kit.Tensor or torch.Tensor); it was given a "
                       "torch.nn.modules.linear.Linear.")


def test_freed_graph_is_said_in_words():
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    s = BackwardStepper(y)
    assert "already used by a backward pass" in text(s.status.value)
    assert s.total == 0 and s.step_button.disabled


def test_non_scalar_root_with_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    s = BackwardStepper(y, gradient=torch.tensor([1.0, 0.5]))
    s.run()
    assert x.grad.tolist() == [2.0, 2.0]


def test_leaf_root():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = BackwardStepper(x, gradient=torch.tensor([3.0, 4.0]))
    assert s.total == 1
    s.run()
    assert x.grad.tolist() == [3.0, 4.0]
    s.reset()
    assert x.grad is None


# -- the still copy and the imports -------------------------------------------------
def test_still_copy_of_a_torch_stepper():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    s = BackwardStepper(loss, names={"<b>x</b>": x})
    s.step()
    still = s._repr_mimebundle_()["text/html"]
    assert "<svg" in still and "Step 1 of 3: SumBackward0" in text(still)
    assert "replayed" in text(still) and "<b>x</b>" not in still


def test_torch_is_not_imported_by_the_kit_or_its_widgets():
    code = ("import sys, autograd_kit, autograd_kit.widgets, autograd_kit.viz.access, "
            "autograd_kit.viz.engines\n"
            "x = autograd_kit.tensor(2.0, requires_grad=True)\n"
            "autograd_kit.widgets.BackwardStepper(x * x).run()\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# -- the other widgets on PyTorch ---------------------------------------------------
def test_accumulation_demo_on_pytorch_follows_pytorch():
    from autograd_kit.widgets import AccumulationDemo
    d = AccumulationDemo(x_value=1.5, lib=torch)
    d.backward(retain_graph=True)
    d.backward()
    d.backward()  # refused: the graph is freed
    d.forward()
    d.backward()
    d.zero_grad()
    x = torch.tensor(1.5, requires_grad=True)  # the same calls, made directly
    want = [None]
    loss = x ** 2 * 3
    loss.backward(retain_graph=True)
    want.append(x.grad.item())
    loss.backward()
    want.append(x.grad.item())
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    want.append(x.grad.item())
    loss = x ** 2 * 3
    want.append(x.grad.item())
    loss.backward()
    want.append(x.grad.item())
    want.append(0.0)
    assert d.grads == want
    assert "second time" in d.history[3][2]  # PyTorch's own refusal, recorded
    assert isinstance(d.x, torch.Tensor)


def test_detach_demo_on_pytorch_matches_pytorch():
    from autograd_kit.widgets import DetachDemo
    d = DetachDemo(x_value=3.0, lib=torch)
    assert all(isinstance(r["x"], torch.Tensor) for r in d.results)
    x = torch.tensor(3.0, requires_grad=True)
    (x * x).backward()
    same_tensor = d.results[[r["way"] for r in d.results].index("the same tensor")]
    assert same_tensor["x_grad"] == f"{x.grad.item():g}."
    assert "<svg" in d._repr_mimebundle_()["text/html"]


def test_node_with_several_outputs():
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    r0, r1 = m.unbind(0)
    loss = (r0 * r1).sum()
    s = BackwardStepper(loss, names={"m": m})
    s.run()
    m2 = m.detach().clone().requires_grad_()
    a, b = m2.unbind(0)
    (a * b).sum().backward()
    assert torch.equal(m.grad, m2.grad)
    unbind = next(st for st in s.steps if access.node_name(st.node) == "UnbindBackward0")
    s.go_to(unbind.index + 1)
    panel = text(s.panel.value)
    assert "one per output of the node: [3., 4.], [1., 2.]" in panel
    assert "summed" not in panel
