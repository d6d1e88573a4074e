"""conv2d, max_pool2d, unfold/fold and the image layers, by math and against PyTorch.

Without PyTorch the tests still check the numbers: a convolution computed by
explicit loops, max pooling by a loop over windows, second derivatives by
``gradgradcheck``.  With PyTorch installed, values, gradients, node names,
saved attributes, printed layers and error messages are compared.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import nn
from autograd_kit.autograd import gradcheck, gradgradcheck
from autograd_kit.nn import functional as F

try:
    import torch
except ImportError:  # the math checks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def loop_conv2d(x, w, b, stride, padding, dilation):
    """The definition, one output element at a time (float64 numpy)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = slice(i * sh, i * sh + dh * (kh - 1) + 1, dh)
            cols = slice(j * sw, j * sw + dw * (kw - 1) + 1, dw)
            patch = xp[:, :, rows, cols]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w) + (0 if b is None else b)
    return out


GEOMETRIES = [  # (x shape, w shape, stride, padding, dilation)
    ((2, 3, 7, 7), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1)),
    ((1, 2, 8, 6), (3, 2, 3, 2), (2, 1), (1, 2), (1, 1)),
    ((2, 1, 9, 9), (2, 1, 3, 3), (2, 2), (2, 1), (2, 3)),
    ((1, 1, 5, 5), (1, 1, 5, 5), (1, 1), (0, 0), (1, 1)),
]


@pytest.mark.parametrize("xs, ws, stride, padding, dilation", GEOMETRIES)
def test_conv2d_matches_the_definition(xs, ws, stride, padding, dilation, rng):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    out = F.conv2d(ak.tensor(x), ak.tensor(w), ak.tensor(b), stride, padding, dilation)
    np.testing.assert_allclose(out.numpy(), loop_conv2d(x, w, b, stride, padding, dilation),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("xs, ws, stride, padding, dilation", GEOMETRIES[:3])
def test_conv2d_gradients_and_second_derivatives(xs, ws, stride, padding, dilation, rng):
    inputs = tuple(ak.tensor(rng.standard_normal(s), requires_grad=True)
                   for s in (xs, ws, (ws[0],)))
    fn = lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation)  # noqa: E731
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_max_pool2d_matches_a_loop_and_routes_the_gradient_to_the_winner(rng):
    x = rng.permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6).astype(float)
    t = ak.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(t, 3, stride=2, padding=1, return_indices=True)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    want = np.array([[[[padded[n, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max()
                        for j in range(3)] for i in range(3)] for c in range(3)]
                     for n in range(2)])
    np.testing.assert_array_equal(out.detach().numpy(), want)
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  want.reshape(2, 3, -1))
    out.sum().backward()
    counts = np.zeros_like(flat)
    for n in range(2):
        for c in range(3):
            np.add.at(counts[n, c], idx.numpy()[n, c].ravel(), 1)
    np.testing.assert_array_equal(t.grad.numpy().reshape(2, 3, -1), counts)


def test_max_pool2d_second_derivative(rng):
    x = ak.tensor(rng.permutation(32).reshape(1, 2, 4, 4) * 0.25, requires_grad=True)
    assert gradgradcheck(lambda v: F.max_pool2d(v, 2) ** 3, (x,))


def test_unfold_and_fold_are_adjoint(rng):
    """<unfold(x), c> = <x, fold(c)>: each is the other's transpose."""
    x, c = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3 * 6, 12))
    u = F.unfold(ak.tensor(x), (2, 3), padding=1, stride=2)
    f = F.fold(ak.tensor(c), (6, 5), (2, 3), padding=1, stride=2)
    assert u.shape == (2, 18, 12)
    assert float((u * ak.tensor(c)).sum()) == pytest.approx(float((ak.tensor(x) * f).sum()))


def test_conv2d_layer_default_init_bounds_and_shapes():
    layer = nn.Conv2d(3, 6, 5)
    assert layer.weight.shape == (6, 3, 5, 5) and layer.bias.shape == (6,)
    bound = 1 / math.sqrt(3 * 5 * 5)
    assert float(layer.weight.abs().max()) <= bound and float(layer.bias.abs().max()) <= bound
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert layer(ak.zeros(2, 3, 32, 32)).shape == (2, 6, 28, 28)
    assert nn.Conv2d(1, 1, 3, bias=False).bias is None


def test_lenet_from_the_blitz_runs_and_learns():
    """The classic LeNet (two conv + pool stages, flatten with view, three linear layers)."""
    ak.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), \
                nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, 16 * 5 * 5)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    net = Net()
    assert len(list(net.parameters())) == 10
    x, target = ak.randn(4, 1, 32, 32), ak.randn(4, 10)
    opt = ak.optim.SGD(net.parameters(), lr=0.01)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = nn.MSELoss()(net(x), target)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    assert net.conv1.bias.grad.shape == (6,)


@pytest.mark.parametrize("call, message", [
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8), ak.zeros(6, 4, 3, 3)),
     "Given groups=1, weight of size [6, 4, 3, 3], expected input[1, 3, 8, 8] to have 4 "
     "channels, but got 3 channels instead"),
    (lambda: F.conv2d(ak.zeros(3, 8), ak.zeros(6, 3, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 8]"),
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8), ak.zeros(6, 3, 9, 9)),
     "Calculated padded input size per channel: (8 x 8). Kernel size: (9 x 9). Kernel size "
     "can't be greater than actual input size"),
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8), ak.zeros(6, 3, 3, 3), ak.zeros(5)),
     "Given weight of size [6, 3, 3, 3], expected bias to be 1-dimensional with 6 elements, "
     "but got bias of size [5] instead"),
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8), ak.zeros(6, 3, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8), ak.zeros(6, 3, 3, 3), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8), ak.zeros(6, 3, 3, 3), stride=(1, 2, 3)),
     "expected stride to be a single integer value or a list of 2 values to match the "
     "convolution dimensions, but got stride=[1, 2, 3]"),
    (lambda: F.conv2d(ak.zeros(1, 3, 8, 8, dtype=ak.float64), ak.zeros(6, 3, 3, 3)),
     "expected scalar type Double but found Float"),
    (lambda: F.max_pool2d(ak.zeros(1, 3, 8, 8), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    (lambda: F.max_pool2d(ak.zeros(1, 3, 8, 8), 9),
     "Given input size: (3x8x8). Calculated output size: (3x0x0). Output size is too small"),
    (lambda: F.max_pool2d(ak.zeros(8, 8), 2),
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda: F.max_pool2d(ak.zeros(1, 3, 8, 8), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
])
def test_shape_errors_use_pytorchs_words(call, message):
    with pytest.raises(RuntimeError) as err:
        call()
    assert str(err.value) == message


# ------------------------------------------------------------ with PyTorch --
def _both(arrays, requires_grad=True):
    return ([ak.tensor(a, requires_grad=requires_grad) for a in arrays],
            [torch.tensor(a, requires_grad=requires_grad) for a in arrays])


@needs_torch
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("kwargs", [
    {}, {"stride": 2, "padding": 1}, {"padding": (0, 2), "dilation": (2, 1)},
    {"padding": "same"}, {"padding": "valid", "stride": (2, 3)},
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_against_pytorch(kwargs, bias, rng):
    arrays = [rng.standard_normal((2, 3, 7, 8)), rng.standard_normal((4, 3, 3, 2))]
    if bias:
        arrays.append(rng.standard_normal(4))
    mine, theirs = _both(arrays)
    ya, yt = F.conv2d(*mine, **kwargs), torch.nn.functional.conv2d(*theirs, **kwargs)
    assert ya.shape == tuple(yt.shape)
    np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = rng.standard_normal(tuple(yt.shape))
    ya.backward(ak.tensor(seed))
    yt.backward(torch.tensor(seed))
    for a, t in zip(mine, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert ya.grad_fn.name() == yt.grad_fn.name() == "ConvolutionBackward0"
    assert len(ya.grad_fn.next_functions) == len(yt.grad_fn.next_functions) == 3
    assert (ya.grad_fn.next_functions[2][0] is None) == (yt.grad_fn.next_functions[2][0] is None)
    if not isinstance(kwargs.get("padding"), str):  # (for "valid" PyTorch shows (0,))
        for name in ("stride", "padding", "dilation", "groups", "transposed", "output_padding"):
            assert tuple(np.atleast_1d(getattr(ya.grad_fn, "_saved_" + name))) == \
                tuple(np.atleast_1d(getattr(yt.grad_fn, "_saved_" + name))), name


@needs_torch
@pytest.mark.parametrize("args, kwargs", [
    ((2,), {}), ((3,), {"stride": 2, "padding": 1}), ((3, 1), {"dilation": 2}),
    (((2, 3),), {"stride": (1, 2), "ceil_mode": True}), ((3, 2, 1), {"ceil_mode": True}),
])
def test_max_pool2d_against_pytorch(args, kwargs, rng):
    x = rng.permutation(2 * 2 * 7 * 9).reshape(2, 2, 7, 9).astype(float)
    (a,), (t,) = _both([x])
    ya, ia = F.max_pool2d(a, *args, return_indices=True, **kwargs)
    yt, it = torch.nn.functional.max_pool2d(t, *args, return_indices=True, **kwargs)
    np.testing.assert_array_equal(ya.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(ia.numpy(), it.numpy())
    assert ya.grad_fn.name() == yt.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    seed = rng.standard_normal(tuple(yt.shape))
    ya.backward(ak.tensor(seed))
    yt.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy())
    assert ya.grad_fn._saved_kernel_size == yt.grad_fn._saved_kernel_size


@needs_torch
def test_unbatched_nan_and_double_backward_against_pytorch(rng):
    x = rng.standard_normal((3, 6, 6))
    x[0, 1, 1] = np.nan
    (a,), (t,) = _both([x])
    np.testing.assert_array_equal(F.max_pool2d(a, 2).detach().numpy(),
                                  torch.nn.functional.max_pool2d(t, 2).detach().numpy())
    w = rng.standard_normal((2, 3, 3, 3))
    (wa, xa), (wt, xt) = _both([w, rng.standard_normal((1, 3, 5, 5))])
    for lib, fn, ww, xx in ((ak, F.conv2d, wa, xa), (torch, torch.nn.functional.conv2d, wt, xt)):
        y = (fn(xx, ww, padding=1) ** 2).sum()
        (g,) = lib.autograd.grad(y, xx, create_graph=True)
        (g * g).sum().backward()
    np.testing.assert_allclose(wa.grad.numpy(), wt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


@needs_torch
def test_layers_print_and_count_as_in_pytorch():
    pairs = [
        (lambda m: m.Conv2d(3, 6, 5)), (lambda m: m.Conv2d(1, 4, (3, 5), stride=2, padding=1,
                                                           bias=False)),
        (lambda m: m.Conv2d(2, 2, 3, dilation=2, padding="same")),
        (lambda m: m.MaxPool2d(2)), (lambda m: m.MaxPool2d((2, 3), stride=1, padding=1,
                                                           ceil_mode=True)),
        (lambda m: m.Flatten()), (lambda m: m.Unflatten(1, (2, 3))),
    ]
    for make in pairs:
        assert repr(make(nn)) == repr(make(torch.nn))
    mine, theirs = nn.Conv2d(3, 6, 5), torch.nn.Conv2d(3, 6, 5)
    assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]


@needs_torch
@pytest.mark.parametrize("call", [
    lambda F: F.conv2d(F_zeros(1, 3, 8, 8), F_zeros(6, 3, 3, 3), padding="foo"),
    lambda F: F.conv2d(F_zeros(1, 3, 8, 8), F_zeros(6, 3, 3, 3), dilation=0),
    lambda F: F.conv2d(F_zeros(1, 3, 8, 8), F_zeros(6, 3, 3, 3), padding=-1),
    lambda F: F.max_pool2d(F_zeros(1, 3, 8, 8), 2, stride=0),
    lambda F: F.max_pool2d(F_zeros(1, 3, 8, 8), 0, 1),
    lambda F: F.max_pool2d(F_zeros(1, 3, 0, 8), 2),
    lambda F: F.fold(F_zeros(2, 12, 6), (4, 5), (2, 3), padding=1, stride=2),
    lambda F: F.fold(F_zeros(2, 13, 9), (4, 5), (2, 3), padding=1, stride=2),
])
def test_more_errors_against_pytorch(call):
    global F_zeros
    messages = []
    for lib, fn in ((ak, F), (torch, torch.nn.functional)):
        F_zeros = lib.zeros
        with pytest.raises(Exception) as err:
            call(fn)
        messages.append((type(err.value).__name__, str(err.value)))
    assert messages[0] == messages[1]


F_zeros = ak.zeros


# ----------------------------------------------------------- average pooling --
def test_avg_pool2d_is_the_window_mean(rng):
    x = rng.standard_normal((1, 2, 4, 6))
    out = F.avg_pool2d(ak.tensor(x), (2, 3))
    np.testing.assert_allclose(out.numpy(), x.reshape(1, 2, 2, 2, 2, 3).mean(axis=(3, 5)))
    t = ak.tensor(x, requires_grad=True)
    F.adaptive_avg_pool2d(t, (2, 3)).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.full(x.shape, 1 / 4))
    assert nn.AdaptiveAvgPool2d(1)(t).grad_fn.name() == "MeanBackward1"


@needs_torch
@pytest.mark.parametrize("args, kwargs", [
    ((2,), {}), ((3,), {"stride": 2, "padding": 1}),
    ((3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    (((2, 3),), {"stride": (1, 2), "ceil_mode": True, "padding": (1, 1)}),
])
def test_avg_pool2d_against_pytorch(args, kwargs, rng):
    x = rng.standard_normal((2, 2, 7, 9))
    (a,), (t,) = _both([x])
    ya = F.avg_pool2d(a, *args, **kwargs)
    yt = torch.nn.functional.avg_pool2d(t, *args, **kwargs)
    np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    seed = rng.standard_normal(tuple(yt.shape))
    ya.backward(ak.tensor(seed))
    yt.backward(torch.tensor(seed))
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert ya.grad_fn.name() == yt.grad_fn.name()


@needs_torch
@pytest.mark.parametrize("size", [1, 3, (2, 4), (None, 2), (5, 9)])
def test_adaptive_avg_pool2d_against_pytorch(size, rng):
    x = rng.standard_normal((2, 3, 7, 9))
    (a,), (t,) = _both([x])
    ya = F.adaptive_avg_pool2d(a, size)
    yt = torch.nn.functional.adaptive_avg_pool2d(t, size)
    np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    (ya * ya).sum().backward()
    (yt * yt).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert ya.grad_fn.name() == yt.grad_fn.name()
    for make in (lambda m: m.AvgPool2d(2), lambda m: m.AdaptiveAvgPool2d(size)):
        assert repr(make(nn)) == repr(make(torch.nn))
