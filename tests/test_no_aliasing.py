"""No gradient shares memory with anything a learner did not hand in.

The property, for every rule of the formula tables (``op_cases.CASES``): a
gradient that reaches user code -- a leaf's ``.grad``, what ``autograd.grad``
returns, a hook's argument, a ``Step`` record -- may be changed in place, and
that changes nothing else: not an input, not the output, not a saved tensor
(a second backward through the retained graph gives the same gradients), not
another leaf's ``.grad``.

PyTorch makes the same promise, with two documented exceptions the tests
respect: what ``autograd.grad`` returns may share memory with the
``grad_outputs`` the caller passed and with each other (``a + b`` sends one
gradient to both), and the gradient of ``sum()`` is an *expanded* tensor,
which may not be written at all ("more than one element of the written-to
tensor refers to a single memory location").  A write into such a broadcast
must raise exactly that error -- never numpy's "read-only" message.

Each case runs on the fast path of a plain ``backward()`` and on the detailed
path the stepper uses, with the upstream gradient of ``sum()`` (a broadcast 1,
which the fast path short-cuts) and with a random one.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import errors
from autograd_kit.engine import backward_steps
from autograd_kit.ops._rules import NODE_CLASSES

from op_cases import CASES, EXEMPT

PARAMS = [pytest.param(case, id=f"{name}-{case.id}")
          for name in sorted(NODE_CLASSES) if name not in EXEMPT
          for case in CASES.get(name, ())]


def _arrays(tensors):
    return [t.detach().cpu().numpy().copy() for t in tensors]


def _setup(case):
    inputs = case.inputs()
    leaves = [t for t in inputs if isinstance(t, ak.Tensor) and t.requires_grad]
    out = case.fn(*inputs)
    rng = np.random.default_rng(len(case.id))
    seed = ak.tensor(rng.uniform(0.5, 1.5, tuple(out.shape)), dtype=out.dtype)
    return inputs, leaves, out, seed


def _write(t) -> None:
    """Change ``t`` in place, as a learner may; a broadcast refuses with PyTorch's error."""
    try:
        with ak.no_grad():
            t.add_(1.5)
    except RuntimeError as err:
        assert str(err) == errors.INTERNAL_OVERLAP, str(err)


def _root(out, seed, upstream):
    """The root and its gradient: a copy of the seed each time (what
    ``autograd.grad`` returns may be the very gradient passed in, as in PyTorch)."""
    return (out.sum(), None) if upstream == "sum" else (out, seed.clone())


def _second_pass(out, seed, upstream, leaves):
    """The gradients of the retained graph, again (they read the saved tensors)."""
    root, g = _root(out, seed, upstream)
    return _arrays(ak.autograd.grad(root, leaves, g, retain_graph=True, allow_unused=True,
                                    materialize_grads=True))


def _copies(tensors):
    return [None if t is None else t.detach().numpy().copy() for t in tensors]


def _equal(now, then) -> None:
    """Pairwise equal, where ``then`` has a value."""
    for a, b in zip(now, then):
        if b is not None:
            np.testing.assert_array_equal(a, b)


def _graph_untouched(leaves, out, forward, seed, upstream, grads) -> None:
    """The forward values are as they were, and a second backward through the
    retained graph (which reads the saved tensors) gives ``grads`` again."""
    _equal(_arrays([*leaves, out]), forward)
    _equal(_second_pass(out, seed, upstream, leaves), grads)


@pytest.mark.parametrize("upstream", ["sum", "random"])
@pytest.mark.parametrize("case", PARAMS)
def test_leaf_grads_are_their_own(case, upstream):
    inputs, leaves, out, seed = _setup(case)
    forward = _arrays([*leaves, out])
    root, g = _root(out, seed, upstream)
    root.backward(g, retain_graph=True)
    grads = [t.grad for t in leaves]
    before = _copies(grads)
    for gr in grads:
        if gr is not None:
            _write(gr)
    _equal(_copies(grads), [None if b is None else b + 1.5 for b in before])  # (own writes)
    _graph_untouched(leaves, out, forward, seed, upstream, before)


@pytest.mark.parametrize("upstream", ["sum", "random"])
@pytest.mark.parametrize("case", PARAMS)
def test_autograd_grad_results_share_nothing_of_the_graph(case, upstream):
    inputs, leaves, out, seed = _setup(case)
    forward = _arrays([*leaves, out])
    root, g = _root(out, seed, upstream)
    grads = ak.autograd.grad(root, leaves, g, retain_graph=True, allow_unused=True)
    before = _copies(grads)
    for gr in grads:
        if gr is not None:
            _write(gr)
    _graph_untouched(leaves, out, forward, seed, upstream, before)


@pytest.mark.parametrize("upstream", ["sum", "random"])
@pytest.mark.parametrize("case", PARAMS)
def test_a_hook_that_writes_in_place_equals_one_that_returns(case, upstream):
    """``g.mul_(2)`` in a hook is ``return g * 2``: the leaves get the same, the
    forward values and the retained graph stay as they were.  (The seed is
    copied for each pass: the gradient of a view *is* a view of the seed, in
    PyTorch too, so the hook's write reaches it.)  Under ``sum()`` a plain
    backward passes saved arrays on as gradients: the hook must get a copy."""
    results = []
    for in_place in (False, True):
        inputs, leaves, out, seed = _setup(case)
        forward = _arrays([*leaves, out])
        for t in leaves:
            t.register_hook((lambda g: g.mul_(2)) if in_place else (lambda g: g * 2))
        try:
            root, g = _root(out, seed, upstream)
            root.backward(g, retain_graph=True)
        except RuntimeError as err:  # a broadcast gradient: PyTorch refuses the write too
            assert in_place and errors.INTERNAL_OVERLAP in str(err), str(err)
            return
        _equal(_arrays([*leaves, out]), forward)
        grads = _copies(t.grad for t in leaves)
        for t in leaves:
            t.grad = None
        root, g = _root(out, seed, upstream)
        root.backward(g, retain_graph=True)  # the saved tensors are untouched
        results.append(grads + _copies(t.grad for t in leaves))
    reference, in_place_results = results
    _equal(in_place_results, reference)


@pytest.mark.parametrize("upstream", ["sum", "random"])
@pytest.mark.parametrize("case", PARAMS)
def test_step_records_share_nothing_of_the_graph(case, upstream):
    """What the stepper shows may be changed without changing the pass."""
    inputs, leaves, out, seed = _setup(case)
    forward = _arrays([*leaves, out])
    root, g = _root(out, seed, upstream)
    steps = list(backward_steps(root, g, retain_graph=True))
    grads = _copies(t.grad for t in leaves)
    shown = {}
    for step in steps:
        for t in (step.grad_in, *step.contributions, *step.grads_out):
            if isinstance(t, ak.Tensor):
                shown[id(t)] = t
    for t in shown.values():
        _write(t)
    _equal(_copies(t.grad for t in leaves), grads)
    _graph_untouched(leaves, out, forward, seed, upstream, grads)


# -- the cases that were seen to fail, named -----------------------------------------
def test_grad_of_a_product_does_not_alias_the_other_factor():
    x = ak.ones(3, requires_grad=True)
    w = ak.full((3,), 2.0, requires_grad=True)
    (gx,) = ak.autograd.grad((x * w).sum(), x)
    gx.mul_(0)
    assert w.tolist() == [2.0, 2.0, 2.0]


def test_clipping_hook_in_place_leaves_the_weight_alone():
    h = ak.ones(3, requires_grad=True) * 1
    w = ak.full((3,), 2.0)
    h.register_hook(lambda g: g.mul_(0.5))
    (h * w).sum().backward()
    assert w.tolist() == [2.0, 2.0, 2.0]


class _DoublesInPlace(ak.autograd.Function):
    """The identity, whose backward doubles the gradient it is given in place
    (allowed: the gradient handed to a backward is its own)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.mul_(2)


class _SplitsInPlace(ak.autograd.Function):
    """Two outputs; the backward writes into both gradients it is given."""

    @staticmethod
    def forward(ctx, x):
        return x.clone(), x.clone()

    @staticmethod
    def backward(ctx, ga, gb):
        return ga.mul_(2).add_(gb.mul_(3))


def test_a_custom_backward_writing_into_its_gradient_leaves_the_weight_alone():
    """``(y * w).sum()`` sends w's own values to y; the custom backward gets a copy."""
    x = ak.ones(3, requires_grad=True)
    w = ak.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (_DoublesInPlace.apply(x) * w).sum().backward()
    assert w.tolist() == [1.0, 2.0, 3.0]
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert w.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_multi_output_backward_writing_into_its_gradients_leaves_the_weights_alone():
    x = ak.ones(2, requires_grad=True)
    w, v = ak.tensor([1.0, 2.0]), ak.tensor([5.0, 7.0])
    a, b = _SplitsInPlace.apply(x)
    ((a * w).sum() + (b * v).sum()).backward()
    assert (w.tolist(), v.tolist()) == ([1.0, 2.0], [5.0, 7.0])
    assert x.grad.tolist() == [17.0, 25.0]


def test_hooks_and_retained_grads_of_non_leaves_get_their_own_arrays():
    """A non-leaf's hook, ``retain_grad`` and a node pre-hook see gradients that
    are the other factor's values under ``sum()``: each may be written."""
    w = ak.tensor([1.0, 2.0, 3.0])
    h = ak.ones(3, requires_grad=True) * 1
    h.retain_grad()
    (h * w).sum().backward()
    h.grad.zero_()
    assert w.tolist() == [1.0, 2.0, 3.0]
    k = ak.ones(3, requires_grad=True) * 1
    k.grad_fn.register_prehook(lambda gs: (gs[0].mul_(0),))
    (k * w).sum().backward()
    assert w.tolist() == [1.0, 2.0, 3.0]


def test_a_leaf_keeps_a_gradient_that_is_a_dead_temporary_without_a_copy():
    """The fast path's reason to exist: ``(x * tanh(u)).sum()`` gives x the
    tanh values, which nothing else holds once the pass is over; the leaf
    keeps that array (no copy), and it is the leaf's alone."""
    x = ak.tensor([0.5, -1.0, 2.0], requires_grad=True)
    u = ak.tensor([0.1, 0.2, 0.3], requires_grad=True)
    (x * u.tanh()).sum().backward()
    assert x.grad.tolist() == pytest.approx(np.tanh([0.1, 0.2, 0.3]).tolist())
    before = u.tolist()
    x.grad.zero_()
    assert u.tolist() == before and u.grad.tolist() != [0.0, 0.0, 0.0]


def test_accumulating_into_a_one_element_broadcast():
    x = ak.ones(1, 1, requires_grad=True)
    v = -x
    (v + v.sum()).backward(ak.ones(1, 1))
    assert x.grad.tolist() == [[-2.0]]
    x.grad.zero_()  # the leaf's gradient is its own, writeable memory
    assert x.grad.tolist() == [[0.0]]


def test_writing_into_the_gradient_of_sum_is_refused_in_pytorchs_words():
    x = ak.ones(3, requires_grad=True)
    (g,) = ak.autograd.grad(x.sum(), x)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        g.add_(1)
    assert g.tolist() == [1.0, 1.0, 1.0]  # and nothing was written
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        g[0] = 5.0


def test_expanded_tensor_refuses_writes_like_pytorch():
    e = ak.zeros(3).expand(2, 3)
    for write in (lambda: e.add_(1), lambda: e.zero_(), lambda: e.fill_(2.0),
                  lambda: e.copy_(ak.ones(2, 3)), lambda: e.mul_(2)):
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            write()
    assert e.tolist() == [[0.0] * 3] * 2


def test_double_backward_of_log_softmax():
    x = ak.tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True)
    y = ak.log_softmax(x, 1)
    (g,) = ak.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    assert x.grad.shape == (2, 3)


def test_same_as_pytorch():
    """The named cases give PyTorch's results, and a write into the gradient of
    ``sum()`` fails in both with the same class and words."""
    from fidelity import same_as_pytorch

    def products(torch):
        x = torch.ones(3, requires_grad=True)
        w = torch.full((3,), 2.0, requires_grad=True)
        (gx,) = torch.autograd.grad((x * w).sum(), x)
        gx.mul_(0)
        return w, gx

    def one_element(torch):
        x = torch.ones(1, 1, requires_grad=True)
        v = -x
        (v + v.sum()).backward(torch.ones(1, 1))
        x.grad.zero_()
        return x.grad

    def write_into_sum_gradient(torch):
        x = torch.ones(3, requires_grad=True)
        (g,) = torch.autograd.grad(x.sum(), x)
        g.add_(1)

    for case in (products, one_element, write_into_sum_gradient):
        same_as_pytorch(case)
