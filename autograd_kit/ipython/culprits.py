"""Finding the tensor or node behind an autograd error, from the code that failed.

autograd_kit's errors carry their facts (``err.tensor``, ``err.node``, the
versions).  PyTorch's are plain ``RuntimeError`` with a message, so the facts
are read back from the scene of the error instead:

* the **message** says which kind of error it is, and for a changed saved
  tensor the two version numbers;
* the **line that failed** (the last frame of the traceback outside the
  libraries) says which tensors were involved: ``y`` in ``y.backward()``, ``x``
  in ``x.add_(1)`` or ``x[0] = 0``; only names and attributes are looked up,
  and an expression is evaluated only when it calls nothing;
* the **graph** below those tensors says which node kept a saved value that is
  now freed or changed (:func:`autograd_kit.viz.access.saved_value`).

:func:`torch_facts` returns these facts with the attribute names of
autograd_kit's errors, so one explainer serves both engines.  When a fact
cannot be found it stays None and the explanation says less; it never guesses.
"""
from __future__ import annotations

import ast
import linecache
import os
import re
import warnings
from collections import deque
from types import SimpleNamespace

from ..viz import access

# (kind, a piece of PyTorch's message that identifies it)
MESSAGES = [
    ("leaf_inplace", "leaf Variable that requires grad is being used in an in-place"),
    ("saved_modified", "has been modified by an inplace operation"),
    ("graph_freed", "Trying to backward through the graph a second time"),
    ("non_scalar", "grad can be implicitly created only for scalar outputs"),
    ("no_grad_fn", "does not require grad and does not have a grad_fn"),
]
_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+) instead")
_PRODUCER = re.compile(r"which is output \d+ of (\w+)")
_LIBRARIES = ("torch", "autograd_kit")
MAX_NODES = 5000  # nodes searched for a freed or changed saved value


def kind_of(err) -> str:
    """The kind of a PyTorch autograd error (as autograd_kit's ``err.kind``), or ""."""
    if not isinstance(err, RuntimeError):
        return ""
    message = str(err)
    return next((kind for kind, words in MESSAGES if words in message), "")


# -- the line that failed ---------------------------------------------------------------
def _library_dirs() -> tuple[str, ...]:
    import sys
    dirs = []
    for name in _LIBRARIES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


def user_frame(tb):
    """The last traceback entry outside PyTorch and autograd_kit: where the
    learner's code called into the library.  ``None`` if there is none."""
    libraries, found = _library_dirs(), None
    while tb is not None:
        filename = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not filename.startswith(libraries):
            found = tb
        tb = tb.tb_next
    return found


def failing_statement(entry):
    """``(statement, source)``: the innermost statement around the failing line."""
    frame = entry.tb_frame
    source = "".join(linecache.getlines(frame.f_code.co_filename, frame.f_globals))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None, source
    line, best = entry.tb_lineno, None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or line):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best, source


def value_of(expr, frame):
    """The value of ``expr`` in ``frame``, if it calls nothing (else None)."""
    if expr is None or any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Lambda, ast.Await,
                                          ast.Yield, ast.YieldFrom))
                           for n in ast.walk(expr)):
        return None
    try:
        # from text, so that a target such as `x` in `x -= 1` reads as a value
        code = compile(ast.unparse(expr), "<autograd_kit>", "eval")
        with warnings.catch_warnings():  # e.g. reading a non-leaf's .grad
            warnings.simplefilter("ignore")
            return eval(code, frame.f_globals, frame.f_locals)
    except Exception:
        return None


def _base(expr):
    """``x`` for ``x``, ``x[0]``, ``x.data[0]``: the object an in-place change hits."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def inplace_targets(stmt) -> list:
    """Expressions changed in place by ``stmt``: ``x`` in ``x += 1``,
    ``x[0] = 0`` and ``x.add_(1)``."""
    found = []
    if isinstance(stmt, ast.AugAssign):
        found.append(_base(stmt.target))
    if isinstance(stmt, ast.Assign):
        found += [_base(t) for t in stmt.targets if isinstance(t, ast.Subscript)]
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name.endswith("_") and not name.startswith("_"):
                found.append(_base(node.func.value))
    return found


def backward_roots(stmt) -> list:
    """Expressions backward started from: ``y`` in ``y.backward()``, the first
    argument of ``torch.autograd.grad(y, x)`` or ``backward(y)``."""
    found = []
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "backward" and isinstance(func, ast.Attribute) and not node.args:
            found.append(func.value)
        elif name in ("backward", "grad"):
            first = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in ("tensors", "outputs")), None)
            if first is not None:
                found.append(first)
            elif isinstance(func, ast.Attribute):
                found.append(func.value)
    return found


def named_tensors(stmt, frame) -> list:
    """Tensors named in ``stmt`` (names and attributes such as ``model.w``)."""
    out, seen = [], set()
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = value_of(node, frame)
            if access.engine_name(value) and id(value) not in seen:
                seen.add(id(value))
                out.append(value)
    return out


def line_tensors(tb, fits) -> list:
    """Tensors named on the line that failed (traceback ``tb``) for which
    ``fits(tensor)`` is true."""
    entry = user_frame(tb)
    stmt = failing_statement(entry)[0] if entry is not None else None
    if stmt is None:
        return []
    return [t for t in named_tensors(stmt, entry.tb_frame) if fits(t)]


def failing_line(tb) -> str | None:
    """The source of the statement that failed, when it is one short line."""
    entry = user_frame(tb)
    if entry is None:
        return None
    stmt, source = failing_statement(entry)
    if stmt is None or stmt.lineno != stmt.end_lineno:
        return None
    text = ast.get_source_segment(source, stmt)
    return text if text and len(text) <= 60 else None


def no_graph(t) -> bool:
    """No grad_fn and no requires_grad: backward() can't start from ``t``."""
    return t.grad_fn is None and not t.requires_grad


# -- the graph ----------------------------------------------------------------------------
def nodes_below(roots):
    """Every node below the tensors or nodes ``roots``, each once, nearest first."""
    todo = deque(getattr(r, "grad_fn", r) for r in roots)
    seen, order = set(), []
    while todo and len(order) < MAX_NODES:
        node = todo.popleft()
        if node is None or id(node) in seen or not access.is_node(node):
            continue
        seen.add(id(node))
        order.append(node)
        todo.extend(n for n, _ in access.next_edges(node))
    return order


def node_with_saved(roots, reason: str):
    """``(node, saved name)`` of the first node whose saved value is ``reason``
    ("freed" or "modified"), or ``(None, None)``."""
    for node in nodes_below(roots):
        for name in access.saved_names(node):
            value = access.saved_value(node, name)
            if isinstance(value, access.Unavailable) and value.reason == reason:
                return node, name
    return None, None


def _feeds(t, node, output: bool) -> bool:
    """Whether tensor ``t`` is (or was, before in-place changes stacked new
    nodes on it) an input of ``node`` or, with ``output``, its output."""
    edges = access.next_edges(node)
    if not output and any(access.leaf_variable(n) is t for n, _ in edges):
        return True
    targets = {id(node)} if output else {id(n) for n, _ in edges}
    todo = [t.grad_fn] if getattr(t, "grad_fn", None) is not None else []
    for _ in range(4):  # a few in-place ops stacked on the saved tensor
        if any(id(n) in targets for n in todo):
            return True
        todo = [n for fn in todo for n, _ in access.next_edges(fn)]
    return False


def changed_tensor(node, saved_name, found: int, names: dict):
    """The user's tensor whose in-place change broke ``node``: at version
    ``found``, and an input of ``node`` (its output when the saved value is
    ``result``).  None unless exactly one fits."""
    output = saved_name == "result"
    fits = [v for k, v in (names or {}).items()
            if isinstance(k, str) and not k.startswith("_") and access.engine_name(v)
            and getattr(v, "_version", None) == found and _feeds(v, node, output)]
    unique = {id(v): v for v in fits}
    return next(iter(unique.values())) if len(unique) == 1 else None


# -- all together ----------------------------------------------------------------------------
def torch_facts(err, names: dict):
    """The facts of PyTorch error ``err`` in the shape of autograd_kit's errors
    (``kind``, ``tensor``, ``node``, ``view``...), or None if it is not one of
    the autograd errors explained here."""
    kind = kind_of(err)
    if not kind:
        return None
    facts = SimpleNamespace(kind=kind, tensor=None, node=None, view=False, saved_name=None,
                            producer=None, found=None, expected=None, message=str(err),
                            traceback=err.__traceback__)
    entry = user_frame(err.__traceback__)
    stmt, frame = (failing_statement(entry)[0], entry.tb_frame) if entry else (None, None)
    if stmt is None:
        return facts
    if kind == "leaf_inplace":
        facts.view = "a view of a leaf" in facts.message
        for expr in inplace_targets(stmt):
            t = value_of(expr, frame)
            if access.engine_name(t) and t.requires_grad:
                facts.tensor = t
                # `x[0] = 5.` on a leaf: PyTorch speaks of the view x[0]; x is the leaf
                facts.view = facts.view and not t.is_leaf
                break
    elif kind in ("non_scalar", "no_grad_fn"):
        found = [t for t in (value_of(e, frame) for e in backward_roots(stmt))
                 if access.engine_name(t)]
        if not found:  # y.sum().backward(): the named tensor that fits the error
            fits = (lambda t: t.grad_fn is not None and t.numel() != 1) \
                if kind == "non_scalar" else no_graph
            found = [t for t in named_tensors(stmt, frame) if fits(t)]
        facts.tensor = found[0] if found else None
    else:
        roots = [t for t in (value_of(e, frame) for e in backward_roots(stmt))
                 if access.engine_name(t)] + named_tensors(stmt, frame)
        reason = "freed" if kind == "graph_freed" else "modified"
        facts.node, facts.saved_name = node_with_saved(roots, reason)
        if kind == "saved_modified":
            versions = _VERSIONS.search(facts.message)
            producer = _PRODUCER.search(facts.message)
            if versions:
                facts.found, facts.expected = int(versions.group(1)), int(versions.group(2))
            facts.producer = producer.group(1) if producer else None
            if facts.node is not None and facts.found is not None:
                facts.tensor = changed_tensor(facts.node, facts.saved_name, facts.found,
                                              names)
    return facts


# -- where a gradient came from ----------------------------------------------------------------
def _grad_call(value) -> bool:
    """A call of ``grad(...)`` (``torch.autograd.grad``) without ``create_graph=True``."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    create = next((k.value for k in value.keywords if k.arg == "create_graph"), None)
    return name == "grad" and not (isinstance(create, ast.Constant) and create.value)


def _binds(target, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds(t, name) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _binds(target.value, name)
    return False


def _targets(stmt) -> list:
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]


def assigned_from_grad(name: str, sources) -> str | None:
    """The source of ``torch.autograd.grad(...)`` if the latest assignment to
    ``name`` in ``sources`` (most recent first; each ``(code, before_line)``,
    ``before_line`` None for a whole cell) took it from a ``grad`` call made
    without ``create_graph=True``; else None."""
    for code, before in sources:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        assigns = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                   and (before is None or n.lineno < before)
                   and any(_binds(t, name) for t in _targets(n))]
        if assigns:
            last = max(assigns, key=lambda n: n.lineno)
            if _grad_call(last.value):
                return ast.get_source_segment(code, last.value)
            return None
    return None


def gradient_owner(t, names: dict) -> str | None:
    """``"x"`` when ``t`` is ``x.grad`` for a tensor ``x`` in ``names``."""
    for key, value in (names or {}).items():
        if isinstance(key, str) and not key.startswith("_") and access.engine_name(value) \
                and value is not t and access.grad_of(value) is t:
            return key
    return None
