"""Stochastic gradient descent, with optional momentum, as PyTorch computes it.

Plain SGD moves each parameter a small step downhill:  p ← p - lr · g.

With ``weight_decay`` λ the gradient first gets λ·p added (the gradient of
λ/2 · ||p||², which pulls weights towards zero):  g ← g + λ p.

With ``momentum`` μ the step follows a running sum of past gradients, a
"velocity" b that smooths out noise and speeds up along consistent directions:

    b ← g                       on the first step (the buffer starts as a copy of g)
    b ← μ b + (1 - dampening) g  afterwards
    p ← p - lr · b              (or, with ``nesterov``, p ← p - lr · (g + μ b):
                                 a look-ahead along the velocity)
"""
from __future__ import annotations

from .optimizer import Optimizer


class SGD(Optimizer):
    """``SGD(model.parameters(), lr=0.1, momentum=0.9)``."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, p, grad, group, state) -> None:
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])
