"""Loss functions as single graph nodes, as PyTorch records them.

``mse_loss``: mean((x - y)²), so dL/dx = 2 (x - y) / N.
``nll_loss``: minus the mean of the log-probabilities picked by the targets, so
each picked entry receives -1/N and every other entry 0.
``cross_entropy`` is ``nll_loss(log_softmax(x))``: two nodes, as in PyTorch.

N counts the elements the mean is taken over: all of ``x - y`` (the broadcast
shape, when y broadcasts against x), or the targets that are not ignored.  With
N = 0 the mean is NaN (0/0) and the gradient empty, as in PyTorch.
"""
from __future__ import annotations

from .. import backend
from ..tensor import Tensor, scalar_type_name
from ._rules import as_tensor_pair, check_broadcast, record, rule

_NAN = float("nan")


def check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce_loss(values, reduction: str):
    """The per-element losses averaged, added, or returned as they are
    (``values``: a Tensor, or an array in the forward code below)."""
    check_reduction(reduction)
    if reduction == "none":
        return values
    if values.__class__ is Tensor or isinstance(values, Tensor):
        return values.mean() if reduction == "mean" else values.sum()
    return backend.reduce_mean(values) if reduction == "mean" else backend.reduce_sum(values)


def mse_loss(input, target, reduction: str = "mean"):
    check_reduction(reduction)
    x, y, dx, dy = as_tensor_pair(input, target)
    if dx.dtype.kind not in "fc":
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{scalar_type_name(dx.dtype)}'")
    try:
        diff = dx - dy
    except ValueError:
        check_broadcast(dx, dy)  # PyTorch's words for shapes that cannot broadcast
        raise
    out = reduce_loss(diff * diff, reduction)
    return record(MseLossBackward0, backend.xp_of(out).asarray(out), (x, y), self=x, target=y,
                  reduction=reduction)


def check_targets(t, n_classes: int, ignore_index: int) -> None:
    """Every class index must name a class (0 <= t < C), unless it is ignored."""
    xp = backend.xp_of(t)
    bad = ((t < 0) | (t >= n_classes)) & (t != ignore_index)
    if bad.any():
        raise IndexError(f"Target {int(t[xp.argmax(bad)])} is out of bounds.")


def nll_loss(input, target, reduction: str = "mean", ignore_index: int = -100):
    """-input[i, target[i]], averaged over the rows whose target is not ``ignore_index``."""
    check_reduction(reduction)
    a, t = input._data, target._data
    xp = backend.xp_of(a)
    check_targets(t, a.shape[1], ignore_index)
    kept = t != ignore_index
    rows = xp.arange(a.shape[0])
    picked = xp.where(kept, -a[rows, xp.where(kept, t, 0)], 0).astype(a.dtype, copy=False)
    if reduction == "none":
        out = picked
    else:
        out = backend.reduce_sum(picked)
        if reduction == "mean":
            out = out / a.dtype.type(int(backend.reduce_sum(kept)))  # (0 kept: NaN)
    return record(NllLossBackward0, xp.asarray(out, dtype=a.dtype), (input,), target=target,
                  reduction=reduction, ignore_index=ignore_index, self_sym_sizes=a.shape)


def cross_entropy(input, target, reduction: str = "mean"):
    from .reduce import log_softmax
    return nll_loss(log_softmax(input, 1), target, reduction)


def binary_cross_entropy(input, target, reduction: str = "mean"):
    check_reduction(reduction)
    x, y, dx, dy = as_tensor_pair(input, target)
    if dx.shape != dy.shape:  # (PyTorch never broadcasts the target here)
        raise ValueError(f"Using a target size ({y.shape}) that is different to the input "
                         f"size ({x.shape}) is deprecated. Please ensure they have the same size.")
    for name, d in (("input", dx), ("target", dy)):
        if d.size and not (d.min() >= 0 and d.max() <= 1):  # (NaN fails too)
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    xp = backend.xp_of(dx)
    eps_log = lambda v: xp.maximum(xp.log(v), -100)  # noqa: E731 - PyTorch clamps at -100
    values = -(dy * eps_log(dx) + (1 - dy) * eps_log(1 - dx))
    out = xp.asarray(reduce_loss(values, reduction))
    return record(BinaryCrossEntropyBackward0, out, (x, y), self=x, target=y,
                  reduction=reduction)


def scale_for(reduction: str, *inputs) -> float:
    """1/N for a mean over the N elements of the inputs broadcast together
    (Tensors or arrays), else 1; NaN when N = 0, as 0/0 gives in PyTorch."""
    if reduction != "mean":
        return 1.0
    shape = inputs[0].shape
    if any(t.shape != shape for t in inputs):
        shape = backend.broadcast_shapes(*(t.shape for t in inputs))
    n = 1
    for d in shape:
        n *= d
    return 1.0 / n if n else _NAN


def nll_grad(g, target, reduction, sizes, ignore_index=-100):
    """-1 (or -1/N) at each row's target class, 0 elsewhere and on ignored rows, times g."""
    xp = backend.xp_of(g._data)
    t = target._data
    kept = t != ignore_index
    mask = xp.zeros(sizes, dtype=g._data.dtype)
    if reduction == "mean":
        count = int(backend.reduce_sum(kept))
        step = 1.0 / count if count else _NAN
    else:
        step = 1.0
    mask[xp.arange(sizes[0]), xp.where(kept, t, 0)] = xp.where(kept, -step, 0)
    if reduction == "none":
        return g.unsqueeze(1) * Tensor._make(mask)
    return g * Tensor._make(mask)


MseLossBackward0 = rule(
    "MseLossBackward0", "self target reduction",
    self="g * 2 * (self - target) * scale_for(reduction, self, target)",
    target="-g * 2 * (self - target) * scale_for(reduction, self, target)")
NllLossBackward0 = rule("NllLossBackward0", "target reduction ignore_index self_sym_sizes",
                        self="nll_grad(g, target, reduction, self_sym_sizes, ignore_index)")
BinaryCrossEntropyBackward0 = rule(
    "BinaryCrossEntropyBackward0", "self target reduction",
    self="g * (self - target) / clamp(self * (1 - self), min=1e-12)"
         " * scale_for(reduction, self, target)",
    target="g * (log(1 - self) - log(self)) * scale_for(reduction, self, target)")
