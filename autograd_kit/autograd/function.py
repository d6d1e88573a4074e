"""``torch.autograd.function``: where PyTorch's documentation imports from.

``from torch.autograd.function import Function, FunctionCtx, once_differentiable``
works with ``autograd_kit`` in place of ``torch``; the code is in ``function.py``.
"""
from ..function import Function, FunctionCtx, once_differentiable

__all__ = ["Function", "FunctionCtx", "once_differentiable"]
