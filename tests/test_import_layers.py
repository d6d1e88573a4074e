"""The core is laid out in layers, read bottom-up: the array backend, the tensor,
the graph's nodes, the formulas, the engine's walk, the operations.  A lower
layer imports no higher one, not even lazily inside a function; where it needs
a higher service at run time, the higher layer plugs it in as it is imported
(``tensor.plug_in``, ``formula_env.OPS``, ``graph.scatter_view``).

These tests read the import statements of every module (module level and inside
functions, relative or absolute) and keep the layout from growing back into
one big circle."""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograd_kit"
# the notebook integration and course material sit on top of the core: not checked here
OUTSIDE_THE_CORE = ("viz", "ipython", "course", "locale", "exercises", "widgets")
LARGEST_CIRCLE = 6


def _modules() -> dict[str, pathlib.Path]:
    """Every module of the package by its dotted name, ``widgets/`` included under
    the name it is installed as (``autograd_kit.widgets``)."""
    mods = {}
    for folder, prefix in ((PACKAGE, ("autograd_kit",)), (ROOT / "widgets",
                                                          ("autograd_kit", "widgets"))):
        for path in folder.rglob("*.py"):
            parts = prefix + path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _imports(name: str, path: pathlib.Path, mods) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in mods)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in mods:
                    found.add(full)
                elif target in mods:
                    found.add(target)
    found.discard(name)
    return found


def _in_core(name: str) -> bool:
    parts = name.split(".")
    return len(parts) > 1 and parts[1] not in OUTSIDE_THE_CORE


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's
    algorithm, iterative)."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    circle = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        circle.append(member)
                        if member == node:
                            break
                    if len(circle) > 1:
                        circles.append(sorted(circle))
    return circles


def test_no_import_circle_in_the_core_is_larger_than_six_modules():
    mods = _modules()
    core = {name: path for name, path in mods.items() if _in_core(name)}
    graph = {name: _imports(name, path, mods) & core.keys() for name, path in core.items()}
    too_big = [c for c in _circles(graph) if len(c) > LARGEST_CIRCLE]
    assert not too_big, "import circles of more than %d modules:\n%s" % (
        LARGEST_CIRCLE, "\n".join(f"{len(c)}: {', '.join(c)}" for c in too_big))


def test_no_import_circle_in_the_whole_package_is_larger_than_six_modules():
    """The notebook side too (viz, ipython, widgets, course, exercises).  The
    package's root is left out: Python runs it before any of its parts, so it
    stands above every module whatever they import (it is the facade that
    gathers the public names, and ``%load_ext`` finds the extension there)."""
    mods = _modules()
    below = {name: path for name, path in mods.items() if name != "autograd_kit"}
    graph = {name: _imports(name, path, mods) & below.keys() for name, path in below.items()}
    too_big = [c for c in _circles(graph) if len(c) > LARGEST_CIRCLE]
    assert not too_big, "import circles of more than %d modules:\n%s" % (
        LARGEST_CIRCLE, "\n".join(f"{len(c)}: {', '.join(c)}" for c in too_big))


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def test_the_tensor_imports_no_operation():
    mods = _modules()
    imported = _imports("autograd_kit.tensor", PACKAGE / "tensor.py", mods)
    ops = sorted(m for m in imported
                 if m == "autograd_kit.ops" or m.startswith("autograd_kit.ops."))
    assert not ops, f"tensor.py imports {ops}: the ops attach their methods to Tensor themselves"
