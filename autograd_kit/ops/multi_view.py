"""``unbind``, ``split``, ``chunk``: several views of one tensor, made at once.

PyTorch records them as *one* node with several outputs (``UnbindBackward0``,
``SplitBackward0``...; see ``multi_output.py``): its backward puts the gradients
of all the pieces back together in one go -- ``stack`` for ``unbind``, ``cat``
for ``split`` -- with zeros for the pieces no gradient reached.  A hook on such
a piece is called even when it got no gradient (with None), and the pieces may
not be changed in place while they require grad: PyTorch refuses, since one
node cannot follow a change to one of its outputs.
"""
from __future__ import annotations

from ..graph import edge
from ..grad_mode import is_grad_enabled, no_grad
from ..multi_output import MultiOutputNode
from ._rules import NODE_CLASSES
from .reduce import wrap_dim


class _PiecesBackward(MultiOutputNode):
    """A node whose outputs are pieces of its one input along ``dim``."""

    __slots__ = ("dim", "shapes", "like")  # like: (dtype, device) of the pieces
    input_names = ("self",)

    def apply(self, g, needed=None):
        from .creation import zeros
        dtype, device = self.like
        pieces = [zeros(shape, dtype=dtype, device=device) if s is None else s
                  for s, shape in zip(g.slots, self.shapes)]
        return (self.join(pieces, self.dim),)

    def apply_array(self, g, needed=None):
        from ..tensor import Tensor
        (out,) = self.apply(g.map(Tensor._make))
        return (out._data,)


class UnbindBackward0(_PiecesBackward):
    __slots__ = ()
    formula_text = {"self": "stack(grads, dim)"}  # grads: one per output, zeros if none

    @staticmethod
    def join(pieces, dim):
        from .shape import stack
        return stack(pieces, dim)


class SplitBackward0(_PiecesBackward):
    __slots__ = ()
    formula_text = {"self": "cat(grads, dim)"}

    @staticmethod
    def join(pieces, dim):
        from .shape import cat
        return cat(pieces, dim)


class SplitWithSizesBackward0(SplitBackward0):
    __slots__ = ()


for _cls in (UnbindBackward0, SplitBackward0, SplitWithSizesBackward0):
    NODE_CLASSES[_cls.__name__] = _cls  # (their gradient checks: tests/op_cases.py)


def _pieces(node_cls, x, dim, make):
    """The views ``make()`` returns, as the outputs of one ``node_cls`` node."""
    with no_grad():
        views = make()
    if is_grad_enabled() and x.requires_grad:
        node = node_cls([edge(x)])
        node.dim, node.shapes, node.like = dim, [v.shape for v in views], (x.dtype, x.device)
        for v, e in zip(views, node._init_outputs(len(views))):
            v._grad_fn, v._rg = e, True
    name = node_cls.__name__.removesuffix("Backward0")
    for k, v in enumerate(views):
        v.__dict__["_creation"] = ("multi", k, name)
    return tuple(views)


def unbind(x, dim=0):
    from .indexing import select
    d = wrap_dim(dim, x.ndim)
    return _pieces(UnbindBackward0, x, d,
                   lambda: [select(x, d, i) for i in range(x._data.shape[d])])


def split(x, split_size, dim=0):
    from .indexing import narrow
    d = wrap_dim(dim, x.ndim)
    n = x._data.shape[d]
    by_size = isinstance(split_size, int)
    sizes = ([split_size] * (n // split_size) + ([n % split_size] if n % split_size else [])
             if by_size else list(split_size))
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return _pieces(SplitBackward0 if by_size else SplitWithSizesBackward0, x, d,
                   lambda: [narrow(x, d, s, size) for s, size in zip(starts, sizes)])


def chunk(x, chunks, dim=0):
    n = x._data.shape[wrap_dim(dim, x.ndim)]
    return split(x, -(-n // chunks), dim)
