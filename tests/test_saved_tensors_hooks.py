"""``autograd.graph.saved_tensors_hooks`` and ``save_on_cpu``: what nodes save goes
through the pack hook; backward (and ``grad_fn._saved_*``) through the unpack hook."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.autograd.graph import (disable_saved_tensors_hooks, save_on_cpu,
                                         saved_tensors_hooks)

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _trace(lib, x_values):
    """Shapes packed and unpacked, in order, for y = exp(x) * x; backward."""
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    x = lib.tensor(x_values, requires_grad=True)
    with saved_tensors_hooks(pack, unpack) if lib is ak else \
            lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()
    packed = list(log)
    y.backward()
    return packed, log[len(packed):], x.grad.numpy()


def test_every_saved_tensor_is_packed_and_unpacked_once():
    packed, unpacked, grad = _trace(ak, [0.5, -1.0])
    assert packed == [("pack", (2,))] * 3   # exp's result, mul's self and other
    assert unpacked == [("unpack", (2,))] * 3
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(grad, np.exp(x) * (1 + x))


def test_the_unpack_hook_decides_what_backward_sees():
    x = ak.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: "a token", lambda p: ak.ones(3)):
        y = x * x
    assert y.grad_fn._saved_self.tolist() == [1.0, 1.0, 1.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]   # 1 + 1, not 2x


def test_what_the_pack_hook_computes_is_saved_plainly():
    x = ak.tensor([0.5, 1.5], requires_grad=True)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append(1) or t.exp(), lambda p: p.log()):
        y = x.sin()
    assert len(calls) == 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.5]))


def test_errors_and_second_backward():
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda p: "bad"):
        y = x.sin().sum()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a "
                                        "Tensor but got result of type str"):
        y.backward()
    with saved_tensors_hooks(lambda t: t, lambda p: p):
        y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda p: p):
                pass


def test_save_on_cpu_changes_nothing_on_the_cpu():
    x = ak.tensor([0.3, 0.7], requires_grad=True)
    with save_on_cpu():
        y = (x.tanh() * x).sum()
    y.backward()
    t = np.tanh([0.3, 0.7])
    np.testing.assert_allclose(x.grad.numpy(), t + np.array([0.3, 0.7]) * (1 - t * t))


def test_double_backward_through_hooked_outputs():
    x = ak.tensor([0.2, 0.4], dtype=ak.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda p: p):
        y = x.exp().sum()
    (g,) = ak.autograd.grad(y, x, create_graph=True)
    (gg,) = ak.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([0.2, 0.4]))


@needs_torch
def test_same_calls_as_pytorch():
    mine, theirs = _trace(ak, [0.5, -1.0, 2.0]), _trace(torch, [0.5, -1.0, 2.0])
    assert mine[0] == theirs[0] and mine[1] == theirs[1]
    np.testing.assert_allclose(mine[2], theirs[2])
