"""Custom operations: subclass ``Function`` with ``forward`` and ``backward``.

As in PyTorch::

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    y = Cube.apply(x)        # y.grad_fn.name() == "CubeBackward"

``forward`` runs without recording; one node stands for the whole function.
``ctx.saved_tensors`` is version-checked like every saved tensor.
"""
from __future__ import annotations

from .graph import Node, SavedTensor, edge
from .grad_mode import is_grad_enabled, no_grad
from .tensor import Tensor


class FunctionCtx:
    """The ``ctx`` passed to forward and backward."""

    def __init__(self) -> None:
        self._to_save = ()
        self.needs_input_grad = ()
        self.node = None

    def save_for_backward(self, *tensors) -> None:
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        node = self.node
        return tuple(node._saved[f"saved_{i}"].unpack(node, f"saved_{i}")
                     if node._saved.get(f"saved_{i}") is not None else None
                     for i in range(len(self._to_save)))

    def mark_dirty(self, *tensors) -> None:  # accepted for compatibility
        pass

    def mark_non_differentiable(self, *tensors) -> None:
        pass


class FunctionNode(Node):
    """The node a custom Function puts in the graph."""

    __slots__ = ("fn_cls", "ctx", "_tensor_positions")

    def apply(self, g, needed=None):
        grads = self.fn_cls.backward(self.ctx, g)
        if not isinstance(grads, tuple):
            grads = (grads,)
        # backward returns one entry per forward argument; keep the tensors' ones
        return tuple(grads[i] if i < len(grads) else None for i in self._tensor_positions)


_NODE_CLASSES: dict = {}


def _node_class(fn_cls):
    """One node class per Function, named as PyTorch names it: ``CubeBackward``."""
    if fn_cls not in _NODE_CLASSES:
        _NODE_CLASSES[fn_cls] = type(fn_cls.__name__ + "Backward", (FunctionNode,),
                                     {"__slots__": ()})
    return _NODE_CLASSES[fn_cls]


class Function:
    """Base class for operations with a hand-written backward."""

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not (is_grad_enabled() and any(t._rg for t in tensors)):
            return out
        node = _node_class(cls)([edge(t) for t in tensors])  # tensors only, as in PyTorch
        node.fn_cls, node.ctx = cls, ctx
        node._tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx.node = node
        node._saved = {f"saved_{i}": (SavedTensor(t) if t is not None else None)
                       for i, t in enumerate(ctx._to_save)}
        result = Tensor._make(out._data, True, node)
        result._vc = out._vc
        return result

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError
