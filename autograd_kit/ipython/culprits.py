"""Finding the tensor or node behind an autograd error, from the code that failed.

What an error says about itself -- its kind, the node, the versions -- comes
from :func:`autograd_kit.viz.error_facts.error_facts`, for either engine:
autograd_kit's errors carry these facts, PyTorch's are read from their fixed
wording.  What an error does not say (PyTorch's never name the tensor, nor the
node that needed a changed value) is read back from the scene of the error,
whichever engine raised it:

* the **line that failed** (the last frame of the traceback outside the
  libraries) says which tensors were involved: ``y`` in ``y.backward()``, ``x``
  in ``x.add_(1)`` or ``x[0] = 0``; only names and attributes are looked up,
  and an expression is evaluated only when it calls nothing;
* the **graph** below those tensors says which node kept a saved value that is
  now freed or changed (:func:`autograd_kit.viz.error_facts.find_saved`);
* the **namespace** says which of the learner's variables is the tensor that
  was changed, and the **code that ran** (the cell, and earlier cells) where a
  gradient without a graph came from.

:func:`complete` fills in the facts that are missing.  When a fact cannot be
found it stays None and the explanation says less; it never guesses.
"""
from __future__ import annotations

import ast
import linecache
import os
import re
import warnings

from ..viz import access
from ..viz.error_facts import SAVED_REASONS, find_saved

_LIBRARIES = ("torch", "autograd_kit")  # frames inside these are not the learner's


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


def in_library(entry) -> bool:
    """Whether a traceback entry is PyTorch's or autograd_kit's code."""
    return os.path.abspath(entry.tb_frame.f_code.co_filename).startswith(_library_dirs())


def user_frame(tb):
    """The last traceback entry outside PyTorch and autograd_kit: where the
    learner's code called into the library.  ``None`` if there is none."""
    found = None
    while tb is not None:
        if not in_library(tb):
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


def code_that_ran(tb, history=()) -> list:
    """``(code, before_line)`` pairs, most recent first: the cell that failed, up
    to the line that failed, then ``history``, the notebook's earlier cells
    (newest first; ``before_line`` None for a whole cell)."""
    sources, cell = [], None
    entry = user_frame(tb)
    if entry is not None:
        cell = failing_statement(entry)[1]
        sources.append((cell, entry.tb_lineno))
    return sources + [(code, None) for code in history
                      if code and (cell is None or code.strip() != cell.strip())]


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


# -- a tensor of one engine given to the other -------------------------------------------
#: how each side words a tensor of the other (both classes are called ``Tensor``)
_MIXED = re.compile(
    r"must be Tensor, not Tensor|expected Tensor as element \d+ in argument \d+, but got "
    r"Tensor"                                                   # PyTorch's C++ arguments
    r"|unsupported operand type\(s\) for .+: 'Tensor' and 'Tensor'"  # Python: x + t
    r"|expected a Tensor or a number, not Tensor"               # the kit's operators
    r"|'Tensor' object has no attribute '_")                    # the kit reading PyTorch's
_TORCH_WORDS = ("must be Tensor, not Tensor", "expected Tensor as element")


def _raised_by(tb) -> str:
    """``"torch"``, ``"autograd_kit"`` or ``""``: the package whose code raised
    (the innermost frame), by module name, so that it holds while ``torch``
    names the kit (:func:`autograd_kit.alias_torch`)."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return next((root for root in _LIBRARIES if module == root or
                 module.startswith(root + ".")), "")


def mixed_engines(err) -> tuple[str, object] | None:
    """``(direction, tensor)`` when ``err`` is the ``TypeError`` (or
    ``AttributeError``) of a tensor of one engine given to the other:
    ``"to_torch"``, a kit tensor given to PyTorch (``linear(): argument 'input'
    (position 1) must be Tensor, not Tensor``); ``"to_kit"``, a PyTorch tensor
    given to the kit; ``"both"``, the two met in an operator (``x + t``).
    ``tensor``: the stranger, when the line that failed names it.  Else None."""
    message = str(err)
    if not isinstance(err, (TypeError, AttributeError)) or not _MIXED.search(message):
        return None
    tb = err.__traceback__
    by = "torch" if any(w in message for w in _TORCH_WORDS) else _raised_by(tb)
    direction = {"torch": "to_torch", "autograd_kit": "to_kit"}.get(by, "both")
    stranger = {"to_torch": "autograd_kit", "to_kit": "torch"}.get(direction)
    found = line_tensors(tb, lambda t: access.engine_name(t) == stranger) if stranger else []
    if isinstance(err, AttributeError) and (direction != "to_kit" or not found):
        return None  # a missing attribute is a tensor of PyTorch's only if one is there
    return direction, (found[0] if found else None)


# -- the changed tensor -------------------------------------------------------------------
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
def _roots_on_line(stmt, frame) -> list:
    """The tensors a backward pass on ``stmt`` started from (see :func:`backward_roots`)."""
    return [t for t in (value_of(e, frame) for e in backward_roots(stmt))
            if access.engine_name(t)]


def complete(facts, names: dict):
    """``facts`` (an :class:`autograd_kit.viz.error_facts.ErrorFacts`) with the
    tensor and node that the error did not carry, found at the scene of the
    error (see the module docstring); ``names`` is the learner's namespace."""
    entry = user_frame(facts.traceback)
    stmt, frame = (failing_statement(entry)[0], entry.tb_frame) if entry else (None, None)
    if stmt is None:
        return facts
    kind = facts.kind
    if kind == "leaf_inplace" and facts.tensor is None:
        for expr in inplace_targets(stmt):
            t = value_of(expr, frame)
            if access.engine_name(t) and t.requires_grad:
                facts.tensor = t
                # `x[0] = 5.` on a leaf: PyTorch speaks of the view x[0]; x is the leaf
                facts.view = facts.view and not t.is_leaf
                break
    elif kind in ("non_scalar", "no_grad_fn", "grad_shape") and facts.tensor is None:
        found = _roots_on_line(stmt, frame)
        if not found:  # y.sum().backward(): the named tensor that fits the error
            fits = {"no_grad_fn": no_graph,
                    "non_scalar": lambda t: t.grad_fn is not None and t.numel() != 1,
                    "grad_shape": lambda t: t.grad_fn is not None}[kind]
            found = [t for t in named_tensors(stmt, frame) if fits(t)]
        facts.tensor = found[0] if found else None
    elif kind in SAVED_REASONS:
        if facts.node is None:
            roots = _roots_on_line(stmt, frame) + named_tensors(stmt, frame)
            facts.node, facts.saved_name = find_saved(roots, SAVED_REASONS[kind])
        named = facts.tensor is not None and \
            any(v is facts.tensor for v in (names or {}).values())
        if kind == "saved_modified" and facts.node is not None and facts.found is not None \
                and not named:  # the learner's own variable, rather than a copy of it
            mine = changed_tensor(facts.node, facts.saved_name, facts.found, names)
            facts.tensor = mine if mine is not None else facts.tensor
    if facts.shape is None and access.is_tensor(facts.tensor):
        facts.shape = access.shape_of(facts.tensor)
    return facts


# -- where a gradient came from ----------------------------------------------------------------
def _grad_call(value):
    """The ``grad(...)`` call (``torch.autograd.grad``) that ``value`` is, or
    indexes into (``torch.autograd.grad(y, x)[0]``); else None."""
    while isinstance(value, ast.Subscript):
        value = value.value
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return value if name == "grad" else None


def _asks_for_graph(call) -> bool:
    """Whether a ``grad(...)`` call passes ``create_graph`` (other than a plain False)."""
    create = next((k.value for k in call.keywords if k.arg == "create_graph"), None)
    return create is not None and not (isinstance(create, ast.Constant) and not create.value)


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


def origin(name: str, sources) -> tuple[str, str | None] | None:
    """Where the value of ``name`` came from, by its latest assignment in
    ``sources`` (most recent first; each ``(code, before_line)``, ``before_line``
    None for a whole cell):

    * ``("grad", call)``: from ``torch.autograd.grad(...)`` (``call``, its
      source) without ``create_graph=True``, alone, unpacked (``g, = ...``) or
      indexed (``grad(...)[0]``);
    * ``("other", None)``: from anything else (``z = torch.ones(2).sum()``);
    * None: no assignment was found, or the ``grad`` call did ask for a graph.
    """
    for code, before in sources:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        assigns = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                   and n.value is not None and (before is None or n.lineno < before)
                   and any(_binds(t, name) for t in _targets(n))]
        if assigns:
            call = _grad_call(max(assigns, key=lambda n: n.lineno).value)
            if call is None:
                return "other", None
            if _asks_for_graph(call):
                return None
            return "grad", ast.get_source_segment(code, call)
    return None


def grad_call_on_line(tb) -> str | None:
    """The source of the ``torch.autograd.grad(...)`` call on the line that
    failed (one line, at most 60 characters), or None."""
    entry = user_frame(tb)
    stmt, source = failing_statement(entry) if entry is not None else (None, "")
    for node in ast.walk(stmt) if stmt is not None else ():
        call = _grad_call(node)
        if call is not None:
            text = ast.get_source_segment(source, call)
            return text if text and "\n" not in text and len(text) <= 60 else None
    return None


def made_on_the_line(tb) -> bool:
    """Whether backward started, on the line that failed, from a tensor made
    right there out of no tensor variable and no ``grad()`` call, so certainly
    not a gradient: ``torch.ones(2).sum().backward()``."""
    entry = user_frame(tb)
    stmt = failing_statement(entry)[0] if entry is not None else None
    roots = backward_roots(stmt) if stmt is not None else []
    if len(roots) != 1 or not any(isinstance(n, ast.Call) for n in ast.walk(roots[0])):
        return False  # a name (`z.backward()`) is looked up by its assignment instead
    for node in ast.walk(roots[0]):
        if _grad_call(node) is not None:
            return False
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = value_of(node, entry.tb_frame)
            if access.engine_name(value) or isinstance(value, (tuple, list)):
                return False
    return True


def gradient_owner(t, names: dict) -> str | None:
    """``"x"`` when ``t`` is ``x.grad`` for a tensor ``x`` in ``names``."""
    for key, value in (names or {}).items():
        if isinstance(key, str) and not key.startswith("_") and access.engine_name(value) \
                and value is not t and access.grad_of(value) is t:
            return key
    return None


def held_in(t, names: dict) -> str | None:
    """``"grads[0]"`` when ``t`` is an item of a tuple or list ``grads`` in
    ``names`` (what ``torch.autograd.grad`` returns), else None."""
    for key, value in (names or {}).items():
        if isinstance(key, str) and not key.startswith("_") and \
                isinstance(value, (tuple, list)) and len(value) <= 64:
            for k, item in enumerate(value):
                if item is t:
                    return f"{key}[{k}]"
    return None
