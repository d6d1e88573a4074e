"""May this tensor be changed in place?  Step 1 of every in-place op
(``inplace.py``), and of the in-place views (``x.t_()``, ``shape.py``): checked
first, so that a refused change leaves everything as it was."""
from __future__ import annotations

from .. import backend, errors
from ..views import check_view_inplace
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor


def _check(t, args=()) -> None:
    _check_writeable(t)
    if not is_grad_enabled():
        return
    check_view_inplace(t, args)  # (a view made by a Function, one of several views...)
    base = t._base
    if base is not None and t.__dict__.get("_no_grad_view") and (
            base._rg or any(isinstance(a, Tensor) and a._rg for a in args)):
        # made under no_grad, changed with grad on: tracked or not? PyTorch refuses
        raise RuntimeError(errors.NO_GRAD_VIEW_INPLACE)
    if t._rg and t.grad_fn is None:
        raise errors.LeafInplaceError(t)
    base = t._base
    if base is not None and base._rg and base._grad_fn is None:
        raise errors.LeafInplaceError(t, view=True)


def _check_writeable(t) -> None:
    """A tensor whose elements share memory (a broadcast gradient from ``sum()``,
    an ``expand``) cannot be written, as in PyTorch.  A read-only array whose
    elements do not overlap (a broadcast of one element) is given memory of its
    own first: the same values, now writeable."""
    a = t._data
    if backend.overlaps_itself(a):
        raise RuntimeError(errors.INTERNAL_OVERLAP)
    if not backend.is_writeable(a):
        if t._base is not None:
            raise RuntimeError(errors.INTERNAL_OVERLAP)
        t._data = a.copy()
