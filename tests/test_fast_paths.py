"""Shortcuts in the backward formulas, held to the plain computation they replace.

``formula_env.kept(g, mask)`` multiplies big arrays by the mask instead of
choosing with ``where`` (several times faster on the CPU) and falls back to the
choice when the product is not finite.  For any gradient -- infinities and NaNs anywhere,
any float dtype, any mask -- it must give exactly what the choice gives.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograd_kit.ops.formula_env import kept

FLOATS = st.sampled_from([np.float16, np.float32, np.float64])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=FLOATS)
def test_kept_is_the_choice(data, dtype):
    shape = data.draw(st.sampled_from([(), (3,), (2, 3), (70, 70), (4, 33, 40)]))
    g = data.draw(hnp.arrays(dtype, shape, elements=st.floats(
        allow_nan=True, allow_infinity=True, width=np.finfo(dtype).bits)))
    mask = data.draw(hnp.arrays(np.bool_, shape))
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
