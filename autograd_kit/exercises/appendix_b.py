"""The checks of Appendix B (the same code on a GPU), registered by :mod:`.registry`.

Exercise 1 asks for a gradient and its dtype, handed back through a copy to
another dtype (``ToCopyBackward0``).

In exercise 2 the learner writes ``make_leaf(values, device, dtype)``: a tensor
holding ``values`` (a list of numbers) on ``device`` with ``dtype``, whose ``.grad`` a
``backward()`` fills; that is, a *leaf* that requires grad.  The trap is the
order of the two requests: a tensor that asks for gradients and is then copied
by ``.to(device, dtype)`` hands back the copy, which ``ToCopyBackward0``
computed, so it is not a leaf and its ``.grad`` stays None; the gradient goes to
the original, which nobody kept.

The check calls the answer with random values, with float64 and float32, on the
CPU and, where ``cuda.is_available()``, on the GPU too.  Without a GPU, ``.to("cpu")``
of a CPU tensor copies nothing, so the wrong order is caught through the dtype
(the float64 call copies); a wrong device can only be seen where there is a GPU.
After the checks of what it returned (a tensor, its values, dtype, device, a
leaf that requires grad), it runs a ``backward()`` through the tensor and reads
its ``.grad``.  What is wrong is said as a misconception, never as the code that
would fix it.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, near, numpy_rng, still_open
from .sentences import OPEN


def lb_ex1(answer):
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[1], str)):
        return N_("the answer should be a pair: the gradient as a list of two numbers, then the "
                  "dtype's name in quotes")
    values, dtype_name = answer
    if not near(values, [5.0, 4.0]):
        return _("the gradient is not right")
    if dtype_name.strip().replace("torch.", "") != "float32":
        return _("the gradient is right, but that is not its dtype")
    return None


_TOLERANCE = {"float32": 1e-6, "float64": 1e-12}


def _flat(t) -> list:
    values = t.detach().cpu().tolist()
    return values if isinstance(values, list) else [values]


def _close(got: list, want: list, tol: float) -> bool:
    return len(got) == len(want) and all(
        abs(float(a) - float(b)) <= tol * (1.0 + abs(float(b))) for a, b in zip(got, want))


def _trial(make_leaf, values: list, device: str, dtype, weights: list) -> str | None:
    """One call of the answer, checked; None when it is right."""
    from .. import grad_mode
    from ..ops.creation import tensor
    from ..tensor import Tensor
    name = str(dtype).replace("torch.", "").replace("autograd_kit.", "")
    try:
        with grad_mode.enable_grad():
            got = make_leaf(list(values), device, dtype)
    except Exception as err:
        return _("calling make_leaf({values}, {device!r}, {dtype}) raised {error}").format(
            values=values, device=device, dtype=name, error=f"{type(err).__name__}: {err}")
    if not isinstance(got, Tensor):
        return _("make_leaf should return a tensor, not a {kind}").format(
            kind=type(got).__name__)
    if str(got.dtype).split(".")[-1] != name:
        return _("the tensor's dtype is {got}, not the dtype it was asked for, {want}").format(
            got=str(got.dtype).split(".")[-1], want=name)
    if got.device.type != device:
        return _("the tensor is on {got}, not on the device it was asked for, {want}").format(
            got=str(got.device), want=device)
    if list(got.shape) != [len(values)] or not _close(_flat(got), values, _TOLERANCE[name]):
        return N_("the tensor does not hold the values it was given")
    if not got.requires_grad:
        return N_("the tensor does not require grad, so backward() has nothing to fill")
    if not got.is_leaf:
        if got.grad_fn is not None and got.grad_fn.name() == "ToCopyBackward0":
            return N_("the tensor is not a leaf: it was computed by a copy (ToCopyBackward0) "
                      "from another tensor, the one that asked for gradients first; "
                      "backward() fills that one's .grad, and the copy's stays None")
        return N_("the tensor is not a leaf: it was computed from another tensor, so "
                  "backward() does not fill its .grad")
    with grad_mode.enable_grad():
        (got * tensor(weights, dtype=got.dtype, device=got.device)).sum().backward()
    if got.grad is None or not _close(_flat(got.grad), weights, _TOLERANCE[name]):
        return N_("after backward() its .grad is not the gradient that reached it")
    return None


def lb_ex2(make_leaf) -> str | None:
    from .. import cuda
    from ..backend import float32, float64
    if not callable(make_leaf):
        return N_("make_leaf should be a function, defined with def make_leaf(values, device, "
                  "dtype)")
    if still_open(make_leaf):
        return OPEN
    rng = numpy_rng()
    devices = ["cpu"] + (["cuda"] if cuda.is_available() else [])
    for device in devices:
        for dtype in (float64, float32):
            n = int(rng.integers(2, 6))
            values = [int(v) / 8 for v in rng.integers(-40, 40, n)]   # exact in float32
            weights = [float(v) for v in rng.uniform(-2.0, 2.0, n)]
            problem = _trial(make_leaf, values, device, dtype, weights)
            if problem:
                return problem
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lessonB.ex1": (("my_answer",), ("list",), lb_ex1),
    "lessonB.ex2": (("make_leaf",), ("function",), lb_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lessonB.ex1": (
        N_("Exercise 1"),
        N_("Add 3 to the derivative of q0 * q1 for each element. On the way back, "
           "ToCopyBackward0 converts the gradient to the dtype of the tensor that was "
           "copied."),
        N_("(3 + q1, 3 + q0) = (5, 4), handed back by ToCopyBackward0 in float32, like p.")),
    "lessonB.ex2": (
        N_("Exercise 2 (a leaf on the device)"),
        N_("ask for the device and the dtype when the tensor is made, or copy first and "
           "switch tracking on afterwards: the tensor you return must be the one that asked "
           "for gradients."),
        N_("The same holds for a model's parameters: model.to(device) moves their numbers "
           "and keeps the same leaf objects, so an optimizer still updates what backward() "
           "fills.")),
}
