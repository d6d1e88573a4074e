"""Adam: momentum plus a per-weight step size, as PyTorch computes it.

Adam keeps two running averages for each parameter, decaying at rates β₁, β₂:

    m ← β₁ m + (1 - β₁) g        the mean of recent gradients (the direction)
    v ← β₂ v + (1 - β₂) g²       the mean of recent squared gradients (their size)

Both start at zero, so early on they are too small; dividing by 1 - βᵗ (after
step t) corrects that bias.  The update divides the direction by the typical
size, so every weight moves about ``lr`` per step whatever its gradient's scale:

    p ← p - lr / (1 - β₁ᵗ) · m / (√v / √(1 - β₂ᵗ) + eps)

``weight_decay`` λ adds λ·p to the gradient first (L2 regularisation, as in
PyTorch's Adam; AdamW instead decays the weights directly).  ``amsgrad`` uses
the largest v seen so far, so the step size never grows back.
"""
from __future__ import annotations

import math

from ..ops.creation import tensor, zeros_like
from ..ops.reduce import maximum
from .optimizer import Optimizer


class Adam(Optimizer):
    """``Adam(model.parameters(), lr=1e-3)``."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, p, grad, group, state) -> None:
        if not state:  # first step: the averages start at zero
            state["step"] = tensor(0.0)
            state["exp_avg"] = zeros_like(p)
            state["exp_avg_sq"] = zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(p)
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        state["step"] += 1
        step = state["step"].item()
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.mul_(beta1).add_(grad, alpha=1 - beta1)           # PyTorch: m.lerp_(g, 1 - β₁)
        v.mul_(beta2).add_(grad * grad, alpha=1 - beta2)    # PyTorch: v.addcmul_(g, g, ...)
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]
            v_max.copy_(maximum(v_max, v))
            v = v_max
        step_size = group["lr"] / (1 - beta1 ** step)
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** step)).add_(group["eps"])
        p.add_(m / denom, alpha=-step_size)                 # PyTorch: p.addcdiv_(m, denom, ...)
