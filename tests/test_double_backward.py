"""Higher-order gradients: backward formulas are Tensor code, so with
``create_graph=True`` the gradient is itself a graph that can be differentiated.

References are closed forms (d²/dx² sin x = -sin x ...), numpy, central
differences of a first derivative, and PyTorch where it is installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.autograd import grad, gradcheck, gradgradcheck
from autograd_kit.ops import loss
from autograd_kit.ops._rules import NODE_CLASSES

from op_cases import distinct, nonzero, normal, positive, uniform

X = np.array([-1.5, -0.4, 0.3, 1.1, 2.0])


def leaf(a, device="cpu"):
    return ak.tensor(np.asarray(a, dtype=np.float64), dtype=ak.float64, device=device,
                     requires_grad=True)


def host(t):
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- closed forms --
def test_cube_second_and_third_derivatives():
    x = leaf(X)
    (d1,) = grad((x ** 3).sum(), x, create_graph=True)
    (d2,) = grad(d1.sum(), x, create_graph=True)
    (d3,) = grad(d2.sum(), x)
    np.testing.assert_allclose(host(d1), 3 * X ** 2, rtol=1e-12)
    np.testing.assert_allclose(host(d2), 6 * X, rtol=1e-12)
    np.testing.assert_allclose(host(d3), np.full_like(X, 6.0), rtol=1e-12)


def test_without_create_graph_the_gradient_is_a_constant():
    x = leaf(X)
    (d1,) = grad((x ** 3).sum(), x)
    assert not d1.requires_grad and d1.grad_fn is None


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name: (op, first derivative, second derivative), the derivatives as numpy closed forms
CLOSED_FORMS = {
    "sin": (lambda t: t.sin(), np.cos, lambda x: -np.sin(x)),
    "cos": (lambda t: t.cos(), lambda x: -np.sin(x), lambda x: -np.cos(x)),
    "exp": (lambda t: t.exp(), np.exp, np.exp),
    "tanh": (lambda t: t.tanh(), lambda x: 1 - np.tanh(x) ** 2,
             lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: _sigmoid(x) * (1 - _sigmoid(x)),
                lambda x: _sigmoid(x) * (1 - _sigmoid(x)) * (1 - 2 * _sigmoid(x))),
    "log": (lambda t: (t * t + 1).log(), lambda x: 2 * x / (x * x + 1),
            lambda x: 2 * (1 - x * x) / (x * x + 1) ** 2),
    "sqrt": (lambda t: (t * t + 1).sqrt(), lambda x: x / np.sqrt(x * x + 1),
             lambda x: (x * x + 1) ** -1.5),
    "reciprocal": (lambda t: (t * t + 1).reciprocal(), lambda x: -2 * x / (x * x + 1) ** 2,
                   lambda x: (6 * x * x - 2) / (x * x + 1) ** 3),
}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_second_derivative_closed_form(name, device):
    op, first, second = CLOSED_FORMS[name]
    x = leaf(X, device)
    (d1,) = grad(op(x).sum(), x, create_graph=True)
    assert d1.requires_grad
    (d2,) = grad(d1.sum(), x)
    np.testing.assert_allclose(host(d1), first(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(host(d2), second(X), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------- Hessian-vector products --
def test_hessian_vector_product_of_quadratic_form(device):
    """f(x) = x^T A x + b.x: grad = (A + A^T) x + b, Hessian = A + A^T
    (A is not symmetric, so a transposition mistake shows)."""
    rng = np.random.default_rng(7)
    A_np, b_np = rng.standard_normal((4, 4)), rng.standard_normal(4)
    x_np, v_np = rng.standard_normal(4), rng.standard_normal(4)
    A, b = ak.tensor(A_np, device=device), ak.tensor(b_np, device=device)
    x, v = leaf(x_np, device), ak.tensor(v_np, device=device)

    f = x @ (A @ x) + b @ x
    (g,) = grad(f, x, create_graph=True)
    (hv,) = grad(g, x, grad_outputs=v)
    np.testing.assert_allclose(host(g), (A_np + A_np.T) @ x_np + b_np, rtol=1e-12)
    np.testing.assert_allclose(host(hv), (A_np + A_np.T) @ v_np, rtol=1e-12)

    # the same product the other way: d/dx (grad . v), on a fresh graph (the
    # first product's backward went through f's graph and freed it)
    f = x @ (A @ x) + b @ x
    (g,) = grad(f, x, create_graph=True)
    (hv2,) = grad((g * v).sum(), x)
    np.testing.assert_allclose(host(hv2), (A_np + A_np.T) @ v_np, rtol=1e-12)


def test_full_hessian_of_logsumexp():
    """d² logsumexp(x) = diag(p) - p p^T with p = softmax(x)."""
    x_np = np.array([0.2, -1.0, 0.7, 1.5])
    p = np.exp(x_np) / np.exp(x_np).sum()
    x = leaf(x_np)
    (g,) = grad(ak.logsumexp(x, 0), x, create_graph=True)
    rows = [host(grad(g[i], x, retain_graph=True)[0]) for i in range(4)]
    np.testing.assert_allclose(host(g), p, rtol=1e-12)
    np.testing.assert_allclose(np.stack(rows), np.diag(p) - np.outer(p, p), atol=1e-12)


def test_hessian_vector_product_matches_pytorch():
    """A small network's loss: HVP w.r.t. the weights, against PyTorch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    W_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal(3)
    X_np, v_np = rng.standard_normal((5, 4)), rng.standard_normal((3, 4))

    def loss_of(lib, W, b, X):
        h = (X @ W.T + b).tanh()
        return (h * h).sum() + (W * W).sum() * 0.1

    W, b = leaf(W_np), ak.tensor(b_np)
    (g,) = grad(loss_of(ak, W, b, ak.tensor(X_np)), W, create_graph=True)
    (hv,) = grad((g * ak.tensor(v_np)).sum(), W)

    tW = torch.tensor(W_np, requires_grad=True)
    (tg,) = torch.autograd.grad(loss_of(torch, tW, torch.tensor(b_np), torch.tensor(X_np)), tW,
                                create_graph=True)
    (thv,) = torch.autograd.grad((tg * torch.tensor(v_np)).sum(), tW)
    np.testing.assert_allclose(host(g), tg.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(host(hv), thv.numpy(), rtol=1e-10)


# ----------------------------------------------------------- indexing twice --
def test_second_derivative_through_indexing_uses_index_put():
    """x[idx] with a repeated index: d/dx sum(x[idx]^3) = count * 3x^2 (the
    backward of indexing, PyTorch's in-place index_put into zeros, is itself a
    node: IndexPutImplBackward0), and the second derivative is count * 6x."""
    x_np = np.array([0.5, -1.2, 2.0, 0.3])
    idx = [0, 2, 0, 3]
    count = np.bincount(idx, minlength=4)
    x = leaf(x_np)
    (d1,) = grad((x[idx] ** 3).sum(), x, create_graph=True)
    assert isinstance(d1.grad_fn, NODE_CLASSES["IndexPutImplBackward0"])
    (d2,) = grad(d1.sum(), x)
    np.testing.assert_allclose(host(d1), count * 3 * x_np ** 2, rtol=1e-12)
    np.testing.assert_allclose(host(d2), count * 6 * x_np, rtol=1e-12)


# -------------------------------- second derivatives against central differences --
def _put_mask(x, v):
    y = x * 1
    y[ak.tensor(np.eye(3, 4, dtype=bool))] = v
    return y


def _scale_row(x):
    y = x * 1
    y[1].mul_(2.0)
    return y


TARGET = np.array([2, 0, 1])

# name: (inputs, function).  Each function is nonlinear in its inputs, so the
# first derivative depends on them and the second derivative is not trivially 0.
SECOND_ORDER = {
    "mul": (normal((3, 1), (4,)), lambda a, b: a * b),
    "div": (lambda rng: normal((3, 1))(rng) + nonzero((4,))(rng), lambda a, b: a / b),
    "exp": (normal((2, 3)), lambda x: x.exp()),
    "tanh": (normal((2, 3)), lambda x: x.tanh()),
    "sum": (normal((3, 4)), lambda x: x.sum(1) ** 2),
    "mean-keepdim": (normal((3, 4)), lambda x: x.mean(0, keepdim=True) ** 3),
    "matmul": (normal((3, 4), (4, 2)), lambda a, b: a @ b),
    "matmul-batched": (normal((2, 3, 4), (4, 2)), lambda a, b: a @ b),
    "matrix-vector": (normal((3, 4), (4,)), lambda a, v: a @ v),
    "index-select": (normal((3, 4)), lambda x: x[1] ** 3),
    "index-slice": (normal((4, 3)), lambda x: x[1:3].sin()),
    "index-list": (normal((4,)), lambda x: x[[0, 2, 0]] ** 3),
    "index-mask": (normal((3, 4)), lambda x: x[ak.tensor(np.eye(3, 4, dtype=bool))] ** 3),
    "pow-tensor": (lambda rng: positive((3,))(rng) + normal((3,))(rng), lambda a, b: a ** b),
    "sigmoid": (normal((2, 3)), lambda x: x.sigmoid()),
    "softmax": (normal((2, 4)), lambda x: x.softmax(1)),
    "log-softmax": (normal((2, 4)), lambda x: x.log_softmax(1)),
    "logsumexp": (normal((2, 4)), lambda x: x.logsumexp(1)),
    "var": (normal((3, 4)), lambda x: x.var(1)),
    "std": (normal((3, 4)), lambda x: x.std(0)),
    "norm": (normal((3, 4)), lambda x: x.norm(dim=1)),
    "prod": (nonzero((2, 3)), lambda x: x.prod(1)),
    "where": (normal((3, 4), (4,)),
              lambda a, b: ak.where(ak.tensor(np.eye(3, 4, dtype=bool)), a * a, b.exp())),
    "mse-loss": (normal((3, 4), (3, 4)), lambda x, y: loss.mse_loss(x, y)),
    "cross-entropy": (normal((3, 4)), lambda x: loss.cross_entropy(x, ak.tensor(TARGET))),
    "binary-cross-entropy": (uniform(0.1, 0.9, (2, 3), (2, 3)),
                             lambda p, y: loss.binary_cross_entropy(p, y)),
    "rsqrt": (positive((2, 3)), lambda x: x.rsqrt()),
    "reciprocal": (nonzero((2, 3)), lambda x: x.reciprocal()),
    # piecewise ops: inputs on a grid that keeps away from kinks and ties
    "relu": (distinct((3, 4)), lambda x: x.relu() ** 2),
    "leaky-relu": (distinct((3, 4)), lambda x: ak.leaky_relu(x, 0.2) ** 2),
    "abs": (distinct((3, 4)), lambda x: x.abs() ** 3),
    "clamp": (distinct((3, 4)), lambda x: x.clamp(-0.5, 0.5) * x),
    "maximum": (distinct((3, 1), (4,)), lambda a, b: ak.maximum(a, b) ** 2),
    "amax": (distinct((3, 4)), lambda x: x.amax(1) ** 2),
    "max-dim": (distinct((3, 4)), lambda x: x.max(0).values ** 2),
    # moving numbers around
    "cat-stack": (normal((2, 3), (1, 3)),
                  lambda a, b: ak.stack([ak.cat([a, b]), ak.cat([b, a])], 1) ** 2),
    "expand-repeat": (normal((3, 1)), lambda x: x.expand(3, 4).repeat(2, 1) ** 3),
    "permute-reshape": (normal((2, 3, 2)), lambda x: x.permute(2, 0, 1).reshape(4, 3).sin()),
    "masked-fill": (normal((3, 4)),
                    lambda x: x.masked_fill(ak.tensor(np.eye(3, 4, dtype=bool)), 1.0) ** 3),
    # in-place changes: an index_put, and an op on a view (the base gets CopySlices)
    "setitem-mask": (normal((3, 4), (3,)), lambda x, v: _put_mask(x, v) ** 3),
    "inplace-on-view": (normal((3, 4)), lambda x: _scale_row(x) ** 3),
}


def _inputs(name, device="cpu"):
    draw, _ = SECOND_ORDER[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    return tuple(leaf(a, device) for a in draw(rng))


def first_derivative(fn):
    """inputs -> gradients of sum(fn(inputs)), made with create_graph=True.
    Grad mode is forced on: central differences call this under no_grad."""
    def first(*xs):
        with ak.enable_grad():
            return grad(fn(*xs).sum(), xs, create_graph=True)
    return first


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivative_matches_central_differences(name):
    """The Jacobian of the first gradient (the Hessian, with cross terms between
    inputs) against central differences of that gradient."""
    _, fn = SECOND_ORDER[name]
    inputs = _inputs(name)
    first = first_derivative(fn)
    assert all(g.requires_grad for g in first(*inputs)), "first gradient is not differentiable"
    assert gradcheck(first, inputs)


GRADGRAD_OPS = ["mul", "div", "exp", "tanh", "sum", "matmul", "index-select", "index-list"]


@pytest.mark.parametrize("name", GRADGRAD_OPS)
def test_gradgradcheck(name):
    """The library's own gradgradcheck on a handful of ops."""
    _, fn = SECOND_ORDER[name]
    assert gradgradcheck(fn, _inputs(name))


def test_gradgradcheck_catches_a_wrong_second_derivative():
    """A custom Function whose backward is right at first order but built from a
    detached value, so its second derivative is wrong: gradgradcheck must see it."""
    class SquareDetached(ak.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()

    x = leaf([0.5, -1.0, 2.0])
    assert gradcheck(SquareDetached.apply, (x,))
    with pytest.raises(ak.autograd.GradcheckError):
        gradcheck(first_derivative(SquareDetached.apply), (x,))
