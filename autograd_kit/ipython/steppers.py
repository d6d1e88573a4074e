"""The steppers ``%autograd_step`` opened, remembered for the explainer.

A stepper runs the real backward pass to show it, and without
``--retain-graph`` that pass frees the graph's saved values.  A later
``backward()`` through the same graph then fails; the explainer asks
:func:`stepped` whether a stepper's pass was the one that freed it, so that
its explanation can say so.  The magic (:mod:`.magics`) tells this module
about each stepper it opens (:func:`remember`).
"""
from __future__ import annotations

import weakref


#: the roots ``%autograd_step`` opened a stepper on: ``(root, expression,
#: stepper)``, the tensor and the widget held weakly, newest last.  The
#: explainer asks :func:`stepped` whether a graph that a later backward() found
#: freed was freed by a stepper's pass.
_STEPPED: list = []


def remember(root, expression: str, stepper) -> None:
    """Note that ``%autograd_step EXPR`` opened ``stepper`` on ``root``."""
    _STEPPED[:] = [e for e in _STEPPED if e[0]() is not None and e[2]() is not None][-15:]
    try:
        _STEPPED.append((weakref.ref(root), expression, weakref.ref(stepper)))
    except TypeError:  # a root that can't be held weakly: nothing to remember
        pass


def _freed_by(stepper) -> bool:
    """Whether the stepper's pass has freed the graph's saved tensors for real:
    PyTorch's pass, recorded when the stepper opened; the kit's, once stepped
    to the end.  Never with ``--retain-graph``."""
    if stepper.retain_graph:
        return False
    source = getattr(stepper, "_source", None)
    return bool(getattr(source, "freed", False)) or (
        getattr(source, "engine", "") == "autograd_kit" and stepper.finished)


def stepped(tensors=(), nodes=()) -> str | None:
    """The expression of the latest ``%autograd_step`` whose pass freed a graph
    that holds one of ``tensors`` (its root, or a tensor computed from it) or
    one of ``nodes``; None when no stepper did."""
    from ..viz.error_facts import nodes_below
    starts = [t.grad_fn for t in tensors if getattr(t, "grad_fn", None) is not None]
    wanted = {id(n) for n in [*starts, *nodes] if n is not None}
    for root_ref, expression, stepper_ref in reversed(_STEPPED):
        root, stepper = root_ref(), stepper_ref()
        if root is None or stepper is None or not _freed_by(stepper):
            continue
        if any(t is root for t in tensors) or \
                wanted & {id(n) for n in nodes_below([root])}:
            return expression
    return None
