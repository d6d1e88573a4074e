"""Backward kernels: the backward of an op, recorded as one op of its own.

PyTorch computes the gradient of ``tanh`` with a kernel,
``tanh_backward(g, y) = g (1 - y²)``.  Under ``backward(create_graph=True)``
that kernel is itself a recorded op, ``TanhBackwardBackward0``, whose inputs
are ``g`` and ``y``, and whose own formulas (the table at the end) say how to
differentiate it once more::

    d/dg [g (1 - y²)] = 1 - y²       (tanh_backward again)
    d/dy [g (1 - y²)] = -2 y g

So the graph of a first derivative shows one node per kernel, not the
arithmetic inside it -- the picture PyTorch draws.  Each word below takes
either kind, as every word of a formula does: on plain arrays (an ordinary
backward) it is the arithmetic; on Tensors it records the kernel's node.

    word                                     node                              for
    tanh_backward(g, y)                      TanhBackwardBackward0             tanh
    sigmoid_backward(g, y)                   SigmoidBackwardBackward0          sigmoid
    softmax_backward_data(g, y, dim)         SoftmaxBackwardDataBackward0      softmax
    log_softmax_backward_data(g, y, dim)     LogSoftmaxBackwardDataBackward0   log_softmax
    mse_loss_backward(g, x, t, reduction)    MseLossBackwardBackward0          mse_loss
    softplus_backward(g, x, beta, thr)       SoftplusBackwardBackward0         softplus
    elu_backward(g, alpha, ..., x)           EluBackwardBackward0              elu
    gelu_backward(g, x, approximate)         GeluBackwardBackward0             gelu

(relu's and leaky_relu's kernels are in unary.py, nll_loss's and
binary_cross_entropy's in loss.py, indexing's in indexing.py.)
"""
from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor
from ._rules import record, rule
from .formula_env import ENV, _like, _raw, exp, sum  # noqa: A004
from .formula_grads import gelu_slope
from .loss_more import sigmoid
from .scalar import div_scalar, mul_scalar


def _recording(*xs) -> bool:
    """On Tensors the kernel is recorded; on arrays it is only computed."""
    for x in xs:
        if x.__class__ is Tensor or isinstance(x, Tensor):
            return True
    return False


def _times_into(ours, g):
    """ours * g, written into ``ours`` (a fresh array this kernel made) when it
    can hold the product: one array fewer for the big ones of an ordinary
    backward (never into g, which is not ours to change)."""
    if ours.__class__ is g.__class__ and ours.shape == g.shape and ours.dtype == g.dtype:
        ours *= g
        return ours
    return ours * g


def _mask(like, condition):
    """A condition as 0/1 numbers of ``like``'s type (a constant: no gradient)."""
    return _like(like, condition.astype(_raw(like).dtype))


# ------------------------------------------------------- activations --
def tanh_backward(grad_output, output):
    """g (1 - y²), for y = tanh(x)."""
    if _recording(grad_output, output):
        value = tanh_backward(_raw(grad_output), _raw(output))
        return record(TanhBackwardBackward0, value, (grad_output, output),
                      grad_output=grad_output, output=output)
    return _times_into(1 - output * output, grad_output)


def sigmoid_backward(grad_output, output):
    """g (1 - y) y, for y = sigmoid(x)."""
    if _recording(grad_output, output):
        value = sigmoid_backward(_raw(grad_output), _raw(output))
        return record(SigmoidBackwardBackward0, value, (grad_output, output),
                      grad_output=grad_output, output=output)
    return _times_into(_times_into(1 - output, grad_output), output)


def softplus_backward(grad_output, self, beta, threshold):
    """g sigmoid(βx), or g where βx > threshold (there softplus is x itself)."""
    if _recording(grad_output, self):
        value = softplus_backward(_raw(grad_output), _raw(self), beta, threshold)
        return record(SoftplusBackwardBackward0, value, (grad_output, self),
                      grad_output=grad_output, self=self, beta=beta, threshold=threshold)
    z = self * beta
    return backend.xp_of(z).where(z > threshold, grad_output, grad_output * sigmoid(z))


def softplus_double_backward(grad, self, beta, threshold):
    """d/dx of g sigmoid(βx) is g β sigmoid'(βx): a sigmoid's kernel again."""
    z = mul_scalar(self, beta)
    below = _mask(grad, _raw(z) < threshold)
    return mul_scalar(sigmoid_backward(grad, sigmoid(z)) * below, beta)


def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """g·scale where x > 0, g·α·scale·input_scale·exp(input_scale·x) elsewhere
    (written with the output y when ``is_result``: the in-place form keeps y)."""
    if _recording(grad_output, self_or_result):
        value = elu_backward(_raw(grad_output), alpha, scale, input_scale, is_result,
                             _raw(self_or_result))
        return record(EluBackwardBackward0, value, (grad_output, self_or_result),
                      grad_output=grad_output, self_or_result=self_or_result, alpha=alpha,
                      scale=scale, input_scale=input_scale, is_result=is_result)
    x = self_or_result
    xp = backend.xp_of(x)
    if is_result:
        negative = grad_output * input_scale * (x + alpha * scale)
    else:  # (the exponent clamped at 0: where x > 0 it is not chosen, and must not overflow)
        negative = grad_output * (alpha * scale * input_scale) * \
            xp.exp(xp.minimum(x, 0) * input_scale)
    return xp.where(x <= 0, negative, grad_output * scale)


def elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result,
                        self_or_result):
    """d/dx of the negative branch is the branch times input_scale; the positive
    branch is constant."""
    below = _mask(grad, _raw(self_or_result) < 0)
    scaled = mul_scalar(grad * grad_output, input_scale)
    if is_result:
        return scaled * below
    return elu_backward(scaled, alpha, scale, input_scale, is_result, self_or_result) * below


def gelu_backward(grad_output, self, approximate):
    """g (Φ(x) + x φ(x)): see formula_grads.gelu_slope."""
    if _recording(grad_output, self):
        value = gelu_backward(_raw(grad_output), _raw(self), approximate)
        return record(GeluBackwardBackward0, value, (grad_output, self),
                      grad_output=grad_output, self=self, approximate=approximate)
    return grad_output * gelu_slope(self, approximate)


_PDF = 1 / math.sqrt(2 * math.pi)
_K, _C = math.sqrt(2 / math.pi), 0.044715


def gelu_double_backward(grad, grad_output, self, approximate):
    """d²/dx² gelu: 2φ(x) - x²φ(x) = φ(x)(2 - x²); for the tanh form, with
    t = tanh(k(x + cx³)) and h = k(1 + 3cx²), (1 - t²)(h - x t h² + 3kcx²)."""
    x = self
    if approximate == "tanh":
        u = (x + x * x * x * _C) * _K
        t = u.tanh() if isinstance(u, Tensor) else backend.xp_of(u).tanh(u)
        slope = 1 - t * t
        h = (x * x * (3 * _C) + 1) * _K
        second = slope * (h - x * t * h * h + x * x * (3 * _K * _C))
        return grad * grad_output * second
    pdf = mul_scalar(exp(mul_scalar(x * x, -0.5)), _PDF)
    return grad * grad_output * (mul_scalar(pdf, 2) + x * (-x * pdf))


# ------------------------------------------------------------ softmax --
def softmax_backward_data(grad_output, output, dim):
    """y (g - Σ g y), for y = softmax(x) along ``dim``."""
    if _recording(grad_output, output):
        value = softmax_backward_data(_raw(grad_output), _raw(output), dim)
        return record(SoftmaxBackwardDataBackward0, value, (grad_output, output),
                      grad_output=grad_output, output=output, dim=dim)
    return output * (grad_output - sum(grad_output * output, dim, True))


def softmax_double_backward(grad, grad_output, dim, output):
    return grad_output * grad - sum(output * grad_output, dim, True) * grad \
        - grad_output * sum(output * grad, dim, True)


def log_softmax_backward_data(grad_output, output, dim):
    """g - e^y Σ g, for y = log_softmax(x) along ``dim`` (e^y is the softmax)."""
    if _recording(grad_output, output):
        value = log_softmax_backward_data(_raw(grad_output), _raw(output), dim)
        return record(LogSoftmaxBackwardDataBackward0, value, (grad_output, output),
                      grad_output=grad_output, output=output, dim=dim)
    return grad_output - exp(output) * sum(grad_output, dim, True)


# ---------------------------------------------------------------- mse --
def _count(reduction, self, target):
    """How many elements the mean of a loss is taken over (1 for no mean)."""
    if reduction != "mean":
        return 1
    shape = self.shape if self.shape == target.shape else \
        backend.broadcast_shapes(self.shape, target.shape)
    return math.prod(shape)


def mse_loss_backward(grad_output, self, target, reduction):
    """2 (x - t) g, divided by N for a mean.  (The target's gradient is this
    kernel with x and t swapped.)"""
    if _recording(grad_output, self, target):
        value = mse_loss_backward(_raw(grad_output), _raw(self), _raw(target), reduction)
        return record(MseLossBackwardBackward0, value, (grad_output, self, target),
                      grad_output=grad_output, self=self, target=target, reduction=reduction)
    n = _count(reduction, self, target)
    return (self - target) * (2.0 / n if n else math.nan) * grad_output


def mse_loss_double_backward(grad, self, target, reduction):
    """2 g (/ N for a mean): the slope of 2 (x - t) g / N in x."""
    doubled = mul_scalar(grad, 2)
    if reduction != "mean":
        return doubled
    n = _count(reduction, self, target)
    return div_scalar(doubled, n) if n else mul_scalar(doubled, math.nan)


ENV.update({f.__name__: f for f in (
    tanh_backward, sigmoid_backward, softplus_backward, softplus_double_backward,
    elu_backward, elu_double_backward, gelu_backward, gelu_double_backward,
    softmax_backward_data, softmax_double_backward, log_softmax_backward_data,
    mse_loss_backward, mse_loss_double_backward)})


# Backward formulas of the kernels: g is the gradient of the kernel's output.
TanhBackwardBackward0 = rule(
    "TanhBackwardBackward0", "grad_output output",
    grad_output="tanh_backward(g, output)",
    output="g * (mul_scalar(output, -2) * grad_output)")
SigmoidBackwardBackward0 = rule(
    "SigmoidBackwardBackward0", "grad_output output",
    grad_output="sigmoid_backward(g, output)",
    output="g * grad_output * add_scalar(mul_scalar(output, -2), 1)")
SoftplusBackwardBackward0 = rule(
    "SoftplusBackwardBackward0", "grad_output self beta threshold",
    grad_output="softplus_backward(g, self, beta, threshold)",
    self="softplus_double_backward(g * grad_output, self, beta, threshold)")
EluBackwardBackward0 = rule(
    "EluBackwardBackward0", "grad_output self_or_result alpha scale input_scale is_result",
    grad_output="elu_backward(g, alpha, scale, input_scale, is_result, self_or_result)",
    self_or_result="elu_double_backward(g, grad_output, alpha, scale, input_scale, is_result,"
                   " self_or_result)")
GeluBackwardBackward0 = rule(
    "GeluBackwardBackward0", "grad_output self approximate",
    grad_output="gelu_backward(g, self, approximate)",
    self="gelu_double_backward(g, grad_output, self, approximate)")
SoftmaxBackwardDataBackward0 = rule(
    "SoftmaxBackwardDataBackward0", "grad_output output dim",
    grad_output="softmax_backward_data(g, output, dim)",
    output="softmax_double_backward(g, grad_output, dim, output)")
LogSoftmaxBackwardDataBackward0 = rule(
    "LogSoftmaxBackwardDataBackward0", "grad_output output dim",
    grad_output="g - sum(g * exp(output), dim, True)",
    output="-sum(grad_output, dim, True) * exp(output) * g")
MseLossBackwardBackward0 = rule(
    "MseLossBackwardBackward0", "grad_output self target reduction",
    grad_output="mse_loss_backward(g, self, target, reduction)",
    self="mse_loss_double_backward(g * grad_output, self, target, reduction)",
    target="-mse_loss_double_backward(g * grad_output, target, self, reduction)")
