"""Broadcasting and reductions, property-based: random shapes, numpy references.

Broadcasting copies an input along new leading axes and along axes of size 1;
every copy receives its own share of the upstream gradient, so the input's
gradient is the sum over its copies and has exactly the input's shape.

The references here never call the engine's own unbroadcasting: ``unbroadcast``
numbers the input's elements, broadcasts the *numbers* with
``np.broadcast_to``, and adds each upstream entry into the element it came
from with ``np.bincount``.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import autograd_kit as ak

SETTINGS = settings(max_examples=50, deadline=None)
SEEDS = st.integers(0, 2**32 - 1)


def unbroadcast(upstream: np.ndarray, shape: tuple) -> np.ndarray:
    """The gradient of ``np.broadcast_to(x, upstream.shape)`` w.r.t. x of ``shape``."""
    size = int(np.prod(shape, dtype=int))
    owner = np.broadcast_to(np.arange(size).reshape(shape), upstream.shape)
    return np.bincount(owner.ravel(), weights=upstream.ravel(), minlength=size).reshape(shape)


def test_unbroadcast_reference_itself():
    g = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(unbroadcast(g, (3, 1)), g.sum(axis=(0, 2)).reshape(3, 1))
    np.testing.assert_array_equal(unbroadcast(g, (4,)), g.sum(axis=(0, 1)))
    np.testing.assert_array_equal(unbroadcast(g, ()), g.sum())
    np.testing.assert_array_equal(unbroadcast(g, (2, 3, 4)), g)


def leaf(a):
    return ak.tensor(np.asarray(a, dtype=np.float64), dtype=ak.float64, requires_grad=True)


def check_grad(t, shape, expected):
    assert t.grad is not None
    assert tuple(t.grad.shape) == tuple(shape)
    assert t.grad.dtype == ak.float64
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-10, atol=1e-12)


# -------------------------------------------------------- binary operations --
# For c = op(a, b) with a, b broadcast to c's shape: (c, dc/da, dc/db), all
# elementwise, computed on the broadcast arrays.
def _maximum_parts(a, b):
    # A tie splits the gradient in halves, as in PyTorch.
    wa = np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))
    return np.maximum(a, b), wa, 1.0 - wa


BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: (a + b, np.ones_like(a), np.ones_like(b))),
    "sub": (lambda a, b: a - b, lambda a, b: (a - b, np.ones_like(a), -np.ones_like(b))),
    "mul": (lambda a, b: a * b, lambda a, b: (a * b, b, a)),
    "div": (lambda a, b: a / b, lambda a, b: (a / b, 1 / b, -a / b ** 2)),
    "maximum": (ak.maximum, _maximum_parts),
}


def _draw_operands(name, shapes, seed):
    rng = np.random.default_rng(seed)
    if name == "maximum":  # small integers: many ties between a and b
        return [rng.integers(-2, 3, s).astype(np.float64) for s in shapes]
    a = rng.standard_normal(shapes[0])
    b = rng.standard_normal(shapes[1])
    if name == "div":
        b = np.where(b < 0, -1.0, 1.0) * (0.5 + np.abs(b))
    return [a, b]


def _binary_property(name, shapes, seed):
    ak_fn, parts = BINARY[name]
    sa, sb = shapes.input_shapes
    a_np, b_np = _draw_operands(name, (sa, sb), seed)
    upstream = np.random.default_rng(seed + 1).standard_normal(shapes.result_shape)

    a, b = leaf(a_np), leaf(b_np)
    out = ak_fn(a, b)
    out.backward(ak.tensor(upstream, dtype=ak.float64))

    A, B = np.broadcast_arrays(a_np, b_np)
    value, da, db = parts(A, B)
    assert tuple(out.shape) == shapes.result_shape
    np.testing.assert_allclose(out.detach().numpy(), value, rtol=1e-12)
    check_grad(a, sa, unbroadcast(upstream * da, sa))
    check_grad(b, sb, unbroadcast(upstream * db, sb))


SHAPE_PAIRS = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4)


@SETTINGS
@given(shapes=SHAPE_PAIRS, seed=SEEDS)
def test_add_broadcast_gradients(shapes, seed):
    _binary_property("add", shapes, seed)


@SETTINGS
@given(shapes=SHAPE_PAIRS, seed=SEEDS)
def test_sub_broadcast_gradients(shapes, seed):
    _binary_property("sub", shapes, seed)


@SETTINGS
@given(shapes=SHAPE_PAIRS, seed=SEEDS)
def test_mul_broadcast_gradients(shapes, seed):
    _binary_property("mul", shapes, seed)


@SETTINGS
@given(shapes=SHAPE_PAIRS, seed=SEEDS)
def test_div_broadcast_gradients(shapes, seed):
    _binary_property("div", shapes, seed)


@SETTINGS
@given(shapes=SHAPE_PAIRS, seed=SEEDS)
def test_maximum_broadcast_gradients_with_ties(shapes, seed):
    _binary_property("maximum", shapes, seed)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4, max_side=4),
       seed=SEEDS)
def test_where_broadcast_gradients(shapes, seed):
    sc, sa, sb = shapes.input_shapes
    rng = np.random.default_rng(seed)
    cond = rng.random(sc) < 0.5
    a_np, b_np = rng.standard_normal(sa), rng.standard_normal(sb)
    upstream = rng.standard_normal(shapes.result_shape)

    a, b = leaf(a_np), leaf(b_np)
    out = ak.where(ak.tensor(cond), a, b)
    out.backward(ak.tensor(upstream, dtype=ak.float64))

    C = np.broadcast_to(cond, shapes.result_shape)
    assert tuple(out.shape) == shapes.result_shape
    np.testing.assert_array_equal(out.detach().numpy(), np.where(cond, a_np, b_np))
    check_grad(a, sa, unbroadcast(np.where(C, upstream, 0.0), sa))
    check_grad(b, sb, unbroadcast(np.where(C, 0.0, upstream), sb))


@SETTINGS
@given(shapes=SHAPE_PAIRS, seed=SEEDS)
def test_gradients_add_up_when_an_input_is_used_twice(shapes, seed):
    """x * y + x: x's gradient is the sum of both paths, each summed to x's shape."""
    sx, sy = shapes.input_shapes
    rng = np.random.default_rng(seed)
    x_np, y_np = rng.standard_normal(sx), rng.standard_normal(sy)
    upstream = rng.standard_normal(shapes.result_shape)

    x, y = leaf(x_np), leaf(y_np)
    (x * y + x).backward(ak.tensor(upstream, dtype=ak.float64))

    full = np.broadcast_to(upstream, shapes.result_shape)
    Y = np.broadcast_to(y_np, shapes.result_shape)
    X = np.broadcast_to(x_np, shapes.result_shape)
    check_grad(x, sx, unbroadcast(full * Y, sx) + unbroadcast(full, sx))
    check_grad(y, sy, unbroadcast(full * X, sy))


# ---------------------------------------------------------------- reductions --
def _axes(dim, nd):
    """``dim`` as numpy axes: None and () mean every axis (PyTorch's convention)."""
    if dim is None or dim == ():
        return tuple(range(nd))
    return tuple(sorted(d % nd for d in ((dim,) if isinstance(dim, int) else dim)))


@st.composite
def reductions(draw, all_dims=False):
    """(shape, dim, keepdim, correction, seed).  ``dim`` is an int or a tuple,
    negative or not; with ``all_dims`` it is None (every dimension)."""
    shape = draw(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    nd = len(shape)
    axis = st.integers(-nd, nd - 1)
    dim = None if all_dims else draw(
        axis | st.lists(axis, min_size=1, max_size=nd, unique_by=lambda d: d % nd).map(tuple))
    return shape, dim, draw(st.booleans()), draw(st.sampled_from([0, 1, 2])), draw(SEEDS)


def _spread_over_ties(a, g, axes, correction):
    """amax: the gradient is shared equally by the elements equal to the maximum."""
    mask = a == a.max(axis=axes, keepdims=True)
    return g * mask / mask.sum(axis=axes, keepdims=True)


def _var_grad(a, g, axes, correction):
    n = np.prod([a.shape[d] for d in axes])
    return g * 2 * (a - a.mean(axis=axes, keepdims=True)) / (n - correction)


def _count(a, axes):
    return np.prod([a.shape[d] for d in axes])


# name: (engine call, numpy forward, numpy gradient given the upstream gradient
# broadcast back to the input's shape, input draw)
REDUCTIONS = {
    "sum": (lambda x, dim, keep, c: x.sum(dim, keepdim=keep),
            lambda a, axes, keep, c: np.sum(a, axis=axes, keepdims=keep),
            lambda a, g, axes, c: g,
            None),
    "mean": (lambda x, dim, keep, c: x.mean(dim, keepdim=keep),
             lambda a, axes, keep, c: np.mean(a, axis=axes, keepdims=keep),
             lambda a, g, axes, c: g / _count(a, axes),
             None),
    # amax takes () for "every dimension"; small integers make ties common
    "amax": (lambda x, dim, keep, c: x.amax(() if dim is None else dim, keepdim=keep),
             lambda a, axes, keep, c: np.max(a, axis=axes, keepdims=keep),
             _spread_over_ties,
             lambda rng, s: rng.integers(-2, 3, s).astype(np.float64)),
    "var": (lambda x, dim, keep, c: x.var(dim, keepdim=keep, correction=c),
            lambda a, axes, keep, c: np.var(a, axis=axes, ddof=c, keepdims=keep),
            _var_grad,
            None),
}


def _reduction_property(name, shape, dim, keepdim, correction, seed):
    ak_fn, np_fn, grad_fn, draw = REDUCTIONS[name]
    rng = np.random.default_rng(seed)
    x_np = draw(rng, shape) if draw else rng.standard_normal(shape)
    axes = _axes(dim, len(shape))
    if name == "var":
        assume(_count(x_np, axes) > correction)
    expected = np_fn(x_np, axes, keepdim, correction)
    upstream = rng.standard_normal(expected.shape)

    x = leaf(x_np)
    out = ak_fn(x, dim, keepdim, correction)
    assert tuple(out.shape) == expected.shape, "forward shape differs from numpy's"
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    out.backward(ak.tensor(upstream, dtype=ak.float64))
    kept = upstream if keepdim else np.expand_dims(upstream, axes)
    g = np.broadcast_to(kept, shape)
    check_grad(x, shape, grad_fn(x_np, g, axes, correction))


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(case=reductions())
def test_reduction_over_some_dims(name, case):
    _reduction_property(name, *case)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(case=reductions(all_dims=True))
def test_reduction_over_all_dims(name, case):
    _reduction_property(name, *case)


def test_sum_all_keepdim_keeps_every_dimension():
    """The smallest failing example of the sum property, spelled out."""
    x = leaf(np.arange(6.0).reshape(2, 3))
    out = x.sum(None, keepdim=True)
    assert tuple(out.shape) == (1, 1)
    out.backward(ak.tensor([[2.0]], dtype=ak.float64))
    check_grad(x, (2, 3), np.full((2, 3), 2.0))
