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
from autograd_kit.viz.engines import backward_pass
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
    # no hook here: the parts that arrived add up, in PyTorch's order, to exactly
    # what flowed in, so no step claims that a hook changed its gradient
    assert all(st.before_hooks is None for st in s.steps)


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
        backward_pass(torch.nn.Linear(2, 1), None)
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
    assert "data:image/svg+xml;base64," in still and "Step 1 of 3: SumBackward0" in text(still)
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
    assert "data:image/svg+xml;base64," in d._repr_mimebundle_()["text/html"]


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


# -- retain_grad, hooks, both engines side by side -----------------------------------
def kit():
    import autograd_kit
    return autograd_kit


def values_or_none(t):
    return None if t is None else access.host_array(t).tolist()


def retained_graph(lib, which):
    """``y = x * 3`` feeds three uses; ``which`` ("root" or "y") calls retain_grad()."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    loss = (y * y + y.sin()).sum()
    held = {"root": loss, "y": y}[which]
    held.retain_grad()
    return x, y, loss, held


@pytest.mark.parametrize("which", ["root", "y"])
def test_retained_grads_follow_the_pass_as_on_the_kits_engine(which):
    """A tensor that called retain_grad() has no .grad before the step of its
    grad_fn, gets it there, and loses it again on Reset -- on PyTorch as on the
    kit's engine (``y`` is found through ``names``; the root is always known)."""
    seen = {}
    for lib in (kit(), torch):
        x, y, loss, held = retained_graph(lib, which)
        names = {"x": x, "y": y} if which == "y" else {"x": x}
        s = BackwardStepper(loss, names=names)
        trail = [values_or_none(held.grad)]
        at = None
        for _ in range(s.total):
            s.step()
            trail.append(values_or_none(held.grad))
            if s.current.node is held.grad_fn:
                at = s.position
                assert [t for t, _ in s.current.retained] == [held]
                label = "y.grad" if which == "y" else "retained tensor"
                assert label in text(s.panel.value) and "(retain_grad)" in text(s.panel.value)
            else:
                assert s.current.retained == []
        s.reset()
        assert held.grad is None
        s.run()
        seen[lib.__name__] = (trail, at, values_or_none(held.grad))
    trail, at, final = seen["torch"]
    assert at is not None and trail[:at] == [None] * at
    assert all(v is not None for v in trail[at:]) and final == trail[-1]
    kit_trail, kit_at, kit_final = seen["autograd_kit"]
    assert at == kit_at and len(trail) == len(kit_trail)
    np.testing.assert_allclose(np.array(final), np.array(kit_final), rtol=1e-6)
    _x, _y, loss2, held2 = retained_graph(torch, which)  # a plain backward's value
    loss2.backward()
    assert final == held2.grad.tolist()


def test_retained_grad_from_an_earlier_pass_is_put_back_exactly():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    loss = (y * y).sum()
    loss.backward(retain_graph=True)
    earlier = y.grad
    s = BackwardStepper(loss, names={"y": y})
    assert y.grad is earlier and earlier.tolist() == [6.0, 12.0]
    s.run()
    assert y.grad.tolist() == [12.0, 24.0] and earlier.tolist() == [6.0, 12.0]
    s.reset()
    assert y.grad is earlier


def doubled_graph(lib, where):
    """``[1, 2] + [1, 2]`` arrive at y's node, a hook doubles the sum (``where`` =
    "y"), or the seed 1 at the root is tripled (``where`` = "root")."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([1.0, 2.0])
    y = x * 1.0
    loss = (y * c + y * c).sum()
    if where == "y":
        y.register_hook(lambda g: g * 2)
    else:
        loss.register_hook(lambda g: g * 3)
    return x, y, loss


@pytest.mark.parametrize("where, node, words", [
    ("y", "y", ["2 contributions summed: g = [1., 2.] + [1., 2.] = [2., 4.]",
                "A hook changed g to [4., 8.]: that is the gradient that flowed on."]),
    ("root", "loss", ["Gradient flowing in: g = 1.",
                      "A hook changed g to 3.: that is the gradient that flowed on."]),
])
def test_a_hook_that_changes_the_gradient_is_said_on_both_engines(where, node, words):
    for lib in (kit(), torch):
        x, y, loss = doubled_graph(lib, where)
        s = BackwardStepper(loss, names={"x": x, "y": y})
        target = {"y": y, "loss": loss}[node].grad_fn
        for _ in range(s.total):  # to the step of target
            s.step()
            if s.current.node is target:
                break
        assert s.current.node is target
        panel = text(s.panel.value)
        for w in words:
            assert w in panel, (lib.__name__, panel)
        s.run()
        others = [st for st in s.steps if st.node is not target]
        assert len(others) == s.total - 1
        assert all(st.before_hooks is None for st in others)  # no hook, no claim
        x2, _y2, loss2 = doubled_graph(lib, where)
        loss2.backward()
        assert values_or_none(x.grad) == values_or_none(x2.grad), lib.__name__
        assert values_or_none(x.grad) == {"y": [4.0, 8.0], "root": [6.0, 12.0]}[where]


# -- an MLP: every edge, and Back / Reset bit for bit ----------------------------------
def in_graph_order(start):
    """The graph's nodes, depth first from ``start``: two graphs built by the same
    code give the same list, position by position."""
    from autograd_kit.viz.engines.pytorch import graph_nodes
    return graph_nodes(start)


def test_mlp_every_edge_equals_the_nodes_own_backward_on_a_hook_free_twin():
    """The oracle is a twin MLP (same seed, same data) whose graph never had a hook
    and is never run by PyTorch's engine.  Walking the replayed steps in their
    order, the gradient into each node is what the twin's nodes sent it, added up
    in arrival order (the root gets 1), and along every edge a node must send
    what the twin's *same* node gives when called directly on that gradient
    (summed down to the shape the next node takes, as the engine does between
    nodes): calling a node runs only its own backward formula on its own saved
    tensors (no hooks, no engine), so each edge is checked on its own, not only
    the final ``.grad``.  Into each AccumulateGrad must flow d loss / d parameter from
    a hook-free ``torch.autograd.grad``."""
    model = mlp(0)
    loss = mlp_loss(model, 1)
    s = BackwardStepper(loss)
    s.run()
    twin = mlp(0)
    loss2 = mlp_loss(twin, 1)
    ours, theirs = in_graph_order(loss.grad_fn), in_graph_order(loss2.grad_fn)
    assert [access.node_name(n) for n in ours] == [access.node_name(n) for n in theirs]
    pair = {id(a): b for a, b in zip(ours, theirs, strict=True)}
    oracle = dict(zip(map(id, twin.parameters()),
                      torch.autograd.grad(loss2, list(twin.parameters()), retain_graph=True)))
    arrived = {id(loss2.grad_fn): [torch.ones_like(loss2)]}
    edges = 0
    for st in s.steps:
        node2 = pair[id(st.node)]
        parts = arrived.pop(id(node2))
        want_in = parts[0]
        for p in parts[1:]:
            want_in = want_in + p
        assert len(st.contributions) == len(parts) and st.before_hooks is None
        torch.testing.assert_close(st.grad_in, want_in, rtol=1e-6, atol=1e-7)
        if st.leaves:
            torch.testing.assert_close(st.grad_in, oracle[id(node2.variable)],
                                       rtol=1e-6, atol=1e-7)
            continue
        with torch.no_grad():
            wants = node2(want_in)
        wants = wants if isinstance(wants, tuple) else (wants,)
        assert len(st.grads_out) == len(wants) == len(node2.next_functions)
        for got, want, (nxt, nr) in zip(st.grads_out, wants, node2.next_functions):
            assert (got is None) == (want is None or nxt is None)
            if got is not None:
                # between nodes PyTorch's engine sums a gradient down to the shape
                # the next node takes (a broadcast bias); calling a node skips that
                want = want.sum_to_size(nxt._input_metadata[nr].shape)
                torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
                arrived.setdefault(id(nxt), []).append(want)
                edges += 1
    assert not arrived and edges >= 10


def test_mlp_back_and_reset_restore_grads_bit_for_bit():
    model = mlp(2)
    mlp_loss(model, 3).backward()  # an earlier gradient in every .grad
    params = list(model.parameters())
    held = [p.grad for p in params]  # the user's own .grad objects
    start = grads(params)
    loss = mlp_loss(model, 4)
    s = BackwardStepper(loss)
    assert all(p.grad is h for p, h in zip(params, held)) and same(grads(params), start)
    seen = [grads(params)]
    for _ in range(s.total):
        s.step()
        seen.append(grads(params))
    for k in list(range(s.total, -1, -1)) + [3, s.total, 1]:
        s.go_to(k)
        assert same(grads(params), seen[k]), k
    s.reset()
    assert all(p.grad is h for p, h in zip(params, held))
    assert same(grads(params), start) and same(held, start)  # never written into
    twin = mlp(2)
    mlp_loss(twin, 3).backward()
    mlp_loss(twin, 4).backward()
    s.run()
    assert same(grads(params), grads(list(twin.parameters())))


# -- a pass that stops part way ----------------------------------------------------------
def stopping_graph(lib):
    """The w branch runs first; then ExpBackward0 finds its saved output changed
    in place and the pass stops."""
    x = lib.tensor([0.5, 1.0], requires_grad=True)
    w = lib.tensor([2.0, 3.0], requires_grad=True)
    b = (x * 2).exp()
    loss = b.sum() + (w * 5).sum()
    b.mul_(1)
    return x, w, loss


def test_a_pass_that_stops_part_way_shows_the_steps_that_ran_then_pytorchs_error():
    x, w, loss = stopping_graph(torch)
    s = BackwardStepper(loss, names={"x": x, "w": w})
    assert s.problem is None and s._ahead is not None
    order = [access.node_name(st.node) for st in s._source._steps]
    assert order == ["AddBackward0", "SumBackward0", "MulBackward0", "AccumulateGrad",
                     "SumBackward0"]
    assert "this pass will stop after 5 steps" in text(s.status.value)
    s.run()
    assert s.position == 5 and not s.finished
    status = text(s.status.value)
    assert "PyTorch stopped at step 6" in status
    assert "modified by an inplace operation" in status
    x2, w2, loss2 = stopping_graph(torch)  # what a plain failing backward leaves
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss2.backward()
    assert same(grads([x, w]), grads([x2, w2])) and x.grad is None
    assert w.grad.tolist() == [5.0, 5.0]
    s.reset()
    assert x.grad is None and w.grad is None
    s.go_to(4)
    assert w.grad.tolist() == [5.0, 5.0] and x.grad is None


# -- the recording leaves everything of the user's alone --------------------------------
def raising_graph(lib, earlier):
    """w's branch runs first (its .grad changes), then x's hook raises ValueError."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    w.grad = lib.tensor(earlier)

    def refuse(_g):
        raise ValueError("this hook refuses")
    x.register_hook(refuse)
    return x, w, (x * 2).sum() + (w * 5).sum()


def test_a_hook_raising_valueerror_leaves_every_grad_as_it_was_on_both_engines():
    for lib in (kit(), torch):
        x, w, loss = raising_graph(lib, [0.5, 0.25])
        held = w.grad
        with pytest.raises(ValueError, match="this hook refuses"):
            BackwardStepper(loss, names={"x": x, "w": w})
        assert x.grad is None and w.grad.tolist() == [0.5, 0.25], lib.__name__
        x2, w2, loss2 = raising_graph(lib, [0.5, 0.25])
        with pytest.raises(ValueError):
            loss2.backward()
        assert w2.grad.tolist() != [0.5, 0.25]  # a plain pass did reach w first
        if lib is torch:
            assert w.grad is held and held.tolist() == [0.5, 0.25]


@pytest.mark.parametrize("lib", ["autograd_kit", "torch"])
def test_a_grad_the_user_holds_is_not_written_into(lib):
    """Both engines add into ``.grad`` in place when they can; the stepper's passes
    must not reach the user's own object, and Reset gives that very object back."""
    lib = kit() if lib == "autograd_kit" else torch
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.grad = lib.tensor([10.0, 20.0])
    held = x.grad
    loss = (x * x).sum()
    s = BackwardStepper(loss, names={"x": x}, retain_graph=True)
    assert x.grad is held and held.tolist() == [10.0, 20.0]
    s.run()
    assert x.grad.tolist() == [12.0, 24.0] and held.tolist() == [10.0, 20.0]
    s.run_again()  # a real second pass, into the stepper's copy
    assert x.grad.tolist() == [14.0, 28.0] and held.tolist() == [10.0, 20.0]
    s.reset()
    assert x.grad is held and held.tolist() == [10.0, 20.0]
    s.go_to(2)
    assert held.tolist() == [10.0, 20.0]


# -- the graph was freed when the stepper was made --------------------------------------
def saved_marks(s):
    from autograd_kit.widgets import marks
    styles = marks.styles(s._graph, s.steps, s._saved_boxes)
    return {b: styles.get(b) is marks.FREED for b in s._saved_boxes}


def test_status_says_pytorch_already_freed_the_graph_and_the_picture_stays_consistent():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = (x * w).sin().sum()
    s = BackwardStepper(loss, names={"x": x, "w": w})
    note = "so PyTorch has already freed the saved tensors"
    assert note in text(s.status.value)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    boxes = [n for n in s._graph.nodes if n.kind == "saved"]
    assert boxes and all(n.lines[-1] != "(freed)" for n in boxes)  # drawn before the pass
    assert saved_marks(s) and not any(saved_marks(s).values())  # step 0: none grey
    s.run()
    assert all(saved_marks(s).values()) and note in text(s.status.value)
    s.reset()
    assert not any(saved_marks(s).values()) and note in text(s.status.value)
    kept = BackwardStepper((x * w).sin().sum(), retain_graph=True)
    assert "already freed" not in text(kept.status.value)
    nothing_saved = BackwardStepper((x + w).sum())
    assert "already freed" not in text(nothing_saved.status.value)


@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
@pytest.mark.parametrize("lib", ["autograd_kit", "torch"])
def test_a_saved_tensor_drawn_as_freed_is_grey_from_the_start(lib, lang):
    from autograd_kit.i18n import language
    from autograd_kit.viz import access, labels
    lib = kit() if lib == "autograd_kit" else torch
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    b = (x * w).sin()
    b.sum().backward()  # frees what MulBackward0 and SinBackward0 saved
    with language(lang):  # the label is in the learner's language; the colour follows it
        s = BackwardStepper((b * x).sum(), names={"x": x, "w": w})
        said = labels.reason_text(access.Unavailable("freed"))
    drawn = {n.id: n.lines[-1] == said for n in s._graph.nodes if n.kind == "saved"}
    assert any(drawn.values()) and not all(drawn.values())
    assert saved_marks(s) == drawn  # grey exactly where the label says freed
    for _ in range(2):  # and stays grey as the pass goes on
        s.step()
        marks_now = saved_marks(s)
        assert all(marks_now[b] for b, freed in drawn.items() if freed)
