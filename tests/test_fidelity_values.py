"""Values and gradients at the edges: NaN, inf, zero, empty and 0-d inputs,
broadcasting targets in losses, kinks where PyTorch picks a subgradient.

Two kinds of checks:

* facts worked out by hand (or by central differences) -- they run everywhere;
* a sweep of ops x edge inputs run in autograd_kit and in PyTorch, comparing
  the value, the gradient, the exception (class and message) and the kinds of
  warning shown -- skipped without PyTorch.

No numpy ``RuntimeWarning`` ("divide by zero", "invalid value") may reach the
learner from the kit's own code: PyTorch prints nothing there.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autograd_kit as ak
import autograd_kit.nn.functional as F
from fidelity_support import assert_same, kit, quiet_as_after_import, reference, torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@pytest.fixture(autouse=True)
def _kit_filters():
    quiet_as_after_import()
NAN, INF = math.nan, math.inf


def grad_of(fn, *values, dtype=ak.float32):
    """The value of ``fn(x, ...)`` and the gradient of its sum, for leaves made from values."""
    xs = [ak.tensor(v, dtype=dtype, requires_grad=True) for v in values]
    y = fn(*xs)
    y.sum().backward()
    return y, [x.grad for x in xs]


def close(t, expected):
    np.testing.assert_allclose(np.asarray(t.tolist(), dtype=float), expected, rtol=1e-5,
                               atol=1e-6, equal_nan=True)


# ------------------------------------------------------ facts by hand ---
def test_mse_loss_with_a_broadcasting_target_averages_over_the_broadcast_shape():
    # L = (1/9) sum_ij (x_j - 2)^2, so dL/dx_j = 3 * 2 (x_j - 2) / 9
    x = ak.tensor([1., 2., 3.], requires_grad=True)
    with pytest.warns(UserWarning, match="target size"):
        loss = F.mse_loss(x, ak.full((3, 1), 2.0))
    loss.backward()
    assert loss.item() == pytest.approx(2 / 3)
    close(x.grad, [-2 / 3, 0, 2 / 3])
    assert type(loss.grad_fn.next_functions[0][0]).__name__ == "ExpandBackward0"


@pytest.mark.parametrize("name", ["mse", "l1", "mse-ops-level"])
def test_losses_with_broadcasting_targets_match_central_differences(name):
    rng = np.random.default_rng(3)
    x0, y = rng.standard_normal(4), rng.standard_normal((3, 1))
    fn = {"mse": lambda x: F.mse_loss(x, ak.tensor(y)),
          "l1": lambda x: F.l1_loss(x, ak.tensor(y)),
          "mse-ops-level": lambda x: ak.ops.loss.mse_loss(x, ak.tensor(y))}[name]
    x = ak.tensor(x0, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fn(x).backward()
        numeric = []
        for i in range(4):
            step = np.zeros(4)
            step[i] = 1e-6
            numeric.append((fn(ak.tensor(x0 + step)).item() - fn(ak.tensor(x0 - step)).item())
                           / 2e-6)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("p", [1, 1.5, 2, 3, INF, 0.5])
def test_norm_of_zero_has_gradient_zero(p):
    _, (g,) = grad_of(lambda x: x.norm(p=p), [0., 0., 0.])
    close(g, [0, 0, 0])


def test_norm_rows_of_zero_and_not():
    _, (g,) = grad_of(lambda x: x.norm(dim=1), [[0., 0.], [3., 4.]])
    close(g, [[0, 0], [0.6, 0.8]])


def test_std_at_a_constant_has_gradient_zero():
    _, (g,) = grad_of(lambda x: x.std(unbiased=False), 3.0)
    close(g, 0.0)
    _, (g,) = grad_of(lambda x: x.std(), [2., 2., 2.])
    close(g, [0, 0, 0])


def test_nan_gets_the_gradient_of_max_and_min():
    for fn in (ak.Tensor.max, ak.Tensor.min):
        _, (g,) = grad_of(fn, [NAN, 1., 3., 0.])
        close(g, [1, 0, 0, 0])
        _, (g,) = grad_of(fn, [NAN, 1., 3., NAN])
        close(g, [0.5, 0, 0, 0.5])


def test_maximum_and_minimum_send_g_to_both_sides_of_a_nan():
    for fn in (ak.maximum, ak.minimum):
        _, (ga, gb) = grad_of(fn, [1., NAN, 3.], [2., 2., NAN])
        assert ga.tolist()[1:] == [1.0, 1.0] and gb.tolist()[1:] == [1.0, 1.0]


def test_abs_sign_and_relu_at_nan():
    _, (g,) = grad_of(lambda x: x.abs(), [NAN, -2.])
    close(g, [0, -1])
    y, _ = grad_of(lambda x: x.sign(), [NAN, -2., 0.])
    close(y, [0, -1, 0])
    y, (g,) = grad_of(lambda x: x.relu(), [NAN, -2., 2.])
    close(y, [NAN, 0, 2])
    close(g, [1, 0, 1])  # ReLU's backward passes g unless the output is <= 0


def test_logsumexp_of_infinite_rows():
    y, (g,) = grad_of(lambda x: x.logsumexp(1), [[INF, 1.], [-INF, -INF], [0., 0.]])
    close(y, [INF, -INF, math.log(2)])
    close(g, [[NAN, 0], [NAN, NAN], [0.5, 0.5]])


def test_zero_to_a_power_with_a_number_base():
    # d/db 0^b = 0^b log 0: -inf for b < 0, and 0 for b >= 0 (PyTorch's convention)
    for base in (0, 0.0):
        y, (g,) = grad_of(lambda b, base=base: base ** b, [-1., 0., 2.])
        close(y, [INF, 1, 0])
        close(g, [-INF, 0, 0])


@pytest.mark.parametrize("fn", [lambda x: x.exp(), lambda x: x * x, lambda x: x * 2,
                                lambda x: (x + 1).log(), lambda x: x.sum(0),
                                lambda x: x / 3, lambda x: x.relu().tanh()])
def test_backward_through_empty_tensors(fn):
    x = ak.zeros(0, requires_grad=True)
    fn(x).sum().backward()
    assert x.grad.shape == (0,)


@pytest.mark.parametrize("loss", ["mse", "bce", "l1", "nll", "cross_entropy"])
def test_mean_losses_of_nothing_are_nan_with_an_empty_gradient(loss):
    x = ak.zeros(0, requires_grad=True) if loss in ("mse", "bce", "l1") else \
        ak.zeros(0, 3, requires_grad=True)
    target = ak.zeros(0) if loss in ("mse", "bce", "l1") else ak.zeros(0, dtype=ak.long)
    fn = {"mse": F.mse_loss, "bce": F.binary_cross_entropy, "l1": F.l1_loss,
          "nll": F.nll_loss, "cross_entropy": F.cross_entropy}[loss]
    out = fn(x, target)
    out.backward()
    assert math.isnan(out.item()) and x.grad.shape == x.shape


def test_nll_loss_ignores_the_ignore_index_in_the_mean():
    logp = ak.tensor([[-1., -2.], [-3., -4.], [-5., -6.]], requires_grad=True)
    out = F.nll_loss(logp, ak.tensor([0, -100, 1]))
    out.backward()
    assert out.item() == pytest.approx((1 + 6) / 2)
    close(logp.grad, [[-0.5, 0], [0, 0], [0, -0.5]])
    assert F.nll_loss(logp, ak.tensor([0, 1, 1]), ignore_index=1).item() == pytest.approx(1)


def test_result_dtypes():
    assert ak.stack([ak.ones(2), ak.ones(2, dtype=ak.long)]).dtype == ak.float32
    assert ak.tensor([1, 2]).logsumexp(0).dtype == ak.float32
    with pytest.warns(UserWarning):
        out = F.mse_loss(ak.tensor([1., 2.]), ak.tensor(1., dtype=ak.float64))
    assert out.dtype == ak.float64


# ------------------------------------------- no numpy warnings leak ---
EDGE_DATA = {
    "mixed": "torch.tensor([-2., -0.5, 0., 0.5, 3.], requires_grad=True)",
    "nan": "torch.tensor([nan, 1., -1., 0.], requires_grad=True)",
    "inf": "torch.tensor([inf, -inf, 1., 0.], requires_grad=True)",
    "zeros": "torch.zeros(3, requires_grad=True)",
    "zero-0d": "torch.tensor(0., requires_grad=True)",
    "0d": "torch.tensor(-1.5, requires_grad=True)",
    "empty": "torch.zeros(0, requires_grad=True)",
    "rows": "torch.tensor([[inf, 1.], [-inf, -inf], [nan, 2.]], requires_grad=True)",
}
ELEMENTWISE = [
    "x.exp()", "x.log()", "x.sin()", "x.cos()", "x.tanh()", "x.sigmoid()", "x.relu()",
    "x.sqrt()", "x.rsqrt()", "x.abs()", "x.reciprocal()", "x.square()", "x.sign()",
    "x.floor()", "x.ceil()", "x.round()", "x.clamp(-1, 1)", "x.clamp(min=0)",
    "F.leaky_relu(x, 0.1)", "x ** 2", "x ** 0.5", "x ** -1", "x ** 0", "2 ** x", "0 ** x",
    "0.5 ** x", "x * 2", "x / 0", "1 / x", "x - x", "x * x", "x / x", "x ** x",
    "torch.maximum(x, torch.zeros_like(x))", "torch.minimum(x, x)", "torch.where(x > 0, x, 0.)",
    "x.clone().sqrt_()", "x.clone().div_(0)", "x.clone().clamp_(0, 1)", "x.clone().relu_()",
    "x.clone().log_()", "x * 1 + x.abs()",
]
REDUCTIONS = [
    "x.sum()", "x.mean()", "x.max()", "x.min()", "x.amax()", "x.prod()", "x.var()",
    "x.std()", "x.std(unbiased=False)", "x.var(unbiased=False)", "x.norm()", "x.norm(p=1)",
    "x.norm(p=3)", "x.norm(p=inf)", "x.norm(p=0.5)", "x.logsumexp(-1)", "x.softmax(-1)",
    "x.log_softmax(-1)", "x.max(-1).values", "x.amin(-1)", "x.mean(-1)", "x.sum(-1)",
    "x.argmax()", "x.prod(-1)",
]
SWEEP = [(f"{op} of {name}", f"x = {data}\ny = {op}\n"
          "if y.requires_grad:\n    y.sum().backward()\nout = [y, x.grad]")
         for name, data in EDGE_DATA.items() for op in ELEMENTWISE + REDUCTIONS]


# the same formulas run on Tensors when the gradient is itself recorded
SWEEP_GRAPH = [(f"{op} of {name}, create_graph", f"x = {data}\ny = {op}\n"
                "g = torch.autograd.grad(y.sum(), x, create_graph=True)[0] "
                "if y.requires_grad else None\nout = [y, g]")
               for name, data in EDGE_DATA.items() if name in ("nan", "inf", "zeros", "rows")
               for op in ELEMENTWISE + REDUCTIONS]
PAIRS = {
    "edges": ("torch.tensor([nan, inf, -inf, 0., 0., 2., -2., inf], requires_grad=True)",
              "torch.tensor([1., 0., inf, 0., -1., nan, 0.5, inf], requires_grad=True)"),
    "broadcast": ("torch.tensor([[0.], [inf], [-1.]], requires_grad=True)",
                  "torch.tensor([0., 1., -inf, nan], requires_grad=True)"),
    "float64": ("torch.tensor([0., -0.5, nan], dtype=torch.float64, requires_grad=True)",
                "torch.tensor([0., 2., 1.], dtype=torch.float64, requires_grad=True)"),
    "0d-and-empty": ("torch.tensor(0., requires_grad=True)",
                     "torch.zeros(0, requires_grad=True)"),
}
BINARY = ["a + b", "a - b", "a * b", "a / b", "a ** b", "torch.maximum(a, b)",
          "torch.minimum(a, b)", "torch.where(a > b, a, b)", "torch.add(a, b, alpha=-2)",
          "a * b + a / b", "(a - b).abs()", "torch.where(b == 0, a, a / b)"]
SWEEP_BINARY = [(f"{op} of {name}", f"a = {pa}\nb = {pb}\ny = {op}\ny.sum().backward()\n"
                 "out = [y, a.grad, b.grad]")
                for name, (pa, pb) in PAIRS.items() for op in BINARY]
MATRICES = {
    "zero-column": "torch.tensor([[0., 1.], [0., -2.], [0., 3.]], requires_grad=True)",
    "one-row": "torch.tensor([[1., nan, -inf]], requires_grad=True)",
    "ties": "torch.tensor([[2., 2.], [-1., -1.]], requires_grad=True)",
    "no-columns": "torch.zeros(2, 0, requires_grad=True)",
    "no-rows": "torch.zeros(0, 2, requires_grad=True)",
}
ALONG_DIMS = ["x.sum(0, keepdim=True)", "x.mean(0)", "x.var(0)", "x.std(0)", "x.std(1)",
              "x.var(1, unbiased=False)", "x.norm(dim=0)", "x.norm(p=1, dim=1)",
              "x.norm(p=inf, dim=1)", "x.logsumexp(0)", "x.logsumexp((0, 1))",
              "x.softmax(0)", "x.log_softmax(1)", "x.max(0).values", "x.min(1).values",
              "x.max(1, keepdim=True).values", "x.amax(0)", "x.amin((0, 1))", "x.prod(0)",
              "x.prod(1)", "x.argmin(0)", "x.max()"]
SWEEP_DIMS = [(f"{op} of {name}", f"x = {data}\ny = {op}\n"
               "if y.requires_grad:\n    y.sum().backward()\nout = [y, x.grad]")
              for name, data in MATRICES.items() for op in ALONG_DIMS]
INTEGERS = {"int64": "torch.tensor([3, -1, 0])", "int32": "torch.tensor([[3, -1], [0, 2]], "
            "dtype=torch.int32)", "bool": "torch.tensor([True, False])",
            "empty-int": "torch.zeros(0, dtype=torch.long)"}
ON_INTEGERS = ["x.sum()", "x.prod()", "x.max()", "x.amax(-1)", "x.argmax()", "x.abs()",
               "x.sign()", "x.mean()", "x.std()", "x.norm()", "x.logsumexp(-1)", "x.softmax(-1)",
               "x.exp()", "x.sqrt()", "x / 2", "x * 2.5", "x // 2", "x % 2", "x ** 2",
               "x.float().mean()", "torch.stack([x, x.double()])", "x.clamp(0, 1)",
               "x == 0", "x.sum(-1)", "x.max(-1).values", "x.clamp(0.5, 1.5)", "x.argmin()"]
SWEEP_INTEGERS = [(f"{op} of {name}", f"x = {data}\nout = {op}")
                  for name, data in INTEGERS.items() for op in ON_INTEGERS]
EVERY_SWEEP = SWEEP + SWEEP_GRAPH + SWEEP_BINARY + SWEEP_DIMS + SWEEP_INTEGERS


@pytest.mark.parametrize("source", [s for _, s in EVERY_SWEEP], ids=[i for i, _ in EVERY_SWEEP])
def test_no_runtime_warning_reaches_the_learner(source):
    assert "RuntimeWarning" not in kit(source)[-1]


# ------------------------------------------------- against PyTorch ---
@needs_torch
@pytest.mark.parametrize("source", [s for _, s in EVERY_SWEEP], ids=[i for i, _ in EVERY_SWEEP])
def test_edge_values_and_gradients_as_in_pytorch(source):
    assert_same(kit(source), reference(source), source)


LOSS_CASES = {
    "mse-broadcast": "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
                     "out = F.mse_loss(x, torch.ones(3, 1))\nout.backward()\nout = [out, x.grad]",
    "mse-broadcast-both": "x = torch.tensor([[1.], [2.]], requires_grad=True)\n"
                          "y = torch.tensor([0., 1., 5.], requires_grad=True)\n"
                          "out = F.mse_loss(x, y, reduction='{r}')\nout.sum().backward()\n"
                          "out = [out, x.grad, y.grad]",
    "l1-broadcast": "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
                    "out = F.l1_loss(x, torch.zeros(2, 1), reduction='{r}')\n"
                    "out.sum().backward()\nout = [out, x.grad]",
    "bce": "x = torch.tensor([0.2, 0., 1., 0.5], requires_grad=True)\n"
           "out = F.binary_cross_entropy(x, torch.tensor([1., 0., 1., 0.]), reduction='{r}')\n"
           "out.sum().backward()\nout = [out, x.grad]",
    "nll-ignore": "x = torch.tensor([[-1., -2.], [-3., -4.], [-.5, -6.]], requires_grad=True)\n"
                  "out = F.nll_loss(x, torch.tensor([0, -100, 1]), reduction='{r}')\n"
                  "out.sum().backward()\nout = [out, x.grad]",
    "nll-all-ignored": "x = torch.tensor([[-1., -2.]], requires_grad=True)\n"
                       "out = F.nll_loss(x, torch.tensor([-100]), reduction='{r}')\n"
                       "out.sum().backward()\nout = [out, x.grad]",
    "nll-own-ignore": "x = torch.tensor([[-1., -2.], [-3., -4.]], requires_grad=True)\n"
                      "out = F.nll_loss(x, torch.tensor([0, 1]), ignore_index=1, "
                      "reduction='{r}')\nout.sum().backward()\nout = [out, x.grad]",
    "nll-3d": "x = torch.arange(12.).reshape(2, 3, 2).requires_grad_()\n"
              "out = F.nll_loss(x, torch.tensor([[0, 2], [1, 1]]), reduction='{r}')\n"
              "out.sum().backward()\nout = [out, x.grad]",
    "cross-entropy-1d": "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
                        "out = F.cross_entropy(x, torch.tensor(2), reduction='{r}')\n"
                        "out.sum().backward()\nout = [out, x.grad]",
    "cross-entropy-probs": "x = torch.tensor([[1., 2.], [0., 0.]], requires_grad=True)\n"
                           "out = F.cross_entropy(x, torch.tensor([[.5, .5], [1., 0.]]), "
                           "reduction='{r}')\nout.sum().backward()\nout = [out, x.grad]",
    "empty-mse": "x = torch.zeros(0, requires_grad=True)\n"
                 "out = F.mse_loss(x, torch.zeros(0), reduction='{r}')\n"
                 "out.sum().backward()\nout = [out, x.grad]",
    "empty-nll": "x = torch.zeros(0, 4, requires_grad=True)\n"
                 "out = F.cross_entropy(x, torch.zeros(0, dtype=torch.long), reduction='{r}')\n"
                 "out.sum().backward()\nout = [out, x.grad]",
    "bce-edges": "x = torch.tensor([0., 1., 1e-30, 1.], requires_grad=True)\n"
                 "y = torch.tensor([0., 1., 1., 0.], requires_grad=True)\n"
                 "out = F.binary_cross_entropy(x, y, reduction='{r}')\nout.sum().backward()\n"
                 "out = [out, x.grad, y.grad]",
    "cross-entropy-inf": "x = torch.tensor([[inf, 0.], [-inf, 0.], [-inf, -inf]], "
                         "requires_grad=True)\nout = F.cross_entropy(x, torch.tensor([0, 1, 0]), "
                         "reduction='{r}')\nout.sum().backward()\nout = [out, x.grad]",
    "mse-inf": "x = torch.tensor([inf, 1., nan], requires_grad=True)\n"
               "out = F.mse_loss(x, torch.tensor([inf, inf, 0.]), reduction='{r}')\n"
               "out.sum().backward()\nout = [out, x.grad]",
    "double-target": "out = F.mse_loss(torch.tensor([1., 2.]), torch.tensor(3., "
                     "dtype=torch.float64), reduction='{r}')",
    "int-target": "out = F.mse_loss(torch.tensor([1., 2.]), torch.tensor([1, 3]), "
                  "reduction='{r}')",
}
LOSSES = [(f"{name}-{r}", src.replace("{r}", r)) for name, src in LOSS_CASES.items()
          for r in ("mean", "sum", "none")]


@needs_torch
@pytest.mark.parametrize("source", [s for _, s in LOSSES], ids=[i for i, _ in LOSSES])
def test_losses_as_in_pytorch(source):
    assert_same(kit(source), reference(source), source)


@pytest.mark.parametrize("source", [s for _, s in LOSSES], ids=[i for i, _ in LOSSES])
def test_losses_warn_no_runtime_warning(source):
    assert "RuntimeWarning" not in kit(source)[-1]
