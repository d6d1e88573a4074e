"""The checks of Lesson 5 (intermediate gradients and hooks): the order
hooks fire in, a clipping hook, and two hooks of the learner's own (exercise 3,
tried on tensors of the check's own).
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, kit, near, numpy_rng


def l05_ex1(order):
    want = ["z", "q", "r", "s"]
    if not isinstance(order, (list, tuple)) or not all(isinstance(n, str) for n in order) \
            or sorted(order) != sorted(want):
        return _("give a list holding each of the names {names} once").format(
            names="['q', 'r', 's', 'z']")
    if order[0] != want[0]:
        return N_("the first hook to fire belongs to the tensor closest to the output")
    if list(order).index("r") < list(order).index("q"):
        return N_("r's hook cannot fire before q's: q's node still has to send r its share "
                  "of the gradient")
    return None if list(order) == want else _("the order is not right")


def l05_ex2(clipped, plain):
    if not near(plain, 20.0):
        return N_("the gradient without the hook is not right: dz/ds = dz/dr times dr/ds")
    if near(clipped, 4.0):
        return None
    if near(clipped, 1.0):
        return N_("1 is the clipped gradient at r; s.grad is one more link further back")
    if near(clipped, plain):
        return N_("with the hook, s.grad changes: the hook replaces the gradient at r before "
                  "it moves on to s")
    return N_("the clipped s.grad is not right")


def l05_ex3(clip, remember, seen):
    ak = kit()
    rng = numpy_rng()
    if not callable(clip):
        return _("{name} should be a function of one argument, the gradient").format(name="clip")
    if not callable(remember):
        return _("{name} should be a function of one argument, the gradient").format(
            name="remember")
    for _trial in range(3):
        c = ak.tensor([float(v) for v in rng.uniform(-4.0, 4.0, 5)])
        x = ak.tensor([1.0] * 5, requires_grad=True)
        x.register_hook(clip)
        (x * c).sum().backward()
        if near(x.grad, c):
            return N_("x.grad is unchanged: a hook changes a gradient by returning the new one "
                      "(return grad.clamp(...)), not by changing it in place or printing it")
        if not near(x.grad, c.clamp(-1.0, 1.0)):
            return _("with clip, x.grad is not the clipped gradient: clip should return the "
                     "gradient clamped to [-1, 1]")
        if not isinstance(seen, list):
            return _("seen should stay the list that remember appends to")
        seen.clear()
        x = ak.tensor([float(v) for v in rng.uniform(-3.0, 3.0, 4)], requires_grad=True)
        h = x * 3
        h.register_hook(remember)
        (h * h).sum().backward()
        if not seen:
            return N_("seen is empty after backward: remember must append the gradient it "
                      "receives")
        if len(seen) > 1:
            return _("seen holds {n} entries after one backward: append once per call").format(
                n=len(seen))
        if not near(seen[0], 2 * h.detach(), 1e-5):
            return _("seen[0] is not the gradient arriving at h")
        if not near(x.grad, 6 * h.detach(), 1e-5):
            return N_("remember changed the gradient on its way to x: a hook that only watches "
                      "returns None, so the gradient goes on unchanged")
    seen.clear()
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson05.ex1": (("my_order",), ("names",), l05_ex1),
    "lesson05.ex2": (("my_s_grad_clipped", "my_s_grad_plain"), ("number", "number"), l05_ex2),
    "lesson05.ex3": (("clip", "remember", "seen"), ("function", "function", "list"), l05_ex3),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson05.ex1": (
        N_("Exercise 1"),
        N_("Gradients flow from z back to s, and a tensor's hook fires once its gradient is "
           "complete, that is, once every use of the tensor has sent its piece."),
        N_("z fires first, then q; r is used by q and by z, so its gradient is complete "
           "only after q's node has run; s comes last.")),
    "lesson05.ex2": (
        N_("Exercise 2"),
        N_("dz/dr = 2r + 1; the hook clips that value; then the link dr/ds = 4 multiplies "
           "what is left."),
        N_("dz/dr = 2r + 1 = 5 is clipped to 1, so s.grad = 4 * 1 = 4 instead of 4 * 5 = 20.")),
    "lesson05.ex3": (
        N_("Exercise 3"),
        N_("A hook receives the gradient and may return a replacement (clip) or None "
           "(remember). Tensors have clamp(min, max)."),
        N_("Returning a tensor replaces the gradient for everything further back; returning "
           "None leaves it as it is. seen[0] now holds a gradient that backward would "
           "otherwise drop.")),
}
