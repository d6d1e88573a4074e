"""The check of Lesson 14 (broadcasting and matmul backward), registered by :mod:`.registry`.

The learner writes ``linear_backward(x, w, b, g)``: for ``y = x @ w.T + b`` with
``x`` of shape (N, in), ``w`` (out, in), ``b`` (out,) and the upstream gradient
``g`` (N, out), it returns ``(dx, dw, db)``, computed with tensor operations.

In the spirit of ``gradcheck``: float64 tensors of the check's own, random values,
a random ``g``, and five shapes chosen so that shape mistakes show: a square
``w`` (in == out, where a transpose too many still fits and only the values tell),
in != out, one example (N = 1) and one output (out = 1).  The right answer is what
the kit's own autograd gives on the same numbers.  Each shape is tried twice with
different numbers, so that numbers typed in for one example cannot pass.

**Autograd is not allowed inside the answer.**  Three things make sure of it:
the answer gets tensors that do not require grad; it runs with recording
switched off (the kit's ``no_grad``, and PyTorch's too when PyTorch is
imported), so nothing it computes has a ``grad_fn`` and ``backward()`` on it
raises "does not require grad"; and while it runs, every backward pass of the
kit's engine (``backward()`` and ``autograd.grad`` both go through
``engine.backward_steps``) and every call of ``torch.autograd.backward`` or
``torch.autograd.grad`` is counted.  An answer that switches recording back on
and calls backward is counted; one that calls backward without it raises the
error, which the check recognises.  Either way the sentence says that the
gradients must be computed, not asked for.  (PyTorch is watched through the
module attributes only: a ``grad`` imported by name beforehand, called with
recording switched back on, would not be seen; the kit's engine is always seen.)

What is wrong is said as a misconception (a sum forgotten, a mean instead of a
sum, a transposed weight gradient), never as the code that would fix it.
"""
from __future__ import annotations

import sys

from ..i18n import _
from .common import N_, numpy_rng, still_open
from .sentences import OPEN


def _shapes(rng) -> list[tuple[int, int, int]]:
    """(N, in, out) for the trials: square first (shapes alone would not reveal a
    transpose too many), then in != out, N = 1, out = 1, and one more at random."""
    k = int(rng.integers(2, 6))
    n = int(rng.choice([v for v in range(2, 7) if v != k]))
    inn, out = (int(v) for v in rng.choice(range(2, 7), 2, replace=False))
    return [(n, k, k), (int(rng.integers(2, 7)), inn, out), (1, out + 1, out),
            (int(rng.integers(2, 7)), inn, 1), (int(rng.integers(2, 5)), out, inn)]


def _array(value):
    """``value`` as a float64 numpy array when it is a tensor or an array (of the
    kit, numpy or PyTorch); None for anything else."""
    import numpy as np
    if not hasattr(value, "tolist") or type(value).__module__.split(".")[0] not in (
            "autograd_kit", "numpy", "torch"):
        return None
    plain = value.detach().tolist() if hasattr(value, "detach") else value.tolist()
    try:
        return np.asarray(plain, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _close(got, want, tol: float = 1e-9) -> bool:
    """Same shape and every element within ``tol`` (relative to the larger ones).
    Array methods only: nothing a notebook can replace in numpy's namespace."""
    if got.shape != want.shape:
        return False
    scale = 1.0 + abs(want).max(initial=0.0)
    return bool((abs(got - want) <= tol * scale).all())


def _dims(shape) -> str:
    return str(tuple(int(n) for n in shape))


class _Guarded:
    """``with _Guarded() as guard:`` recording is off (the kit's and PyTorch's),
    and ``guard.runs`` counts the backward passes started inside."""

    def __init__(self) -> None:
        self.runs, self.undo, self.modes = 0, [], []

    def __enter__(self):
        from .. import engine, grad_mode

        def watch(owner, name):
            original = getattr(owner, name)

            def counted(*args, **kwargs):
                self.runs += 1
                return original(*args, **kwargs)
            setattr(owner, name, counted)
            self.undo.append((owner, name, original))

        watch(engine, "backward_steps")
        self.modes = [grad_mode.no_grad()]
        torch = sys.modules.get("torch")
        if torch is not None and hasattr(torch, "autograd"):
            watch(torch.autograd, "backward")
            watch(torch.autograd, "grad")
            self.modes.append(torch.no_grad())
        for mode in self.modes:
            mode.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        for mode in reversed(self.modes):
            mode.__exit__(None, None, None)
        for owner, name, original in reversed(self.undo):
            setattr(owner, name, original)
        return False


_ASKED_AUTOGRAD = N_("linear_backward asked autograd for the gradients (backward() or "
                     "autograd.grad); here you compute them yourself from x, w and g with "
                     "matrix products and sums: the check gives it tensors that do not "
                     "require grad and switches recording off")


def _reference(x, w, b, g):
    """(dx, dw, db) as numpy arrays, from the kit's autograd on the same numbers."""
    from .. import engine
    from ..ops.creation import tensor
    xs = [tensor(a, requires_grad=True) for a in (x, w, b)]
    y = xs[0] @ xs[1].T + xs[2]
    return tuple(t.numpy() for t in engine.grad(y, xs, tensor(g)))


def _call(answer, x, w, b, g):
    """The answer's three results as numpy arrays, or a sentence saying why not."""
    from ..ops.creation import tensor
    given = [tensor(a.copy()) for a in (x, w, b, g)]
    guard = _Guarded()
    try:
        with guard:
            result = answer(*given)
    except Exception as err:
        if guard.runs or _refused_to_differentiate(err):
            return _ASKED_AUTOGRAD
        return _("calling linear_backward on x of shape {x}, w of shape {w}, b of shape {b} "
                 "and g of shape {g} raised {error}").format(
            x=_dims(x.shape), w=_dims(w.shape), b=_dims(b.shape), g=_dims(g.shape),
            error=f"{type(err).__name__}: {err}")
    if guard.runs:
        return _ASKED_AUTOGRAD
    if any(not _close(t.numpy(), a, 0.0) for t, a in zip(given, (x, w, b, g))):
        return N_("linear_backward changed one of its inputs in place; a gradient is a new "
                  "tensor, computed from the inputs without changing them")
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        return N_("linear_backward should return three gradients, (dx, dw, db), in that "
                  "order")
    arrays = []
    for name, value in zip(("dx", "dw", "db"), result):
        array = _array(value)
        if array is None:
            return _("{name} should be a tensor, not a {kind}").format(
                name=name, kind=type(value).__name__)
        arrays.append(array)
    return tuple(arrays)


def _refused_to_differentiate(err: Exception) -> bool:
    """Whether ``err`` is the kit's or PyTorch's refusal to differentiate
    something that was not recorded (the answer called autograd)."""
    words = str(err)
    return "does not require grad" in words or "does not have a grad_fn" in words


def _shape_or_values(got, shape, wrong_shape: str, wrong_values: str) -> str:
    """The last words on a wrong gradient: its shape, when that differs from its
    input's (``wrong_shape`` names both), else its values."""
    if got.shape != shape:
        return _(wrong_shape).format(got=_dims(got.shape), want=_dims(shape))
    return wrong_values


def _dx_problem(got, want, x, w, g) -> str | None:
    if _close(got, want):
        return None
    if got.shape == x.shape and w.shape[0] == w.shape[1] and _close(got, g @ w.T):
        return N_("dx multiplies g by w.T, the matrix the forward pass multiplied x by; "
                  "going back, that matrix must be transposed (it turns g's out columns back "
                  "into x's in columns). With in equal to out both fit the shapes, but only "
                  "one gives the right values")
    return _shape_or_values(got, x.shape, N_(
        "dx has shape {got}, but x has shape {want}: a gradient has the shape of the tensor "
        "it belongs to"), N_("dx has the shape of x, but not the right values"))


def _dw_problem(got, want, w) -> str | None:
    if _close(got, want):
        return None
    if got.shape == want.T.shape and _close(got, want.T):
        return N_("dw is the transpose of the weight's gradient, shaped (in, out): the layer "
                  "stores w as (out, in) and uses it transposed, so its gradient must come "
                  "out shaped (out, in), like w itself")
    return _shape_or_values(got, w.shape, N_(
        "dw has shape {got}, but w has shape {want}: a gradient has the shape of the tensor "
        "it belongs to"), N_("dw has the shape of w, but not the right values"))


def _db_problem(got, want, b, g) -> str | None:
    if _close(got, want):
        return None
    if got.shape == g.shape:
        return N_("db has the shape of g, one row per example: b was broadcast to every row "
                  "of the batch, so its gradient is the total of those rows' gradients, "
                  "back in b's shape")
    n = g.shape[0]
    if n > 1 and got.shape == b.shape and _close(got * n, want):
        return N_("db is N times too small, as if it averaged g over the batch: every "
                  "example's copy of b sends its whole gradient, and those gradients add up")
    return _shape_or_values(got, b.shape, N_(
        "db has shape {got}, but b has shape {want}: a gradient has the shape of the tensor "
        "it belongs to"), N_("db has the shape of b, but not the right values"))


def _same_results(first, second) -> bool:
    return all(a.shape == b.shape and bool((a == b).all()) for a, b in zip(first, second))


def l14_ex1(linear_backward) -> str | None:
    if not callable(linear_backward):
        return N_("linear_backward should be a function, defined with "
                  "def linear_backward(x, w, b, g)")
    if still_open(linear_backward):
        return OPEN
    rng = numpy_rng()
    for n, inn, out in _shapes(rng):
        runs = []
        for _again in range(2):
            x, w = rng.standard_normal((n, inn)), rng.standard_normal((out, inn))
            b, g = rng.standard_normal(out), rng.standard_normal((n, out))
            got = _call(linear_backward, x, w, b, g)
            if isinstance(got, str):
                return got
            runs.append(got)
        if _same_results(*runs):
            return N_("linear_backward returns the same numbers whatever x, w and g hold: "
                      "numbers typed in fit one example only; the gradients must be computed "
                      "from the inputs")
        want = _reference(x, w, b, g)
        problem = (_dx_problem(got[0], want[0], x, w, g) or _dw_problem(got[1], want[1], w)
                   or _db_problem(got[2], want[2], b, g))
        if problem:
            return problem
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson14.ex1": (("linear_backward",), ("function",), l14_ex1),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson14.ex1": (
        N_("Exercise 1 (the backward of a linear layer)"),
        N_("write one element of the forward pass, y[n, j] = sum over k of x[n, k] w[j, k] "
           "+ b[j], and ask which elements of y each input element appears in; every "
           "gradient must come out in the shape of its input."),
        N_("Two matrix products and one sum over the batch: that is all AddmmBackward0 "
           "computes for nn.Linear.")),
}
