"""Average pooling: ``avg_pool2d`` and ``adaptive_avg_pool2d``.

``avg_pool2d``: the mean of each kH×kW window, computed with ``im2col`` (see
``conv.py``): the windows become columns, each column is averaged.  Backward
spreads each window's gradient evenly over it: col2im of g/divisor.  The divisor
is kH·kW, or (``count_include_pad=False``) the number of real pixels in the window.
Under ``create_graph`` that backward is PyTorch's kernel, one recorded node
(AvgPool2DBackwardBackward0); being linear in g, its own gradient is the
average pool of the incoming gradient again.

``adaptive_avg_pool2d(x, (oH, oW))``: the window sizes are chosen for you, so
that the output has that size: output row i averages input rows
⌊i·H/oH⌋ .. ⌈(i+1)·H/oH⌉ - 1 (and the same for columns).  ``output_size=1`` is the
global average over the image.
"""
from __future__ import annotations

import math

from .. import backend
from ._rules import record, rule
from .conv import col2im, unfold_array
from .formula_env import ENV, _is_tensor, _raw


def _divisors(xp, size, kernel, padding, stride, out, include_pad):
    """How many pixels each window averages: shape (oH·oW,)."""
    counts = []
    for n, k, p, s, o in zip(size, kernel, padding, stride, out):
        start = xp.arange(o) * s - p                      # in unpadded coordinates
        lo = xp.maximum(start, -p if include_pad else 0)  # the window, cut to the image
        hi = xp.minimum(start + k, n + p if include_pad else n)
        counts.append(hi - lo)
    return (counts[0][:, None] * counts[1][None, :]).reshape(-1)


def avg_pool_array(a, kernel, stride, padding, count_include_pad, out):
    """The mean of each window of an array (N, C, H, W)."""
    xp = backend.xp_of(a)
    n, c, h, w = a.shape
    cols = unfold_array(a.reshape(n * c, 1, h, w), kernel, (1, 1), padding, stride, out)
    divisor = _divisors(xp, (h, w), kernel, padding, stride, out, count_include_pad)
    return (cols.sum(axis=1) / divisor).astype(a.dtype).reshape(n, c, *out)


def avg_pool2d_forward(x, kernel, stride, padding, ceil_mode, count_include_pad, out):
    values = avg_pool_array(x._data, kernel, stride, padding, count_include_pad, out)
    return record(AvgPool2DBackward0, values, (x,), self=x, kernel_size=kernel, stride=stride,
                  padding=padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                  divisor_override=None)


def _edges(n, o):
    return [(math.floor(i * n / o), math.ceil((i + 1) * n / o)) for i in range(o)]


def adaptive_avg_pool2d_array(a, out):
    """The average of each adaptive window of an array (N, C, H, W)."""
    xp = backend.xp_of(a)
    rows, cols = _edges(a.shape[-2], out[0]), _edges(a.shape[-1], out[1])
    result = xp.empty(a.shape[:-2] + tuple(out), dtype=a.dtype)
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            result[..., i, j] = a[..., r0:r1, c0:c1].mean(axis=(-2, -1))
    return result


def adaptive_avg_pool2d_forward(x, out):
    return record(AdaptiveAvgPool2DBackward0, adaptive_avg_pool2d_array(x._data, out), (x,),
                  self=x)


# ------------------------------------------------- words of the formulas ---
def avg_pool_grad(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    """Each window's gradient, divided by its divisor, goes to all its pixels
    (col2im of g / divisor).  On Tensors PyTorch's kernel, recorded as one node,
    AvgPool2DBackwardBackward0, whose inputs are g and the pooled input."""
    ga = _raw(g)
    n, c, h, w = self.shape
    out = tuple(ga.shape[-2:])
    xp = backend.xp_of(ga)
    share = 1.0 / _divisors(xp, (h, w), kernel_size, padding, stride, out, count_include_pad)
    offsets, windows = kernel_size[0] * kernel_size[1], out[0] * out[1]
    spread = xp.ones((1, 1, offsets, windows), dtype=ga.dtype) * share.astype(ga.dtype)
    cols = ga.reshape(n, c, 1, windows) * spread
    grad = col2im(cols.reshape(n, c * offsets, windows), (h, w), kernel_size, (1, 1),
                  padding, stride, out)
    if _is_tensor(g):
        return record(AvgPool2DBackwardBackward0, grad, (g, self), kernel_size=kernel_size,
                      stride=stride, padding=padding, ceil_mode=ceil_mode,
                      count_include_pad=count_include_pad, divisor_override=None)
    return grad


def avg_pool_again(g, kernel_size, stride, padding, ceil_mode, count_include_pad):
    """The kernel's gradient for g: the average pool of the incoming gradient
    (the kernel is linear in g, and its transpose is the pool itself)."""
    from .conv import out_len
    out = tuple(out_len(s, k, 1, p, st, ceil_mode) for s, k, p, st in
                zip(g.shape[-2:], kernel_size, padding, stride))
    if _is_tensor(g):
        return avg_pool2d_forward(g, kernel_size, stride, padding, ceil_mode,
                                  count_include_pad, out)
    return avg_pool_array(g, kernel_size, stride, padding, count_include_pad, out)


def adaptive_avg_pool_grad(g, self):
    """Each output's gradient, shared evenly by the pixels of its window; on Tensors
    a recorded step whose own gradient is the adaptive average again."""
    ga = _raw(g)
    xp = backend.xp_of(ga)
    grad = xp.zeros(tuple(self.shape), dtype=ga.dtype)
    rows, cols = _edges(self.shape[-2], ga.shape[-2]), _edges(self.shape[-1], ga.shape[-1])
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            grad[..., r0:r1, c0:c1] += ga[..., i:i + 1, j:j + 1] / ((r1 - r0) * (c1 - c0))
    if _is_tensor(g):
        # (its inputs, as PyTorch's: g, and the input, whose gradient is zero)
        return record(AdaptiveAvgPool2DBackwardBackward0, grad, (g, self),
                      grad_output_sym_argsize_minus_2=ga.shape[-2],
                      grad_output_sym_argsize_minus_1=ga.shape[-1])
    return grad


def adaptive_average(g, sizes):
    if _is_tensor(g):
        return adaptive_avg_pool2d_forward(g, tuple(sizes))
    return adaptive_avg_pool2d_array(g, tuple(sizes))


ENV.update({"avg_pool_grad": avg_pool_grad, "avg_pool_again": avg_pool_again,
            "adaptive_avg_pool_grad": adaptive_avg_pool_grad,
            "adaptive_average": adaptive_average})

# Backward formulas: g is the gradient of the output; one formula per input.
AvgPool2DBackward0 = rule(
    "AvgPool2DBackward0", "self kernel_size stride padding ceil_mode count_include_pad "
    "divisor_override",
    self="avg_pool_grad(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad)")
AvgPool2DBackwardBackward0 = rule(
    "AvgPool2DBackwardBackward0", "kernel_size stride padding ceil_mode count_include_pad "
    "divisor_override",
    grad_output="avg_pool_again(g, kernel_size, stride, padding, ceil_mode, count_include_pad)",
    self="zeros_like(g)")
AdaptiveAvgPool2DBackward0 = rule("AdaptiveAvgPool2DBackward0", "self",
                                  self="adaptive_avg_pool_grad(g, self)")
AdaptiveAvgPool2DBackwardBackward0 = rule(
    "AdaptiveAvgPool2DBackwardBackward0",
    "grad_output_sym_argsize_minus_2 grad_output_sym_argsize_minus_1",
    grad_output="adaptive_average(g, (grad_output_sym_argsize_minus_2,"
                " grad_output_sym_argsize_minus_1))",
    self="zeros_like(g)")
