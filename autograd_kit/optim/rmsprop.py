"""RMSprop, as PyTorch computes it: divide each step by a running root-mean-square.

    v ← α v + (1 - α) g²                     (running average of squared gradients)
    p ← p - lr · g / (√v + ε)

so a parameter whose gradients are large gets smaller steps, and one with small
gradients larger steps.  Options, as in PyTorch: ``weight_decay`` (g ← g + λ p),
``centered`` (divide by the running *variance* instead: √(v - ḡ²), with ḡ the
running mean of g) and ``momentum`` μ (b ← μ b + g / (√v + ε); p ← p - lr · b).
"""
from __future__ import annotations

from .optimizer import Optimizer


class RMSprop(Optimizer):
    """``RMSprop(model.parameters(), lr=1e-3)`` (PyTorch's default lr is 0.01)."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, *,
                 maximize: bool = False) -> None:
        for value, what in ((lr, "learning rate"), (eps, "epsilon value"),
                            (momentum, "momentum value"), (weight_decay, "weight_decay value"),
                            (alpha, "alpha value")):
            if value < 0.0:
                raise ValueError(f"Invalid {what}: {value}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def _update(self, p, grad, group, state) -> None:
        from ..ops.creation import zeros_like
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        if not state:
            state["step"] = 0
            state["square_avg"] = zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        state["step"] += 1
        alpha = group["alpha"]
        v = state["square_avg"]
        v.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if group["centered"]:
            mean = state["grad_avg"]
            mean.mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = (v - mean * mean).sqrt().add_(group["eps"])
        else:
            avg = v.sqrt().add_(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).add_(grad / avg)
            p.add_(buf, alpha=-group["lr"])
        else:
            p.add_(grad / avg, alpha=-group["lr"])
