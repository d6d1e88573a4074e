"""The shortcut of ``add_``/``sub_``/``mul_``/``div_`` holds to the general path.

An update that nothing records (an optimizer step under ``no_grad``, a tensor
that does not require grad) writes straight into the tensor's memory with the
array module's ufunc (``ops/inplace.py``, ``_direct``).  Whatever the operand --
a Python number (bool, int or float, huge or tiny), a tensor of any dtype, 0-d
or broadcast, and any ``alpha`` -- the result must be what the general path
gives, bit for bit, or the same refusal; a shortcut may only decline.  Found by
this test: a float32 tensor plus an int64 or float64 operand was computed in
float64 and rounded once more (``t.add_(int64 16777217)`` gave 16777218 where
the general path and PyTorch give 16777216), and ``sub_`` of a bool tensor
was accepted where PyTorch refuses it.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import autograd_kit as ak
from autograd_kit.ops import arith
from autograd_kit.ops.inplace import inplace

OPS = {"add_": arith.add, "sub_": arith.sub, "mul_": arith.mul, "div_": arith.div}
SELF_DTYPES = ["float16", "float32", "float64"]
OTHER_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]

numbers = st.one_of(st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                    st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([16777217, 2 ** 53 + 1, 65505, 1e-40, 0.1]))


@st.composite
def operands(draw):
    kind = draw(st.sampled_from(["number", "tensor", "0-d tensor"]))
    if kind == "number":
        return draw(numbers)
    dtype = draw(st.sampled_from(OTHER_DTYPES))
    shape = (3,) if kind == "tensor" else ()
    if dtype == "bool":
        values = draw(st.lists(st.booleans(), min_size=3, max_size=3))
    elif dtype.startswith("float"):
        values = draw(st.lists(st.floats(width=int(dtype[5:]), allow_nan=True,
                                         allow_infinity=True), min_size=3, max_size=3))
    else:
        info = np.iinfo(dtype)
        values = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=3,
                               max_size=3))
    return ak.tensor(np.array(values[:3] if shape else values[0], dtype=dtype))


def outcome(fn):
    """(dtype, bits of the values, version) or (exception class, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = fn()
        except Exception as err:  # noqa: BLE001 - the refusal is the outcome
            return type(err).__name__, str(err).splitlines()[0]
    return str(t.dtype), t.numpy().tobytes(), t._version


@settings(max_examples=400, deadline=None)
@given(op=st.sampled_from(list(OPS)), dtype=st.sampled_from(SELF_DTYPES), other=operands(),
       alpha=st.sampled_from([None, 1, 2, 0.5, -3]))
@example(op="add_", dtype="float32", other=ak.tensor(16777217), alpha=None)
@example(op="sub_", dtype="float64", other=ak.tensor([True, False, True]), alpha=2)
def test_the_shortcut_gives_what_the_general_path_gives(op, dtype, other, alpha):
    if alpha is not None and op not in ("add_", "sub_"):
        alpha = None
    kwargs = {} if alpha is None else {"alpha": alpha}
    start = np.array([1.5, -2.25, 3.0], dtype=dtype)

    def shortcut():
        t = ak.tensor(start.copy())
        with ak.no_grad():
            return getattr(t, op)(other, **kwargs)

    def general():
        t = ak.tensor(start.copy())
        with ak.no_grad():
            return inplace(t, lambda old, o: OPS[op](old, o, **kwargs), other)

    assert outcome(shortcut) == outcome(general)


@pytest.mark.parametrize("op", list(OPS))
def test_the_shortcut_matches_pytorch_on_mixed_dtypes(op):
    torch = pytest.importorskip("torch")
    for other_dtype in OTHER_DTYPES:
        for shape in ((), (3,)):
            pick = ([True, False, True] if other_dtype == "bool" else
                    [3, 7, 5] if other_dtype in ("int8", "uint8") else
                    [0.1, 3.0, 7.0] if other_dtype.startswith("float") else [16777217, 3, 7])
            values = np.array(pick[:3] if shape else pick[0], dtype=other_dtype)
            got = []
            for lib in (ak, torch):
                t = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float32)
                with lib.no_grad():
                    try:
                        getattr(t, op)(lib.tensor(values))
                        got.append(t.numpy().tobytes())
                    except RuntimeError as err:
                        got.append(str(err))
            assert got[0] == got[1], (op, other_dtype, shape)
