"""``torch.autograd.gradcheck``, the module, under its PyTorch path: PyTorch keeps
``GradcheckError`` here (``from torch.autograd.gradcheck import GradcheckError``).
The checks themselves live in :mod:`autograd_kit.gradcheck`; the package's
``autograd.gradcheck`` stays the function, as in PyTorch."""
from ..gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]
