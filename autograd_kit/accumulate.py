"""Where gradients end up: in a leaf's ``.grad``, or a retained non-leaf's.

The first gradient to reach a leaf is normally copied, since other parts of
the graph (or the user) may still hold that array.  When reference counts
prove that nothing else can see it, the leaf keeps the array instead -- the
same check PyTorch makes with its own reference counts.
"""
from __future__ import annotations

import sys

from .tensor import Tensor


def take_over(node, g, contributions) -> bool:
    """Let a leaf keep the arriving gradient array ``g`` instead of copying it.

    Safe only when nothing else can see that array: the engine's references
    (the ``contributions`` list, unless several were summed into a new array,
    and its local ``g``) are the only ones, and it is no view -- or a C-ordered
    view spanning the whole of a base array that nothing else holds (the
    gradient of ``W.t()`` in ``nn.Linear``, of a reshape...).  PyTorch makes the
    same check with its own reference counts.  Otherwise AccumulateGrad copies."""
    v = node.variable
    expected = _ENGINE_REFS if len(contributions) == 1 else _ENGINE_REFS - 1
    if v._grad is None and v._hooks is None and sys.getrefcount(g) == expected:
        base = g.base
        if base is None or (base.base is None and base.size == g.size
                            and g.flags.c_contiguous and sys.getrefcount(base) == 3):
            v._grad = Tensor._make(g)          # (3: g.base, the local, the argument)
            return True
    return False


_ENGINE_REFS = 4  # ``contributions[0]``, ``g`` here, ``g`` in _process, getrefcount's own


def store_grad(t, g):
    """Accumulate ``g`` into a non-leaf tensor's ``.grad`` (retain_grad, inputs=)."""
    if t._grad is None:
        t._grad = g if g._rg else Tensor._make(g._data.copy())
    else:
        t._grad = t._grad + g
    return (t, t._grad)
