"""``nn.init``: fill a weight tensor in place with well-chosen starting values.

Why the scale matters: a layer ``y = W x`` with ``n`` inputs adds up ``n``
products, so if each weight has variance ``v`` the output's variance is about
``n v`` times the input's.  Stack layers and the signal explodes (n v > 1) or
vanishes (n v < 1).  The schemes below pick ``v`` to keep it steady:

* **Xavier/Glorot**: Var(w) = gain² · 2 / (fan_in + fan_out), a compromise
  between the forward pass (fan_in) and the backward pass (fan_out);
* **Kaiming/He**:    Var(w) = gain² / fan, with gain = √2 for ReLU, which
  zeroes half its inputs.

A uniform distribution U(-b, b) has variance b²/3, so the bound is
b = √3 · std.  Every function runs under ``no_grad`` (filling a weight is not
part of any computation to differentiate) and returns the tensor it filled.

The numbers are PyTorch's: after ``manual_seed(s)`` a layer starts from the
weights PyTorch gives it (``generator=`` draws from a generator of your own).
"""
from __future__ import annotations

import math
import warnings

from ..grad_mode import no_grad
from ..tensor import Tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor by which a nonlinearity shrinks the standard deviation, inverted:
    1 for linear/sigmoid, 5/3 for tanh, √2 for relu, √(2 / (1 + slope²)) for leaky_relu."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """For a weight of shape (out, in, *kernel): fan_in = in·k, fan_out = out·k."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer "
                         "than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


@no_grad()
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with numbers drawn from U(a, b)."""
    return tensor.uniform_(a, b, generator=generator)


@no_grad()
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with numbers drawn from N(mean, std²)."""
    return tensor.normal_(mean, std, generator=generator)


@no_grad()
def constant_(tensor: Tensor, val: float) -> Tensor:
    return tensor.fill_(val)


@no_grad()
def zeros_(tensor: Tensor) -> Tensor:
    return tensor.zero_()


@no_grad()
def ones_(tensor: Tensor) -> Tensor:
    return tensor.fill_(1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-b, b) with b = gain · √(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std²) with std = gain · √(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _no_elements(tensor: Tensor) -> bool:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-b, b) with b = gain · √(3 / fan).

    ``nn.Linear`` uses ``a=√5`` (leaky_relu gain √(2/6) = 1/√3), which makes
    b = 1/√fan_in: the classic U(-1/√n, 1/√n) initialisation."""
    if _no_elements(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std²) with std = gain / √fan."""
    if _no_elements(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)
