"""gather, scatter and scatter_add as PyTorch has them: values, gradients and
nodes over a grid of shapes, dims, dtypes and index layouts, and the errors of
malformed calls (index dtype, dimensions, sizes, bounds, src dtype) in
PyTorch's words.  The identities at the top need no oracle: they hold for the
kit alone, so they also run where PyTorch is not installed."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import autograd_kit as ak


def _index(rng, shape, size):
    return rng.integers(0, size, shape)


# ------------------------------------------------------ identities, no oracle --
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_and_scatter_add_are_transposes(dim):
    """<gather(x), g> == <x, scatter_add(0, g)> for every x and g: the backward
    of one is the other, so the gradient of a gather is a scatter_add of g."""
    rng = np.random.default_rng(dim + 5)
    x = ak.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    idx = ak.tensor(_index(rng, (2, 3), x.shape[dim]))
    g = ak.tensor(rng.standard_normal((2, 3)))
    lhs = (x.gather(dim, idx) * g).sum()
    rhs = (x * ak.zeros(3, 4, dtype=ak.float64).scatter_add(dim, idx, g)).sum()
    assert lhs.item() == pytest.approx(rhs.item())
    lhs.backward()
    np.testing.assert_allclose(x.grad.numpy(), ak.zeros(3, 4, dtype=ak.float64)
                               .scatter_add(dim, idx, g).numpy())


def test_scatter_overwrites_and_its_gradients_say_so():
    """The written places of x get no gradient; each src element gets the
    gradient of the place it went to (also when two went to one place)."""
    x = ak.arange(8.0).reshape(2, 4).requires_grad_()
    s = ak.tensor([[10.0, 20.0], [30.0, 40.0]], requires_grad=True)
    idx = ak.tensor([[1, 1], [3, 0]])
    y = x.scatter(1, idx, s)
    assert y[1].tolist() == [40.0, 5.0, 6.0, 30.0]
    assert y[0, 1].item() in (10.0, 20.0) and y[0, 0].item() == 0.0
    w = ak.arange(1.0, 9.0).reshape(2, 4)
    (y * w).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 3.0, 4.0], [0.0, 6.0, 7.0, 0.0]]
    assert s.grad.tolist() == [[2.0, 2.0], [8.0, 5.0]]


def test_a_src_bigger_than_its_index_has_no_gradient_shape():
    """Only the block of src the index covers is written; PyTorch's backward
    then returns a gradient of the index's shape and refuses it, in words."""
    x = ak.zeros(2, 4, dtype=ak.float64, requires_grad=True)
    s = ak.ones(2, 3, dtype=ak.float64, requires_grad=True)
    y = x.scatter_add(1, ak.tensor([[0, 1], [2, 3]]), s)
    assert y.tolist() == [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    with pytest.raises(RuntimeError, match=r"Function ScatterAddBackward0 returned an invalid "
                       r"gradient at index 1 - got \[2, 2\] but expected shape compatible "
                       r"with \[2, 3\]"):
        y.sum().backward()


def test_failed_scatter_in_place_changes_nothing():
    x = ak.arange(6.0).reshape(2, 3)
    before = x.tolist(), x._version
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.scatter_(1, ak.tensor([[0, 3]]), 1.0)
    assert (x.tolist(), x._version) == before


def test_max_median_sort_send_the_gradient_back_by_scatter():
    """With create_graph, the gradient of a value-choosing op is a scatter into
    zeros; its own gradient (a gather) is right too."""
    rng = np.random.default_rng(3)
    for f in (lambda x: x.max(1).values, lambda x: x.median(0, keepdim=True).values,
              lambda x: x.sort(1, descending=True).values):
        x = ak.tensor(rng.permutation(12).reshape(3, 4).astype(float), requires_grad=True)
        y = f(x)
        g = ak.tensor(rng.standard_normal(tuple(y.shape)), requires_grad=True)
        (gx,) = ak.autograd.grad(y, x, g, create_graph=True)
        assert gx.grad_fn.name() == "ScatterBackward0"
        assert ak.autograd.gradcheck(lambda g: ak.autograd.grad(f(x), x, g, create_graph=True)[0],
                                     (g,))


# ------------------------------------------------------------ against PyTorch --
torch = pytest.importorskip("torch")

DTYPES = ["float64", "float32", "int64"]
LAYOUTS = [  # (input shape, dim, index shape, src shape)
    ((3, 4), 1, (3, 4), (3, 4)), ((3, 4), 0, (2, 4), (2, 4)), ((3, 4), 1, (2, 2), (2, 3)),
    ((2, 3, 4), -1, (2, 3, 2), (2, 3, 2)), ((2, 3, 4), 1, (1, 5, 2), (2, 5, 4)),
    ((5,), 0, (7,), (7,)), ((), 0, (), ()), ((3, 4), 1, (0, 2), (1, 2)), ((4,), 0, (0,), (0,)),
]


def _run(lib, op, layout, dtype, seed):
    shape, dim, ishape, sshape = layout
    rng = np.random.default_rng(seed)
    size = shape[dim] if shape else 1
    x_np = rng.standard_normal(shape) * 4
    s_np = rng.standard_normal(sshape) * 4
    idx = lib.tensor(_index(rng, ishape, size))
    floats = dtype != "int64"
    x = lib.tensor(x_np, dtype=getattr(lib, dtype), requires_grad=floats)
    s = lib.tensor(s_np, dtype=getattr(lib, dtype), requires_grad=floats)
    try:
        if op == "gather":
            y = x.gather(dim, idx)
        elif op == "scatter":
            y = x.scatter(dim, idx, s)
        elif op == "scatter_value":
            y = lib.scatter(x, dim, idx, -2.5)
        else:
            y = lib.scatter_add(x, dim, idx, s)
    except Exception as err:  # noqa: BLE001 - the words are part of the behaviour
        return type(err).__name__, str(err)
    out = [list(y.shape), str(y.dtype).split(".")[-1], y.detach().numpy().tolist(),
           None if y.grad_fn is None else type(y.grad_fn).__name__]
    if floats and y.numel():
        w = lib.tensor(rng.standard_normal(tuple(y.shape)), dtype=getattr(lib, dtype))
        inputs = (x, s) if op in ("scatter", "scatter_add") else (x,)
        try:
            grads = lib.autograd.grad((y * w).sum(), inputs, allow_unused=True)
            out.append([None if g is None else np.round(g.numpy(), 5).tolist() for g in grads])
        except RuntimeError as err:
            out.append(str(err))
    return out


def _same(ours, theirs):
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(np.asarray(ours[2], dtype=float),
                               np.asarray(theirs[2], dtype=float), rtol=1e-6)
    assert ours[3] == theirs[3]
    if len(theirs) > 4:
        assert type(ours[4]) is type(theirs[4])
        if isinstance(theirs[4], str):
            assert ours[4] == theirs[4]
        else:
            for a, b in zip(ours[4], theirs[4]):
                np.testing.assert_allclose(np.asarray(a, dtype=float),
                                           np.asarray(b, dtype=float), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op, layout, dtype", [
    pytest.param(op, layout, dtype, id=f"{op}-{i}-{dtype}")
    for op, (i, layout), dtype in itertools.product(
        ["gather", "scatter", "scatter_value", "scatter_add"], enumerate(LAYOUTS), DTYPES)])
def test_values_gradients_and_nodes_are_pytorchs(op, layout, dtype):
    """A scatter whose index names a place twice is left out (PyTorch leaves
    which value wins unspecified); scatter_add and gather repeat freely."""
    for seed in range(3):
        theirs = _run(torch, op, layout, dtype, seed)
        if op == "scatter" and not isinstance(theirs, tuple) and _has_repeats(layout, seed):
            continue
        _same(_run(ak, op, layout, dtype, seed), theirs)


def _has_repeats(layout, seed):
    shape, dim, ishape, _ = layout
    rng = np.random.default_rng(seed)
    idx = _index(rng, ishape, shape[dim] if shape else 1)
    if idx.ndim == 0 or idx.size == 0:
        return False
    moved = np.moveaxis(idx, dim, -1).reshape(-1, idx.shape[dim])
    return any(len(set(row)) < len(row) for row in moved)


MALFORMED = {
    "float index": "x.gather(1, lib.tensor([[0.0, 1.0]]))",
    "int32 index": "x.gather(1, lib.tensor([[0, 1]], dtype=lib.int32)).tolist()",
    "index of fewer dims": "x.gather(1, lib.tensor([0, 1]))",
    "index too wide": "x.gather(0, lib.zeros(4, 5, dtype=lib.long))",
    "index out of range": "x.gather(1, lib.tensor([[5]]))",
    "negative index": "x.gather(1, lib.tensor([[-1]]))",
    "dim out of range": "x.gather(2, lib.tensor([[0]]))",
    "scatter float index": "x.scatter(1, lib.tensor([[0.0]]), s)",
    "scatter src dtype": "x.scatter(1, lib.tensor([[0]]), s.float())",
    "scatter index of fewer dims": "x.scatter(1, lib.tensor([0]), s)",
    "scatter src of fewer dims": "x.scatter(1, lib.zeros(2, 2, dtype=lib.long), s.view(-1))",
    "scatter 0-d src": "x.scatter(1, lib.zeros(2, 2, dtype=lib.long), s.sum())",
    "scatter index bigger than src": "x.scatter(1, lib.zeros(3, 2, dtype=lib.long), s)",
    "scatter index too wide": "x.scatter(1, lib.zeros(4, 2, dtype=lib.long), 1.0)",
    "scatter out of range": "x.scatter(1, lib.tensor([[7]]), 1.0)",
    "scatter_add src dtype": "x.scatter_add(1, lib.tensor([[0]]), s.float())",
    "scatter_add out of range": "x.scatter_add(0, lib.tensor([[3]]), s)",
    "scatter_ into int": "lib.zeros(2, 2, dtype=lib.long).scatter_(1, lib.tensor([[1]]), 2.5)"
                         ".tolist()",
    "scatter_ into a leaf": "x.scatter_(1, lib.tensor([[0]]), 1.0)",
}


@pytest.mark.parametrize("code", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_calls_fail_in_pytorchs_words(code):
    def outcome(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        s = lib.tensor(np.ones((2, 3)), requires_grad=True)
        try:
            return eval(code, {"lib": lib, "x": x, "s": s})  # noqa: S307 - the table's own code
        except Exception as err:  # noqa: BLE001 - the kit's errors subclass Python's
            return next(c for c in type(err).__mro__ if c.__module__ == "builtins").__name__, \
                str(err)
    assert outcome(ak) == outcome(torch)
