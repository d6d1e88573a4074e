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
from .dims import wrap_dim


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

    def apply_array(self, g, needed=None, borrowed=None):
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


class UnsafeSplitBackward0(SplitBackward0):
    """``unsafe_split``/``unsafe_chunk``: the same pieces, not tracked as views
    (PyTorch lets them be changed in place; an RNN cell cuts its gates so)."""
    __slots__ = ()


for _cls in (UnbindBackward0, SplitBackward0, SplitWithSizesBackward0, UnsafeSplitBackward0):
    NODE_CLASSES[_cls.__name__] = _cls  # (their gradient checks: tests/op_cases.py)


def _pieces(node_cls, x, dim, make, views=True):
    """The views ``make()`` returns, as the outputs of one ``node_cls`` node
    (``views=False``: copies of them, tensors of their own)."""
    with no_grad():
        pieces = make() if views else [v.clone() for v in make()]
    if is_grad_enabled() and x.requires_grad:
        node = node_cls([edge(x)])
        node.dim, node.shapes, node.like = dim, [v.shape for v in pieces], (x.dtype, x.device)
        for v, e in zip(pieces, node._init_outputs(len(pieces))):
            v._grad_fn, v._rg = e, True
    if views:  # (what in-place changes of a piece are refused by)
        name = node_cls.__name__.removesuffix("Backward0")
        for k, v in enumerate(pieces):
            v.__dict__["_creation"] = ("multi", k, name)
    return tuple(pieces)


def unbind(x, dim=0):
    from .indexing import select
    if x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    return _pieces(UnbindBackward0, x, d,
                   lambda: [select(x, d, i) for i in range(x._data.shape[d])])


def _split_sizes(n, size):
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0:
        if n:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        return [0]
    return [size] * (n // size) + ([n % size] if n % size else []) or [0]


def split_args(x, split_size, dim):
    """(dim, sizes, starts) of the pieces, with PyTorch's refusals."""
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x.ndim)
    n = x._data.shape[d]
    if isinstance(split_size, int):
        sizes = _split_sizes(n, split_size)
    else:
        sizes = [int(s) for s in split_size]
        if any(s < 0 for s in sizes):
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return d, sizes, starts


def _narrowed(x, d, sizes, starts):
    from .indexing import narrow
    return [narrow(x, d, s, size) for s, size in zip(starts, sizes)]


def split(x, split_size, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or pieces
    of the sizes listed."""
    pieces = split_args(x, split_size, dim)
    node = SplitBackward0 if isinstance(split_size, int) else SplitWithSizesBackward0
    return _pieces(node, x, pieces[0], lambda: _narrowed(x, *pieces))


def _chunk_size(x, chunks, dim):
    """The piece size (or the list of empty sizes) ``chunk`` splits by."""
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x._data.shape[wrap_dim(dim, x.ndim)]
    return [0] * chunks if n == 0 else -(-n // chunks)


def chunk(x, chunks, dim=0):
    """``chunks`` pieces of equal size along ``dim`` (the last may be smaller, and
    there may be fewer); an empty dimension gives ``chunks`` empty pieces."""
    return split(x, _chunk_size(x, chunks, dim), dim)

def unsafe_split(x, split_size, dim=0):
    """``split`` whose pieces are not views (UnsafeSplitBackward0): each may be
    changed in place, which ``split``'s pieces may not while they require grad."""
    pieces = split_args(x, split_size, dim)
    return _pieces(UnsafeSplitBackward0, x, pieces[0],
                   lambda: _narrowed(x, *pieces), views=False)


def unsafe_chunk(x, chunks, dim=0):
    """``chunk`` whose pieces are not views (see :func:`unsafe_split`)."""
    return unsafe_split(x, _chunk_size(x, chunks, dim), dim)
