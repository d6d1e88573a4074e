"""``F.conv2d``, ``F.max_pool2d``, ``F.unfold``, ``F.fold``: arguments checked as PyTorch does.

The computing is in ``ops/conv.py`` (im2col and the backward formulas); here the
arguments are read (an int or a pair for each of stride, padding, dilation),
checked with PyTorch's messages, and a 3-d (unbatched) image is given a batch
dimension of 1 for the computation, then loses it again.

Output size along each side, for input size n, kernel k, padding p, dilation d,
stride s:  ⌊(n + 2p - d(k - 1) - 1) / s⌋ + 1.
"""
from __future__ import annotations

from ..ops import conv as _conv
from ..tensor import Tensor, scalar_type_name


def _listed(value, n: int, name: str):
    """``value`` as a tuple of n ints: one int (or a 1-list) is repeated."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _same_padding(kernel, dilation, stride):
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    return tuple(d * (k - 1) // 2 for k, d in zip(kernel, dilation))


def _check_conv(x, w, b, stride, padding, dilation, groups):
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(x._data.dtype)} but found "
                           f"{scalar_type_name(w._data.dtype)}")
    if b is not None and b.dtype != x.dtype:
        raise RuntimeError(f"Input type ({_c_type(x)}) and bias type ({_c_type(b)}) should "
                           "be the same")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if groups != 1:
        raise NotImplementedError("autograd_kit supports conv2d with groups=1 only")
    wsize = list(w.shape)
    if wsize[0] < 1:
        raise RuntimeError(f"Given groups=1, expected weight to be at least 1 at dimension 0, "
                           f"but got weight of size {wsize} instead")
    if x.shape[1] != w.shape[1]:
        raise RuntimeError(f"Given groups=1, weight of size {wsize}, expected input"
                           f"{list(x.shape)} to have {w.shape[1]} channels, but got "
                           f"{x.shape[1]} channels instead")
    if b is not None and (b.dim() != 1 or b.shape[0] != w.shape[0]):
        raise RuntimeError(f"Given weight of size {wsize}, expected bias to be 1-dimensional "
                           f"with {w.shape[0]} elements, but got bias of size {list(b.shape)} "
                           "instead")
    padded = [n + 2 * p for n, p in zip(x.shape[2:], padding)]
    reach = [d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilation)]
    if any(r > n for r, n in zip(reach, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x "
                           f"{padded[1]}). Kernel size: ({reach[0]} x {reach[1]}). Kernel size "
                           "can't be greater than actual input size")


def _c_type(t) -> str:
    return t._data.dtype.name.replace("float32", "float").replace("float64", "double")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-d cross-correlation: out[n, o, i, j] = b[o] + Σ_{c,u,v} W[o, c, u, v] ·
    x[n, c, i·s + u·d - p, j·s + v·d - p] (zero outside the image).

    One node, ``ConvolutionBackward0``, with edges to input, weight and bias."""
    if input.dim() not in (3, 4):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    if input.dim() == 3:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    n = weight.dim() - 2
    stride = _listed(stride, n, "stride")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _listed(padding, n, "padding")
    dilation = _listed(dilation, n, "dilation")
    kernel = tuple(weight.shape[2:])
    size = tuple(input.shape[2:])
    if padding == "same":
        padding = _same_padding(kernel, dilation, stride)
        out = size  # an even total padding puts its extra row/column at the end
    else:
        padding = (0, 0) if padding == "valid" else padding
        out = None
    _check_conv(input, weight, bias, stride, padding, dilation, groups)
    if out is None:
        out = tuple(_conv.out_len(*a) for a in zip(size, kernel, dilation, padding, stride))
    return _conv.conv2d_forward(input, weight, bias, stride, padding, dilation, out)


def _pool_pair(value, name: str, verb: str, op: str = "max_pool2d"):
    if isinstance(value, int):
        return (value, value)
    value = tuple(value)
    if len(value) not in (1, 2):
        raise RuntimeError(f"{op}: {name} must {verb}a single int, or a tuple of two ints")
    return value * 2 if len(value) == 1 else value


def _pool_checks(input, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's checks of a pooling's arguments; the output size (oH, oW)."""
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for p in padding:
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    size = tuple(input.shape[-2:])
    out = tuple(_conv.out_len(*a, ceil_mode) for a in zip(size, kernel, dilation, padding,
                                                           stride))
    if any(o < 1 for o in out):
        c = input.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{size[0]}x{size[1]}). Calculated output "
                           f"size: ({c}x{out[0]}x{out[1]}). Output size is too small")
    return out


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The largest value of each kH×kW window (stride defaults to the kernel size,
    so windows do not overlap).  Its gradient goes only to each window's winner:
    one node, ``MaxPool2DWithIndicesBackward0``, which saves the winners' indices."""
    kernel = _pool_pair(kernel_size, "kernel_size", "either be ")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _pool_pair(stride, "stride", "either be omitted, ")
    padding = _pool_pair(padding, "padding", "either be ")
    dilation = _pool_pair(dilation, "dilation", "be either ")
    out = _pool_checks(input, kernel, stride, padding, dilation, ceil_mode)
    batched = input if input.dim() == 4 else input.unsqueeze(0)
    values, indices = _conv.max_pool2d_forward(batched, kernel, stride, padding, dilation,
                                               ceil_mode, out)
    if input.dim() == 3:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """The mean of each kH×kW window (stride defaults to the kernel size); its
    gradient is shared evenly by the window's pixels (``AvgPool2DBackward0``)."""
    if divisor_override is not None:
        raise NotImplementedError("autograd_kit does not support divisor_override here")
    kernel = _pool_pair(kernel_size, "kernel_size", "either be ", "avg_pool2d")
    stride = kernel if stride is None or stride == [] or stride == () else \
        _pool_pair(stride, "stride", "either be omitted, ", "avg_pool2d")
    padding = _pool_pair(padding, "padding", "either be ", "avg_pool2d")
    out = _pool_checks(input, kernel, stride, padding, (1, 1), ceil_mode)
    batched = input if input.dim() == 4 else input.unsqueeze(0)
    from ..ops.pooling import avg_pool2d_forward
    values = avg_pool2d_forward(batched, kernel, stride, padding, ceil_mode, count_include_pad,
                                out)
    return values if input.dim() == 4 else values.squeeze(0)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average pooling with the windows chosen so that the output is ``output_size``
    (None keeps that side's size); ``1`` is the mean over each image."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    size = tuple(n if s is None else s for s, n in zip(size, input.shape[-2:]))
    if size == (1, 1):  # the global average: PyTorch records a mean
        return input.mean((-1, -2), keepdim=True)
    from ..ops.pooling import adaptive_avg_pool2d_forward
    return adaptive_avg_pool2d_forward(input, size)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: every kH×kW window as a column, (N, C, H, W) -> (N, C·kH·kW, L)."""
    args = [_listed(v, 2, name) for v, name in ((kernel_size, "kernel_size"),
                                                (dilation, "dilation"), (padding, "padding"),
                                                (stride, "stride"))]
    if input.dim() == 3:
        return _conv.unfold(input.unsqueeze(0), *args).squeeze(0)
    return _conv.unfold(input, *args)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im: columns (N, C·kH·kW, L) added back onto their windows of an image
    of ``output_size``; the reverse (and the gradient) of ``unfold``."""
    args = [_listed(v, 2, name) for v, name in ((kernel_size, "kernel_size"),
                                                (dilation, "dilation"), (padding, "padding"),
                                                (stride, "stride"))]
    size = _listed(output_size, 2, "output_size")
    _check_fold(input, size, *args)
    if input.dim() == 2:
        return _conv.fold(input.unsqueeze(0), size, *args).squeeze(0)
    return _conv.fold(input, size, *args)


def _check_fold(input, size, kernel, dilation, padding, stride) -> None:
    if input.dim() not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {list(input.shape)}")
    channels, blocks = input.shape[-2], input.shape[-1]
    if channels % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={channels} and "
                           f"kernel_size={kernel}.")
    n = [_conv.out_len(*a) for a in zip(size, kernel, dilation, padding, stride)]
    if n[0] * n[1] != blocks:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, expected "
                           "size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {n[0]} * {n[1]} = {n[0] * n[1]}, but got "
                           f"input.size(2)={blocks}.")
