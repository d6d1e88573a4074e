"""``autograd_kit.autograd``: the engine's public entry points, named as PyTorch names them."""
from __future__ import annotations

import warnings

from ..engine import Step, backward, backward_steps, grad
from ..snapshot import GraphSnapshot
from ..function import Function, FunctionCtx
from ..gradcheck import GradcheckError, gradcheck, gradgradcheck
from ..grad_mode import enable_grad, no_grad, set_grad_enabled
from ..tensor import Tensor
from . import function, functional, graph  # noqa: F401
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)


def Variable(data, requires_grad: bool = False, volatile: bool = False):  # noqa: N802
    """The pre-0.4 wrapper, kept so old code runs: a new leaf tensor on the same
    memory as ``data`` (``data.detach()``), requiring grad if asked.

    (Before PyTorch 0.4, a ``Variable`` wrapped a ``Tensor`` to add ``grad`` and
    ``grad_fn``; today every tensor has them.)  The result is a *new* leaf, as in
    PyTorch: gradients reach it, not ``data``.  ``volatile`` was the inference
    switch of those days; it has no effect now, and saying so is a warning."""
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    if volatile:
        if requires_grad:
            raise ValueError("Variable can't be volatile and require_grad at the same time!")
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                      "instead.", UserWarning, stacklevel=2)
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


__all__ = ["backward", "backward_steps", "grad", "Function", "FunctionCtx", "gradcheck",
           "gradgradcheck", "GradcheckError", "Variable", "Step", "GraphSnapshot",
           "no_grad", "enable_grad", "set_grad_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]
