"""Shortcuts in the backward formulas, held to the plain computation they replace.

``formula_env.kept(g, mask)`` multiplies big arrays by the mask instead of
choosing with ``where`` (several times faster on the CPU) and falls back to the
choice when the product is not finite.  For any gradient -- infinities and NaNs anywhere,
any float dtype, any mask -- it must give exactly what the choice gives.

``backend.keep_into(g, mask)`` is the same choice written into g, which relu's
backward uses when the engine owns the incoming gradient (a big array nobody
else holds).  It is held to the choice in the same way, and relu's backward
through the engine -- in place and not -- to PyTorch's threshold_backward.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autograd_kit as ak
from autograd_kit import backend
from autograd_kit.engine import backward_steps
from autograd_kit.ops.formula_env import kept

FLOATS = st.sampled_from([np.float16, np.float32, np.float64])


def _gradient_and_mask(data, dtype):
    """Any gradient (infinities and NaNs anywhere) of a drawn shape, and a mask."""
    shape = data.draw(st.sampled_from([(), (3,), (2, 3), (70, 70), (4, 33, 40)]))
    g = data.draw(hnp.arrays(dtype, shape, elements=st.floats(
        allow_nan=True, allow_infinity=True, width=np.finfo(dtype).bits)))
    return g, data.draw(hnp.arrays(np.bool_, shape))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=FLOATS)
def test_kept_is_the_choice(data, dtype):
    g, mask = _gradient_and_mask(data, dtype)
    want = np.where(mask, g, dtype(0))
    got = kept(g, mask)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # (NaN where NaN, signs of zeros aside)


def test_kept_does_not_write_into_g_and_warns_of_nothing():
    import warnings
    g = np.tile([1.0, np.inf, -2.0], 5000)
    before = g.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (0 * inf must not warn the learner)
        out = kept(g, np.tile([True, False, True], 5000))
    assert out[:3].tolist() == [1.0, 0.0, -2.0]
    np.testing.assert_array_equal(g, before)
    assert not np.shares_memory(out, g)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=FLOATS)
def test_keep_into_is_the_choice_written_into_g(data, dtype):
    g, mask = _gradient_and_mask(data, dtype)
    want = np.where(mask, g, dtype(0))
    got = backend.keep_into(g, mask)
    assert got is g or not g.shape  # (written in place)
    np.testing.assert_array_equal(got, want)


def _relu_then(x_values, after):
    """x's gradient through relu then ``after``, by a plain backward (where the
    engine may write into the incoming gradient) and by the stepper's pass."""
    grads = []
    for plain in (True, False):
        x = ak.tensor(x_values, requires_grad=True)
        root = after(x.relu()).sum()
        if plain:
            root.backward()
        else:
            list(backward_steps(root))
        grads.append(x.grad.numpy())
    return grads


def test_relu_backward_in_place_gives_zeros_where_the_incoming_gradient_is_infinite():
    """sqrt's gradient at relu's zeros is inf: relu's backward must give 0 there,
    not inf * 0 = NaN, whether it writes into that gradient or not."""
    x = np.tile(np.array([0.0, 4.0, -1.0, 1.0, np.nan], dtype=np.float32), 20000)
    want = np.where(x > 0, 0.5 / np.sqrt(np.where(x > 0, x, 1)), 0).astype(np.float32)
    want[np.isnan(x)] = np.nan  # (relu(NaN) is NaN: PyTorch passes its gradient on)
    for got in _relu_then(x, lambda y: y.sqrt()):
        np.testing.assert_array_equal(got, want)


def test_relu_backward_in_place_equals_the_product_on_finite_gradients():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(100_000).astype(np.float32)
    w = rng.standard_normal(100_000).astype(np.float32)
    plain, stepped = _relu_then(x, lambda y: y * ak.tensor(w))
    np.testing.assert_array_equal(plain, stepped)
    np.testing.assert_array_equal(plain, np.where(x > 0, w, 0))


def test_relu_backward_in_place_on_each_device(device):
    """The same on the GPU path, where the zeros are written without a sum."""
    x = np.tile(np.array([0.0, 4.0, -1.0, 1.0], dtype=np.float32), 20000)
    grads = []
    for where in ("cpu", device):
        t = ak.tensor(x, device=where, requires_grad=True)
        t.relu().sqrt().sum().backward()
        grads.append(t.grad.cpu().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    assert not np.isnan(grads[1]).any()
