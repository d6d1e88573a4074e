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

from . import errors
from .graph import Node, SavedTensor, edge
from .grad_mode import is_grad_enabled, no_grad
from .ops.reduce import sum_to
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
        try:
            return tuple(node._saved[f"saved_{i}"].unpack(node, f"saved_{i}")
                         if node._saved.get(f"saved_{i}") is not None else None
                         for i in range(len(self._to_save)))
        except RuntimeError as err:  # (changed since saved, or freed by a backward)
            raise errors.short(err)  # the line of your backward, then this one

    def mark_dirty(self, *tensors) -> None:  # accepted for compatibility
        pass

    def mark_non_differentiable(self, *tensors) -> None:
        pass


class FunctionNode(Node):
    """The node a custom Function puts in the graph."""

    __slots__ = ("fn_cls", "ctx", "_tensor_positions", "_n_args", "_shapes")

    def apply(self, g, needed=None):
        grads = self.fn_cls.backward(self.ctx, g)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return self._checked(grads)

    def _checked(self, grads: tuple) -> tuple:
        """The gradients for the tensor inputs, after PyTorch's checks of what a
        hand-written backward returned: one entry per forward argument (extra
        entries must be None), each a Tensor or None, each with the input's shape
        or one that broadcasting made from it (then summed back down to it)."""
        name = type(self).__name__
        if len(grads) < self._n_args or any(x is not None for x in grads[self._n_args:]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {self._n_args}, got {len(grads)})")
        out = []
        for pos, shape in zip(self._tensor_positions, self._shapes):
            grad = grads[pos]
            if grad is not None and not isinstance(grad, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
            if grad is not None and tuple(grad.shape) != shape:
                if not _expandable(shape, tuple(grad.shape)):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {pos} - got "
                        f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
                grad = sum_to(grad, shape)
            out.append(grad)
        return tuple(out)


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (PyTorch's ``is_expandable_to``)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


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
        node._n_args, node._shapes = len(args), tuple(tuple(t.shape) for t in tensors)
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
