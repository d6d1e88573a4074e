"""Whether a notebook replaced a function that the checks rely on.

A graded cell (:data:`autograd_kit.course.nbgrader.GRADED`) imports the
exercises package afresh, so a learner's ``check = ...`` or a patched
``autograd_kit.exercises.grade`` is not what runs.  What a fresh import cannot
undo is a change to a module it does not import again: a function of the kit
(the engine, gradcheck, the tensor's methods), of ``math``, ``numpy``,
``operator``, ``copy`` or the builtins, replaced by one written in the notebook
or by another function.  :func:`tampered` names the first such function, and a
graded check gives no points while there is one.
"""
from __future__ import annotations


def homes() -> tuple[str, ...]:
    """The folders of installed code: the Python installation's library folders,
    and the folder of every module of the kit (this package's, the widgets' too)."""
    import os
    import sysconfig
    import sys
    found = {os.path.realpath(sysconfig.get_paths()[k])
             for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    for name, module in list(sys.modules.items()):   # the kit's own folders (widgets too)
        where = getattr(module, "__file__", None)
        if where and (name == "autograd_kit" or name.startswith("autograd_kit.")):
            found.add(os.path.dirname(os.path.realpath(where)))
    return tuple(h + os.sep for h in found)


def foreign(fn, folders, seen) -> bool:
    """Whether a function was written outside the installed packages (in a notebook)."""
    import os
    import types
    if not isinstance(fn, types.FunctionType):
        return False
    where = fn.__code__.co_filename
    if where == "<string>":
        return False     # made from text by the kit (formulas, namedtuples, dataclasses)
    if where not in seen:
        seen[where] = not os.path.realpath(where).startswith(folders)
    return seen[where]


def tampered() -> str | None:
    """The first function of the kit (or of math/numpy/builtins) that the notebook
    replaced with one of its own, as ``module.name``; None when there is none."""
    import builtins
    import sys
    import types
    folders, seen = homes(), {}
    modules = [m for n, m in list(sys.modules.items())
               if n == "autograd_kit" or n.startswith("autograd_kit.")]
    modules += [sys.modules.get(n, builtins) for n in ("math", "builtins", "numpy", "operator",
                                                       "copy")]
    for mod in (sys.modules["math"], builtins):   # a C function in another's place
        for name, value in list(vars(mod).items()):
            if isinstance(value, types.BuiltinFunctionType) and value.__name__ != name:
                return f"{mod.__name__}.{name}"
    for mod in modules[:-5]:
        changed = moved(mod)
        if changed:
            return f"{mod.__name__}.{changed}"
    for mod in modules:
        for name, value in list(vars(mod).items()):
            items = [(name, value)]
            if isinstance(value, type) and value.__module__.startswith("autograd_kit"):
                items += [(f"{name}.{k}", v) for k, v in vars(value).items()]
            for label, item in items:
                item = getattr(item, "__func__", item)
                if foreign(item, folders, seen):
                    return f"{mod.__name__}.{label}"
    return None


def moved(module) -> str | None:
    """A name that the module's file defines with ``def`` but that now holds some
    other function (``gradcheck.numerical_jacobian = analytical_jacobian``)."""
    import re
    where = getattr(module, "__file__", None)
    if not where or not where.endswith(".py"):
        return None
    try:
        with open(where, encoding="utf-8") as source:
            defined = re.findall(r"^(?:async )?def (\w+)", source.read(), re.MULTILINE)
    except OSError:
        return None
    space = vars(module)
    for name in defined:
        value = getattr(space.get(name), "__wrapped__", space.get(name))
        code = getattr(value, "__code__", None)
        if code is not None and code.co_name != name:
            return name
    return None
