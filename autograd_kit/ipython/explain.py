"""Autograd errors that explain themselves (``%autograd_explain on``).

PyTorch's autograd errors are exact but terse: *"one of the variables needed
for gradient computation has been modified by an inplace operation"* -- which
variable?  Why does it matter?  With the switch on, a cell that ends in an
autograd error -- autograd_kit's or real PyTorch's -- shows, below its usual
traceback, a few plain sentences (what happened, why autograd cares, how to
fix it) and a picture of the graph with the culprit outlined in red.

The explainers, one per kind of error: in :mod:`.graph_errors`, those of the
graph's own errors (a leaf changed in place, backward() from a non-scalar or
from a tensor without a graph, a gradient of the wrong shape, a graph that
``%autograd_step`` already ran backward through) and a tensor of one library
handed to the other (``must be Tensor, not Tensor``: the fix is
:func:`autograd_kit.alias_torch`); in :mod:`.saved`, a saved value changed in
place or freed; in :mod:`.usage`,
errors met while using tensors (``allow_unused``, integers that require grad,
``.numpy()``, ``.cuda()`` without a GPU).  A cell that runs without an error but not as
meant -- reading a non-leaf's ``.grad``, gradients that keep adding up in a
loop without ``zero_grad()`` -- is explained by :mod:`.silent`.

Nothing here catches the error: the cell still fails, a notebook run still
stops there, the error keeps its own message, and other extensions' error
handling is untouched.  The hooks:

* a ``pre_run_cell`` event that lets :mod:`.silent` watch the cell (its
  warnings, and its leaves when its code may accumulate gradients);
* a ``post_run_cell`` event that displays the explanation when the cell ended
  in an autograd error, or did one of those silent things.  The facts come
  the same way for both engines: what the error says about itself from
  :func:`autograd_kit.viz.error_facts.error_facts` (autograd_kit's errors
  carry it, PyTorch's are read from their wording), and what it does not say
  -- the learner's tensor, the node -- from the line that failed and the graph
  (:mod:`.culprits`).  (The event, not the traceback, shows it: IPython
  renders a traceback more than once -- to show it and to store it in the
  history.)
* ``autograd_kit.errors.set_explainer(fn)``, set while the extension is loaded:
  IPython asks an autograd_kit error for ``_render_traceback_()`` and gets
  :func:`render_traceback`: the stock traceback, which starts at the cell's
  own lines when ``%%autograd_graph`` ran them (an instance of these errors
  cannot be given its own ``_render_traceback_``, as other errors are).
"""
from __future__ import annotations

import sys
import traceback
from contextlib import nullcontext
from types import TracebackType

from .. import errors
from ..i18n import language, language_code
from ..viz.error_facts import ERRORS, error_facts
from . import culprits, graph_errors, saved, silent, spelling, usage
from .explanation import HEADER, Explanation, called, name, rich  # noqa: F401

_state = {"shell": None, "on": False, "lang": None}


def _history() -> list:
    """The notebook's last 50 cells, newest first."""
    shell = _state["shell"]
    history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", [])
    return [code for code in reversed(history[-50:]) if code]


EXPLAINERS = {"leaf_inplace": graph_errors.leaf_inplace, "saved_modified": saved.saved_modified,
              "graph_freed": graph_errors.graph_freed, "non_scalar": graph_errors.non_scalar,
              "no_grad_fn": graph_errors.no_grad_fn, "grad_shape": graph_errors.grad_shape,
              **usage.EXPLAINERS}


def facts(err, names):
    """The facts of an autograd error of either engine (an
    :class:`autograd_kit.viz.error_facts.ErrorFacts`): what the error says about
    itself, completed from the scene (:func:`.culprits.complete`); None for an
    error that is not an autograd error."""
    found = error_facts(err)
    return culprits.complete(found, names) if found.kind else None


def explain(err, names=None) -> Explanation | None:
    """The explanation of an autograd error (autograd_kit's or PyTorch's), or
    None for an error that is not explained here.  ``names`` (a namespace)
    names the tensors."""
    names = names if names is not None else _namespace()
    mixed = culprits.mixed_engines(err)
    if mixed is not None:
        return graph_errors.mixed(*mixed, names)
    found = facts(err, names)
    if found is None:
        return None
    found.history = _history()
    explainer = EXPLAINERS.get(getattr(found, "kind", ""))
    if explainer is not None:
        try:
            told = explainer(found, names)
        except Exception:  # a detail missing from the error: explain nothing
            return None
        return _as_written(told, names) if found.engine == "autograd_kit" else told
    return None


def _as_written(told: Explanation | None, names) -> Explanation | None:
    """An explanation of the kit's error with its code spelled as the notebook
    calls the kit (``ak.no_grad()`` after ``import autograd_kit as ak``)."""
    kit = sys.modules[__name__.partition(".")[0]]  # the package: loaded before any of its parts
    if told is not None:
        told.title = spelling.as_written(told.title, kit, names)
        told.paragraphs = [spelling.as_written(p, kit, names) for p in told.paragraphs]
    return told


def explain_value(root, names=None, fresh: bool = False) -> Explanation | None:
    """The classic mistakes in the backward code of a micrograd ``Value`` (``=``
    where ``+=`` belongs, a ``_backward`` never set, grads never reset), found by
    running its pass once and putting every grad back
    (:mod:`autograd_kit.viz.engines.micrograd`): the first mistake as the title,
    the others below, and the graph with the faulty node outlined.  None when
    there is none, or when ``root`` is not a Value.  ``names``: a namespace.
    ``fresh``: the pass starts from zero grads (after a cell whose backward()
    already ran, the grads it left are not a mistake)."""
    from ..viz import access, labels
    from ..viz.engines import backward_pass
    from ..viz.engines.micrograd import topo_order
    if not access.is_value(root):
        return None
    names = names if names is not None else _namespace()
    index = {id(v): k for k, v in reversed(list(names.items()))
             if isinstance(k, str) and not k.startswith("_")}
    held = [(v, v.grad) for v in topo_order(root)] if fresh else []
    try:
        for v, _g in held:
            v.grad = 0.0
        source = backward_pass(root)
        sentences = source.notes(names=index)
    finally:
        for v, g in held:
            v.grad = g
    if not sentences:
        return None
    first = source.mistakes[0]
    culprit = first.node if first.node is not None else first.value
    return Explanation(sentences[0], sentences[1:], root=root, culprit=culprit,
                       culprit_name=labels.value_name(culprit, index), names=names)


def _values_backed(code: str) -> list:
    """The micrograd Values (the learner's class or the package's) whose
    ``.backward()`` the cell called by name: ``loss.backward()``."""
    import ast
    from ..viz import access
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names, roots = _namespace(), []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr == "backward" and isinstance(n.func.value, ast.Name):
            value = names.get(n.func.value.id)
            if access.is_value(value) and all(value is not r for r in roots):
                roots.append(value)
    return roots


# -- the hooks ------------------------------------------------------------------------
def _namespace() -> dict:
    shell = _state["shell"]
    return shell.user_ns if shell is not None else {}


def user_traceback(err) -> TracebackType | None:
    """``err``'s traceback as IPython would show it, without the frames marked
    ``__tracebackhide__`` (IPython's own); where a magic ran the code, from the
    learner's cell on.  It ends at the learner's last line: the engine keeps its
    inner frames out of the way (:func:`autograd_kit.errors.short`), but a
    pure-Python ``raise`` always leaves the public call's own frame
    (``x.add_(1)``'s), where PyTorch's C++ shows none; it goes here."""
    tb = getattr(err, "_autograd_kit_cell_tb", None) or err.__traceback__
    entries = []
    while tb is not None:
        if not tb.tb_frame.f_locals.get("__tracebackhide__", False):
            entries.append(tb)
        tb = tb.tb_next
    mine = [i for i, entry in enumerate(entries) if not culprits.in_library(entry)]
    if mine:
        del entries[mine[-1] + 1:]
    kept = None
    for entry in reversed(entries):
        kept = TracebackType(kept, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return kept


def render_traceback(err) -> list[str]:
    """What IPython shows for an autograd_kit error: the stock traceback (from
    the cell's lines on when a magic ran it).  Never raises (IPython would
    print a second error instead)."""
    shell = _state["shell"]
    tb = user_traceback(err)
    try:
        return list(shell.InteractiveTB.structured_traceback(type(err), err, tb,
                                                             tb_offset=0))
    except Exception:
        return traceback.format_exception(type(err), err, tb)


def before_cell(info) -> None:
    """``pre_run_cell`` event: watch what a cell may do wrong without an error
    (:mod:`.silent`)."""
    try:
        silent.before(getattr(info, "raw_cell", "") or "", _namespace())
    except Exception:  # never make a cell fail
        pass


def after_cell(result) -> None:
    """``post_run_cell`` event: explain the autograd error the cell ended with,
    or what it did wrong without an error (:mod:`.silent`)."""
    err = getattr(result, "error_in_exec", None)
    if not _state["on"]:
        return
    try:
        with language(_state["lang"]) if _state["lang"] else nullcontext():
            cell = getattr(getattr(result, "info", None), "raw_cell", "") or ""
            found = silent.after(_namespace(), [cell] + _history())
            if err is None:  # a learner's micrograd Value whose backward() just ran
                found += [exp for exp in (explain_value(v, fresh=True)
                                          for v in _values_backed(cell)) if exp is not None]
            if isinstance(err, ERRORS) or culprits.mixed_engines(err):
                found = [exp for exp in [explain(err)] if exp is not None]
            from IPython.display import display
            for exp in found:
                display(exp)
    except Exception:  # never turn an explained error into a second one
        pass


def set_explain_language(lang: str | None) -> None:
    """Explain in ``lang`` from now on (``%autograd_explain on --lang ru``); None:
    in the notebook's language.  An unknown name is a one-line ValueError."""
    _state["lang"] = language_code(lang) if lang else None


def explain_language() -> str | None:
    return _state["lang"]


def install(shell) -> None:
    """While the extension is loaded, autograd_kit's errors render through
    :func:`render_traceback` (so a ``%%autograd_graph`` cell's error shows the
    cell's own lines only)."""
    _state["shell"] = shell
    if hasattr(errors, "set_explainer"):
        errors.set_explainer(render_traceback)


def enable(shell) -> None:
    """Turn explanations on for ``shell``."""
    install(shell)
    if not _state["on"]:
        shell.events.register("pre_run_cell", before_cell)
        shell.events.register("post_run_cell", after_cell)
    _state["on"] = True


def disable(shell) -> None:
    """Turn explanations off: the tracebacks alone again."""
    if _state["on"]:
        for event, callback in (("pre_run_cell", before_cell),
                                ("post_run_cell", after_cell)):
            try:
                shell.events.unregister(event, callback)
            except ValueError:
                pass
        silent.stop()
    _state["on"] = False


def uninstall(shell) -> None:
    """Undo :func:`install` and :func:`enable`: IPython's usual tracebacks."""
    disable(shell)
    if hasattr(errors, "set_explainer"):
        errors.set_explainer(None)
    _state["shell"] = None
    _state["lang"] = None


def is_on() -> bool:
    return _state["on"]
