"""What is wrong with the ``backward`` of a learner's custom Function, in words.

:func:`backward_problem` calls the ``backward`` by hand first (so that ``...``, a
number or a tensor of the wrong shape can be looked at before the engine uses
it), then compares it with gradcheck's Jacobians, and finally calls it with a
random upstream gradient, which a ``backward`` that ignores ``g`` gets wrong.
Lesson 12's checks use it; a lesson may call it through
``check(title, MyFn, test=lambda fn: backward_problem(fn, inputs))``.
"""
from __future__ import annotations

from ..i18n import _
from .sentences import OPEN


def _dims(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _call_backward(fn_cls, inputs, upstream=None):
    """Run ``fn_cls.apply`` on ``inputs`` and call its ``backward`` by hand with a
    gradient of ones (or ``upstream``, a host array of the output's shape), so
    that whatever it returns (``...``, a number, a tensor of the wrong shape) can
    be looked at before the engine uses it."""
    from .. import backend
    from ..tensor import Tensor
    out = fn_cls.apply(*inputs)
    node = getattr(out, "grad_fn", None)
    if node is None or not hasattr(node, "ctx"):
        return None, _("apply() gave a result without a grad_fn: did forward return a tensor?")
    if upstream is None:
        upstream = backend.xp_of(out._data).ones(out._data.shape, dtype=out._data.dtype)
    else:  # (an array on the host: moved to the output's device)
        upstream = backend.move(upstream, out.device)
    ones = Tensor._make(upstream)
    try:
        grads = fn_cls.backward(node.ctx, ones)
    except Exception as err:
        if not node.ctx._to_save and ("unpack" in str(err) or isinstance(err, IndexError)):
            return None, _("backward reads ctx.saved_tensors, but forward saved nothing: "
                           "call ctx.save_for_backward(...) in forward")
        return None, _("calling backward raised {error}").format(
            error=f"{type(err).__name__}: {err}")
    return (grads if isinstance(grads, tuple) else (grads,)), None


def _shape_problem(grads, inputs) -> str | None:
    from ..tensor import Tensor
    if len(grads) != len(inputs):
        return _("backward returned {grads} gradient(s), but forward takes {inputs} input(s): "
                 "return one per input, in order").format(grads=len(grads), inputs=len(inputs))
    for i, (grad, x) in enumerate(zip(grads, inputs)):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if grad is None:
            return _("backward returned None for input {i}, which requires a gradient").format(
                i=i)
        if not isinstance(grad, Tensor):
            return _("the gradient for input {i} is a {type}, not a tensor: build it from g "
                     "and the saved tensors").format(i=i, type=type(grad).__name__)
        if tuple(grad.shape) != tuple(x.shape):
            return _("the gradient for input {i} has shape {got}, but input {i} has shape "
                     "{want}: a gradient has its input's shape (one number per input "
                     "element)").format(i=i, got=_dims(grad.shape), want=_dims(x.shape))
    return None


def _value_problem(fn_cls, inputs, atol=1e-5, rtol=1e-3) -> str | None:
    """Where gradcheck's two Jacobians differ most, said with the numbers."""
    from ..gradcheck import analytical_jacobian, numerical_jacobian
    numerical = numerical_jacobian(fn_cls.apply, inputs)
    analytical = analytical_jacobian(fn_cls.apply, inputs)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        n, a = n[0], a[0]                # one output
        bad = abs(a - n) > atol + rtol * abs(n)
        if bad.any():
            r, c = divmod(int((abs(a - n) * bad).argmax()), n.shape[1])
            value = inputs[i].detach().reshape(-1)[c].item()
            return _("gradcheck disagrees for input {i}: at element [{c}] of input {i} (value "
                     "{value}), d out[{r}] / d input{i}[{c}] is {numerical} by central "
                     "differences, but your backward gives {analytical} ({bad} of {size} Jacobian "
                     "entries differ)").format(
                i=i, value=f"{value:.6g}", r=r, c=c, numerical=f"{n[r, c]:.6g}",
                analytical=f"{a[r, c]:.6g}", bad=int(bad.sum()), size=bad.size)
    return None


def backward_problem(fn_cls, inputs) -> str | None:
    """What is wrong with the ``backward`` of the custom Function ``fn_cls``, in
    words; None when gradcheck agrees with it on ``inputs`` (float64 tensors).

    In order: :data:`OPEN` while backward still returns ``...``; forward saved
    nothing that backward reads; the wrong number, kind or shape of gradients;
    then gradcheck's Jacobians, naming the entry where they differ most.  Meant
    as ``check(title, MyFn, test=lambda fn: backward_problem(fn, inputs))``."""
    inputs = tuple(inputs)
    grads, problem = _call_backward(fn_cls, inputs)
    if problem:
        return problem
    if any(g is Ellipsis for g in grads):
        return OPEN
    problem = _shape_problem(grads, inputs)
    if problem:
        return problem
    return _value_problem(fn_cls, inputs) or _upstream_problem(fn_cls, inputs)


def _upstream_problem(fn_cls, inputs, atol=1e-5, rtol=1e-3) -> str | None:
    """backward called with a random upstream gradient ``g`` must give ``g``
    times the Jacobian (a backward that ignores ``g`` agrees with gradcheck's
    Jacobian rows only where ``g`` is one)."""
    import numpy as np
    from ..gradcheck import numerical_jacobian
    out = fn_cls.apply(*inputs)
    rng = np.random.default_rng()
    g = (rng.uniform(0.5, 2.0, out._data.shape) * rng.choice([-1.0, 1.0], out._data.shape))
    g = np.asarray(g, dtype=out._data.dtype)
    grads, problem = _call_backward(fn_cls, inputs, upstream=g)
    if problem:
        return problem
    numerical = numerical_jacobian(fn_cls.apply, inputs)
    for i, (grad, x) in enumerate(zip(grads, inputs)):
        if grad is None or not getattr(x, "requires_grad", False):
            continue
        want = g.reshape(-1) @ np.asarray(numerical[i][0])
        got = np.asarray(grad.detach().tolist(), dtype=float).reshape(-1)
        if got.shape != want.shape or np.any(abs(got - want) > atol + rtol * abs(want)):
            return _("with an upstream gradient g other than ones, the gradient for input {i} "
                     "is not g times the local derivative: backward must use g").format(i=i)
    return None
