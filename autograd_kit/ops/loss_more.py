"""More losses, each one graph node: BCE with logits, smooth L1, Huber.

``binary_cross_entropy_with_logits(x, y)``: the binary cross-entropy of
p = sigmoid(x), computed from x itself so that it never takes log(0):

    ℓ = (1 - y)·x + (1 + (pw - 1)·y)·softplus(-x)      (pw: pos_weight, 1 if absent)

    dℓ/dx = (pw·y + 1 - y)·sigmoid(x) - pw·y           (= sigmoid(x) - y when pw = 1)
    dℓ/dy = (pw - 1)·softplus(-x) - x

``smooth_l1_loss`` (β) and ``huber_loss`` (δ) are quadratic near 0 and linear
far away, so one outlier cannot pull with unbounded force.  For d = x - y:

    smooth L1:  d²/(2β) if |d| < β, else |d| - β/2;    dℓ/dd = clamp(d/β, -1, 1)
    Huber:      d²/2    if |d| < δ, else δ(|d| - δ/2);  dℓ/dd = clamp(d, -δ, δ)

(Huber = β · smooth L1 with β = δ.)  With ``reduction="mean"`` every gradient is
divided by the number of elements of the (broadcast) loss.
"""
from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor
from ._rules import as_tensor_pair, check_broadcast, record, rule
from .formula_env import ENV, _is_tensor, _like, _raw, clamp, exp, log, zeros_like
from .formula_env import abs as abs_
from .formula_env import sum as sum_
from .scalar import div_scalar, mul_scalar
from .loss import reduce_loss


def _softplus_neg(xp, x):
    """softplus(-x) = log(1 + e^-x), without overflow for large |x|."""
    return xp.logaddexp(0, -x)


def binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction):
    if isinstance(target, Tensor) and target._data.dtype.kind == "b":  # (PyTorch's formula takes 1 - target, refused for booleans)
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    x, y, dx, dy = as_tensor_pair(input, target)
    xp = backend.xp_of(dx)
    log_weight = 1 if pos_weight is None else 1 + (pos_weight._data - 1) * dy
    # -log sigmoid(x) in the input's own type, as PyTorch computes it before the
    # target's type joins (a float16 input: in float32, rounded to float16)
    own = x._data if x._data.__class__ is dx.__class__ else dx
    if own.dtype.kind == "f" and own.dtype.itemsize < 4:
        log_sig = _softplus_neg(xp, own.astype(backend.float32.np)).astype(own.dtype)
    else:
        log_sig = _softplus_neg(xp, own)
    values = (1 - dy) * dx + log_weight * log_sig
    if weight is not None:
        values = values * weight._data
    given = target._data.dtype if isinstance(target, Tensor) else dy.dtype
    out_dtype = given if given.kind == "f" else dx.dtype  # (PyTorch: the target's type)
    out = xp.asarray(reduce_loss(values, reduction)).astype(out_dtype, copy=False)
    return record(BinaryCrossEntropyWithLogitsBackward0, out, (x, y), self=x, target=y,
                  weight=weight, pos_weight=pos_weight, reduction=reduction)


def _difference(input, target):
    x, y, dx, dy = as_tensor_pair(input, target)
    try:
        return x, y, dx - dy
    except ValueError:
        check_broadcast(dx, dy)  # PyTorch's words for shapes that cannot broadcast
        raise


def smooth_l1_loss(input, target, reduction, beta):
    x, y, d = _difference(input, target)
    xp = backend.xp_of(d)
    a = xp.abs(d)
    values = xp.where(a < beta, 0.5 * d * d / (beta if beta else 1), a - 0.5 * beta)
    out = xp.asarray(reduce_loss(values, reduction)).astype(d.dtype, copy=False)  # (promoted)
    return record(SmoothL1LossBackward0, out, (x, y), self=x, target=y, reduction=reduction,
                  beta=beta)


def huber_loss(input, target, reduction, delta):
    x, y, d = _difference(input, target)
    xp = backend.xp_of(d)
    a = xp.abs(d)
    values = xp.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    out = xp.asarray(reduce_loss(values, reduction)).astype(x._data.dtype, copy=False)  # (the input's: PyTorch's huber)
    return record(HuberLossBackward0, out, (x, y), self=x, target=y, reduction=reduction,
                  delta=delta)


# ------------------------------------------------- words of the formulas ---
def per_element(grad, reduction, self, target):
    """A gradient as each element's share: divided by N for a mean over the N
    elements of the broadcast loss (DivBackward1 on Tensors, as PyTorch divides
    last), as it is for a sum or for "none"."""
    if reduction != "mean":
        return grad
    n = math.prod(backend.broadcast_shapes(self.shape, target.shape))
    return div_scalar(grad, n) if n else mul_scalar(grad, math.nan)  # (a mean of nothing)


# -- the kernels of smooth L1 and Huber, recorded as one node each (create_graph) --
def _recording(*xs) -> bool:
    return any(_is_tensor(x) for x in xs)


def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    """g clamp(d/β, -1, 1) (/ N for a mean), d = x - t; the target's gradient is
    this kernel with x and t swapped."""
    if _recording(grad_output, self, target):
        value = smooth_l1_loss_backward(_raw(grad_output), _raw(self), _raw(target),
                                        reduction, beta)
        return record(SmoothL1LossBackwardBackward0, value, (grad_output, self, target),
                      grad_output=grad_output, self=self, target=target, reduction=reduction,
                      beta=beta)
    return per_element(grad_output, reduction, self, target) * \
        kinked_slope(self, target, beta, beta)


def smooth_l1_loss_double_backward(grad, self, target, reduction, beta):
    """The slope of g clamp(d/β, -1, 1) in x: g/β inside the kink, 0 outside."""
    if beta == 0:
        return zeros_like(grad)
    inside = _like(grad, (abs_(_raw(self) - _raw(target)) < beta).astype(_raw(grad).dtype))
    return per_element(div_scalar(grad * inside, beta), reduction, self, target)


def huber_loss_backward(grad_output, self, target, reduction, delta):
    """g clamp(d, -δ, δ) (/ N for a mean), d = x - t."""
    if _recording(grad_output, self, target):
        value = huber_loss_backward(_raw(grad_output), _raw(self), _raw(target), reduction,
                                    delta)
        return record(HuberLossBackwardBackward0, value, (grad_output, self, target),
                      grad_output=grad_output, self=self, target=target, reduction=reduction,
                      delta=delta)
    return per_element(grad_output, reduction, self, target) * \
        kinked_slope(self, target, delta, 1)


def huber_loss_double_backward(grad, self, target, reduction, delta):
    inside = _like(grad, abs_(_raw(self) - _raw(target)) < delta)
    return per_element(grad * inside, reduction, self, target)


def huber_loss_double_backward_grad_output(grad, grad_output, self, target, reduction, delta):
    """The kernel is linear in g: its gradient for g is the kernel again (summed
    over the elements when g was one number, the loss's)."""
    if reduction == "none":
        return huber_loss_backward(grad, self, target, reduction, delta)
    ones = _like(grad_output, backend.xp_of(_raw(grad_output)).ones_like(_raw(grad_output)))
    return sum_(huber_loss_backward(ones, self, target, reduction, delta) * grad)


def sigmoid(x):
    if _is_tensor(x):
        return x.sigmoid()
    xp = backend.xp_of(x)
    return xp.exp(-xp.logaddexp(0, -x)).astype(x.dtype, copy=False)


def softplus_neg(x):
    """log(1 + e^-x) = max(-x, 0) + log(1 + e^-|x|), written with words both kinds know."""
    m = clamp(-x, min=0)
    return m + log(exp(-m) + exp(-x - m))


def bce_logits_input_grad(self, target, weight, pos_weight):
    p = sigmoid(self)
    grad = p - target if pos_weight is None else \
        (pos_weight * target + 1 - target) * p - pos_weight * target
    return grad if weight is None else grad * weight


def bce_logits_target_grad(self, weight, pos_weight):
    grad = -self if pos_weight is None else (pos_weight - 1) * softplus_neg(self) - self
    return grad if weight is None else grad * weight


def kinked_slope(self, target, limit, scale):
    """clamp(d, -limit, limit) / scale for d = self - target: the slope of smooth L1
    (limit β, scale β) and of Huber (limit δ, scale 1)."""
    return clamp(self - target, -limit, limit) / scale


ENV.update({f.__name__: f for f in (
    per_element, sigmoid, softplus_neg, bce_logits_input_grad, bce_logits_target_grad,
    kinked_slope, smooth_l1_loss_backward, smooth_l1_loss_double_backward,
    huber_loss_backward, huber_loss_double_backward, huber_loss_double_backward_grad_output)})

# Backward formulas: g is the gradient of the output; one formula per input.
BinaryCrossEntropyWithLogitsBackward0 = rule(
    "BinaryCrossEntropyWithLogitsBackward0", "self target weight pos_weight reduction",
    self="per_element(bce_logits_input_grad(self, target, weight, pos_weight) * g,"
         " reduction, self, target)",
    target="per_element(bce_logits_target_grad(self, weight, pos_weight) * g,"
           " reduction, self, target)")
# smooth L1 and Huber: one kernel each, the target's gradient is the kernel with
# the two swapped (as PyTorch computes it); their own backward below
SmoothL1LossBackward0 = rule(
    "SmoothL1LossBackward0", "self target reduction beta",
    self="smooth_l1_loss_backward(g, self, target, reduction, beta)",
    target="smooth_l1_loss_backward(g, target, self, reduction, beta)")
HuberLossBackward0 = rule(
    "HuberLossBackward0", "self target reduction delta",
    self="huber_loss_backward(g, self, target, reduction, delta)",
    target="huber_loss_backward(g, target, self, reduction, delta)")
SmoothL1LossBackwardBackward0 = rule(
    "SmoothL1LossBackwardBackward0", "grad_output self target reduction beta",
    grad_output="smooth_l1_loss_backward(g, self, target, reduction, beta)",
    self="smooth_l1_loss_double_backward(g * grad_output, self, target, reduction, beta)",
    target="-smooth_l1_loss_double_backward(g * grad_output, self, target, reduction, beta)")
HuberLossBackwardBackward0 = rule(
    "HuberLossBackwardBackward0", "grad_output self target reduction delta",
    grad_output="huber_loss_double_backward_grad_output(g, grad_output, self, target,"
                " reduction, delta)",
    self="huber_loss_double_backward(g * grad_output, self, target, reduction, delta)",
    target="-huber_loss_double_backward(g * grad_output, self, target, reduction, delta)")
