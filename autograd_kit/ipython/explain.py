"""Autograd errors that explain themselves (``%autograd_explain on``).

PyTorch's autograd errors are exact but terse: *"one of the variables needed
for gradient computation has been modified by an inplace operation"* -- which
variable?  Why does it matter?  With the switch on, a cell that ends in an
autograd error -- autograd_kit's or real PyTorch's -- shows, below its usual
traceback, a few plain sentences (what happened, why autograd cares, how to
fix it) and a picture of the graph with the culprit outlined in red.

The explainers, one per kind of error: here, those of the graph's own errors
(a leaf changed in place, backward() from a non-scalar or from a tensor
without a graph, a gradient of the wrong shape, a graph that ``%autograd_step``
already ran backward through) and a tensor of one library handed to the other
(``must be Tensor, not Tensor``: the fix is :func:`autograd_kit.alias_torch`);
in :mod:`.saved`, a saved value changed in place or freed; in :mod:`.usage`,
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

import traceback
from contextlib import nullcontext
from types import TracebackType

from .. import errors
from ..i18n import _, language, language_code
from ..viz.error_facts import ERRORS, error_facts
from . import culprits, saved, silent, spelling, usage
from .display import name_of
from .explanation import HEADER, Explanation, called, name, rich  # noqa: F401

_state = {"shell": None, "on": False, "lang": None}
_name, _called = name, called


def _leaf_inplace(err, names) -> Explanation:
    t = err.tensor
    base = t._base if err.view and t is not None and t._base is not None else t
    leaf = name_of(base, names) if base is not None else None
    x = leaf or "x"
    update = culprits.failing_line(err.traceback) if leaf else None  # `bias -= 0.1 * bias.grad`
    update = update if update and "`" not in update else f"{x} += 1"
    who = _called(t, names, _("This tensor"))
    if not err.view:
        title = _("{who} is a leaf tensor that requires grad, so it can't be changed in "
                  "place.")
    elif leaf:
        title = _("{who} is a view of `{leaf}`, a leaf tensor that requires grad, so it "
                  "can't be changed in place.")
    else:
        title = _("{who} is a view of a leaf tensor that requires grad, so it can't be "
                  "changed in place.")
    return Explanation(
        title.format(who=who, leaf=leaf),
        [_("A leaf is a tensor you made yourself with requires_grad=True. Its gradient "
           "arrives through its AccumulateGrad node, which adds it into `{x}.grad`. To "
           "record an in-place change (`{x} += 1`, `{x}.add_(1)`, `{x}[0] = 0`), autograd "
           "would have to give `{x}` a grad_fn for that operation: `{x}` would stop being "
           "a leaf, its AccumulateGrad would be lost, and no gradient would reach "
           "`{x}.grad` any more. So the change is refused, even for a fresh tensor that "
           "no computation has used yet. A view (`{x}[0]`, `{x}.view(...)`) shares the "
           "leaf's memory: changing it in place changes the leaf, so it is refused too.")
         .format(x=x),
         _("Fix: to update a parameter, as an optimizer does, switch recording off: "
           "`with torch.no_grad(): {update}` (`{x}` stays a leaf and keeps receiving "
           "gradients). To work on a changed version, start from a copy: "
           "`y = {x}.clone()`; the copy is not a leaf, may be changed in place, and "
           "gradients still flow back through it to `{x}`.").format(x=x, update=update)],
        root=t, culprit=t, culprit_name=_called(t, names, _("the tensor")), names=names)


def _non_scalar(err, names) -> Explanation:
    t = err.tensor
    who = _called(t, names, _("the tensor"))
    y = name_of(t, names) or "y"
    title = (_("backward() without an argument needs a single number, but {who} has shape "
               "{shape}: {n} numbers.").format(who=who, shape=tuple(t.shape), n=t.numel())
             if t is not None else
             _("backward() without an argument needs a single number, but {who} is "
               "not.").format(who=who))
    return Explanation(
        title,
        [_("A gradient is defined for one number, such as a loss: how does it change when "
           "each input changes? For {who}, backward() would need to know how much each of "
           "its numbers counts.").format(who=who),
         _("Fix: reduce it first, `{y}.sum().backward()` or `{y}.mean().backward()`, or "
           "pass the weights yourself: `{y}.backward(torch.ones_like({y}))`.").format(y=y)],
        root=t, culprit=t, culprit_name=who, names=names)


def _code_that_ran(tb) -> list:
    """The code that ran, most recent first (:func:`.culprits.code_that_ran`)."""
    return culprits.code_that_ran(tb, _history())


def _history() -> list:
    """The notebook's last 50 cells, newest first."""
    shell = _state["shell"]
    history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", [])
    return [code for code in reversed(history[-50:]) if code]


def _gradient_origin(t, names, err):
    """Where ``t`` came from: ``(what it is, the fix)`` for a gradient computed
    without ``create_graph=True``, found in the namespace (``t is x.grad``) or in
    the code that ran (``g, = torch.autograd.grad(y, x)``, ``grads[0]`` of
    ``grads = torch.autograd.grad(y, x)``); ``"other"`` when that code made
    ``t`` some other way (``t = torch.ones(2).sum()``, or such an expression on
    the line that failed); None when nothing shows it."""
    owner = culprits.gradient_owner(t, names) if t is not None else None
    if owner:
        return (f"`{owner}.grad`",
                _("call the backward() that filled it with `create_graph=True` (e.g. "
                  "`loss.backward(create_graph=True)`); then `{owner}.grad` has a grad_fn. "
                  "(`torch.autograd.grad(loss, {owner}, create_graph=True)` does the "
                  "same without touching `.grad`.)").format(owner=owner))
    name = _name(t, names)  # "g", or "grads[0]" for an item of the tuple grad() returned
    if not name:
        return "other" if culprits.made_on_the_line(err.traceback) else None
    found = culprits.origin(name.split("[", 1)[0], _code_that_ran(err.traceback))
    if found is None or found[0] != "grad":
        return found and found[0]
    call = found[1]
    fixed = call[:-1].rstrip().rstrip(",") + ", create_graph=True)"
    return (_("`{name}`, returned by `{call}`,").format(name=name, call=call),
            _("ask for that record in the first call: `{fixed}`; then `{name}` has a "
              "grad_fn and `{name}.backward()` works.").format(fixed=fixed, name=name))


def _no_grad_fn(err, names) -> Explanation:
    t = err.tensor
    if t is None or not (_name(t, names) or culprits.gradient_owner(t, names)):
        # `x.grad.sum().backward()`: the tensor named on the line says more
        t = next(iter(culprits.line_tensors(err.traceback, culprits.no_graph)), t)
    who = _called(t, names, _("This tensor"))
    origin = _gradient_origin(t, names, err)
    if isinstance(origin, tuple):
        what, fix = origin
        title = _("{what} is a gradient computed without a graph of its own, so backward() "
                  "has nothing to go through.").format(what=what)
        return Explanation(
            title[0].upper() + title[1:],
            [_("Gradients come back as plain numbers unless you ask autograd to record how "
               "they were computed: by default a gradient has no grad_fn and does not "
               "require grad. Differentiating it again (a second derivative, a gradient "
               "penalty) needs that record, and `create_graph=True` is how to ask for it."),
             _("Fix: {fix} Marking the gradient with `requires_grad=True` would not help: "
               "it would start a new graph with no connection to the inputs.").format(
                 fix=fix)],
            root=t, culprit=t, culprit_name=_called(t, names, _("the gradient")),
            names=names)
    if origin == "other":  # the code shows how it was made: not by grad()
        why = [_("A tensor gets a grad_fn only when it is computed, with grad mode on, from "
                 "tensors that require grad. Usual causes: the computation ran under "
                 "`torch.no_grad()` or `torch.inference_mode()`; `.detach()`, `.data` or "
                 "`.item()` cut the graph; or the inputs were made without "
                 "`requires_grad=True`."),
               _("Fix: compute it again with grad mode on (outside `torch.no_grad()` and "
                 "`torch.inference_mode()`, without `.detach()`), from tensors that "
                 "require grad: parameters, or inputs made with `requires_grad=True`.")]
    else:  # nothing shows where it came from: it may be a gradient too
        why = [_("A tensor gets a grad_fn only when it is computed, with grad mode on, from "
                 "tensors that require grad. Usual causes: the computation ran under "
                 "`torch.no_grad()` or `torch.inference_mode()`; `.detach()`, `.data` or "
                 "`.item()` cut the graph; or the inputs were made without "
                 "`requires_grad=True`. A gradient returned by "
                 "`torch.autograd.grad` is such a tensor too, unless that call had "
                 "`create_graph=True`."),
               _("Fix: compute it again with grad mode on (outside `torch.no_grad()` and "
                 "`torch.inference_mode()`, without `.detach()`), from tensors that "
                 "require grad: parameters, or inputs made with `requires_grad=True`; for "
                 "a gradient of a gradient, pass `create_graph=True` to the first `grad` "
                 "call.")]
    if inference(t):
        why.insert(0, _("{who} was made under `torch.inference_mode()`: an inference "
                        "tensor never records a graph, and can't be used in one "
                        "later.").format(who=who))
    return Explanation(
        _("{who} has no grad_fn and does not require grad: there is no graph behind it for "
          "backward() to go through.").format(who=who),
        why, root=t, culprit=t, culprit_name=_called(t, names, _("the tensor")), names=names)


def inference(t) -> bool:
    """Whether ``t`` is a PyTorch inference tensor (made under ``inference_mode``)."""
    try:
        return bool(t.is_inference())
    except Exception:
        return False


def _grad_shape(err, names) -> Explanation:
    t = err.tensor
    who = _called(t, names, _("the output"))
    return Explanation(
        _("The gradient given to backward() must have the shape of {who}.").format(who=who),
        [f"{err.message} " + _("The gradient passed to `y.backward(g)` says how much each "
                               "number of `y` counts, so `g` needs exactly one entry per "
                               "number of `y`."),
         _("Fix: pass a gradient shaped like the output, e.g. `torch.ones_like(y)`.")],
        root=t, culprit=t, culprit_name=who, names=names)


def _graph_freed(err, names) -> Explanation:
    """:func:`.saved.graph_freed`, unless the pass that freed the graph was the one
    ``%autograd_step`` ran to show it: then the explanation says so."""
    roots = culprits.line_tensors(err.traceback, lambda t: True)
    from .magics import stepped
    expr = stepped(roots, [err.node])
    if expr is None:
        return saved.graph_freed(err, names)
    node = saved.node_name(err.node)
    return Explanation(
        _("backward() went through this graph a second time: `%autograd_step {expr}` had "
          "already run backward through it, and freed its saved values.").format(expr=expr),
        [_("The stepper (the `%autograd_step` magic) runs the real backward pass to show "
           "it: PyTorch's as soon as it opens, autograd_kit's when you step it to the end. "
           "Without `--retain-graph` that pass, like any first backward(), frees the "
           "values the graph's nodes kept for it (marked 'freed' in the picture); {node} "
           "needed one of them again.").format(node=node),
         _("Fix: compute `{expr}` again before calling backward() (the forward pass builds "
           "a new graph), or open the stepper with `%autograd_step {expr} --retain-graph` "
           "to keep the graph for one more pass.").format(expr=expr)],
        root=err.node, culprit=err.node, culprit_name=node, show_saved=True, names=names)


def _mixed(direction: str, t, names) -> Explanation:
    """A tensor of one engine given to the other (:func:`.culprits.mixed_engines`)."""
    alias = _("Fix: call `autograd_kit.alias_torch()` (or `%autograd_alias torch`) before "
              "the imports and run them again: every `import torch` then gives the kit.")
    if direction == "to_torch":
        title = _("{who} is a tensor of autograd_kit, given to the real PyTorch, which takes "
                  "only its own tensors (both classes are called Tensor).")
        why = _("`import autograd_kit as torch` names the kit `torch` in your code only: "
                "`from torch import nn` or `import torch.nn.functional as F` still import "
                "PyTorch itself.")
    elif direction == "to_kit":
        title = _("{who} is a tensor of the real PyTorch, given to autograd_kit, which takes "
                  "only its own tensors (both classes are called Tensor).")
        why = _("It was made by PyTorch itself: `import torch` imports PyTorch, even in a "
                "notebook that also ran `import autograd_kit as torch`.")
    else:
        title = _("A tensor of autograd_kit and a tensor of the real PyTorch met in one "
                  "operation: the two libraries' tensors can't be mixed (both classes are "
                  "called Tensor).")
        why = _("Somewhere `torch` means PyTorch itself (`import torch`, `from torch import "
                "nn`) and somewhere autograd_kit (`import autograd_kit as torch`).")
    who = _called(t, names, _("A tensor"))
    return Explanation(title.format(who=who), [f"{why} {alias}"])


EXPLAINERS = {"leaf_inplace": _leaf_inplace, "saved_modified": saved.saved_modified,
              "graph_freed": _graph_freed, "non_scalar": _non_scalar,
              "no_grad_fn": _no_grad_fn, "grad_shape": _grad_shape, **usage.EXPLAINERS}


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
        return _mixed(*mixed, names)
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
    import autograd_kit
    if told is not None:
        told.title = spelling.as_written(told.title, autograd_kit, names)
        told.paragraphs = [spelling.as_written(p, autograd_kit, names) for p in told.paragraphs]
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
