"""``nn.utils``: small helpers that work on a model's gradients.

``clip_grad_norm_`` rescales all gradients together so that their combined
length (the norm of the vector made of every gradient entry) is at most
``max_norm``: the direction of the update is kept, only its size is limited.
That tames the occasional huge step that makes training diverge.

``zero_grad_`` is the loop shared by ``Module.zero_grad`` and
``Optimizer.zero_grad``.
"""
from __future__ import annotations

import math

from ..grad_mode import no_grad
from ..tensor import Tensor


def _as_list(parameters) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def zero_grad_(parameters, set_to_none: bool = True) -> None:
    """Forget the gradients of ``parameters``.

    ``set_to_none=True`` (the default) drops each ``.grad``: the next backward
    stores a fresh one, and no memory is spent writing zeros.  Otherwise the
    existing gradients are detached from any graph and filled with zeros."""
    for p in _as_list(parameters):
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if p.grad.grad_fn is not None:
            p.grad.detach_()
        else:
            p.grad.requires_grad_(False)
        p.grad.zero_()


@no_grad()
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients in place so that their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm measured *before* clipping.

    total = || (||g_1||, ||g_2||, ...) ||, and every g_i is multiplied by
    min(1, max_norm / (total + 1e-6)).
    """
    from ..ops.creation import tensor
    from ..ops.shape import stack
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return tensor(0.0)
    if math.isinf(norm_type):
        total = stack([g.abs().max() for g in grads]).max()
    else:
        total = stack([g.norm(norm_type) for g in grads]).norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef)
    return total


@no_grad()
def clip_grad_value_(parameters, clip_value: float) -> None:
    """Clamp every gradient entry into [-clip_value, clip_value], in place."""
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)


def typename(obj) -> str:
    """``torch.FloatTensor`` for a tensor, the qualified class name otherwise (as in
    PyTorch's error messages)."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else \
        f"{cls.__module__}.{cls.__qualname__}"
