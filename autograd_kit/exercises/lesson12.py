"""The checks of Lesson 12 (writing your own backward): five custom
Functions whose ``backward`` is the exercise, each tried on random float64
inputs of the check's own with :func:`.custom_backward.backward_problem`.
"""
from __future__ import annotations

from .common import N_, kit, near, numpy_rng
from .custom_backward import backward_problem


#: what each class of lesson 12 computes forward (its backward is the exercise)
_L12_FORWARD = {1: lambda x: x.exp(), 2: lambda x: x.clamp(min=0), 3: lambda a, b: a / b,
                4: lambda x: x.sigmoid(), 5: lambda x: x.mean()}


def _backward_trials(fn_cls, make_inputs, forward=None, trials=3) -> str | None:
    for _trial in range(trials):
        inputs = make_inputs()
        if forward is not None:
            try:
                out = fn_cls.apply(*inputs)
            except Exception:
                out = None
            if out is None or not near(out, forward(*(x.detach() for x in inputs)), 1e-6):
                return N_("forward no longer computes what the lesson's forward computes: "
                          "change only backward")
        problem = backward_problem(fn_cls, inputs)
        if problem:
            return problem
    return None


def _rand_tensor(rng, shape, low=-2.0, high=2.0, away_from_zero=False):
    ak = kit()
    values = rng.uniform(low, high, shape)
    if away_from_zero:
        values = values + 0.3 * (2 * (values >= 0) - 1)
    return ak.tensor(values.tolist(), dtype=ak.float64, requires_grad=True)


def _l12(index):
    def test(fn_cls):
        rng = numpy_rng()

        def inputs():
            n = int(rng.integers(2, 6))
            if index == 3:
                return (_rand_tensor(rng, n), _rand_tensor(rng, n, 0.5, 3.0, True))
            if index == 5:
                return (_rand_tensor(rng, (int(rng.integers(1, 4)), n)),)
            return (_rand_tensor(rng, n, away_from_zero=(index == 2)),)
        return _backward_trials(fn_cls, inputs, _L12_FORWARD[index])
    return test


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson12.ex1": (("MyExp",), ("class",), _l12(1)),
    "lesson12.ex2": (("MyReLU",), ("class",), _l12(2)),
    "lesson12.ex3": (("MyDiv",), ("class",), _l12(3)),
    "lesson12.ex4": (("MySigmoid",), ("class",), _l12(4)),
    "lesson12.ex5": (("MyMean",), ("class",), _l12(5)),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson12.ex1": (
        N_("Exercise 1 (exp)"),
        N_("the local derivative of e^x is the saved result; multiply it by g."),
        N_("Saving the output is common: tanh and sigmoid do the same.")),
    "lesson12.ex2": (
        N_("Exercise 2 (ReLU)"),
        N_("the local derivative is 1 where x > 0 and 0 elsewhere; a comparison gives "
           "exactly that."),
        N_("A negative input sends no gradient back: that is how a ReLU unit can 'die'.")),
    "lesson12.ex3": (
        N_("Exercise 3 (quotient)"),
        N_("return a pair, (gradient for a, gradient for b), each g times its local "
           "derivative."),
        N_("Division is multiplication by 1/b, and d(1/b)/db = -1/b^2.")),
    "lesson12.ex4": (
        N_("Exercise 4 (sigmoid)"),
        N_("the local derivative is s * (1 - s), with s the saved output."),
        N_("The largest local derivative is 0.25, at x = 0: one reason deep stacks of "
           "sigmoids learn slowly.")),
    "lesson12.ex5": (
        N_("Exercise 5 (mean)"),
        N_("g is a single number; the answer needs ctx.input_shape (g.expand does that), "
           "each element 1/n of g."),
        N_("Each element moves the mean by 1/n of its own change.")),
}
