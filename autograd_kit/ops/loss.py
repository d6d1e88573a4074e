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


def nll_loss(input, target, reduction: str = "mean", ignore_index: int = -100, weight=None):
    """-weight[t] * input[i, t] for each row i and its target t; the mean divides
    by the total weight of the rows that are not ``ignore_index`` (their count
    without weights).  A 1-D input is one row without a batch dimension."""
    check_reduction(reduction)
    a, t = input._data, target._data
    xp = backend.xp_of(a)
    rows_a, rows_t = (a.reshape(1, -1), t.reshape(1)) if a.ndim == 1 else (a, t)
    check_targets(rows_t, rows_a.shape[1], ignore_index)
    w = _row_weights(rows_t, ignore_index, weight, a.dtype, xp)
    safe = xp.where(rows_t != ignore_index, rows_t, 0)
    picked = xp.where(w != 0, -rows_a[xp.arange(rows_a.shape[0]), safe] * w, 0).astype(a.dtype)
    if reduction == "none":
        out = picked.reshape(t.shape)
    else:
        out = backend.reduce_sum(picked)
        if reduction == "mean":
            out = out / backend.reduce_sum(w)  # (0 kept: NaN)
    return record(NllLossBackward0, xp.asarray(out, dtype=a.dtype), (input,), self=input,
                  target=target,
                  weight=weight, reduction=reduction, ignore_index=ignore_index,
                  self_sym_sizes=a.shape)


def _row_weights(t, ignore_index, weight, dtype, xp):
    """Each row's weight: weight[target] (1 without weights), 0 for an ignored row."""
    kept = t != ignore_index
    if weight is None:
        return kept.astype(dtype)
    w = weight._data if hasattr(weight, "_data") else weight
    return xp.where(kept, w.astype(dtype)[xp.where(kept, t, 0)], 0).astype(dtype)


def cross_entropy(input, target, reduction: str = "mean"):
    from .reduce import log_softmax
    return nll_loss(log_softmax(input, 1), target, reduction)


def binary_cross_entropy(input, target, reduction: str = "mean", weight=None):
    check_reduction(reduction)
    x, y, dx, dy = as_tensor_pair(input, target)
    if dx.shape != dy.shape:  # (PyTorch never broadcasts the target here)
        raise ValueError(f"Using a target size ({y.shape}) that is different to the input "
                         f"size ({x.shape}) is deprecated. Please ensure they have the same size.")
    if dx.dtype.kind != "f":
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for "
                                  f"'{scalar_type_name(dx.dtype)}'")
    for name, d in (("input", dx), ("target", dy)):
        if d.size and not (d.min() >= 0 and d.max() <= 1):  # (NaN fails too)
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    xp = backend.xp_of(dx)
    eps_log = lambda v: xp.maximum(xp.log(v), -100)  # noqa: E731 - PyTorch clamps at -100
    values = -(dy * eps_log(dx) + (1 - dy) * eps_log(1 - dx))
    if weight is not None:
        values = values * weight._data
    out = xp.asarray(reduce_loss(values, reduction), dtype=dx.dtype)
    return record(BinaryCrossEntropyBackward0, out, (x, y), self=x, target=y,
                  reduction=reduction, weight=weight)


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


def nll_grad(g, target, reduction, sizes, ignore_index=-100, weight=None, self=None):
    """-weight[t] (divided by the total weight for a mean) at each row's target
    class t, 0 elsewhere and on ignored rows, times g."""
    xp = backend.xp_of(g._data)
    t = target._data
    rows = (1, sizes[0]) if len(sizes) == 1 else tuple(sizes)
    t = t.reshape(rows[0])
    w = _row_weights(t, ignore_index, weight, g._data.dtype, xp)
    if reduction == "mean":  # (a total weight of 0: NaN, but ignored rows get 0)
        total = float(backend.reduce_sum(w))
        w = xp.where(t != ignore_index, w / total if total else _NAN, 0).astype(w.dtype)
    mask = xp.zeros(rows, dtype=g._data.dtype)
    mask[xp.arange(rows[0]), xp.where(t != ignore_index, t, 0)] = -w
    if self is not None and self._rg:  # create_graph: one node, as in PyTorch
        gd = g._data.reshape(-1, 1) if reduction == "none" else g._data
        return record(NllLossBackwardBackward0, (gd * mask).reshape(sizes), (g, self),
                      target=target, weight=weight, reduction=reduction,
                      ignore_index=ignore_index)
    if reduction == "none":
        return (g.reshape(-1, 1) * Tensor._make(mask)).reshape(sizes)
    return (g * Tensor._make(mask)).reshape(sizes)


def nll_of(g, target, weight, reduction, ignore_index):
    """nll_loss of a gradient: nll_grad is linear in g, and its own gradient
    (the second derivative's share for g) is nll_loss again."""
    return nll_loss(g, target, reduction, ignore_index, weight)


def weighted(x, weight):
    return x if weight is None else x * weight


# mse_loss's kernel (kernels.py) serves both inputs: the target's gradient is
# the kernel with the two swapped, as PyTorch computes it.
MseLossBackward0 = rule(
    "MseLossBackward0", "self target reduction",
    self="mse_loss_backward(g, self, target, reduction)",
    target="mse_loss_backward(g, target, self, reduction)")
NllLossBackward0 = rule("NllLossBackward0",
                        "self target weight reduction ignore_index self_sym_sizes",
                        self="nll_grad(g, target, reduction, self_sym_sizes, ignore_index, weight,"
                             " self)")
# The gradient of nll_loss's gradient (recorded under create_graph=True): linear
# in g, constant in the input (PyTorch records it all the same: its result
# requires grad, and the input's second derivative is zero).
NllLossBackwardBackward0 = rule("NllLossBackwardBackward0",
                                "target weight reduction ignore_index",
                                grad_output="nll_of(g, target, weight, reduction, ignore_index)",
                                self="zeros_like(g)")
def bce_backward(g, self, target, reduction, weight):
    """binary_cross_entropy's gradient, g (x - y) / max(x (1 - x), 1e-12), times
    1/N for a mean and the weight.  Under create_graph=True (Tensors) it is one
    recorded node, PyTorch's BinaryCrossEntropyBackwardBackward0, whose own
    formulas (below) are PyTorch's: they add 1e-12 to x and to 1 - x where the
    gradient clamps their product, so a second derivative at x = 1 is PyTorch's."""
    if not (isinstance(g, Tensor) or isinstance(self, Tensor)):
        return weighted(g * (self - target) / backend.xp_of(self).maximum(
            self * (1 - self), 1e-12) * scale_for(reduction, self, target), weight)
    from ..grad_mode import no_grad
    with no_grad():  # (the value only: the node below records how it depends on what)
        value = bce_backward(g._data if isinstance(g, Tensor) else g, self._data,
                             target._data, reduction,
                             None if weight is None else weight._data)
    return record(BinaryCrossEntropyBackwardBackward0, value, (g, self, target),
                  grad_output=g, self=self, target=target, weight=weight,
                  reduction=reduction)


BinaryCrossEntropyBackward0 = rule(
    "BinaryCrossEntropyBackward0", "self target reduction weight",
    self="bce_backward(g, self, target, reduction, weight)",
    target="per_element(weighted(-logit(self) * g, weight), reduction, self, target)")
# (the target's gradient as PyTorch computes it: -logit(x) g, times the weight,
# divided by N for a mean: LogitBackward0, NegBackward0, ... DivBackward1)
BinaryCrossEntropyBackwardBackward0 = rule(
    "BinaryCrossEntropyBackwardBackward0", "grad_output self target weight reduction",
    grad_output="weighted((self - target) / ((self + 1e-12) * (1 - self + 1e-12))"
                " * scale_for(reduction, self, target), weight) * g",
    self="weighted((self * self - 2 * self * target + target)"
         " / ((self + 1e-12) ** 2 * (1 - self + 1e-12) ** 2) * (g * grad_output)"
         " * scale_for(reduction, self, target), weight)",
    target="weighted(-g * grad_output / clamp((1 - self) * self, min=1e-12)"
           " * scale_for(reduction, self, target), weight)")
