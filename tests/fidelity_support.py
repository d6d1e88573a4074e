"""Run one snippet in autograd_kit and in PyTorch and describe what happened.

A snippet is a few lines of PyTorch code that sets ``out``; it runs with
``torch`` bound to the library (and ``F`` to its ``nn.functional``).  The
outcome is plain data: the values (dtype, shape, numbers) of what ``out``
holds, or the class and message of the exception raised, plus the categories
of the warnings shown to the learner.  Two outcomes are equal when the dtypes,
shapes, exception classes and messages are equal and the numbers agree
(NaN equal to NaN, inf to inf of the same sign).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

import autograd_kit as ak
import autograd_kit.nn.functional as akF

try:
    import torch
    import torch.nn.functional as torchF
except ImportError:  # the comparisons skip; the facts checked by math still run
    torch = torchF = None


def quiet_as_after_import():
    """The warning filter ``import autograd_kit`` installs, as a learner's session
    has it (pytest collected this module inside a ``catch_warnings`` block, which
    took it away again)."""
    ak.backend.quiet_numpy_warnings()


def outcome(lib, F, source: str):
    """``("value", data, warnings)`` or ``("error", class name, message, warnings)``."""
    space = {"torch": lib, "F": F, "nan": math.nan, "inf": math.inf}
    with warnings.catch_warnings(record=True) as shown:  # (the learner's filters, as they are)
        try:
            exec(source, space)  # noqa: S102 - our own snippets
            result = ("value", plain(space.get("out")))
        except Exception as err:  # noqa: BLE001 - the class is what we compare
            result = ("error", type(err).__name__, str(err).split(" (Triggered internally")[0])
    return result + (sorted({w.category.__name__ for w in shown}),)


def kit(source: str):
    return outcome(ak, akF, source)


def reference(source: str):
    return outcome(torch, torchF, source)


def plain(v):
    """Tensors as (dtype, shape, numbers); containers element by element."""
    if hasattr(v, "detach") and hasattr(v, "dtype"):
        a = np.asarray(v.detach().cpu().numpy() if hasattr(v, "cpu") else v.detach().numpy())
        return ("tensor", str(v.dtype).replace("torch.", ""), tuple(a.shape),
                a.astype(float).ravel().tolist() if a.dtype.kind != "b" else a.ravel().tolist())
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def assert_same(got, want, source=""):
    """Fail with both outcomes shown when they differ."""
    assert _same(got, want), f"\n{source}\nautograd_kit: {got!r}\nPyTorch:      {want!r}"


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=2e-5, abs_tol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def graph_of(t) -> list:
    """The nodes below ``t``, breadth first, each with its inputs' names: equal
    for two libraries when their graphs have the same nodes and edges."""
    out, todo, seen = [], [t.grad_fn], set()
    while todo:
        fn = todo.pop(0)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        nexts = [n for n, _ in fn.next_functions]
        out.append((fn.name(), [None if n is None else n.name() for n in nexts]))
        todo.extend(nexts)
    return out
