"""``a @ b`` and ``nn.functional.linear`` record PyTorch's graph, node for node.

PyTorch's ``matmul`` picks one of four kernels and records the reshapes around
it: a stack of matrices is folded into one matrix when the other operand
requires grad or when folding needs no copy, a matrix times a stack is folded
after transposing both sides, other stacks are broadcast into a ``bmm``, and a
batch of one that requires grad is squeezed first.  ``linear`` folds a
contiguous input with a one-row bias into one ``addmm``.  Each case below is
built in both libraries from the same numbers and compared: the graph (node
names, edge by edge), the value, both gradients, and the words of a refusal
(shapes that do not fit, mixed dtypes), which depend on the kernel reached.
The reshape of a tensor that cannot be viewed is a clone and an unsafe view.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import autograd_kit as ak
from fidelity_support import graph_of as graph

torch = pytest.importorskip("torch")


#: shapes of a and b; ("T", *shape) is made in that shape, then transposed (.mT)
SHAPES = [((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)),
          ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)),
          ((2, 2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((4,), (4, 5)),
          ((3, 4), (4,)), ((4,), (4,)), (("T", 2, 4, 3), (4, 5)), (("T", 2, 4, 3), (4,)),
          ((3, 4), ("T", 2, 5, 4)), ((2, 0, 4), (4, 5))]


def layout(spec) -> tuple:
    """The shape the values are made in (``("T", *shape)``: made so, then .mT)."""
    return tuple(spec[1:]) if spec[0] == "T" else tuple(spec)


def make(lib, spec, values, requires):
    t = lib.tensor(values, dtype=lib.float64)
    if requires:
        t.requires_grad_()
    return t.mT if spec[0] == "T" else t


def leaf_of(t):
    return t if t.is_leaf else t.grad_fn.next_functions[0][0].variable


CASES = [pytest.param(sa, sb, ra, rb, id=f"{sa}@{sb}-{int(ra)}{int(rb)}")
         for (sa, sb), (ra, rb) in itertools.product(SHAPES, [(1, 1), (1, 0), (0, 1)])]


@pytest.mark.parametrize("sa,sb,ra,rb", CASES)
def test_matmul_records_pytorchs_graph(sa, sb, ra, rb):
    rng = np.random.default_rng(len(str((sa, sb))))
    av, bv = rng.standard_normal(layout(sa)), rng.standard_normal(layout(sb))
    made = {}
    for lib in (ak, torch):
        a, b = make(lib, sa, av, ra), make(lib, sb, bv, rb)
        out = a @ b
        made[lib] = (a, b, out, graph(out))
    (ka, kb, kout, kgraph), (ta, tb, tout, tgraph) = made[ak], made[torch]
    assert kgraph == tgraph
    np.testing.assert_allclose(kout.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(tuple(kout.shape))
    (kout * ak.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    for k, t in ((ka, ta), (kb, tb)):
        if t.requires_grad:
            kl, tl = leaf_of(k), leaf_of(t)
            np.testing.assert_allclose(kl.grad.numpy(), tl.grad.numpy(), rtol=1e-10, atol=1e-12)


MISFITS = [((2, 3, 4), (5, 6)), ((2, 3, 4), (5,)), ((5,), (2, 4, 6)), ((3, 5), (2, 4, 6)),
           ((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (3, 4, 6)), ((1, 3, 5), (2, 4, 6)),
           (("T", 2, 4, 3), (5, 6)), ((2, 2, 3, 4), (3, 4, 5))]


@pytest.mark.parametrize("sa,sb", MISFITS, ids=str)
@pytest.mark.parametrize("ra,rb", [(1, 1), (0, 0), (1, 0), (0, 1)])
def test_shapes_that_do_not_fit_are_refused_in_pytorchs_words(sa, sb, ra, rb):
    words = []
    for lib in (ak, torch):
        a = make(lib, sa, np.ones(layout(sa)), ra)
        b = make(lib, sb, np.ones(layout(sb)), rb)
        with pytest.raises(RuntimeError) as info:
            a @ b
        words.append(str(info.value))
    assert words[0] == words[1]


@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                                   ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                                   ((2, 3, 4), (2, 4, 5))], ids=str)
@pytest.mark.parametrize("kinds", [("float32", "float64"), ("bool", "float64"),
                                   ("bool", "bool"), ("int64", "int64")], ids=str)
@pytest.mark.parametrize("ra,rb", [(0, 0), (0, 1), (1, 0)])
def test_dtype_refusals_name_the_kernel_reached(sa, sb, kinds, ra, rb):
    words = []
    for lib in (ak, torch):
        tensors = []
        for shape, kind, req in ((sa, kinds[0], ra), (sb, kinds[1], rb)):
            t = lib.ones(*shape, dtype=getattr(lib, kind))
            if req and kind.startswith("float"):
                t.requires_grad_()
            tensors.append(t)
        try:
            tensors[0] @ tensors[1]
            words.append(None)
        except (RuntimeError, NotImplementedError) as err:
            words.append((type(err).__name__, str(err)))
    assert words[0] == words[1]


LINEAR = [((2, 3, 4), (5,)), ((2, 2, 3, 4), (5,)), ((4,), (5,)), ((3, 4), (5,)),
          ((2, 3, 4), (1, 5)), ((2, 3, 4), ()), ((2, 3, 4), None), (("T", 2, 4, 3), (5,))]


@pytest.mark.parametrize("sx,sbias", LINEAR, ids=str)
def test_linear_records_pytorchs_graph(sx, sbias):
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((2, 4, 3) if sx[0] == "T" else sx)
    wv, bv = rng.standard_normal((5, 4)), rng.standard_normal(sbias or ())
    made = []
    for lib in (ak, torch):
        x = lib.tensor(xv, requires_grad=True)
        x_in = x.mT if sx[0] == "T" else x
        w = lib.tensor(wv, requires_grad=True)
        b = None if sbias is None else lib.tensor(bv, requires_grad=True)
        y = lib.nn.functional.linear(x_in, w, b)
        made.append((graph(y), y.detach().numpy(), y._version))
    assert made[0][0] == made[1][0] and made[0][2] == made[1][2]
    np.testing.assert_allclose(made[0][1], made[1][1], rtol=1e-12)


def test_a_reshape_that_copies_is_a_clone_and_an_unsafe_view():
    for lib in (ak, torch):
        x = lib.ones(2, 3, 4, requires_grad=True)
        y = x.transpose(1, 2).reshape(-1, 3)
        assert [n for n, _ in graph(y)] == ["UnsafeViewBackward0", "CloneBackward0",
                                            "TransposeBackward0",
                                            "torch::autograd::AccumulateGrad"]
