"""``nn.functional`` (imported as ``F``): layers and losses as plain functions.

The Module classes in ``layers.py`` and ``loss.py`` only store settings and
call these functions; the computing happens here or, for the single-node ops,
in the engine (``ops/``).

``linear`` is the heart of every network: y = x Wᵀ + b, with W of shape
(out_features, in_features).  For a batch (2-D ``x``) it is one fused op,
``addmm(b, x, Wᵀ)``, exactly as PyTorch records it (``AddmmBackward0``), so the
graph of a model matches PyTorch's node for node.
"""
from __future__ import annotations

import math
import warnings

from .. import backend, errors
from ..ops import loss as _loss
from ..ops.arith import addmm
from ..ops.inplace import inplace as _inplace
from ..ops import unary as _unary
from ..ops.unary import leaky_relu as _leaky_relu

from ..tensor import Tensor, scalar_type_name
from ._reduction import warn_size


# -- layers -------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x Wᵀ + b.  Gradients: dW = gᵀ x, db = Σ_batch g, dx = g W."""
    if bias is not None and input.dim() == 2:
        return addmm(bias, input, weight.t())
    if bias is not None and weight.dim() == 2 and _fusable(bias) and input.is_contiguous():
        # PyTorch folds any other contiguous input into one matrix: one AddmmBackward0
        # between two views (a vector is one row)
        sizes = tuple(input.shape)
        rows = input.reshape(math.prod(sizes[:-1]), sizes[-1])
        out = addmm(bias, rows, weight.t())
        return out.view(*sizes[:-1], out.shape[1])
    out = input.matmul(weight.t())
    return out if bias is None else out.add_(bias)   # (in place, as PyTorch)


def _fusable(bias: Tensor) -> bool:
    """A bias PyTorch adds inside ``addmm``: one row of numbers (``(out,)`` or
    ``(1, out)``), stored contiguously."""
    return (bias.dim() == 1 or bias.squeeze().dim() == 1) and bias.is_contiguous()


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0): passes positive values, blocks the gradient where x ≤ 0."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """``relu`` in place."""
    return input.relu_()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope · x otherwise (a small gradient survives)."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    try:
        return _leaky_relu(input, negative_slope)
    except NotImplementedError as err:
        raise errors.short(err)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` in place (its node keeps the output: LeakyReluBackward1)."""
    return _inplace(input, lambda old: _unary.leaky_relu_into(old, negative_slope))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + e^(βx)) / β: a smooth relu (x itself where βx > threshold)."""
    try:
        return _unary.softplus(input, beta, threshold)
    except NotImplementedError as err:
        raise errors.short(err)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, α(e^x - 1) otherwise: smooth at 0 for α = 1, negative values allowed."""
    try:
        if inplace:
            return _inplace(input, lambda old: _unary.elu(old, alpha))
        return _unary.elu(input, alpha)
    except NotImplementedError as err:
        raise errors.short(err)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x · Φ(x), Φ the standard normal CDF (``approximate="tanh"``: its tanh form)."""
    try:
        return _unary.gelu(input, approximate)
    except (NotImplementedError, RuntimeError) as err:
        raise errors.short(err)


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x_i) / Σ_j exp(x_j) along ``dim``: positive numbers that sum to 1."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """x_i - log Σ_j exp(x_j): the log of softmax, computed without overflow."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return input.log_softmax(dim, dtype=dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """While training, zero each element with probability ``p`` and scale the
    survivors by 1/(1-p), so the expected value is unchanged; otherwise identity.

    The mask is PyTorch's: a tensor like ``input`` filled by ``bernoulli_(1 - p)``
    and divided by 1 - p, then multiplied in (one ``MulBackward0``)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        noise = input.new_zeros(())
    else:
        from ..ops.creation import empty_like
        noise = empty_like(input).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


# -- losses ---------------------------------------------------------------------------
def _broadcast_pair(input: Tensor, target: Tensor):
    """Input and target expanded to one shape, as PyTorch's losses do when the
    sizes differ: the mean is then over every element of the broadcast
    difference, and the gradient of the expanded input is summed back."""
    if target.shape == input.shape:
        return input, target
    warn_size(input, target, stacklevel=2)
    from ..ops._rules import check_broadcast
    a, b = (t._data if isinstance(t, Tensor) else t for t in (input, target))
    check_broadcast(a, b)
    shape = backend.broadcast_shapes(a.shape, b.shape)
    return input.expand(*shape), target.expand(*shape)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error: mean((x - y)²); one node, MseLossBackward0."""
    try:
        input, target = _broadcast_pair(input, target)
        return _loss.mse_loss(input, target, reduction)
    except (RuntimeError, ValueError, NotImplementedError) as err:
        raise errors.short(err)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error: mean(|x - y|); its gradient is sign(x - y) / N."""
    try:
        input, target = _broadcast_pair(input, target)
        _loss.check_reduction(reduction)
        return _loss.reduce_loss((input - target).abs(), reduction)
    except (RuntimeError, ValueError) as err:
        raise errors.short(err)


_TYPE_WORDS = {"float16": "Half", "float32": "Float", "float64": "Double",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble", "bool": "Bool",
               "int32": "Int", "int16": "Short", "int8": "Char"}


def _check_class_target(target: Tensor) -> None:
    name = target.dtype.name
    if name in _TYPE_WORDS:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_TYPE_WORDS[name]}")


def _unsupported(**options) -> None:
    used = [k for k, v in options.items() if v]
    if used:
        raise NotImplementedError(f"autograd_kit does not support {', '.join(used)} here")


def _check_batch(input: Tensor, target: Tensor) -> None:
    """PyTorch's checks of class-index targets against a batch of scores."""
    if input.dim() < 2:
        return
    n = target.shape[0] if target.dim() else 0
    if n != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({n}).")
    if input.dim() == 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.dim() > 2 and target.shape != input.shape[:1] + input.shape[2:]:
        want = [input.shape[0]] + list(input.shape[2:])
        raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")


def _check_weight(weight, input: Tensor) -> None:
    if weight is None:
        return
    c = input.shape[0] if input.dim() == 1 else input.shape[1]
    if weight.dim() != 1 or weight.shape[0] != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")


def nll_loss(input: Tensor, target: Tensor, weight=None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: -mean_i input[i, target[i]], for log-probabilities.
    Rows whose target is ``ignore_index`` count for nothing (not even in N); with
    ``weight`` each row counts weight[target] times, and the mean divides by the
    total weight."""
    try:
        _check_batch(input, target)
        _check_class_target(target)
        _check_weight(weight, input)
        if input.dim() > 2:  # (N, C, d1, ...): every position is a sample
            c = input.shape[1]
            rows = input.permute(0, *range(2, input.dim()), 1).reshape(-1, c)
            out = _loss.nll_loss(rows, target.reshape(-1), reduction, ignore_index, weight)
            return out.reshape(target.shape) if reduction == "none" else out
        return _loss.nll_loss(input, target, reduction, ignore_index, weight)
    except (RuntimeError, ValueError, IndexError) as err:
        raise errors.short(err)


def cross_entropy(input: Tensor, target: Tensor, weight=None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """-log softmax(x)[target]: log_softmax then nll_loss, two nodes as in PyTorch.

    ``target`` holds class indices, or (same shape as ``input``) class
    probabilities: then the loss is -Σ_c weight_c · target_c · log softmax(x)_c
    per sample, and the mean divides by the number of samples."""
    _unsupported(label_smoothing=label_smoothing != 0.0)
    class_dim = 0 if input.dim() == 1 else 1
    if target.shape == input.shape and target.dtype.is_floating_point:
        if ignore_index != -100:
            raise errors.short(RuntimeError(
                "ignore_index is not supported for floating point target"))
        terms = input.log_softmax(class_dim) * target
        if weight is not None:
            terms = terms * weight.reshape(-1, *([1] * (input.dim() - class_dim - 1)))
        try:
            _loss.check_reduction(reduction)
        except ValueError as err:
            raise errors.short(err)
        if reduction == "none":  # (the nodes in PyTorch's order: the sign comes last)
            return -terms.sum(class_dim)
        total = terms.sum()
        if reduction == "sum":
            return -total
        from ..ops._rules import record
        n = input.numel() // input.shape[class_dim] if input.shape[class_dim] else 0
        if not n:  # no samples: the sum is filled with NaN (FillBackward2), then negated
            from ..ops.inplace import FillBackward2
            return -record(FillBackward2, total._data * float("nan"), (total,))
        from ..ops.arith import DivBackward1
        total = -total
        return record(DivBackward1, total._data / n, (total,), other=n)
    try:
        _check_batch(input, target)
    except (RuntimeError, ValueError) as err:
        raise errors.short(err)
    return nll_loss(input.log_softmax(class_dim), target, weight, ignore_index=ignore_index,
                    reduction=reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None,
                         reduction: str = "mean") -> Tensor:
    """-mean(y log p + (1 - y) log(1 - p)), for probabilities p in [0, 1]."""
    try:
        if target.shape != input.shape:
            raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                             f"input size ({input.shape}) is deprecated. Please ensure they "
                             "have the same size.")
        if target.dtype != input.dtype:
            raise RuntimeError(f"Found dtype {scalar_type_name(target.dtype.np)} but expected "
                               f"{scalar_type_name(input.dtype.np)}")
        if weight is not None and weight.shape != input.shape:
            weight = weight.expand(*input.shape)
        return _loss.binary_cross_entropy(input, target, reduction, weight)
    except (RuntimeError, ValueError) as err:
        raise errors.short(err)


from .functional_conv import adaptive_avg_pool2d, avg_pool2d  # noqa: E402,F401
from .functional_conv import conv2d, fold, max_pool2d, unfold  # noqa: E402,F401
from .functional_losses import binary_cross_entropy_with_logits  # noqa: E402,F401
from .functional_losses import huber_loss, smooth_l1_loss  # noqa: E402,F401
from ._reduction import legacy_keywords as _legacy  # noqa: E402

# The pre-1.0 keywords size_average= / reduce= (PyTorch's warning, same result).
mse_loss, l1_loss, nll_loss, cross_entropy, binary_cross_entropy = (
    _legacy(mse_loss), _legacy(l1_loss), _legacy(nll_loss), _legacy(cross_entropy),
    _legacy(binary_cross_entropy))
