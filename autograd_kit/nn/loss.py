"""Loss modules: ``loss_fn = nn.MSELoss(); loss = loss_fn(prediction, target)``.

Each one only remembers its ``reduction`` ("mean", "sum" or "none": average
the per-element losses, add them, or return them all) and calls the function
of the same name in ``nn.functional``, where the math is described.
"""
from __future__ import annotations

from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction


class MSELoss(_Loss):
    """mean((x - y)²): regression."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """mean(|x - y|): regression that is less sensitive to outliers."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """Classification from raw scores (logits): log_softmax, then the negative
    log-probability of the right class."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.ignore_index,
                               self.reduction, self.label_smoothing)


class NLLLoss(_Loss):
    """Classification from log-probabilities (e.g. after ``nn.LogSoftmax``)."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class BCELoss(_Loss):
    """Binary classification from probabilities (e.g. after ``nn.Sigmoid``)."""

    def __init__(self, weight=None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


def _accept_legacy_keywords() -> None:
    """Every loss module also takes the pre-1.0 ``size_average=`` / ``reduce=``."""
    from ._reduction import legacy_keywords
    for cls in (MSELoss, L1Loss, CrossEntropyLoss, NLLLoss, BCELoss):
        cls.__init__ = legacy_keywords(cls.__init__)


_accept_legacy_keywords()
