"""Reductions given a ``dtype=``: the graphs of their gradients are PyTorch's.

``x.prod(dtype=float64)`` of a float32 ``x`` computes in float64, and so must
its gradient: PyTorch's formula converts ``self`` to the gradient's dtype first
(``self.to(grad.scalar_type())``, a ``ToCopyBackward0`` under create_graph),
and the engine converts the result back to float32 (another one).  Without the
first conversion the division inside the formula ran in float32 (a 0-d float64
result does not widen a float32 tensor), which changed second derivatives of
tiny inputs.  ``cumprod`` converts the gradient to ``self``'s dtype instead, and
``softmax``/``log_softmax`` convert their input before they run (a forward
``ToCopyBackward0``).  Each case: the forward graph, the first derivative's
graph (create_graph) and values, and a second derivative, against PyTorch.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from fidelity_support import graph_of as graph

torch = pytest.importorskip("torch")


CASES = {
    "prod": lambda lib, x: x.prod(dtype=lib.float64),
    "prod(dim)": lambda lib, x: x.prod(1, dtype=lib.float64),
    "cumprod": lambda lib, x: x.cumprod(1, dtype=lib.float64),
    "softmax": lambda lib, x: x.softmax(1, dtype=lib.float64),
    "log_softmax": lambda lib, x: x.log_softmax(1, dtype=lib.float64),
    "F.softmax": lambda lib, x: lib.nn.functional.softmax(x, 1, dtype=lib.float64),
    "sum": lambda lib, x: x.sum(dtype=lib.float64),
    "cumsum": lambda lib, x: x.cumsum(1, dtype=lib.float64),
}
INPUTS = {
    "no zero": [[0.5, -1.25, 2.0], [1.5, 3.0, -0.75]],
    "a zero": [[0.5, -1.25, 2.0], [0.0, 3.0, -0.75]],
    "tiny": [[0.0084164, -0.00463826, -0.00666295], [-0.00580305, 0.0031, 0.0077]],
}


@pytest.mark.parametrize("values", list(INPUTS), ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_the_gradient_of_a_reduction_with_a_dtype_is_pytorchs(name, values):
    a = np.array(INPUTS[values], dtype=np.float32)
    made = []
    for lib in (torch, ak):
        x = lib.tensor(a, requires_grad=True)
        y = CASES[name](lib, x)
        up = lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)))
        g, = lib.autograd.grad(y, x, up, create_graph=True)
        second = None
        if g.requires_grad:
            w = lib.tensor(np.linspace(-1.0, 1.0, a.size, dtype=np.float32).reshape(a.shape))
            second, = lib.autograd.grad((g * w).sum(), x, allow_unused=True)
        made.append((graph(y), graph(g), str(g.dtype).split(".")[-1], g.detach().numpy(),
                     None if second is None else second.numpy()))
    (tf, tg, tdt, tv, ts), (kf, kg, kdt, kv, ks) = made
    assert kf == tf
    assert kg == tg and kdt == tdt
    np.testing.assert_allclose(kv, tv, rtol=1e-6)
    assert (ks is None) == (ts is None)
    if ks is not None:
        np.testing.assert_allclose(ks, ts, rtol=1e-5, atol=1e-6)
