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


def expected_outcomes(cases):
    """The two tests of a table of ``(case, expected outcome)`` rows, where each
    expectation was first seen on PyTorch: the kit must give it always (torch or
    not), and PyTorch must give it too where it is installed (so the table stays
    the truth).  Use as ``test_kit, test_pytorch = expected_outcomes(CASES)``."""
    import autograd_kit as ak
    ids = [case.__name__ for case, _ in cases]

    @pytest.mark.parametrize("case, expected", cases, ids=ids)
    def test_the_kit_does_what_pytorch_does(case, expected):
        assert outcome(case, ak) == expected

    @pytest.mark.parametrize("case, expected", cases, ids=ids)
    def test_pytorch_does_it_too(case, expected):
        assert outcome(case, oracle()) == expected

    return test_the_kit_does_what_pytorch_does, test_pytorch_does_it_too
