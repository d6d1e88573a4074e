"""Views: results that share their input's memory (``x[0]``, ``x.t()``,
``x.view(2, 3)``...), and what an in-place change of one must respect.

``make_view`` links a view to its base (the tensor that owns the memory) and to
the version counter they share; ``check_view_inplace`` refuses, in PyTorch's
words, the in-place changes of a view that autograd could not follow.  (A view
whose base changed in place gets a fresh history: ``graph.refresh_view``.)
"""
from __future__ import annotations

import re

from . import errors
from .grad_mode import _state

_STRIP = re.compile(r"Backward\d*$")


def make_view(t, x, view_fn, node_cls=None) -> None:
    """Make ``t``, an op's result sharing ``x``'s memory, a view: of ``x``, or of
    ``x``'s own base when ``x`` is a view (``_base`` is always a tensor that is
    no view), sharing the version counter.  ``view_fn`` takes the same view of
    any array shaped like ``x``.

    How the view was made matters to a later in-place change (``check_view_inplace``):
    made where nothing is recorded (no_grad, inference mode), or a view of a view
    made so, or of one of several views made at once, or of a custom Function's
    view: PyTorch refuses to record such a change, and says which case it is."""
    vc = x._vc
    t._vcounter = vc
    base = x._base
    if base is None:
        t._base, t._view = x, (view_fn, vc.value)
    else:
        prev = x._view[0]
        t._base, t._view = base, (lambda a, prev=prev, fn=view_fn: fn(prev(a)), vc.value)
    if not _state.enabled:
        # PyTorch: a view made where nothing is recorded of a tensor that requires
        # grad requires grad too, as a leaf with no grad_fn (under no_grad and
        # under inference mode alike; it is no inference tensor)
        t._rg = x._rg
        d = t.__dict__
        d["_no_grad_view"] = True
        d["_creation"] = ("inference" if _state.inference else "no_grad", None, None)
    elif base is not None:
        made = x._creation
        if made is not None:
            name = _STRIP.sub("", node_cls.__name__) if node_cls is not None else "View"
            t.__dict__["_creation"] = (made[0], 0, name)


def check_view_inplace(t, args=()) -> None:
    """Refuse, with PyTorch's message, an in-place change of a view that autograd
    cannot follow: one made by a custom Function (the change would bypass its
    backward), one of several views made at once (``unbind``, ``split``), one
    made where nothing was recorded (``no_grad``, ``inference_mode``), or a view
    of any of these.  Only changes that would be recorded are refused (grad
    mode on, and the view -- or, for the last kinds, its base or an operand --
    requires grad)."""
    creation = t._creation
    if creation is None:
        return
    kind, k, name = creation
    if kind in errors.VIEW_INPLACE_WHY:
        if t.requires_grad:
            raise RuntimeError(errors.VIEW_INPLACE.format(k=k, name=name)
                               + errors.VIEW_INPLACE_WHY[kind])
    elif t._base._rg or any(getattr(a, "_rg", False) for a in args):
        head = "A view was created in" if k is None else \
            f"Output {k} of {name} is a view of a view which was created in"
        raise RuntimeError(head + errors.VIEW_MADE_IN[kind] + errors.VIEW_MADE_IN_WHY.format(
            block="no_grad" if kind == "no_grad" else "inference_mode"))
