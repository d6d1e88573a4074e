"""The defects named in the engine issue, each by its exact case, against PyTorch
where it is installed (and against what the kit must do where it is not)."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


LIBS = [pytest.param("kit", id="kit"), pytest.param("torch", id="torch")]


def _lib(name):
    if name == "kit":
        return ak
    torch = _torch()
    if torch is None:
        pytest.skip("PyTorch is not installed")
    return torch


@pytest.mark.parametrize("lib", LIBS)
def test_is_inference_is_a_function_and_a_method(lib):
    t = _lib(lib)
    plain = t.zeros(2)
    grows = t.ones(3, requires_grad=True)
    with t.inference_mode():
        made = t.zeros(2)
        view = grows.view(3)
    assert (t.is_inference(plain), plain.is_inference()) == (False, False)
    assert (t.is_inference(made), made.is_inference()) == (True, True)
    assert t.is_inference(view) is False  # a view of a normal tensor stays normal


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("size, shape", [((2, 3), (2, 3)), ((4, 2, -1), (4, 2, 3)),
                                         ([3], (3,)), ((1, 3), (1, 3))])
def test_broadcast_to_is_expand(lib, size, shape):
    """Named: broadcast_to was missing (function and method)."""
    t = _lib(lib)
    x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for y in (t.broadcast_to(x, size), x.broadcast_to(size)):
        assert tuple(y.shape) == shape
        assert y.grad_fn.name() == "ExpandBackward0"
        x.grad = None
        (y * t.arange(3, dtype=y.dtype)).sum().backward()
        copies = int(np.prod(shape[:-1]))
        np.testing.assert_allclose(x.grad.detach().numpy(), copies * np.arange(3.0))


def test_broadcast_to_refuses_what_expand_refuses():
    x = ak.zeros(3)
    with pytest.raises(RuntimeError) as kit_err:
        ak.broadcast_to(x, (2, 4))
    torch = _torch()
    if torch is not None:
        with pytest.raises(RuntimeError) as torch_err:
            torch.broadcast_to(torch.zeros(3), (2, 4))
        assert str(kit_err.value) == str(torch_err.value)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("mode", ["inference_mode", "no_grad"])
@pytest.mark.parametrize("make", ["leaf", "non-leaf"])
def test_a_view_made_where_nothing_records_requires_grad(lib, mode, make):
    """Named: a view made inside inference_mode of a tensor that requires grad had
    requires_grad=False.  PyTorch: True, a leaf without grad_fn, and no
    accumulator: ops on it record a node whose edge to it is None, and backward
    reaches neither the view nor its base."""
    t = _lib(lib)
    a = t.ones(3, requires_grad=True)
    base = a if make == "leaf" else a * 2
    with getattr(t, mode)():
        v = base.view(3)
        w = base[1:]
        vv = v.view(3)
    for view in (v, w, vv):
        assert (view.requires_grad, view.grad_fn, view.is_leaf) == (True, None, True)
        assert view.is_inference() is False
    y = (v * 2).sum()
    assert y.requires_grad
    mul = y.grad_fn.next_functions[0][0]
    assert [fn for fn, _ in mul.next_functions] == [None, None]
    y.backward()
    assert a.grad is None and v.grad is None


def _function_nodes(t):
    """The two nodes a custom Function leaves where PyTorch names them CopySlices and
    Error: an input view changed in place (mark_dirty), and a second derivative
    through a once_differentiable backward."""
    once = t.autograd.function.once_differentiable

    class Square(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    class Double(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = t.ones(2, requires_grad=True)
    (g,) = t.autograd.grad(Square.apply(x), x, t.ones(2, requires_grad=True),
                           create_graph=True)
    b = t.ones(4, requires_grad=True) * 1
    Double.apply(b[1:3])
    return g.grad_fn, b.grad_fn


@pytest.mark.parametrize("lib", LIBS)
def test_function_nodes_carry_pytorchs_class_names(lib):
    """Named: the kit showed _DelayedError and _DirtyViewSlices."""
    error, slices = _function_nodes(_lib(lib))
    assert (type(error).__name__, error.name()) == ("Error", "torch::autograd::Error")
    assert (type(slices).__name__, slices.name()) == ("CopySlices",
                                                      "torch::autograd::CopySlices")
    assert repr(error).startswith("<Error object at ")
    assert repr(slices).startswith("<CopySlices object at ")
