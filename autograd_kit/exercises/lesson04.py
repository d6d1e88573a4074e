"""The checks of Lesson 4 (vector-Jacobian products): a Jacobian and a
vector-Jacobian product by hand.
"""
from __future__ import annotations

from .common import N_, near, shape_words


def l04_ex1(jacobian):
    if near(jacobian, [[1.0, 1.0], [4.0, 3.0]]):
        return None
    if near(jacobian, [[1.0, 4.0], [1.0, 3.0]]):
        return N_("that is the transpose: each row should belong to one output, each column "
                  "to one input")
    return shape_words(jacobian, (2, 2))


def l04_ex2(vjp):
    if near(vjp, [-2.0, -1.0]):
        return None
    if near(vjp, [1.0, 5.0]):
        return N_("that is J v, the Jacobian-vector product of forward mode; backward "
                  "computes v^T J")
    return shape_words(vjp, (2,))


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson04.ex1": (("my_jacobian",), ("numbers",), l04_ex1),
    "lesson04.ex2": (("my_vjp",), ("numbers",), l04_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson04.ex1": (
        N_("Exercise 1"),
        N_("Row i holds the derivatives of output i, first by u0, then by u1. For the "
           "product u0 * u1, the derivative by u0 is u1."),
        N_("Row 0 holds the sum's derivatives (1, 1); row 1 the product's (u1, u0) = (4, 3).")),
    "lesson04.ex2": (
        N_("Exercise 2"),
        N_("Multiply the row vector (2, -1) by the Jacobian: 2 times row 0, plus -1 times "
           "row 1."),
        N_("(2, -1) times J = 2 * (1, 1) - 1 * (4, 3) = (-2, -1): a weighted sum of the "
           "rows of J.")),
}
