"""``once_differentiable``: a custom backward that may not be differentiated again.

The decorated backward runs without recording (so it may use any numpy code).
Its results, when a graph is being recorded, hang on a :class:`_DelayedError`
node: a second derivative through them raises PyTorch's error.
"""
from __future__ import annotations

import functools

from . import errors
from .graph import edge
from .grad_mode import _state, no_grad
from .multi_output import MultiOutputNode
from .tensor import Tensor


class _DelayedError(MultiOutputNode):
    """Stands for a ``once_differentiable`` backward in the graph of its own
    results: differentiating through it again is refused.  Its inputs are fresh
    leaves holding those results (PyTorch's ``torch::autograd::Error`` node)."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::Error"

    def apply(self, g, needed=None):
        raise RuntimeError(errors.ONCE_DIFFERENTIABLE)


_DelayedError.__name__ = _DelayedError.__qualname__ = "Error"  # (PyTorch's class name)


def once_differentiable(backward):
    """Decorate ``backward``: it runs without recording (it may use any numpy
    code), and a second derivative through it raises PyTorch's error."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            result = backward(ctx, *grads)
        if not _state.enabled or not any(isinstance(g, Tensor) and g._rg for g in grads):
            return result
        many = isinstance(result, tuple)
        results = result if many else (result,)
        fakes = [r.detach().requires_grad_() for r in results
                 if isinstance(r, Tensor) and r._data.dtype.kind in "fc"]
        if not fakes:
            return result
        node = _DelayedError([edge(f) for f in fakes])
        edges = node._init_outputs(len(fakes)) if len(fakes) > 1 else [node]
        k, wrapped = 0, []
        for r in results:
            if isinstance(r, Tensor) and r._data.dtype.kind in "fc":
                r = Tensor._make(r._data, True, edges[k])
                k += 1
            wrapped.append(r)
        return tuple(wrapped) if many else wrapped[0]
    return wrapper
