"""When may the engine trust reference counts?

A few optimisations reuse an array instead of copying it, when reference
counts prove that nothing else can see it: a leaf keeps the gradient that
arrives, gradients are summed into one of themselves, ``g * R`` is computed
in g's memory.  (PyTorch makes the same checks with its own counts.)

They rely on how CPython counts: a local variable or an argument holds one
reference, and ``sys.getrefcount(x)`` adds one for its own argument.  Some
interpreters count differently (PyPy has no such counts; newer CPythons may
load values without a reference of their own).  ``EXACT`` checks the rule once,
at import, and where it fails the engine simply copies.
"""
from __future__ import annotations

import sys


def _probe() -> bool:
    held = object()                      # one reference: the local ``held``
    alias = [held]                       # two: and the list
    return sys.getrefcount(held) == 3 and len(alias) == 1  # (+1: getrefcount's argument)


EXACT = sys.implementation.name == "cpython" and hasattr(sys, "getrefcount") and _probe()
