"""Convolution and max pooling on images: ``conv2d``, ``max_pool2d``, ``unfold``, ``fold``.

Both are written with one trick, *im2col*: cut every window that the kernel
visits out of the (padded) image and lay it out as a column,

    im2col(x): (N, C, H, W) -> (N, C·kH·kW, L)        L = number of windows

so that a convolution is one matrix product with the flattened kernel,

    out[n, o, l] = Σ_k W[o, k] · cols[n, k, l] + b[o],

and a max pool is the largest entry of each column.  The reverse move,
*col2im*, adds every column back onto the window it came from (windows that
overlap add up).  They are each other's backward: im2col copies, so its
gradient is col2im of the gradient; col2im adds, so its gradient is im2col.

The backward formulas follow directly (one kernel computes the three, as in
PyTorch, recorded under ``create_graph`` as one node: see conv_kernel.py):

* conv2d, input:  the kernel spreads each output gradient back over its window:
  ``col2im(Wᵀ @ g)``;
* conv2d, weight: each kernel entry met one input pixel per window:
  ``Σ_n g @ im2col(x)ᵀ``;
* conv2d, bias:   ``g`` summed over the batch and the image;
* max_pool2d:     ``g`` goes to the element that won each window.

They are written with the words ``im2col``/``col2im``, matrix products and
reshapes, so they run on Tensors too (``create_graph=True``) and second
derivatives come for free.  The array code uses only the array module handle
``xp``, so it runs unchanged on cupy.
"""
from __future__ import annotations

import builtins

from .. import backend
from ..tensor import Tensor
from . import formula_env
from ._rules import record, rule
from .formula_env import _is_tensor, _like, _raw, mT, reshape
from .formula_env import sum as _sum

# ------------------------------------------------------------ the geometry --


def out_len(size, kernel, dilation, padding, stride, ceil_mode=False) -> int:
    """How many windows fit along one side: ⌊(size + 2p - d(k-1) - 1) / s⌋ + 1
    (rounded up with ``ceil_mode``, but no window may start in the right padding)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return span // stride + 1
    n = -(-span // stride) + 1
    return n - 1 if (n - 1) * stride >= size + padding else n


def _starts(out, stride):
    """Where the windows start along one side, as a slice into the padded image."""
    return lambda first: slice(first, first + stride * (out - 1) + 1, stride)


def unfold_array(a, kernel, dilation, padding, stride, out, fill=0):
    """im2col on an array (N, C, H, W) -> (N, C·kH·kW, oH·oW).

    One slice per kernel offset (i, j): the pixels that offset sees in every
    window at once.  ``out`` is (oH, oW); the image is padded with ``fill`` on
    the top/left by ``padding`` and on the bottom/right as far as the windows
    reach."""
    xp = backend.xp_of(a)
    n, c, h, w = a.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow) = kernel, dilation, padding, stride, out
    bottom = builtins.max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - h - ph)
    right = builtins.max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - w - pw)
    padded = xp.pad(a, ((0, 0), (0, 0), (ph, bottom), (pw, right)), constant_values=fill)
    rows, cols_ = _starts(oh, sh), _starts(ow, sw)
    cols = xp.empty((n, c, kh, kw, oh, ow), dtype=a.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = padded[:, :, rows(i * dh), cols_(j * dw)]
    return cols.reshape(n, c * kh * kw, oh * ow)


def fold_array(cols, size, kernel, dilation, padding, stride, out):
    """col2im on an array (N, C·kH·kW, oH·oW) -> (N, C, H, W): each column is
    added back onto its window; the padding is cut off at the end."""
    xp = backend.xp_of(cols)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow) = kernel, dilation, padding, stride, out
    (h, w), n = size, cols.shape[0]
    c = cols.shape[1] // (kh * kw)
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    tall = builtins.max(h + ph, (oh - 1) * sh + dh * (kh - 1) + 1)
    wide = builtins.max(w + pw, (ow - 1) * sw + dw * (kw - 1) + 1)
    padded = xp.zeros((n, c, tall, wide), dtype=cols.dtype)
    rows, cols_ = _starts(oh, sh), _starts(ow, sw)
    for i in range(kh):
        for j in range(kw):
            padded[:, :, rows(i * dh), cols_(j * dw)] += cols[:, :, i, j]
    return xp.ascontiguousarray(padded[:, :, ph:ph + h, pw:pw + w])


def window_positions(xp, size, kernel, dilation, padding, stride, out):
    """For each kernel offset and window, the flat index (row · W + col) of the
    input pixel it reads, or -1 where it reads padding: shape (kH·kW, oH·oW)."""
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw), (oh, ow) = \
        size, kernel, dilation, padding, stride, out
    r = (xp.arange(oh) * sh)[None, :] + (xp.arange(kh) * dh)[:, None] - ph  # (kh, oh)
    c = (xp.arange(ow) * sw)[None, :] + (xp.arange(kw) * dw)[:, None] - pw  # (kw, ow)
    rr, cc = r[:, None, :, None], c[None, :, None, :]                       # kh kw oh ow
    flat = xp.where((rr >= 0) & (rr < h) & (cc >= 0) & (cc < w), rr * w + cc, -1)
    return flat.reshape(kh * kw, oh * ow)


# ----------------------------------------- im2col / col2im as graph steps --
def unfold(x, kernel, dilation, padding, stride, out=None):
    """im2col of a Tensor, recorded as ``Im2ColBackward0`` (``F.unfold``)."""
    h, w = x.shape[-2:]
    if out is None:
        out = tuple(out_len(s, k, d, p, st) for s, k, d, p, st in
                    zip((h, w), kernel, dilation, padding, stride))
    data = unfold_array(x._data, kernel, dilation, padding, stride, out)
    return record(Im2ColBackward0, data, (x,), kernel_size=kernel, dilation=dilation,
                  padding=padding, stride=stride, self_sym_argsize_minus_2=h,
                  self_sym_argsize_minus_1=w, out=out)


def fold(cols, size, kernel, dilation, padding, stride, out=None):
    """col2im of a Tensor, recorded as ``Col2ImBackward0`` (``F.fold``)."""
    if out is None:
        out = tuple(out_len(s, k, d, p, st) for s, k, d, p, st in
                    zip(size, kernel, dilation, padding, stride))
    data = fold_array(cols._data, size, kernel, dilation, padding, stride, out)
    return record(Col2ImBackward0, data, (cols,), kernel_size=kernel, dilation=dilation,
                  padding=padding, stride=stride, out=out)


def im2col(x, kernel, dilation, padding, stride, out):
    """The formula word: im2col of a Tensor (recorded) or of an array."""
    if _is_tensor(x):
        return unfold(x, kernel, dilation, padding, stride, out)
    return unfold_array(x, kernel, dilation, padding, stride, out)


def col2im(cols, size, kernel, dilation, padding, stride, out):
    """The formula word: col2im of a Tensor (recorded) or of an array."""
    if _is_tensor(cols):
        return fold(cols, tuple(size), kernel, dilation, padding, stride, out)
    return fold_array(cols, tuple(size), kernel, dilation, padding, stride, out)


# ------------------------------------------------------------- the ops -----
def conv2d_forward(x, w, b, stride, padding, dilation, out):
    """out[n, o] = W[o] ⋆ x[n] + b[o], as ``W (O, C·kH·kW) @ cols (N, C·kH·kW, L)``."""
    o = w.shape[0]
    cols = unfold_array(x._data, w.shape[-2:], dilation, padding, stride, out)
    data = w._data.reshape(o, -1) @ cols
    if b is not None:
        data += b._data.reshape(o, 1)
    data = data.reshape(x.shape[0], o, *out)
    bias = b if b is not None else _NO_BIAS  # an edge (None, 0), as in PyTorch
    return record(ConvolutionBackward0, data, (x, w, bias), input=x, weight=w, stride=stride,
                  padding=padding, dilation=dilation, transposed=False,
                  output_padding=(0, 0), groups=1,
                  bias_sym_sizes_opt=(o,) if b is not None else (0,))


def max_pool2d_forward(x, kernel, stride, padding, dilation, ceil_mode, out):
    """The largest value of each window, and where it was (flat index into H·W)."""
    a = x._data
    xp = backend.xp_of(a)
    n, c, h, w = a.shape
    low = -xp.inf if a.dtype.kind == "f" else xp.iinfo(a.dtype).min
    cols = unfold_array(a.reshape(n * c, 1, h, w), kernel, dilation, padding, stride, out,
                        fill=low)                                   # (N·C, kH·kW, L)
    winner = cols.argmax(axis=1)                                    # NaN wins, as in PyTorch
    values = xp.take_along_axis(cols, winner[:, None, :], axis=1).reshape(n, c, *out)
    where = window_positions(xp, (h, w), kernel, dilation, padding, stride, out)
    indices = where[winner, xp.arange(where.shape[1])].reshape(n, c, *out)
    indices = Tensor._make(indices.astype(backend.int64.np))
    values = record(MaxPool2DWithIndicesBackward0, values, (x,), self=x, kernel_size=kernel,
                    stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode,
                    result1=indices)
    return values, indices


_NO_BIAS = Tensor._make(backend.np.zeros(0))


# ------------------------------------------------- words of the formulas ---
def conv_input_grad(g, input, weight, stride, padding, dilation):
    """dL/dx = col2im(Wᵀ @ g): each output gradient flows back through the kernel
    onto the pixels of its window."""
    n, o, oh, ow = g.shape
    cols_grad = mT(reshape(weight, (o, -1))) @ reshape(g, (n, o, oh * ow))
    return col2im(cols_grad, input.shape[-2:], tuple(weight.shape[-2:]), dilation, padding,
                  stride, (oh, ow))


def conv_weight_grad(g, input, weight, stride, padding, dilation):
    """dL/dW = Σ_n g @ im2col(x)ᵀ: each kernel entry met one pixel per window."""
    n, o, oh, ow = g.shape
    cols = im2col(input, tuple(weight.shape[-2:]), dilation, padding, stride, (oh, ow))
    return reshape(_sum(reshape(g, (n, o, oh * ow)) @ mT(cols), 0), tuple(weight.shape))


def max_pool_grad(g, self, indices, kernel_size, stride, padding, dilation):
    """Each window's gradient goes to its winner: a 0/1 mask picks, per window,
    the kernel offset that read the winning pixel; col2im puts it in place.
    On Tensors PyTorch's kernel, recorded as one node,
    MaxPool2DWithIndicesBackwardBackward0 (inputs g and the pooled input)."""
    ga = _raw(g)
    n, c, h, w = self.shape
    out = tuple(ga.shape[-2:])
    windows, offsets = out[0] * out[1], kernel_size[0] * kernel_size[1]
    idx = _raw(indices)
    where = window_positions(backend.xp_of(idx), (h, w), kernel_size, dilation, padding,
                             stride, out)                              # (kH·kW, L)
    won = where == idx.reshape(n, c, 1, windows)                       # (N, C, kH·kW, L)
    cols = ga.reshape(n, c, 1, windows) * won.astype(ga.dtype)
    grad = fold_array(cols.reshape(n, c * offsets, windows), (h, w), kernel_size, dilation,
                      padding, stride, out)
    if _is_tensor(g):
        return record(MaxPool2DWithIndicesBackwardBackward0, grad, (g, self), indices=indices)
    return grad


def max_pool_double_backward(g, indices):
    """The max-pool kernel's gradient for g: each window takes the gradient of
    its winner -- g, flattened per image, gathered at the indices."""
    idx = _raw(indices)
    n, c = idx.shape[:2]
    if _is_tensor(g):
        flat = Tensor._make(idx.reshape(n, c, -1))
        return g.contiguous().view(n, c, -1).gather(-1, flat).view(*idx.shape)
    xp = backend.xp_of(g)
    return xp.take_along_axis(g.reshape(n, c, -1), idx.reshape(n, c, -1), -1).reshape(idx.shape)


formula_env.ENV.update({f.__name__: f for f in (im2col, col2im, conv_input_grad,
                                                conv_weight_grad, max_pool_grad,
                                                max_pool_double_backward)})

# Backward formulas: g is the gradient of the output; one formula per input.
ConvolutionBackward0 = rule(
    "ConvolutionBackward0",
    "input weight stride padding dilation transposed output_padding groups bias_sym_sizes_opt",
    common="grads = convolution_backward(g, input, weight, stride, padding, dilation, need)",
    input="grads[0]", weight="grads[1]", bias="grads[2]")
MaxPool2DWithIndicesBackward0 = rule(
    "MaxPool2DWithIndicesBackward0", "self kernel_size stride padding dilation ceil_mode result1",
    self="max_pool_grad(g, self, result1, kernel_size, stride, padding, dilation)")
MaxPool2DWithIndicesBackwardBackward0 = rule(
    "MaxPool2DWithIndicesBackwardBackward0", "indices",
    grad_output="max_pool_double_backward(g, indices)", self="zeros_like(g)")
Im2ColBackward0 = rule(
    "Im2ColBackward0", "kernel_size dilation padding stride self_sym_argsize_minus_2 "
    "self_sym_argsize_minus_1 out",
    self="col2im(g, (self_sym_argsize_minus_2, self_sym_argsize_minus_1), kernel_size, "
         "dilation, padding, stride, out)")
Col2ImBackward0 = rule(
    "Col2ImBackward0", "kernel_size dilation padding stride out",
    self="im2col(g, kernel_size, dilation, padding, stride, out)")
