"""What the fidelity tests share: run one snippet with a library bound to the
name ``torch`` and reduce what happened to something comparable.

A snippet is a function ``case(torch)``.  ``outcome`` gives ``("ok", value)``
with tensors turned into nested lists (and their dtype's name), or
``("error", builtin exception class, message)``: PyTorch's classes and the kit's
differ (the kit raises subclasses), the built-in class they derive from must not.
"""
from __future__ import annotations

import pytest


def oracle():
    """PyTorch, or a clean skip where it is not installed."""
    return pytest.importorskip("torch")


def plain(value):
    """Tensors as ``(values, dtype name)``, recursively through tuples and lists."""
    if hasattr(value, "detach") and hasattr(value, "tolist"):
        return (value.detach().tolist(), str(value.dtype).rsplit(".", 1)[-1])
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return value


def builtin_class(err) -> str:
    return next(c for c in type(err).__mro__ if c.__module__ == "builtins").__name__


def outcome(case, lib):
    try:
        return ("ok", plain(case(lib)))
    except Exception as err:
        return ("error", builtin_class(err), str(err))


def same_as_pytorch(case):
    """Assert the kit does what PyTorch does with ``case``; returns the outcome."""
    import autograd_kit as ak
    torch = oracle()
    theirs, ours = outcome(case, torch), outcome(case, ak)
    assert ours == theirs
    return ours
