"""The engine's fast path is a specialisation, never a different algorithm.

``backward()`` runs the walk with arrays and skips the work nobody will look
at (no ``Step`` records, reused buffers); ``backward_steps`` -- what the
stepper shows -- runs the plain walk and records everything; ``autograd.grad``
captures instead of accumulating; ``create_graph=True`` runs the formulas on
Tensors.  On random graphs (shared leaves, fan-out, broadcasting, in-place
changes of intermediates, hooks that change or only watch a gradient,
``retain_grad``, ``retain_graph``) the four must agree: the same gradients
(bit for bit between the array passes), the same hook calls in the same order
with the same values, and the same saved tensors freed.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.engine import backward_steps


def build(seed: int):
    """A random graph from ``seed``: ``(leaves, root, log, watched)``, where the
    hooks write their calls into ``log`` and ``watched`` are the non-leaves that
    retain their gradient."""
    rng = np.random.default_rng(seed)
    log = []
    leaves = [ak.tensor(rng.uniform(0.5, 1.5, (2, 3)), requires_grad=True) for _ in range(3)]
    leaves.append(ak.tensor(rng.uniform(0.5, 1.5, (3,)), requires_grad=True))  # broadcasts
    const = ak.tensor(rng.uniform(0.5, 1.5, (2, 3)))
    pool = list(leaves) + [const]
    watched = []
    for step in range(int(rng.integers(4, 12))):
        a = pool[int(rng.integers(len(pool)))]
        b = pool[int(rng.integers(len(pool)))]
        kind = int(rng.integers(9))
        if kind == 0:
            t = a + b
        elif kind == 1:
            t = a * b
        elif kind == 2:
            t = a - b * 0.5
        elif kind == 3:
            t = a / (b * b + 1.0)
        elif kind == 4:
            t = (a * 0.3).tanh() + (b * 0.2).exp()
        elif kind == 5:
            t = (a * b).sum(-1, keepdim=True) * a
        elif kind == 6:
            t = a.sigmoid() * 2.0
        elif kind == 7:  # an in-place change of a fresh intermediate
            t = a * 1.5
            t.mul_(b if b.shape == t.shape else 2.0)
        else:
            t = (a @ b.reshape(-1, 1) if b.numel() == 3 else a.relu()) * 1.0
        if t.shape != (2, 3):
            t = t + ak.zeros(2, 3)
        if t.requires_grad and rng.random() < 0.3:
            tag = f"h{step}"
            if rng.random() < 0.5:
                t.register_hook(lambda g, tag=tag: log.append((tag, g.tolist())))
            else:
                t.register_hook(lambda g, tag=tag: (log.append((tag, g.tolist())), g * 0.5)[1])
        if t.requires_grad and rng.random() < 0.2:
            t.retain_grad()
            watched.append(t)
        pool.append(t)
    for i, leaf in enumerate(leaves):
        if rng.random() < 0.3:
            leaf.register_hook(lambda g, i=i: log.append((f"leaf{i}", g.tolist())))
    outs = pool[len(leaves) + 1:]
    root = sum(((o * (k + 1)).sum() for k, o in enumerate(outs)), ak.tensor(0.0))
    return leaves, root, log, watched


def nodes_of(root):
    seen, stack, out = set(), [root.grad_fn], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(fn for fn, _ in n.next_functions)
    return out


def run(seed, how, retain_graph):
    leaves, root, log, watched = build(seed)
    nodes = nodes_of(root)
    if how == "backward":
        root.backward(retain_graph=retain_graph)
    elif how == "steps":
        for _ in backward_steps(root, retain_graph=retain_graph):
            pass
    elif how == "create_graph":
        root.backward(create_graph=True)
    elif how == "grad":
        grads = ak.autograd.grad(root, leaves, retain_graph=retain_graph, allow_unused=True)
        for leaf, g in zip(leaves, grads):
            leaf.grad = g
    grads = [None if t.grad is None else t.grad.detach().numpy().copy() for t in leaves]
    kept = [None if t.grad is None else t.grad.detach().numpy().copy() for t in watched]
    return grads, kept, log, [freed(n) for n in nodes]


def freed(node) -> list[str]:
    """The saved values of ``node`` that can no longer be read (as PyTorch says)."""
    gone = []
    for name in dir(node):
        if name.startswith("_saved_"):
            try:
                getattr(node, name)
            except RuntimeError as err:
                assert "after they have already been freed" in str(err), str(err)
                gone.append(name)
    return gone


SEEDS = range(60)


@pytest.mark.parametrize("retain_graph", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_backward_and_the_stepper_walk_agree(seed, retain_graph):
    fast = run(seed, "backward", retain_graph)
    plain = run(seed, "steps", retain_graph)
    for a, b in zip(fast[0] + fast[1], plain[0] + plain[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)
    assert fast[2] == plain[2]  # hooks: the same calls, order and values
    assert fast[3] == plain[3]  # the same saved tensors freed


@pytest.mark.parametrize("seed", SEEDS)
def test_grad_captures_what_backward_accumulates(seed):
    fast = run(seed, "backward", False)
    captured = run(seed, "grad", False)
    for a, b in zip(fast[0], captured[0]):
        if a is not None:
            np.testing.assert_array_equal(a, b)
    assert fast[3] == captured[3]


@pytest.mark.parametrize("seed", SEEDS)
def test_tensor_formulas_agree_with_array_formulas(seed):
    arrays = run(seed, "backward", False)
    tensors = run(seed, "create_graph", False)
    for a, b in zip(arrays[0] + arrays[1], tensors[0] + tensors[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert [t for t, _ in arrays[2]] == [t for t, _ in tensors[2]]
