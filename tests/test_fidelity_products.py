"""prod and cumprod with zero factors: the gradient is the product of the
*other* factors, which no division can give.  Checked without an oracle (the
definition, summed term by term, in exact fractions) and against PyTorch at
the edges where inf and NaN meet a zero."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import autograd_kit as ak

ROWS = [
    [1.5, -0.5, 0.0, 2.0, 0.75], [0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [0.0, 0.0, 1.5],
    [1.0, 0.0, 2.0, 0.0, 4.0], [0.5, 2.0, -1.0, 4.0], [0.0], [3.0],
]


def _by_definition(x, g):
    """d/dx_k of Σ_j g_j (x_0 ... x_j) = Σ_{j ≥ k} g_j Π_{i ≤ j, i ≠ k} x_i."""
    xs, gs = [Fraction(v) for v in x], [Fraction(v) for v in g]
    out = []
    for k in range(len(xs)):
        total = Fraction(0)
        for j in range(k, len(xs)):
            term = gs[j]
            for i in range(j + 1):
                if i != k:
                    term *= xs[i]
            total += term
        out.append(float(total))
    return out


@pytest.mark.parametrize("row", ROWS, ids=[str(r) for r in ROWS])
@pytest.mark.parametrize("create_graph", [False, True])
def test_cumprod_gradient_is_the_definition(row, create_graph):
    g = [0.5 * (i + 1) for i in range(len(row))]
    x = ak.tensor(row, dtype=ak.float64, requires_grad=True)
    (gx,) = ak.autograd.grad(x.cumprod(0), x, ak.tensor(g, dtype=ak.float64),
                             create_graph=create_graph)
    assert gx.tolist() == pytest.approx(_by_definition(row, g))


@pytest.mark.parametrize("row", ROWS, ids=[str(r) for r in ROWS])
def test_prod_gradient_is_the_product_of_the_others(row):
    for create_graph in (False, True):
        x = ak.tensor(row, dtype=ak.float64, requires_grad=True)
        (gx,) = ak.autograd.grad(x.prod(), x, create_graph=create_graph)
        others = [float(np.prod([v for i, v in enumerate(row) if i != k]))
                  for k in range(len(row))]
        assert gx.tolist() == pytest.approx(others)


torch = pytest.importorskip("torch")

EDGES = [[2.0, np.inf, 0.0, 3.0], [np.inf, 2.0, 0.0, 1.0], [1e200, 1e200, 0.0, 2.0],
         [np.nan, 1.0, 0.0, 2.0], [2.0, 3.0, 0.0, np.inf], [0.0, np.inf, 1.0, 1.0],
         [1.0, 0.0, 2.0, 0.0, np.inf], [0.0, 0.0, np.inf], [-0.0, 2.0, 3.0], [np.inf, np.inf]]


@pytest.mark.parametrize("row", EDGES, ids=[str(r) for r in EDGES])
@pytest.mark.parametrize("op", ["cumprod", "prod", "prod(0,keepdim)"])
def test_inf_and_nan_beside_a_zero_are_pytorchs(row, op):
    def grads(lib):
        out = []
        for create_graph in (False, True):
            x = lib.tensor(row, dtype=lib.float64, requires_grad=True)
            y = {"cumprod": lambda: x.cumprod(0), "prod": lambda: x.prod(),
                 "prod(0,keepdim)": lambda: x.prod(0, keepdim=True)}[op]()
            g = lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(tuple(y.shape))
            (gx,) = lib.autograd.grad(y, x, g, create_graph=create_graph)
            out.append(gx.detach().numpy())
        return out
    for ours, theirs in itertools.zip_longest(grads(ak), grads(torch)):
        np.testing.assert_array_equal(ours, theirs)
