"""autograd_kit: a complete, readable autograd engine on numpy (cupy on GPUs).

It mirrors PyTorch's autograd closely enough that ``import autograd_kit as torch``
runs textbook examples unchanged -- same names, same graph nodes, same error
messages, same printed tensors -- and then lets you open the source and read
how each piece works.  Start with ``tensor.py``, ``graph.py`` and ``engine.py``.

In a notebook, ``%load_ext autograd_kit`` adds magics that draw graphs.
"""
from __future__ import annotations

from . import backend
from .backend import (bool, complex64, complex128, device, double, dtype, float, float16,
                      float32, float64, get_default_dtype, half, int, int8, int16, int32,
                      int64, long, set_default_dtype, short, uint8)
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .tensor import Size, Tensor
from . import ops
from .ops.arith import addmm, rsub
from .ops.compare import (allclose, argmax, argmin, eq, equal, ge, gt, isclose, isfinite,
                          isnan, le, logical_not, lt, ne, nonzero)
from .ops.convert import to
from .ops.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,
                           full_like, linspace, ones, ones_like, set_default_device,
                           get_default_device, tensor, zeros, zeros_like)
from .ops.random_creation import (bernoulli, multinomial, normal, rand, rand_like, randint,
                                  randint_like, randn, randn_like, randperm)
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from .ops.reduce import amax, amin, log_softmax, logsumexp, max, min, norm, softmax, std, var
from .ops.indexing import chunk, narrow, split, unbind, unsafe_chunk, unsafe_split
from .ops.shape import (cat, clone, column_stack, concat, concatenate, expand, flatten, flip,
                        hstack, permute, repeat, reshape, squeeze, stack, t, transpose, unsqueeze,
                        vstack, where)
from .ops.unary import clamp_max, clamp_min, leaky_relu, relu
from .ops.out import (abs, add, ceil, clamp, cos, div, dot, exp, floor, log,  # (out=)
                      matmul, maximum, mean, minimum, mm, mul, neg, pow, prod, reciprocal,
                      round, rsqrt, sigmoid, sign, sin, sqrt, square, sub, sum, tanh)
from . import autograd, cuda, random
from .serialization import load, save
from .i18n import get_language, set_language
from .alias import alias_torch, torch_aliased, unalias_torch  # `import torch` -> the kit
from .legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
                     IntTensor, LongTensor, ShortTensor)
from .ops.module_forms import FUNCTIONS as _FUNCTIONS
from .ops.module_forms import with_axis_functions as _with_axis

globals().update(_FUNCTIONS)  # torch.sin_, torch.median, torch.diagonal, torch.var_mean...
globals().update(_with_axis(globals()))  # torch.sum(x, axis=1, keepdims=True), as PyTorch

clip = clamp
__version__ = "0.1.0"


def is_tensor(obj):
    """True for autograd_kit tensors."""
    return isinstance(obj, Tensor)


def is_inference(input):  # noqa: A002 - PyTorch's name
    """True for a tensor made under ``inference_mode`` (it can never join a graph)."""
    return input.is_inference()


def broadcast_to(input, size):  # noqa: A002 - PyTorch's name
    """``input`` expanded to ``size`` without copying (``-1`` keeps a size):
    recorded as ``ExpandBackward0``, whose gradient sums back to the input's shape."""
    return input.broadcast_to(size)


def is_floating_point(input):  # noqa: A002 - PyTorch's name
    """True for a tensor of a floating-point dtype."""
    return input.is_floating_point()


def is_complex(input):  # noqa: A002 - PyTorch's name
    """True for a tensor of a complex dtype."""
    return input.is_complex()


def numel(input):  # noqa: A002 - PyTorch's name
    return input.numel()


def detach(input):  # noqa: A002 - PyTorch's name
    """``torch.detach(x)``, the function form of ``x.detach()``."""
    return input.detach()


def __getattr__(name):
    # nn, optim and the pictures load on first use, so ``import autograd_kit`` stays fast.
    import importlib
    if name in ("nn", "optim", "viz", "utils", "accelerator"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "make_dot":
        return importlib.import_module(f"{__name__}.viz").make_dot
    raise AttributeError(f"module 'autograd_kit' has no attribute '{name}'")


def load_ipython_extension(ipython) -> None:
    """``%load_ext autograd_kit``: register the magics and display hooks."""
    from .ipython import load
    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .ipython import unload
    unload(ipython)
