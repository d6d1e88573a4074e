"""``F.binary_cross_entropy_with_logits``, ``F.smooth_l1_loss``, ``F.huber_loss``.

The arguments are checked here with PyTorch's messages; the math (one node per
loss, and its gradient) is in ``ops/loss_more.py``.
"""
from __future__ import annotations

from ..ops import loss_more as _more
from ..ops.loss import reduce_loss
from ..tensor import Tensor
from ._reduction import legacy_keywords, warn_size

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _cast_result(result_dtype, out_dtype) -> None:
    """A loss written into a tensor of ``out_dtype`` (the input's, or the
    target's): PyTorch refuses the casts it never makes implicitly -- a float
    into an integer (or bool), a complex into a real, a number into a bool."""
    if (result_dtype.kind in "fc" and out_dtype.kind in "biu") or \
            (result_dtype.kind == "c" and out_dtype.kind != "c") or \
            (result_dtype.kind != "b" and out_dtype.kind == "b"):
        from ..tensor import scalar_type_name
        raise RuntimeError(f"result type {scalar_type_name(result_dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(out_dtype)}")


def _floats_only(input, target, kernel: str) -> None:
    """PyTorch's kernels for these losses exist for floating-point types only
    (the types promote first: a float target makes an int input float)."""
    from ..tensor import scalar_type_name
    a, b = input._data, target._data if isinstance(target, Tensor) else input._data
    from .. import backend
    dt = backend.promote(a, b)
    if dt.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(dt)}\'')


def _constant(t, argument: str) -> None:
    if t is not None and t.requires_grad:
        raise RuntimeError("The function 'binary_cross_entropy_with_logits' is not "
                           f"differentiable with respect to argument '{argument}'. This input "
                           "cannot have requires_grad True.")


@legacy_keywords
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """-[pw·y·log σ(x) + (1 - y)·log(1 - σ(x))], computed from the logits x without
    ever taking log(0).  ``pos_weight`` (one number per class) weighs the positive
    examples; ``weight`` weighs each element."""
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _check_reduction(reduction)
    if not input.is_floating_point():
        from ..tensor import scalar_type_name
        raise NotImplementedError(f'"log_sigmoid_cpu" not implemented for '
                                  f"'{scalar_type_name(input._data.dtype)}'")
    _constant(weight, "weight")
    _constant(pos_weight, "pos_weight")
    if target._data.dtype.kind in "iu":  # (the result is written in the target's type)
        from .. import backend
        _cast_result(backend.promote(input._data, target._data), target._data.dtype)
    return _more.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


@legacy_keywords
def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """d²/(2β) where |d| < β, |d| - β/2 beyond (d = x - y): squared error near the
    target, absolute error far from it.  β = 0 is the L1 loss."""
    warn_size(input, target, stacklevel=3)
    _check_reduction(reduction)
    _floats_only(input, target, "smooth_l1_cpu")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return reduce_loss((input - target).abs(), reduction)
    return _more.smooth_l1_loss(input, target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    """d²/2 where |d| < δ, δ(|d| - δ/2) beyond: smooth L1 scaled by δ (with β = δ)."""
    if weight is not None:
        raise NotImplementedError("autograd_kit does not support weight here")
    warn_size(input, target, stacklevel=3)
    _check_reduction(reduction)
    if input._data.dtype.kind != "f":  # (the result is written in the input's type:
        from .. import backend  # PyTorch refuses a cast it cannot make before the kernel)
        _cast_result(backend.promote(input._data, target._data), input._data.dtype)
    _floats_only(input, target, "huber_cpu")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _more.huber_loss(input, target, reduction, delta)
