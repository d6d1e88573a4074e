"""PyTorch's ``grad_fn`` nodes show their picture in a notebook, as the kit's do.

IPython picks a display formatter by the class of the object shown.  The
kit's nodes share one base class; PyTorch's do not: every kind of node is a
class of its own (``MulBackward0``, ``AddmmBackward0``... some six hundred),
made by PyTorch's C++ code, with ``builtins`` as its module and no common
base.  So the formatters are registered for each of those classes:

* **by name**, at once, without importing PyTorch: IPython keeps a formatter
  registered for ``"builtins.MulBackward0"`` aside and uses it the first time
  a class of that module and name is shown.  The names are those of the kit's
  own rule tables (the nodes a course meets), plus ``AccumulateGrad``, and the
  base class of custom Functions' nodes,
  ``torch.autograd.function.BackwardCFunction``;
* **every class** of ``torch._C._functions`` once PyTorch has been imported
  (checked after each cell, so a rarer node, ``NativeLayerNormBackward0``,
  draws from the cell after ``import torch`` on).
"""
from __future__ import annotations

import sys

MIMES = ("text/plain", "image/svg+xml")
FUNCTION_NODE = "torch.autograd.function.BackwardCFunction"
_state = {"shell": None, "done": False, "register": None}


def known_names() -> list[str]:
    """``"builtins.MulBackward0"``...: PyTorch's node classes the kit knows by name."""
    try:
        from ..ops._rules import NODE_CLASSES
        names = list(NODE_CLASSES)
    except Exception:
        names = []
    return [f"builtins.{n}" for n in [*names, "AccumulateGrad"]] + [FUNCTION_NODE]


def torch_classes() -> list[type]:
    """Every node class of an imported PyTorch (none when it is not imported)."""
    torch = sys.modules.get("torch")
    functions = getattr(getattr(torch, "_C", None), "_functions", None)
    if functions is None:
        return []
    return [c for name in dir(functions) if not name.startswith("_")
            for c in [getattr(functions, name)] if isinstance(c, type)]


def _catch_up(*_args) -> None:
    """Once PyTorch is imported, register every one of its node classes."""
    if _state["done"] or _state["shell"] is None:
        return
    classes = torch_classes()
    if classes:
        _state["done"] = True
        named = set(known_names())  # already registered (and restored) by name
        for cls in classes:
            if f"{cls.__module__}.{cls.__name__}" not in named:
                _state["register"](_state["shell"], cls)


def install(shell, register) -> None:
    """``register(shell, cls)`` registers the node formatters for ``cls`` (a
    class or a ``"module.Name"``); it is called for every known name now, and
    for all of PyTorch's node classes as soon as PyTorch is imported."""
    _state.update(shell=shell, done=False, register=register)
    for name in known_names():
        register(shell, name)
    _catch_up()
    shell.events.register("post_run_cell", _catch_up)


def uninstall(shell) -> None:
    """Stop watching for PyTorch (the formatters go with the display module's)."""
    try:
        shell.events.unregister("post_run_cell", _catch_up)
    except ValueError:
        pass
    _state.update(shell=None, done=False, register=None)
