"""Loss functions as single graph nodes, as PyTorch records them.

``mse_loss``: mean((x - y)²), so dL/dx = 2 (x - y) / N.
``nll_loss``: minus the mean of the log-probabilities picked by the targets, so
each picked entry receives -1/N and every other entry 0.
``cross_entropy`` is ``nll_loss(log_softmax(x))``: two nodes, as in PyTorch.
"""
from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor
from ._rules import as_tensor_pair, check_broadcast, record, rule


def reduce_loss(values, reduction: str):
    if reduction == "mean":
        return values.mean()
    if reduction == "sum":
        return values.sum()
    if reduction == "none":
        return values
    raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input, target, reduction: str = "mean"):
    x, y, dx, dy = as_tensor_pair(input, target)
    try:
        diff = dx - dy
    except ValueError:
        check_broadcast(dx, dy)  # PyTorch's words for shapes that cannot broadcast
        raise
    out = reduce_loss(diff * diff, reduction)
    return record(MseLossBackward0, backend.xp_of(out).asarray(out), (x, y), self=x, target=y,
                  reduction=reduction)


def nll_loss(input, target, reduction: str = "mean"):
    a, t = input._data, target._data
    xp = backend.xp_of(a)
    rows = xp.arange(a.shape[0])
    picked = -a[rows, t]
    out = xp.asarray(reduce_loss(picked, reduction))
    return record(NllLossBackward0, out, (input,), target=target, reduction=reduction,
                  self_sym_sizes=a.shape)


def cross_entropy(input, target, reduction: str = "mean"):
    from .reduce import log_softmax
    return nll_loss(log_softmax(input, 1), target, reduction)


def binary_cross_entropy(input, target, reduction: str = "mean"):
    x, y, dx, dy = as_tensor_pair(input, target)
    xp = backend.xp_of(dx)
    eps_log = lambda v: xp.maximum(xp.log(v), -100)  # noqa: E731 - PyTorch clamps at -100
    values = -(dy * eps_log(dx) + (1 - dy) * eps_log(1 - dx))
    out = xp.asarray(reduce_loss(values, reduction))
    return record(BinaryCrossEntropyBackward0, out, (x, y), self=x, target=y,
                  reduction=reduction)


def scale_for(reduction: str, t) -> float:
    """1/N for a mean over the N elements of ``t`` (a Tensor or an array), else 1."""
    return 1.0 / math.prod(t.shape) if reduction == "mean" else 1.0


def nll_grad(g, target, reduction, sizes):
    """-1 (or -1/N) at each row's target class, 0 elsewhere, times g."""
    xp = backend.xp_of(g._data)
    n = sizes[0]
    mask = xp.zeros(sizes, dtype=g._data.dtype)
    mask[xp.arange(n), target._data] = -(1.0 / n if reduction == "mean" else 1.0)
    if reduction == "none":
        return g.unsqueeze(1) * Tensor._make(mask)
    return g * Tensor._make(mask)


MseLossBackward0 = rule(
    "MseLossBackward0", "self target reduction",
    self="g * 2 * (self - target) * scale_for(reduction, self)",
    target="-g * 2 * (self - target) * scale_for(reduction, self)")
NllLossBackward0 = rule("NllLossBackward0", "target reduction self_sym_sizes",
                        self="nll_grad(g, target, reduction, self_sym_sizes)")
BinaryCrossEntropyBackward0 = rule(
    "BinaryCrossEntropyBackward0", "self target reduction",
    self="g * (self - target) / clamp(self * (1 - self), min=1e-12)"
         " * scale_for(reduction, self)",
    target="g * (log(1 - self) - log(self)) * scale_for(reduction, self)")
