"""``autograd.functional`` by math, and against PyTorch when it is installed.

The math: the Jacobian of x ↦ A x is A; the Hessian of x ↦ ½ xᵀ M x is
(M + Mᵀ)/2 ... (here M symmetric: M); vjp/jvp/vhp/hvp are products with those
matrices; a Jacobian built by the kit agrees with central differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.autograd import functional as AF

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def t64(a):
    return ak.tensor(a, dtype=ak.float64)


@pytest.fixture
def linear_and_quadratic(rng):
    A = rng.standard_normal((2, 3))
    M = rng.standard_normal((3, 3))
    M = M + M.T
    return A, M, rng.standard_normal(3)


def test_jacobian_of_a_linear_map_is_its_matrix(linear_and_quadratic):
    A, _, x = linear_and_quadratic
    J = AF.jacobian(lambda v: t64(A) @ v, t64(x))
    np.testing.assert_allclose(J.numpy(), A)
    assert not J.requires_grad


def test_hessian_of_a_quadratic_form(linear_and_quadratic):
    _, M, x = linear_and_quadratic
    f = lambda v: 0.5 * v @ (t64(M) @ v)  # noqa: E731
    np.testing.assert_allclose(AF.hessian(f, t64(x)).numpy(), M)
    v = np.arange(3.0)
    value, hv = AF.hvp(f, t64(x), t64(v))
    np.testing.assert_allclose(hv.numpy(), M @ v)
    assert float(value) == pytest.approx(0.5 * x @ M @ x)
    np.testing.assert_allclose(AF.vhp(f, t64(x), t64(v))[1].numpy(), v @ M)


def test_vjp_and_jvp_are_products_with_the_jacobian(linear_and_quadratic):
    A, _, x = linear_and_quadratic
    f = lambda v: (t64(A) @ v).tanh()  # noqa: E731
    J = AF.jacobian(f, t64(x)).numpy()
    u, w = np.array([1.0, -2.0]), np.array([0.5, 1.0, -1.0])
    out, uJ = AF.vjp(f, t64(x), t64(u))
    np.testing.assert_allclose(uJ.numpy(), u @ J)
    np.testing.assert_allclose(out.numpy(), np.tanh(A @ x))
    np.testing.assert_allclose(AF.jvp(f, t64(x), t64(w))[1].numpy(), J @ w)


def test_jacobian_matches_central_differences(rng):
    x = rng.standard_normal(4)
    f = lambda v: ak.stack([v.exp().sum(), (v[:2] * v[2:]).sum(), v.sin().prod()])  # noqa
    J = AF.jacobian(f, t64(x)).numpy()
    eps, num = 1e-6, np.zeros((3, 4))
    for j in range(4):
        e = np.zeros(4)
        e[j] = eps
        num[:, j] = (f(t64(x + e)).numpy() - f(t64(x - e)).numpy()) / (2 * eps)
    np.testing.assert_allclose(J, num, rtol=1e-6, atol=1e-8)


def test_tuples_of_inputs_and_outputs_nest_as_in_pytorch(rng):
    a, b = t64(rng.standard_normal(3)), t64(rng.standard_normal(2))
    jac = AF.jacobian(lambda x, y: (x * 2, y.sum() * x), (a, b))
    assert [[tuple(j.shape) for j in row] for row in jac] == [[(3, 3), (3, 2)], [(3, 3), (3, 2)]]
    np.testing.assert_allclose(jac[0][1].numpy(), np.zeros((3, 2)))
    hess = AF.hessian(lambda x, y: (x * y.sum()).sum(), (a, b))
    np.testing.assert_allclose(hess[0][1].numpy(), np.ones((3, 2)))
    np.testing.assert_allclose(hess[0][0].numpy(), np.zeros((3, 3)))


def test_inputs_are_not_changed_and_create_graph_keeps_history(rng):
    x = ak.tensor(rng.standard_normal(3), dtype=ak.float64, requires_grad=True)
    H = AF.hessian(lambda v: (v ** 3).sum(), x, create_graph=True)
    assert H.requires_grad and x.grad is None
    H.trace().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 6.0))
    assert not AF.jacobian(lambda v: v * v, x).requires_grad


def test_strict_refuses_an_output_that_ignores_an_input():
    x, y = t64([1.0, 2.0]), t64([3.0])
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is "
                                           "independent of input 1. This is not allowed"):
        AF.vjp(lambda a, b: a * 2, (x, y), t64([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        AF.vjp(lambda a: a.detach() * 2, x, t64([1.0, 1.0]), strict=True)
    np.testing.assert_allclose(AF.jacobian(lambda a, b: a * 2, (x, y))[1].numpy(),
                               np.zeros((2, 1)))


@pytest.mark.parametrize("call, error, message", [
    (lambda: AF.vjp(lambda a: a * 2, ak.ones(2)), RuntimeError,
     "The vector v can only be None if the user-provided function returns a single Tensor "
     "with a single element."),
    (lambda: AF.jvp(lambda a: a * 2, ak.ones(2)), RuntimeError,
     "The vector v can only be None if the input to the user-provided function is a single "
     "Tensor with a single element."),
    (lambda: AF.vjp(lambda a: a * 2, ak.ones(2), ak.ones(3)), RuntimeError,
     "v has invalid size: should be torch.Size([2]) but got torch.Size([3])."),
    (lambda: AF.hessian(lambda a: a * 2, ak.ones(2)), RuntimeError,
     "The Tensor returned by the function given to hessian should contain a single element"),
    (lambda: AF.hvp(lambda a: (a, a), ak.ones(2), ak.ones(2)), RuntimeError,
     "The function given to hvp should return a single Tensor"),
    (lambda: AF.jacobian(lambda a: a, [ak.ones(2)]), TypeError,
     "The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the given "
     "inputs has type <class 'list'>."),
    (lambda: AF.vjp(lambda a: 3.0, (ak.ones(2),)), TypeError,
     "The outputs of the user-provided function given to vjp must be either a Tensor or a "
     "tuple of Tensors but the given outputs of the user-provided function has type "
     "<class 'float'>."),
])
def test_errors(call, error, message):
    with pytest.raises(error) as err:
        call()
    assert str(err.value) == message


@needs_torch
@pytest.mark.parametrize("create_graph", [False, True])
def test_against_pytorch(create_graph, rng):
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    v2, v3 = rng.standard_normal(2), rng.standard_normal(3)

    def run(lib):
        A, F = lib.tensor(y), lib.autograd.functional
        f = lambda a: (A @ a.exp()) * a[:2]  # noqa: E731
        g = lambda a: (a.sin() * a).sum() + (a ** 3).sum() * a[0]  # noqa: E731
        h = lambda a, b: (a * b.exp()).sum()  # noqa: E731
        X = lib.tensor(x, requires_grad=create_graph)
        kw = {"create_graph": create_graph}
        out = [F.jacobian(f, X, **kw), F.hessian(g, X, **kw)]
        out += list(F.vjp(f, X, lib.tensor(v2), **kw)) + list(F.jvp(f, X, lib.tensor(v3), **kw))
        out += list(F.vhp(g, X, lib.tensor(v3), **kw)) + list(F.hvp(g, X, lib.tensor(v3), **kw))
        hh = F.hessian(h, (X, X * 2), **kw)
        out += [hh[i][j] for i in range(2) for j in range(2)]
        jj = F.jacobian(lambda a, b: (a * b, a.sum()), (X, X), **kw)
        jv = F.jacobian(lambda a, b: (a * b, a.sum()), (X, X), vectorize=True)
        return out + [jj[i][j] for i in range(2) for j in range(2)] + [jv[1][0]]

    for a, b in zip(run(ak), run(torch)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                   atol=1e-14)
        assert a.requires_grad == b.requires_grad
