"""A pytest plugin for the suite's second pass, on a machine without PyTorch.

The README's test command must pass where ``import torch`` fails (a learner's
machine): every test that uses PyTorch as an oracle skips there.  ``.ci/run``
checks that by running the suite again with a stub ``torch`` that refuses to
import, and this plugin (``-p torch_hidden_pass``) keeps only the tests whose
outcome can depend on PyTorch being there: those whose code -- the test
function with its decorators, the fixtures it takes, and the functions and
classes of the test folder it names, followed name by name -- mentions
``torch``.  A test that reaches PyTorch by none of these paths runs the same
with and without it, and was run once already.
"""
from __future__ import annotations

import inspect
import re
import types
from pathlib import Path

TESTS = Path(__file__).resolve().parent
_TORCH = re.compile(r"\btorch\b")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _source(obj) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return ""


def _ours(obj) -> bool:
    """A function or class written in the test folder (not the kit, not a library)."""
    try:
        return Path(inspect.getfile(obj)).resolve().parent == TESTS
    except (OSError, TypeError):
        return False


def _mentions_torch(obj, seen: set) -> bool:
    """Does ``obj``'s source, or that of a test-folder function or class it names
    (followed through the module it lives in), mention torch?"""
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    text = _source(obj)
    if _TORCH.search(text):
        return True
    scope = getattr(inspect.getmodule(obj), "__dict__", {})
    for name in set(_NAME.findall(text)):
        target = scope.get(name)
        if isinstance(target, types.ModuleType):
            if target.__name__ == "torch" or (_ours(target) and _TORCH.search(_source(target))):
                return True
            continue
        if (inspect.isfunction(target) or inspect.isclass(target)) and _ours(target) \
                and _mentions_torch(target, seen):
            return True
    return False


def touches_torch(item) -> bool:
    function = getattr(item, "function", None)
    if function is None:  # a notebook cell: not part of this pass
        return False
    seen: set = set()
    if _mentions_torch(function, seen):
        return True
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        for fixture in defs:
            if _ours(fixture.func) and _mentions_torch(fixture.func, seen):
                return True
    return False


def pytest_collection_modifyitems(config, items):
    keep, dropped = [], []
    for item in items:
        (keep if touches_torch(item) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
