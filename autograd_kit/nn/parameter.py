"""``nn.Parameter``: a tensor that a Module treats as one of its weights.

A Parameter is an ordinary leaf tensor with one extra meaning: when it is
assigned as an attribute of a :class:`~autograd_kit.nn.Module`
(``self.weight = nn.Parameter(...)``), the module *registers* it, so that
``module.parameters()`` finds it and an optimizer can update it.  It requires
grad by default, because weights are what training adjusts.

The Parameter shares memory with the tensor it wraps (no copy), but it has its
own version counter and no history: it is always a leaf.

>>> import autograd_kit as torch
>>> torch.nn.Parameter(torch.tensor([1.0, 2.0]))
Parameter containing:
tensor([1., 2.], requires_grad=True)
"""
from __future__ import annotations

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor registered by the Module it is assigned to."""

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        self._init(data._data, False, None)  # same memory, fresh history
        if requires_grad:
            self.requires_grad = True  # checks the dtype, with PyTorch's message

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        # pickling (torch.save-style) gives back a Parameter, not a plain tensor
        from .. import backend
        return (_rebuild_parameter, (backend.to_host(self._data), self._rg, str(self.device)))


def _rebuild_parameter(data, requires_grad: bool, device: str = "cpu") -> Parameter:
    from .. import backend
    return Parameter(Tensor._make(backend.move(data, backend.device(device))), requires_grad)
