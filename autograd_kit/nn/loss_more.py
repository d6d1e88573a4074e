"""Loss modules ``BCEWithLogitsLoss``, ``SmoothL1Loss``, ``HuberLoss``.

Each remembers its settings and calls the function of the same name in
``nn.functional`` (see ``functional_losses.py`` for the math).  ``weight`` and
``pos_weight`` are buffers, as in PyTorch: they move with ``.to()`` and appear
in the ``state_dict``, but they are not parameters.
"""
from __future__ import annotations

from . import functional_losses as F
from ._reduction import legacy_keywords
from .module import Module


class BCEWithLogitsLoss(Module):
    """Binary classification from raw scores (logits): sigmoid and binary
    cross-entropy in one numerically stable step."""

    @legacy_keywords
    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None) -> None:
        super().__init__()
        self.reduction = reduction
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class SmoothL1Loss(Module):
    """Squared error for small errors, absolute error for large ones (threshold β)."""

    @legacy_keywords
    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(Module):
    """Like SmoothL1Loss, but the linear part has slope δ (it is δ · SmoothL1 with β = δ)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__()
        self.reduction, self.delta = reduction, delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
