"""What a custom Function's outputs become, and what its ctx saves.

``Function.apply`` (see ``function.py``) puts one node in the graph; these
helpers then make each output what PyTorch makes it:

* an input returned as it is, or a view of one, becomes a view of that input
  (:func:`_alias`, :func:`_as_view_of`);
* an input marked dirty (changed in place) becomes the output itself, and a
  view's base learns of the change (:func:`_dirty_output`, :class:`_DirtyViewSlices`);
* ``ctx.save_for_backward``'s tensors are saved version-checked, an output as
  the output (:func:`_save`).
"""
from __future__ import annotations

import weakref

from . import errors
from .graph import AsStridedBackward0, Node, SavedTensor, edge
from .ops.inplace import CopySlices
from .tensor import Tensor


def _aliases_of_inputs(out, tensors):
    """Without a graph: an input returned as it is comes back as a new tensor
    sharing its memory and version counter, as PyTorch returns it."""
    ids = {id(t) for t in tensors}
    if not ids:
        return out

    def alias(o):
        return _alias(o) if id(o) in ids else o
    return tuple(alias(o) for o in out) if isinstance(out, tuple) else alias(out)


def _alias(o):
    """A new tensor on ``o``'s memory, a view of it (as PyTorch returns an input
    that forward returned unchanged), with no history."""
    a = Tensor._make(o._data)
    _as_view_of(a, o)
    return a


def _as_view_of(result, o) -> None:
    """``result`` shares ``o``'s memory: make it the view ``o`` is (of ``o``'s base)
    or a view of ``o`` itself."""
    vc = o._vc
    result._vcounter = vc
    if o._base is not None:
        result._base, result._view = o._base, (o._view[0], vc.value)
    else:
        result._base, result._view = o, (_same, vc.value)


def _same(a):
    return a

def _is_view(t) -> bool:
    """Made in forward as a view of an input (a view shares its base's memory)."""
    return t._base is not None


def _dirty_output(t, fn, node, tensors):
    """An input that forward changed in place: it becomes the output itself."""
    if t._grad_fn is None and t._rg:
        raise RuntimeError(errors.DIRTY_LEAF)
    t._vc.value += 1  # (as PyTorch: marking dirty counts as one more change)
    if t._base is not None and fn is node:  # a view: its base learns of the change
        base, view_fn = t._base, t._view[0]
        j = next(i for i, x in enumerate(tensors) if x is t)
        cs = _DirtyViewSlices(edge(base), view_fn, node, base._data.shape, j)
        base.grad_fn, base._rg = cs, True  # (the setter: retain_grad moves along)
        t.grad_fn = AsStridedBackward0((cs, 0), view_fn, base._data.shape)
        t._rg = True
        t._view = (view_fn, t._vcounter.value)
    else:
        t.grad_fn, t._rg = fn, True
    return t


def _save(ctx, node, made, edges, produced) -> None:
    """``ctx.save_for_backward``'s tensors, version-checked.  An output is saved
    as the output (with this node as its history, as PyTorch saves it), so a
    second derivative flows through this node again."""
    saved, at = {}, []
    out_edge = {id(o): edges[i] for i, o in enumerate(produced)}
    for i, t in enumerate(ctx._to_save):
        key = f"saved_{i}"
        if t is None:
            saved[key] = None
        elif id(t) in made and made[id(t)]._rg and made[id(t)]._grad_fn is out_edge[id(t)]:
            saved[key] = SavedTensor(made[id(t)], is_output=True)
        else:
            saved[key] = SavedTensor(t)
        edge_of_output = out_edge.get(id(t), node) if saved[key] is not None and \
            saved[key].tensor is None else node
        at.append(None if edge_of_output is node else weakref.ref(edge_of_output))
    node._saved = saved
    ctx._unpack_at = tuple(at)
    ctx._to_save = ctx._dirty = ctx._non_differentiable = ()  # (kept by the node now)


class _DirtyViewSlices(CopySlices):
    """``CopySlices`` for a Function that changed its input ``j``, a view, in
    place: outside the view the base's gradient flows on unchanged; inside, it
    goes through the Function's backward."""

    __slots__ = ("j",)

    def __init__(self, base_edge, view_fn, fn, size, j):
        nexts = [(n, 0) for n in fn._next]
        nexts[j] = base_edge
        Node.__init__(self, nexts)
        self.view_fn, self.fn, self.size, self.j = view_fn, fn, size, j
        self.released = False

    def apply(self, g, needed=None):
        from .ops.indexing import gather_view, scatter_view
        if self.released:
            raise errors.GraphFreedError(self)
        inside = gather_view(g, self.view_fn)
        grads = list(self.fn.apply(inside))
        base = g - scatter_view(inside, self.size, self.view_fn)
        if grads[self.j] is not None:
            base = base + scatter_view(grads[self.j], self.size, self.view_fn)
        grads[self.j] = base
        return tuple(grads)


_DirtyViewSlices.__name__ = _DirtyViewSlices.__qualname__ = "CopySlices"  # (as PyTorch shows it)
