"""Mistakes that stop nothing: a cell that runs without an error, but not as meant.

Two are common enough to be worth a word after the cell, with
``%autograd_explain on``:

* **reading ``.grad`` of a tensor that is not a leaf** -- PyTorch (and the kit)
  only warn, and the value is None.  The warning is noticed while the cell
  runs (``warnings.showwarning`` is wrapped from ``pre_run_cell`` to
  ``post_run_cell``, and still shows the warning as before); its line says
  which tensor it was.
* **gradients that keep adding up because nothing empties them.**  A teacher
  spots it in the code: a loop that calls ``backward()`` and updates the
  parameters, with no ``zero_grad()`` in it -- and in the numbers: the same
  leaf updated again and again while its ``.grad`` holds the sum of every
  pass so far.  Both are checked here, and cheaply: the cell's code is read
  before it runs (:func:`accumulating_loops`), and the leaves' version
  counters, which every in-place update moves, are compared before and after
  it; a leaf that existed before the cell is also watched with a hook while
  the cell runs, so the explanation can show the size of its ``.grad`` after
  each backward().  Deliberate accumulation gives no alarm: a loop that adds
  gradients up without updating, or that calls ``zero_grad()`` every few
  steps, does not match.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import warnings

from ..i18n import _, ngettext
from ..viz import access
from ..viz.error_facts import read_message
from . import changes, usage
from .explanation import Explanation

_state = {"showwarning": None, "seen": [], "versions": None, "loops": False, "code": "",
          "hooks": [], "sizes": {}}
MAX_WATCHED = 64  # leaves watched with a hook at most


# -- the cell's code ----------------------------------------------------------------
def _calls(node, *attrs) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in attrs for n in ast.walk(node))


def _mentions_grad(node) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(node))


def _empties(loop) -> bool:
    """Whether the loop's body empties a gradient: ``zero_grad()``, ``.grad.zero_()``,
    ``w.grad = None``, ``w.grad[:] = 0``, ``w.grad *= 0``..."""
    for n in ast.walk(loop):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                n.func.attr == "zero_grad" or
                (n.func.attr in ("zero_", "fill_", "mul_") and _mentions_grad(n.func.value))):
            return True
        targets = n.targets if isinstance(n, ast.Assign) else \
            [n.target] if isinstance(n, ast.AugAssign) else []
        if any(_mentions_grad(t) for t in targets):
            return True
    return False


def _updates(loop) -> bool:
    """Whether the loop's body updates parameters: an optimizer's ``step()``, or
    an in-place change computed from a ``.grad`` (``w -= lr * w.grad``)."""
    for n in ast.walk(loop):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                n.func.attr == "step" or (n.func.attr in ("sub_", "add_") and any(
                    _mentions_grad(a) for a in n.args))):
            return True
        if isinstance(n, ast.AugAssign) and _mentions_grad(n.value):
            return True
    return False


def _helper_empties(loop, names: dict) -> bool:
    """Whether the loop calls one of the notebook's functions that empties a
    gradient (``reset_grads()``, defined in a cell)."""
    for n in ast.walk(loop):
        func = names.get(n.func.id) if isinstance(n, ast.Call) and \
            isinstance(n.func, ast.Name) else None
        if inspect.isfunction(func):
            try:
                if _empties(ast.parse(textwrap.dedent(inspect.getsource(func)))):
                    return True
            except (OSError, TypeError, SyntaxError):
                continue
    return False


def accumulating_loops(code: str, names: dict | None = None) -> bool:
    """Whether ``code`` has a loop that calls ``backward()`` and updates
    parameters but never empties a gradient, itself or through a function of
    ``names`` that it calls."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, (ast.For, ast.While)) and _calls(n, "backward")
               and _updates(n) and not _empties(n) and not _helper_empties(n, names or {})
               for n in ast.walk(tree))


# -- the leaves ----------------------------------------------------------------------------
def leaves(names: dict) -> dict:
    """``{id: (name, tensor)}``: leaves that require grad in the namespace, named
    as the learner would write them (``w``, ``model.weight``, ``net[0].bias``)."""
    out = {}
    for key, value in list((names or {}).items()):
        if not isinstance(key, str) or key.startswith("_") or isinstance(value, type):
            continue
        if access.engine_name(value):
            if value.grad_fn is None and value.requires_grad:
                out.setdefault(id(value), (key, value))
            continue
        named = getattr(value, "named_parameters", None)
        if callable(named) and hasattr(value, "named_modules"):
            try:
                for path, p in named():
                    label = key + "".join(f"[{s}]" if s.isdigit() else f".{s}"
                                          for s in path.split("."))
                    out.setdefault(id(p), (label, p))
            except Exception:
                continue
    return out


def _grows(before: dict, after: dict) -> list:
    """``(name, tensor, updates)`` for leaves updated at least twice in the cell
    (three times for a leaf made in it: initialising a layer moves its version
    too) whose ``.grad`` holds something."""
    found = []
    for key, (label, t) in after.items():
        version = t._version
        start = before.get(key, (None, None, None))[2]
        updates = version - start if start is not None else version
        if updates >= (2 if start is not None else 3):
            g = access.host_array(access.grad_of(t))
            if g is not None and g.size and bool((g != 0).any()):
                found.append((label, t, updates))
    return found


# -- the sizes of .grad, pass after pass ----------------------------------------------------
def _norm(t) -> float | None:
    a = access.host_array(t) if t is not None else None
    return float((a.astype("float64") ** 2).sum() ** 0.5) if a is not None else None


def _watch(key, t):
    """A hook that notes the size (the norm) of ``t.grad`` after each
    backward pass adds ``g`` to it; it changes nothing."""
    def hook(g):
        before = access.grad_of(t)
        total = _norm(g) if before is None else _norm_sum(before, g)
        if total is not None:
            _state["sizes"].setdefault(key, []).append(total)
    return hook


def _norm_sum(a, b) -> float | None:
    x, y = access.host_array(a), access.host_array(b)
    if x is None or y is None or x.shape != y.shape:
        return None
    return float(((x.astype("float64") + y) ** 2).sum() ** 0.5)


def _sizes_text(key) -> str:
    """``2.24 → 6.26 → 11.9``: the sizes noted for leaf ``key`` (the last 6)."""
    sizes = _state["sizes"].get(key, [])
    if len(sizes) < 2:
        return ""
    shown = ["…"] * (len(sizes) > 6) + [f"{v:.3g}" for v in sizes[-6:]]
    return " → ".join(shown)


def _optimizer(names: dict, code: str) -> str | None:
    """The name of the optimizer whose ``step()`` the cell calls, if any."""
    for key, value in (names or {}).items():
        if isinstance(key, str) and not key.startswith("_") and f"{key}.step(" in code \
                and hasattr(value, "param_groups") and callable(getattr(value, "zero_grad",
                                                                       None)):
            return key
    return None


def growing(found: list, names: dict, code: str = "") -> Explanation:
    """The explanation of gradients that keep adding up (``found``: see :func:`_grows`)."""
    label, t, n = found[0]
    others = ", ".join(f"`{f[0]}.grad`" for f in found[1:4])
    sizes = _sizes_text(id(t))
    opt = _optimizer(names, code)
    zero = f"`{opt}.zero_grad()`" if opt else f"`{label}.grad.zero_()`"
    text = [_("backward() does not replace `.grad`, it adds to it: that is how the "
              "gradients of several paths, or of several batches, are summed.") + " " +
            ngettext("In this loop `{w}` was updated {n} time (its `._version` went up by "
                     "{n}), and each update used `{w}.grad`, the sum of the gradients of "
                     "every pass so far, not the gradient of that pass: the steps grow, and "
                     "training drifts or blows up.",
                     "In this loop `{w}` was updated {n} times (its `._version` went up by "
                     "{n}), and each update used `{w}.grad`, the sum of the gradients of "
                     "every pass so far, not the gradient of that pass: the steps grow, and "
                     "training drifts or blows up.", n).format(w=label, n=n)]
    if sizes:
        text[0] += " " + _("The size (norm) of `{w}.grad` after each backward() of this "
                           "cell: {sizes}.").format(w=label, sizes=sizes)
    if others:
        text[0] += " " + _("The same holds for {others}.").format(others=others)
    text.append(_("Fix: empty the gradients once per step, before backward() or right "
                  "after the update: {zero}. To add up several batches on purpose "
                  "(gradient accumulation), empty them right after each update.").format(
        zero=zero))
    return Explanation(
        _("`{w}.grad` kept adding up: the loop calls backward() and updates `{w}`, but "
          "never empties its `.grad`.").format(w=label), text)


# -- warnings ----------------------------------------------------------------------------------
def _record(message, category, filename, lineno, file=None, line=None):
    _state["seen"].append((str(message), filename, lineno))
    show = _state["showwarning"] or warnings.showwarning
    return show(message, category, filename, lineno, file, line)


def _named_on(filename: str, lineno: int, names: dict) -> list:
    """Expressions ``X`` of ``X.grad`` on that line, with the tensor each names."""
    source = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == "grad" and n.lineno == lineno and \
                not any(isinstance(m, ast.Call) for m in ast.walk(n.value)):
            try:
                value = eval(compile(ast.unparse(n.value), "<autograd_kit>", "eval"),
                             dict(names))
            except Exception:
                continue
            if access.engine_name(value) and value.grad_fn is not None:
                out.append(value)
    return out


def _nonleaf(names: dict, history) -> Explanation | None:
    for message, filename, lineno in _state["seen"]:
        if read_message(message).get("kind") != "nonleaf_grad":
            continue
        for t in _named_on(filename, lineno, names):
            label = next((k for k, v in names.items() if v is t and isinstance(k, str)
                          and not k.startswith("_")), None)
            made = changes.assignment(label, [(c, None) for c in history]) if label else None
            return usage.nonleaf_grad(t, names, made)
    return None


# -- the hooks ---------------------------------------------------------------------------------
def before(code: str, names: dict) -> None:
    """``pre_run_cell``: watch warnings, and the leaves if the code may accumulate."""
    _state["seen"] = []
    if _state["showwarning"] is None:
        _state["showwarning"] = warnings.showwarning
        warnings.showwarning = _record
    _state["loops"], _state["code"] = accumulating_loops(code), code
    _state["versions"] = ({k: (label, t, t._version) for k, (label, t) in
                           leaves(names).items()} if _state["loops"] else None)
    _state["sizes"] = {}
    for key, (_label, t, _v) in list((_state["versions"] or {}).items())[:MAX_WATCHED]:
        try:
            _state["hooks"].append(t.register_hook(_watch(key, t)))
        except Exception:  # a leaf that takes no hook: no sizes for it
            continue


def after(names: dict, history=()) -> list:
    """``post_run_cell``: the explanations of what went silently wrong."""
    stop()
    found = []
    note = _nonleaf(names, history)
    if note is not None:
        found.append(note)
    if _state["loops"] and accumulating_loops(_state["code"], names):  # with the
        grew = _grows(_state["versions"] or {}, leaves(names))  # cell's functions too
        if grew:
            found.append(growing(grew, names, _state["code"]))
    _state["seen"], _state["versions"], _state["loops"], _state["sizes"] = [], None, False, {}
    return found


def stop() -> None:
    """Stop watching: the original ``showwarning`` is back, the hooks are gone."""
    for handle in _state["hooks"]:
        try:
            handle.remove()
        except Exception:
            pass
    _state["hooks"] = []
    if _state["showwarning"] is not None:
        if warnings.showwarning is _record:
            warnings.showwarning = _state["showwarning"]
        _state["showwarning"] = None
