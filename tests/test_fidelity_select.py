"""index_select, index_add, masked_select and masked_scatter as PyTorch has
them: values, gradients (also of a masked or index fill's tensor value, which
PyTorch takes with masked_select and index_select) and the errors of malformed
calls.  The transpose identities at the top need no oracle."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak


# ------------------------------------------------------ identities, no oracle --
@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_and_index_add_are_transposes(dim):
    """<index_select(x), g> == <x, index_add(0, g)>: the gradient of a selection
    adds g back, a slice selected twice getting both."""
    rng = np.random.default_rng(dim)
    x = ak.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    idx = ak.tensor([2, 0, 2] if dim == 0 else [3, 3, 1])
    picked = x.index_select(dim, idx)
    g = ak.tensor(rng.standard_normal(tuple(picked.shape)))
    back = ak.zeros(3, 4, dtype=ak.float64).index_add(dim, idx, g)
    assert (picked * g).sum().item() == pytest.approx((x * back).sum().item())
    (picked * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), back.numpy())


def test_masked_select_and_masked_scatter_are_transposes():
    rng = np.random.default_rng(7)
    x = ak.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    mask = ak.tensor([[True, False, True, True]])  # (broadcast over the rows)
    picked = x.masked_select(mask)
    g = ak.tensor(rng.standard_normal(tuple(picked.shape)))
    back = ak.zeros(2, 4, dtype=ak.float64).masked_scatter(mask, g)
    assert (picked * g).sum().item() == pytest.approx((x * back).sum().item())
    (picked * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), back.numpy())


def test_masked_scatter_source_past_the_trues_gets_zero():
    x = ak.zeros(2, 2, dtype=ak.float64, requires_grad=True)
    s = ak.arange(1.0, 7.0, dtype=ak.float64).requires_grad_()
    y = x.masked_scatter(ak.tensor([[True, False], [True, True]]), s)
    assert y.tolist() == [[1.0, 0.0], [2.0, 3.0]]
    (y * ak.tensor([[10.0, 20.0], [30.0, 40.0]])).sum().backward()
    assert s.grad.tolist() == [10.0, 30.0, 40.0, 0.0, 0.0, 0.0]
    assert x.grad.tolist() == [[0.0, 20.0], [0.0, 0.0]]


def test_a_failed_index_add_in_place_changes_nothing():
    x = ak.zeros(2, 3)
    before = x.tolist(), x._version
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.index_add_(1, ak.tensor([3]), ak.ones(2, 1))
    assert (x.tolist(), x._version) == before


# ------------------------------------------------------------ against PyTorch --
torch = pytest.importorskip("torch")

CALLS = {
    "index_select dim1": "x.index_select(1, lib.tensor([3, 0, 3]))",
    "index_select dim0 int32": "lib.index_select(x, 0, lib.tensor([2, 1], dtype=lib.int32))",
    "index_select 0-d index": "x.index_select(0, lib.tensor(1))",
    "index_select empty": "x.index_select(1, lib.tensor([], dtype=lib.long))",
    "index_select of a 0-d": "x.sum().index_select(0, lib.tensor([0]))",
    "index_add": "x.index_add(1, lib.tensor([2, 2]), s[:, :2])",
    "index_add alpha": "lib.index_add(x, 0, lib.tensor([1, 0, 1]), s[:, :4] * 1, alpha=-0.5)",
    "index_add_": "(x * 1).index_add_(1, lib.tensor([0, 3, 0]), s[:, :3])",
    "masked_select": "x.masked_select(lib.tensor(np.eye(3, 4, dtype=bool)))",
    "masked_select broadcast mask": "x.masked_select(lib.tensor([True, False, True, True]))",
    "masked_select broadcast self": "x[:1].masked_select(lib.tensor(np.eye(3, 4, dtype=bool)))",
    "masked_scatter": "x.masked_scatter(lib.tensor(np.eye(3, 4, dtype=bool)), s)",
    "masked_scatter broadcast": "x.masked_scatter(lib.tensor([False, True, True, False]), s)",
    "masked_scatter_": "(x * 1).masked_scatter_(lib.tensor(np.eye(3, 4, dtype=bool)), s)",
    "masked_fill tensor value": "x.masked_fill(lib.tensor([True, False, True, True]), s[0, 0])",
    "index_fill tensor value": "x.index_fill(1, lib.tensor([0, 2, 0]), s[1, 1])",
    # malformed
    "index_select 2-d index": "x.index_select(1, lib.tensor([[0]]))",
    "index_select float index": "x.index_select(1, lib.tensor([0.0]))",
    "index_select past the end": "x.index_select(1, lib.tensor([4]))",
    "index_select negative": "x.index_select(0, lib.tensor([-1]))",
    "index_add dtype": "x.index_add(1, lib.tensor([0]), s[:, :1].float())",
    "index_add count": "x.index_add(1, lib.tensor([0, 1, 2]), s[:, :2])",
    "index_add float index": "x.index_add(0, lib.tensor([0.0]), s[:1, :4])",
    "index_add out of range": "x.index_add(1, lib.tensor([5, 0]), s[:, :2])",
    "masked_select int mask": "x.masked_select(lib.tensor([1, 0, 1, 0]))",
    "masked_select wrong shape": "x.masked_select(lib.tensor([True, False]))",
    "masked_scatter int mask": "x.masked_scatter(lib.tensor([1, 0, 1, 0]), s)",
    "masked_scatter wrong shape": "x.masked_scatter(lib.tensor([True, False]), s)",
    "masked_scatter dtype": "x.masked_scatter(lib.tensor([True, False, True, False]), s.float())",
    "masked_scatter short source": "x.masked_scatter(lib.tensor(np.ones((3, 4), bool)), s[0])",
}


def _outcome(lib, code):
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    s = lib.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    try:
        y = eval(code, {"lib": lib, "x": x, "s": s, "np": np})  # noqa: S307 - the table's code
        w = lib.tensor(rng.standard_normal(tuple(y.shape)))
        grads = lib.autograd.grad((y * w).sum(), (x, s), allow_unused=True)
    except Exception as err:  # noqa: BLE001 - the kit's errors subclass Python's
        return next(c for c in type(err).__mro__ if c.__module__ == "builtins").__name__, \
            str(err)
    return (list(y.shape), type(y.grad_fn).__name__, np.round(y.detach().numpy(), 10).tolist(),
            [None if g is None else np.round(g.numpy(), 10).tolist() for g in grads])


@pytest.mark.parametrize("code", CALLS.values(), ids=CALLS.keys())
def test_values_gradients_and_errors_are_pytorchs(code):
    assert _outcome(ak, code) == _outcome(torch, code)
