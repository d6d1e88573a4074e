"""Where gradients end up: in a leaf's ``.grad``, or a retained non-leaf's.

The first gradient to reach a leaf is normally copied, since other parts of
the graph (or the user) may still hold that array.  When reference counts
prove that nothing else can see it, the leaf keeps the array instead -- the
same check PyTorch makes with its own reference counts.
"""
from __future__ import annotations

import sys

from .grad_mode import is_grad_enabled
from .tensor import Tensor


def take_over(node, g, contributions) -> bool:
    """Let a leaf keep the arriving gradient's array instead of copying it.

    Safe only when nothing else can see that array: it is no view, no other
    object holds it, and the gradient tensor itself is referenced only by the
    engine (the ``contributions`` list, unless several were summed into a new
    tensor, and the local ``g``).  PyTorch makes the same check with its own
    reference counts.  Otherwise AccumulateGrad copies."""
    v = node.variable
    expected = _ENGINE_REFS if len(contributions) == 1 else _ENGINE_REFS - 1
    if (v._grad is None and v._hooks is None and not is_grad_enabled()
            and sys.getrefcount(g) == expected and _unshared(g)):
        v._grad = Tensor._make(g._data)
        return True
    return False


def _unshared(g) -> bool:
    """Only tensor ``g`` can reach its memory: a fresh array, or a C-ordered view
    spanning the whole of a base array that nothing else holds (the gradient of
    ``W.t()`` in ``nn.Linear``, of a reshape...)."""
    a = g._data
    base = a.base
    if sys.getrefcount(a) != 3:  # g's slot, the local ``a``, getrefcount's argument
        return False
    if base is None:
        return True
    if base.base is not None or base.size != a.size or not a.flags.c_contiguous:
        return False
    owner = g._base[0] if g._base is not None else None   # the tensor viewed by g,
    held = 1 if owner is not None and owner._data is base and \
        sys.getrefcount(owner) == 3 else 0                # reachable only through g
    return sys.getrefcount(base) == 3 + held  # a.base, the local, the argument


_ENGINE_REFS = 4  # ``contributions[0]``, ``g`` here, ``g`` in _process, getrefcount's own


def store_grad(t, g):
    """Accumulate ``g`` into a non-leaf tensor's ``.grad`` (retain_grad, inputs=)."""
    if t._grad is None:
        t._grad = g if g._rg else Tensor._make(g._data.copy())
    else:
        t._grad = t._grad + g
    return (t, t._grad)
