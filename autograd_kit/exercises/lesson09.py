"""The checks of Lesson 9 (saved tensors and version counters): version
counts, and repairing a function whose in-place change breaks backward.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, kit, near, numpy_rng, shape_words


def l09_ex1(versions):
    return None if near(versions, [3, 3, 1]) else shape_words(versions, (3,))


def l09_ex2(candidate):
    ak = kit()
    if not callable(candidate):
        return N_("scaled_score should be a function, defined with def scaled_score(x)")
    rng = numpy_rng()

    def intended(x):
        y = x.exp() / x.exp().sum()
        return ((y * 3 + 1) * x).sum()
    for n in (3, 5):
        values = [float(v) for v in rng.uniform(-2.0, 2.0, n)]
        x = ak.tensor(values, requires_grad=True)
        ref = ak.tensor(values, requires_grad=True)
        want = intended(ref)
        want.backward()
        got = candidate(x)
        if not near(got, want, 1e-5):
            return _("for other inputs it does not return what the original means: the repair "
                     "must keep what the function computes")
        try:
            got.backward()
        except RuntimeError as err:
            if "modified by an inplace operation" in str(err):
                return N_("backward still stops with 'modified by an inplace operation': a "
                          "tensor that a node saved for backward is still changed in place "
                          "(no_grad does not help: the version counter counts every in-place "
                          "change)")
            raise
        if x.grad is None:
            return N_("backward runs, but x.grad is None: the result no longer depends on x "
                      "through the graph")
        if not near(x.grad, ref.grad, 1e-5):
            return _("backward runs, but x.grad is not right: the repair hid part of the "
                     "computation from autograd (detach, .data or no_grad); keep it recorded "
                     "and make the change out of place instead")
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson09.ex1": (("my_versions",), ("numbers",), l09_ex1),
    "lesson09.ex2": (("scaled_score",), ("function",), l09_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson09.ex1": (
        N_("Exercise 1"),
        N_("A view shares its base's counter, so count every in-place change made through "
           "either name, slice assignment included. A clone starts a counter of its own at "
           "0."),
        N_("buf and its view share one counter, which three in-place changes raised to 3; "
           "the clone has its own counter, raised to 1 by add_.")),
    "lesson09.ex2": (
        N_("Exercise 2"),
        N_("Which node saved the tensor that is changed in place? ExpBackward0 keeps its "
           "result y. Compute the normalised y as a new tensor (y = y / y.sum()) instead of "
           "overwriting it."),
        N_("y /= y.sum() overwrote the result that ExpBackward0 saved for its derivative; y "
           "= y / y.sum() leaves it intact. z += 1 may stay: nobody saved z.")),
}
