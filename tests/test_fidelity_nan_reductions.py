"""nansum and nanmean as PyTorch has them: NaNs left out of the value, a zero
gradient where the input is NaN, the same nodes (``NansumBackward0``; nanmean
divides it by the count, ``DivBackward0``), the same dtypes and refusals.
Central differences (which need finite inputs) are in op_cases.py."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from fidelity_support import graph_of

torch = pytest.importorskip("torch")

NAN = float("nan")
VALUES = np.array([[1.0, NAN, 3.0], [4.0, 5.0, NAN], [NAN, NAN, NAN]], dtype=np.float32)
CALLS = {
    "nansum": lambda lib, x: x.nansum(),
    "nansum(1)": lambda lib, x: x.nansum(1),
    "nansum(0, keepdim)": lambda lib, x: lib.nansum(x, 0, keepdim=True),
    "nansum((0, 1))": lambda lib, x: lib.nansum(x, dim=(0, 1)),
    "nansum(dtype=float64)": lambda lib, x: x.nansum(dtype=lib.float64),
    "nanmean": lambda lib, x: x.nanmean(),
    "nanmean(1)": lambda lib, x: x.nanmean(1),
    "nanmean(0, keepdim)": lambda lib, x: lib.nanmean(x, 0, keepdim=True),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_values_gradients_and_graphs_are_pytorchs(name):
    made = []
    for lib in (torch, ak):
        x = lib.tensor(VALUES, requires_grad=True)
        y = CALLS[name](lib, x)
        up = lib.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)),
                        dtype=y.dtype, requires_grad=True)
        g, = lib.autograd.grad(y, x, up, create_graph=True)
        made.append((graph_of(y), graph_of(g), str(y.dtype).split(".")[-1],
                     y.detach().numpy(), g.detach().numpy()))
    (tf, tg, tdt, ty, tgrad), (kf, kg, kdt, ky, kgrad) = made
    assert (kf, kg, kdt) == (tf, tg, tdt)
    np.testing.assert_allclose(ky, ty, rtol=1e-6)       # (NaN where a row is all NaN)
    np.testing.assert_allclose(kgrad, tgrad, rtol=1e-6)
    assert not np.isnan(kgrad).any() or name.startswith("nanmean")


@pytest.mark.parametrize("source", ["lib.tensor([1, 2]).nanmean()",
                                    "lib.tensor([1., 2.], requires_grad=True).nansum("
                                    "dtype=lib.int64)",
                                    "lib.tensor([True, False]).nansum()",
                                    "lib.tensor([1, 2]).nansum(dtype=lib.float32)"])
def test_integer_inputs_and_dtypes_are_pytorchs(source):
    said = []
    for lib in (torch, ak):
        try:
            out = eval(source, {"lib": lib})
            said.append((str(out.dtype).split(".")[-1], out.tolist()))
        except RuntimeError as err:
            said.append(str(err))
    assert said[0] == said[1]
