"""BCE with logits, smooth L1, Huber, and the legacy size_average= / reduce= keywords.

Checked by their formulas (numpy, float64) and by central differences without
PyTorch; against PyTorch (values, gradients of input and target, node names,
warnings and messages) when it is installed.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import nn
from autograd_kit.autograd import gradcheck
from autograd_kit.nn import functional as F

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
REDUCE = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}


def _t(a, rg=True):
    return ak.tensor(a, dtype=ak.float64, requires_grad=rg)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_is_bce_of_the_sigmoid(reduction, rng):
    x, y = rng.uniform(-4, 4, (3, 5)), rng.random((3, 5))
    w, pw = rng.random(5) + 0.5, rng.random(5) * 3
    p = 1 / (1 + np.exp(-x))
    want = -w * (pw * y * np.log(p) + (1 - y) * np.log(1 - p))
    got = F.binary_cross_entropy_with_logits(_t(x), _t(y), _t(w, False), reduction=reduction,
                                             pos_weight=_t(pw, False))
    np.testing.assert_allclose(got.detach().numpy(), REDUCE[reduction](want), rtol=1e-12)


def test_bce_with_logits_is_stable_for_huge_logits():
    x = _t([1000.0, -1000.0])
    loss = F.binary_cross_entropy_with_logits(x, _t([1.0, 0.0], False), reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), [0.0, 0.0])
    loss.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_smooth_l1_and_huber_formulas(beta, rng):
    x, y = rng.standard_normal(20) * 2, rng.standard_normal(20)
    d = np.abs(x - y)
    smooth = np.where(d < beta, 0.5 * d ** 2 / beta, d - 0.5 * beta)
    huber = np.where(d < beta, 0.5 * d ** 2, beta * (d - 0.5 * beta))
    assert float(F.smooth_l1_loss(_t(x), _t(y), beta=beta)) == pytest.approx(smooth.mean())
    assert float(F.huber_loss(_t(x), _t(y), reduction="sum", delta=beta)) == \
        pytest.approx(huber.sum())
    np.testing.assert_allclose(
        nn.HuberLoss(reduction="none", delta=beta)(_t(x), _t(y)).detach().numpy(),
        beta * nn.SmoothL1Loss(reduction="none", beta=beta)(_t(x), _t(y)).detach().numpy())


def test_smooth_l1_with_beta_zero_is_l1(rng):
    x, y = rng.standard_normal(6), rng.standard_normal(6)
    assert float(F.smooth_l1_loss(_t(x), _t(y), beta=0.0)) == pytest.approx(np.abs(x - y).mean())


def test_broadcast_target_divides_by_the_broadcast_count(rng):
    x, y = _t(rng.standard_normal((3, 1))), _t(rng.standard_normal(4))
    with pytest.warns(UserWarning, match="target size"):
        assert gradcheck(lambda a, b: F.smooth_l1_loss(a, b, beta=10.0), (x, y))
    with pytest.warns(UserWarning, match="target size"):
        F.huber_loss(x, y, delta=10.0).backward()
    want = (x.detach().numpy() - y.detach().numpy()).sum(axis=1, keepdims=True) / 12
    np.testing.assert_allclose(x.grad.numpy(), want)


@pytest.mark.parametrize("make", [
    lambda: nn.MSELoss(size_average=False), lambda: nn.L1Loss(reduce=False),
    lambda: nn.CrossEntropyLoss(size_average=True), lambda: nn.NLLLoss(reduce=True,
                                                                       size_average=False),
    lambda: nn.BCELoss(reduce=False), lambda: nn.BCEWithLogitsLoss(size_average=False),
    lambda: nn.SmoothL1Loss(reduce=False, size_average=True),
])
def test_legacy_keywords_on_modules_warn_and_choose_the_reduction(make):
    with pytest.warns(UserWarning, match=r"size_average and reduce args will be deprecated, "
                                         r"please use reduction='(mean|sum|none)' instead\."):
        module = make()
    assert module.reduction in ("mean", "sum", "none")


@pytest.mark.parametrize("size_average, reduce, reduction", [
    (None, None, "mean"), (True, None, "mean"), (False, None, "sum"), (None, False, "none"),
    (True, False, "none"), (False, True, "sum"), (True, True, "mean"),
])
def test_legacy_keywords_on_functions(size_average, reduce, reduction, rng):
    x, y = _t(rng.random((3, 4))), _t(rng.random((3, 4)), False)
    expected = F.binary_cross_entropy(x, y, reduction=reduction)
    kwargs = {k: v for k, v in (("size_average", size_average), ("reduce", reduce))
              if v is not None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = F.binary_cross_entropy(x, y, **kwargs)
    assert len(caught) == (1 if kwargs else 0)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy())
    target = ak.tensor([1, 0, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.binary_cross_entropy_with_logits):
            np.testing.assert_allclose(fn(x, y, **kwargs).detach().numpy(),
                                       fn(x, y, reduction=reduction).detach().numpy())
        for fn in (F.cross_entropy, F.nll_loss):
            np.testing.assert_allclose(fn(x, target, **kwargs).detach().numpy(),
                                       fn(x, target, reduction=reduction).detach().numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.binary_cross_entropy_with_logits(ak.zeros(3, 2), ak.zeros(3)), ValueError,
     "Target size (torch.Size([3])) must be the same as input size (torch.Size([3, 2]))"),
    (lambda: F.binary_cross_entropy_with_logits(ak.zeros(2), ak.zeros(2), reduction="foo"),
     ValueError, "foo is not a valid value for reduction"),
    (lambda: F.binary_cross_entropy_with_logits(ak.zeros(2), ak.zeros(2),
                                                ak.ones(2, requires_grad=True)),
     RuntimeError, "The function 'binary_cross_entropy_with_logits' is not differentiable "
     "with respect to argument 'weight'. This input cannot have requires_grad True."),
    (lambda: F.smooth_l1_loss(ak.zeros(2), ak.zeros(2), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: F.huber_loss(ak.zeros(2), ak.zeros(2), delta=0.0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
])
def test_errors(call, error, message):
    with pytest.raises(error) as err:
        call()
    assert str(err.value) == message


# ------------------------------------------------------------ with PyTorch --
def _pair(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name, kwargs", [
    ("binary_cross_entropy_with_logits", {}),
    ("binary_cross_entropy_with_logits", {"weight": "w"}),
    ("binary_cross_entropy_with_logits", {"pos_weight": "pw"}),
    ("binary_cross_entropy_with_logits", {"weight": "w", "pos_weight": "pw"}),
    ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.3}), ("smooth_l1_loss", {"beta": 0.0}),
    ("huber_loss", {}), ("huber_loss", {"delta": 0.4}),
])
def test_against_pytorch(name, kwargs, reduction, rng):
    x, y = rng.standard_normal((4, 3)) * 2, rng.random((4, 3))
    consts = {"w": rng.random(3) + 0.5, "pw": rng.random(3) * 3}
    results = []
    for lib, fn in ((ak, F), (torch, torch.nn.functional)):
        a, b = _pair(lib, [x, y])
        kw = {k: (lib.tensor(consts[v]) if isinstance(v, str) else v) for k, v in kwargs.items()}
        loss = getattr(fn, name)(a, b, reduction=reduction, **kw)
        loss.backward(lib.ones_like(loss))
        results.append((loss.detach().numpy(), a.grad.numpy(), b.grad.numpy(),
                        type(loss.grad_fn).__name__))
    for mine, theirs in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    assert results[0][3] == results[1][3]


@needs_torch
def test_modules_and_warnings_against_pytorch():
    for make in (lambda m: m.BCEWithLogitsLoss(), lambda m: m.SmoothL1Loss(beta=0.5),
                 lambda m: m.HuberLoss(reduction="sum", delta=2.0)):
        assert repr(make(nn)) == repr(make(torch.nn))
    assert dict(nn.BCEWithLogitsLoss(pos_weight=ak.ones(2)).named_buffers()).keys() == \
        dict(torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(2)).named_buffers()).keys()
    texts = []
    for lib in (nn, torch.nn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = lib.MSELoss(size_average=False, reduce=True)
        texts.append((module.reduction, [(w.category, str(w.message)) for w in caught]))
    assert texts[0] == texts[1]
