"""Where gradients end up: in a leaf's ``.grad``, or a retained non-leaf's.

The first gradient to reach a leaf is normally copied, since other parts of
the graph (or the user) may still hold that array.  When reference counts
prove that nothing else can see it, the leaf keeps the array instead -- the
same check PyTorch makes with its own reference counts.

Several threads may run backward passes that reach the same leaf.  Adding into
``.grad`` is a read-modify-write, so it happens under one lock (held only for
the addition itself, never while a hook runs); and a pass adds *in place* only
into an array that nothing else can see -- never into one another pass has
lent to the leaf, nor into a read-only broadcast of a number.
"""
from __future__ import annotations

import sys
import threading

from . import backend
from .grad_mode import is_grad_enabled
from .refcounts import EXACT
from .tensor import Tensor

_LOCK = threading.Lock()  # one addition into a .grad at a time, across threads


def take_over(node, g, contributions, lent) -> bool:
    """Store array ``g`` as a leaf's gradient without copying it, if that is safe.

    * If nothing else can see ``g`` -- the engine's references (the
      ``contributions`` list, unless several were summed into a new array, and
      its local ``g``) are the only ones -- the leaf keeps it.  PyTorch makes
      the same check with its own reference counts.
    * If others hold it, they may be the engine's own buffers for nodes still
      to run (the two inputs of ``a + b`` receive the same array).  Then the
      leaf *borrows* it: ``lent`` remembers the leaf, a second gradient for it
      is added out of place, and :func:`settle` copies at the end of the pass
      only what is still shared.

    Returns False when AccumulateGrad must do the work (the leaf has hooks, or
    reference counts cannot be trusted here: see ``refcounts``)."""
    if not EXACT:
        return False
    v = node.variable
    with _LOCK:
        if v._hooks is not None:
            if id(v) in lent:  # hooks arrived during the pass: stop borrowing first
                _unshare(lent.pop(id(v)))
            return False
        grad = v._grad
        if grad is not None:
            if id(v) not in lent:
                return False
            grad._data = grad._data + g  # out of place: the borrowed array stays as it was
            del lent[id(v)]
            return True
        in_list = any(c is g for c in contributions)  # (a sum may be made in place)
        expected = _ENGINE_REFS if in_list else _ENGINE_REFS - 1
        v._grad = Tensor._make(g)
        if not _owned(g, expected + 1):  # (+1: the new Tensor's reference)
            lent[id(v)] = v
        return True


def accumulate(v, g) -> None:
    """Add the Tensor ``g`` into leaf ``v``'s ``.grad`` (what AccumulateGrad does).

    The first gradient is copied (others may hold ``g``); later ones are added
    in place when ``.grad``'s array is the leaf's alone, else out of place (the
    array may be lent by a pass still running in another thread, or be a
    read-only broadcast).  With ``create_graph`` the sum is recorded."""
    with _LOCK:
        grad = v._grad
        if is_grad_enabled():  # create_graph=True: keep the gradient's own graph
            v._grad = g if grad is None else grad + g
        elif grad is None:
            v._grad = Tensor._make(g._data.copy())
        elif grad._rg:
            v._grad = Tensor._make(grad._data + g._data)
        else:
            data = grad._data
            if EXACT and _owned(data, 2):  # (``data``, grad's slot)
                data += g._data
            else:
                grad._data = data + g._data


def add_up(contributions):
    """The gradient arrays that reached one node, summed in arrival order.

    A contribution that only this list holds (a fresh array: no view, no other
    reference) receives the sum in place, so adding up allocates nothing --
    PyTorch's input buffers do the same.  Addition is commutative bit for bit,
    so which operand receives the sum does not change the result."""
    g = contributions[0]
    for i in range(1, len(contributions)):
        extra = contributions[i]
        if not EXACT or extra.shape != g.shape or extra.dtype != g.dtype:
            g = g + extra
        elif _owned(g, 1) or _owned(g, 2):  # a sum made here, or held by the list only
            g += extra
        elif _owned(extra, 2):              # (the list and the local ``extra``)
            extra += g
            g = extra
        else:
            g = g + extra
    return g


def settle(lent) -> None:
    """End of a pass: a borrowed gradient array that something else still
    holds (another leaf's ``.grad``, a forward value) is copied now."""
    with _LOCK:
        for v in lent.values():
            _unshare(v)
        lent.clear()


def _unshare(v) -> None:
    grad = v._grad
    if grad is not None and not _owned(grad._data, 1):  # 1: grad's own slot
        grad._data = grad._data.copy()


def _owned(a, refs: int) -> bool:
    """Do the caller's ``refs`` references account for every reference to ``a``,
    may it be written (a broadcast may not), and is it no view -- or a C-ordered
    view spanning the whole of a base array that nothing else holds (the gradient of ``W.t()`` in ``nn.Linear``, of a
    reshape...)?"""
    if sys.getrefcount(a) != refs + 2:  # +2: the parameter ``a``, getrefcount's argument
        return False
    if not backend.is_writeable(a):  # a broadcast
        return False
    base = a.base
    return base is None or (base.base is None and base.size == a.size
                            and a.flags.c_contiguous and sys.getrefcount(base) == 3)
    # (the base: ``a.base``, the local ``base``, getrefcount's argument)


_ENGINE_REFS = 3  # ``contributions[0]``, ``g`` in _process, take_over's argument


def store_grad(t, g):
    """Accumulate ``g`` into a non-leaf tensor's ``.grad`` (retain_grad, inputs=)."""
    with _LOCK:
        if t._grad is None:
            t._grad = g if g._rg else Tensor._make(g._data.copy())
        else:
            t._grad = t._grad + g
        return (t, t._grad)
