"""Who changed a saved tensor in place, read from the scene of the error.

PyTorch's message names a changed tensor as ``output 0 of Add``: the node that
is its ``grad_fn`` *now*.  After ``q = p * 2; z = q * q; q.add_(1)`` that is the
in-place ``add_``, not the ``Mul`` that made ``q`` -- a learner reading "output
of Add" looks for an addition that made ``q`` and finds none.  What the
explainer says instead comes from three places:

* the **graph** keeps what the node saw when it saved the value: the edge of
  that input still leads to the node that made it then
  (:func:`maker_at_save`);
* the **code that ran** (the cell and the earlier ones) holds the in-place
  statement itself, ``q.add_(1)`` (:func:`inplace_statement`), or a call with
  ``inplace=True`` (``F.relu(h, inplace=True)``, :func:`inplace_calls`);
* the **namespace** holds the layers built with ``inplace=True``
  (``nn.ReLU(inplace=True)``, :func:`inplace_layers`) and other tensors that
  share the changed tensor's memory and version counter, such as
  ``d = e.detach()`` (:func:`aliases`).

Each function returns None or ``[]`` when it finds nothing; nothing is guessed.
"""
from __future__ import annotations

import ast
import re

from ..viz import access
from . import culprits

MAX_TEXT = 60  # a statement longer than this is not quoted


def family(node) -> str:
    """``MulBackward0`` -> ``Mul``, ``LeakyReluBackward1`` -> ``LeakyRelu``."""
    name = access.node_name(node)
    stem = name.rstrip("0123456789")
    return stem[:-len("Backward")] if stem.endswith("Backward") else name


def maker_at_save(node, saved_name: str | None) -> str | None:
    """The op that made the value ``node`` saved as ``saved_name``, as it was
    when it was saved: ``"Mul"``; ``"leaf"`` for a leaf, ``""`` for a tensor
    that required no grad; None when the graph does not tell.  (``result`` is
    the node's own output; an input's edge still leads to the node that made
    it then, whatever in-place op came later.)"""
    if not saved_name:
        return None
    if saved_name == "result":
        return family(node)
    names = access.input_names(node)
    if saved_name not in names:
        return None
    i = names.index(saved_name)
    edges = access.next_edges(node)
    if i >= len(edges):
        return None
    before = edges[i][0]
    if before is None:
        return ""
    return "leaf" if access.leaf_variable(before) is not None else family(before)


def _text(code: str, stmt) -> str | None:
    text = ast.get_source_segment(code, stmt)
    return text if text and "\n" not in text and len(text) <= MAX_TEXT else None


def _trees(sources):
    for code, before in sources:
        try:
            yield code, before, ast.parse(code)
        except (SyntaxError, ValueError):
            continue


def inplace_statement(names_: list[str], sources) -> tuple[str, str] | None:
    """``(name, statement)``: the latest statement in ``sources`` (see
    :func:`.culprits.code_that_ran`) that changes one of ``names_`` in place --
    ``q.add_(1)``, ``q += 1``, ``q[0] = 0`` -- quoted as written."""
    for code, before, tree in _trees(sources):
        found = []
        for stmt in ast.walk(tree):
            if not isinstance(stmt, ast.stmt) or isinstance(
                    stmt, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If,
                           ast.With, ast.Try, ast.AsyncFunctionDef)):
                continue
            if before is not None and stmt.lineno >= before:
                continue
            for target in culprits.inplace_targets(stmt):
                if isinstance(target, ast.Name) and target.id in names_:
                    found.append((stmt.lineno, target.id, stmt))
        if found:
            _line, name, stmt = max(found, key=lambda f: f[0])
            text = _text(code, stmt)
            return (name, text) if text else None
    return None


def _is_inplace_call(call) -> bool:
    """``f(..., inplace=True)``, or an in-place method or function: ``h.relu_()``,
    ``torch.relu_(h)`` (a name ending in one underscore)."""
    if any(k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
           for k in call.keywords):
        return True
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.endswith("_") and not name.startswith("_") and not name.endswith("__")


def inplace_calls(sources) -> list[str]:
    """In-place calls in ``sources`` (``F.relu(h, inplace=True)``,
    ``nn.ReLU(inplace=True)``, ``h.relu_()``), quoted, each once, newest first."""
    out = []
    for code, _before, tree in _trees(sources):
        for call in ast.walk(tree):
            if isinstance(call, ast.Call) and _is_inplace_call(call):
                text = ast.get_source_segment(code, call)
                if text and len(text) <= MAX_TEXT and text not in out:
                    out.append(text)
    return out


def inplace_layers(names: dict) -> list[tuple[str, object]]:
    """``(path, layer)`` for each layer built with ``inplace=True`` inside the
    models of the namespace (``("net[2]", ReLU(inplace=True))``), of either engine."""
    out, seen = [], set()
    for key, value in (names or {}).items():
        if not isinstance(key, str) or key.startswith("_") or isinstance(value, type):
            continue
        named = getattr(value, "named_modules", None)
        if not callable(named) or not hasattr(value, "parameters"):
            continue
        try:
            layers = list(named())
        except Exception:
            continue
        for path, layer in layers:
            if getattr(layer, "inplace", False) is True and id(layer) not in seen:
                seen.add(id(layer))
                out.append((key + "".join(f"[{p}]" if p.isdigit() else f".{p}"
                                          for p in path.split(".") if p), layer))
    return out


def layer_text(layer) -> str:
    """``nn.ReLU(inplace=True)``."""
    return f"nn.{type(layer).__name__}(inplace=True)"


def without_inplace(call: str) -> str:
    """``nn.ReLU(inplace=True)`` -> ``nn.ReLU()``; ``F.relu(h, inplace=True)`` ->
    ``F.relu(h)``; ``h.relu_()`` -> ``h.relu()``."""
    if "inplace" not in call:
        head, rest = call.split("(", 1)
        return head[:-1] + "(" + rest if head.endswith("_") else call
    return re.sub(r"\(\s*,\s*", "(", re.sub(r",?\s*inplace\s*=\s*True", "", call))


def matches(layer_or_call: str, changer: str | None) -> bool:
    """Whether an in-place layer or call (``ReLU``, ``F.relu(...)``) is the op
    ``changer`` (``"Relu"``, the changed tensor's grad_fn family now)."""
    if not changer:
        return False
    head = layer_or_call.split("(", 1)[0].rsplit(".", 1)[-1]
    return head.lower().rstrip("_").replace("_", "") == changer.lower()


def shares_counter(a, b) -> bool:
    """Whether tensors ``a`` and ``b`` (same engine) share memory and the version
    counter, as ``b = a.detach()`` does (``b = a.data`` shares only the memory)."""
    if a is b or access.engine_name(a) != access.engine_name(b):
        return False
    if access.engine_name(a) == "autograd_kit":  # the counter object itself
        return a._vc is b._vc
    try:
        return a.data_ptr() == b.data_ptr() and a._version == b._version and \
            a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    except Exception:
        return False


def aliases(t, names: dict) -> list[str]:
    """Names of the namespace's tensors outside the graph (no grad_fn, no
    requires_grad) that share ``t``'s memory and version counter: ``d`` after
    ``d = e.detach()``."""
    return [k for k, v in (names or {}).items()
            if isinstance(k, str) and not k.startswith("_") and access.engine_name(v)
            and v is not t and v.grad_fn is None and not v.requires_grad
            and shares_counter(t, v)]


def assignment(name: str, sources) -> str | None:
    """The latest statement in ``sources`` that assigns ``name``, quoted."""
    for code, before, tree in _trees(sources):
        found = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                 and (before is None or n.lineno < before)
                 and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
        if found:
            return _text(code, max(found, key=lambda n: n.lineno))
    return None
