"""The checks of Lesson 6 (accumulation and retain_graph): what ``.grad``
holds after several passes, and two functions of the learner's own that train
(``fit_slope``) and accumulate (``accumulated_grad``), tried on data of the
check's own.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, Counted, kit, near, numpy_rng, with_globals


def l06_ex1(m_grad):
    if near(m_grad, 11.0):
        return None
    if near(m_grad, 4.0):
        return N_("the new graph's 4 is added to what .grad already holds; it does not replace it")
    if near(m_grad, 25.0):
        return N_("zero_() empties .grad: the first two passes no longer count")
    if near(m_grad, 7.0):
        return N_("(4 * m) is a new graph, but its backward still adds into m.grad")
    return _("the value is not right")


def l06_ex2(without, with_zeroing):
    if not near(with_zeroing, -1.0, 1e-5):
        return N_("version (B) is not right: with zeroing, every step uses the gradient 5")
    if not near(without, -4.0, 1e-5):
        if near(without, with_zeroing):
            return N_("version (A) differs from (B): without zeroing, p.grad keeps growing from "
                      "step to step")
        return N_("version (A) is not right: write down p.grad in each of the four steps")
    return None


def l06_ex3(candidate):
    ak = kit()
    if not callable(candidate):
        return N_("fit_slope should be a function, defined with def fit_slope(steps=30, lr=0.05)")
    rng = numpy_rng()

    def reference(sizes, prices, steps, lr=0.05, zero=True):
        w = ak.tensor(0.0, requires_grad=True)
        for _step in range(steps):
            loss = ((w * sizes - prices) ** 2).mean()
            loss.backward()
            with ak.no_grad():
                w -= lr * w.grad
            if zero:
                w.grad = None
        return w.item()
    for steps in (int(rng.integers(8, 15)), int(rng.integers(20, 31))):
        sizes = ak.tensor([float(v) for v in rng.uniform(0.5, 3.0, 3)])
        prices = ak.tensor([float(v) for v in rng.uniform(1.0, 6.0, 3)])
        with with_globals(candidate, {"sizes": sizes, "prices": prices}), Counted() as runs:
            got = candidate(steps=steps)
        if near(got, reference(sizes, prices, steps), 1e-4):
            if runs.runs < steps:
                return _("the value is right, but autograd did not compute the gradients: call "
                         "backward() on the loss in every step")
            continue
        if near(got, reference(sizes, prices, steps, zero=False), 1e-4):
            return N_("that is what the loop without zeroing gives: every step still adds its "
                      "gradient to those of all earlier steps; clear w.grad once per step")
        if near(got, 0.0):
            return N_("w never moved from 0: the gradient was cleared after backward but before "
                      "the update used it; clear it after the update, or before backward")
        return _("for other data or another number of steps it does not give what the fixed "
                 "loop gives: it must compute from sizes, prices and steps")
    return None


def l06_ex4(candidate):
    ak = kit()
    if not callable(candidate):
        return N_("accumulated_grad should be a function, defined with def accumulated_grad(w)")
    rng = numpy_rng()
    for _trial in range(2):
        xs = ak.tensor([float(v) for v in rng.uniform(0.2, 3.0, 4)])
        ys = ak.tensor([float(v) for v in rng.uniform(0.5, 5.0, 4)])
        w_value = float(rng.uniform(-1.0, 4.0))

        def half_grad(part):  # (used before the loop moves on)
            w = ak.tensor(w_value, requires_grad=True)  # noqa: B023
            ((w * xs[part] - ys[part]) ** 2).sum().backward()  # noqa: B023
            return w.grad.item()
        whole = half_grad(slice(0, 4))
        w = ak.tensor(w_value, requires_grad=True)
        with with_globals(candidate, {"xs": xs, "ys": ys}), Counted() as runs:
            got = candidate(w)
        if got is None:
            return N_("it returned None: return w.grad after the second backward()")
        if near(got, whole, 1e-5):
            if runs.runs != 2 or not near(w.grad, whole, 1e-5):
                return _("the value is right, but not by accumulation: call backward() once per "
                         "half, on the w you were given, and let w.grad add the two up")
            continue
        if near(got, half_grad(slice(2, 4)), 1e-5):
            return N_("that is the second half's gradient alone: the first half's was thrown "
                      "away between the two backward() calls; here .grad should add them up")
        if near(got, whole / 2, 1e-5):
            return N_("that is half the whole batch's gradient: take the sum of squared errors "
                      "of each half, not the mean (two means of two points average, they don't "
                      "add up)")
        return _("it does not give the whole batch's gradient: it must compute it from w, xs "
                 "and ys")
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson06.ex1": (("my_m_grad",), ("number",), l06_ex1),
    "lesson06.ex2": (("my_p_without_zeroing", "my_p_with_zeroing"), ("number", "number"), l06_ex2),
    "lesson06.ex3": (("fit_slope",), ("function",), l06_ex3),
    "lesson06.ex4": (("accumulated_grad",), ("function",), l06_ex4),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson06.ex1": (
        N_("Exercise 1"),
        N_("dq/dm = 2m + 1. Follow .grad line by line: every backward adds, zero_() empties."),
        N_("zero_() wipes the first two passes; then 7 from q and 4 from the new graph add "
           "up to 11.")),
    "lesson06.ex2": (
        N_("Exercise 2"),
        N_("Each backward adds 5 to p.grad, and each step subtracts 0.1 * p.grad from p."),
        N_("Without zeroing, p.grad is 5, 10, 15 and 20, so the steps are 0.5, 1, 1.5 and 2 "
           "(total 5) instead of four steps of 0.5.")),
    "lesson06.ex3": (
        N_("Exercise 3"),
        N_("backward() adds into w.grad. Where in each step can the old gradient be thrown "
           "away without losing the one the update needs?"),
        N_("Clearing w.grad after each update (w.grad = None, or w.grad.zero_()) makes "
           "every step use only its own gradient; the slope settles near 2.04, the "
           "least-squares answer.")),
    "lesson06.ex4": (
        N_("Exercise 4"),
        N_("Two forward passes, two backward() calls, and nothing in between that touches "
           "w.grad."),
        N_("The loss over all points is the sum of the two halves' losses, so its gradient "
           "is the sum of their gradients, and .grad builds that sum by itself. Training "
           "code uses this to fit batches that don't fit in memory: several backward() "
           "calls, then one step.")),
}
