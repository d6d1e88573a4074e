"""What the checks of several lessons share: fresh random numbers, plain values,
comparisons, and ways to watch an answer while it runs.

A check reads only the answer names of its exercise from the notebook; it builds
everything else itself (its own tensors, models and reference values), from the
kit as installed, so a learner who rebinds ``check``, ``ak`` or ``np``, or pastes
a number from the feedback, changes nothing it relies on.  Where the exercise is
about *how* (a loop that trains, a backward that uses ``g``, gradients that
accumulate) the check gives fresh random inputs (:func:`numpy_rng`,
:func:`python_rng`) and watches what the answer does (:class:`Counted`,
:func:`with_globals`).
"""
from __future__ import annotations

import os
import random
import types

from ..i18n import _
from .checking import close, nested_shape


def N_(message: str) -> str:
    """Marks a message for the catalogs; it is translated where it is shown."""
    return message


def numpy_rng():
    """A numpy Generator seeded afresh from the operating system."""
    import numpy as np
    return np.random.default_rng(int.from_bytes(os.urandom(8), "little"))


def python_rng() -> random.Random:
    """A :class:`random.Random` seeded afresh from the operating system."""
    return random.Random(int.from_bytes(os.urandom(8), "little"))


def kit():
    """The ``autograd_kit`` package (imported when a check runs)."""
    import autograd_kit
    return autograd_kit


def num(value) -> float:
    """A plain float from a number, a one-element tensor or array; TypeError else."""
    if isinstance(value, bool) or value is None:
        raise TypeError("not a number")
    if type(value) in (int, float):
        return float(value)
    if hasattr(value, "tolist"):
        plain = value.detach().tolist() if hasattr(value, "detach") else value.tolist()
        while isinstance(plain, list) and len(plain) == 1:
            plain = plain[0]
        if type(plain) in (int, float):
            return float(plain)
    raise TypeError("not a number")


def near(a, b, tol=1e-6) -> bool:
    """Whether ``a`` (an answer) is ``b`` within ``tol``; False for what is not
    a plain value (see :func:`plain`)."""
    try:
        got = plain(a)
    except TypeError:
        return False
    return close(got, plain(b), tol)


def plain(value):
    """Nested lists of plain numbers, strings, bools and None; TypeError for other
    kinds (an object that says it equals everything is not an answer)."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (list, tuple):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and type(value).__module__.split(".")[0] in ("autograd_kit",
                                                                              "numpy", "torch"):
        values = value.detach().tolist() if hasattr(value, "detach") else value.tolist()
        return plain(values)
    raise TypeError(type(value).__name__)


def shape_words(answer, shape):
    """What is wrong with a numeric answer of the wrong value: its kind, its
    shape, or else its value."""
    try:
        got = plain(answer)
    except TypeError:
        return _("the answer should be numbers, not a {kind}").format(kind=type(answer).__name__)
    if nested_shape(got) != shape:
        return _("the shape is {got}, but it should be {want}").format(got=nested_shape(got),
                                                                      want=shape)
    return _("the value is not right")


class Counted:
    """Counts the backward passes run (``backward()`` and ``autograd.grad``) inside."""

    def __enter__(self):
        from .. import engine
        self.engine, self.original, self.runs = engine, engine.backward_steps, 0

        def counted(*args, **kwargs):
            self.runs += 1
            return self.original(*args, **kwargs)
        engine.backward_steps = counted
        return self

    def __exit__(self, *exc):
        self.engine.backward_steps = self.original
        return False


def with_globals(fn, values: dict):
    """Run with ``values`` put into the globals of ``fn`` (the learner's notebook),
    then put back what was there: the answer is tried on the check's own data."""
    space = getattr(fn, "__globals__", None)

    class Swap:
        def __enter__(self):
            self.before = {k: space[k] for k in values if space is not None and k in space}
            if space is not None:
                space.update(values)

        def __exit__(self, *exc):
            if space is not None:
                for k in values:
                    space.pop(k, None)
                space.update(self.before)
            return False
    return Swap()


def codes(fn) -> list:
    """The code of ``fn`` and of every function written inside it."""
    found, todo = [], [getattr(fn, "__code__", None)]
    while todo:
        code = todo.pop()
        if isinstance(code, types.CodeType):
            found.append(code)
            todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def still_open(fn) -> bool:
    """The exercise cell's ``...`` is still somewhere in the function (as a value:
    the cells write ``out._backward = ...`` and ``order = ...``, because Python
    drops a ``...`` that stands alone as a statement)."""
    return any(c is Ellipsis for code in codes(fn) for c in code.co_consts)
