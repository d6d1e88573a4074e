"""Explanations of the errors about saved values: changed in place, or freed.

A node keeps (*saves*) the tensors its backward formula needs.  Two things
can go wrong with them, and each has its own explainer here:

* **changed in place** after it was saved (:func:`saved_modified`): the
  explanation says what made the value when it was saved (the graph's edge
  still leads there) and what changed it since -- the learner's in-place
  statement, a layer built with ``inplace=True``, or an in-place change of a
  tensor that shares its memory and version counter (``d = e.detach()``),
  found by :mod:`.changes`;
* **already freed** by an earlier pass (:func:`graph_freed`): the fix is
  ``retain_graph=True`` in the *first* call, whichever call it was --
  ``backward(retain_graph=True)`` or ``torch.autograd.grad(..., retain_graph=True)``.
"""
from __future__ import annotations

from ..i18n import _
from ..viz import access
from . import changes, culprits
from .display import name_of
from .explanation import Explanation


def node_name(node) -> str:
    return access.node_name(node) if node is not None else _("a node")


def _made_by(then: str | None) -> str:
    """`` (then the output of Mul)`` / `` (a leaf)`` / ``""``."""
    if then == "leaf":
        return _(" (a leaf)")
    if then:
        return _(" (then the output of {op})").format(op=then)
    return ""


def _renamed_note(err, then, now) -> str:
    """Why the error message names another op than the one that made the value."""
    if not (err.producer and now and err.producer == now and then and then != now):
        return ""
    return " " + _("The error message calls it an output of {now}: it names the "
                   "tensor's grad_fn as it is now, the node of the in-place change, not "
                   "the operation that made it.").format(now=now)


def _change(err, names, a, node, then, now):
    """``(sentence, fix)``: how the saved value was changed, and what to do; None
    when the scene shows nothing particular."""
    t, sources = err.tensor, culprits.code_that_ran(err.traceback, err.history)
    alias = changes.aliases(t, names) if t is not None else []
    found = changes.inplace_statement(([a] if a else []) + alias, sources)
    if alias and a and (found is None or found[0] != a):
        d = found[0] if found else alias[0]
        made = changes.assignment(d, sources) or f"{d} = {a}.detach()"
        how = (_("`{statement}` changed it").format(statement=found[1]) if found else
               _("An in-place change of `{d}` changed it").format(d=d))
        return (_("{how}: `{d}` shares the memory of `{a}` and its version counter "
                  "(`{made}`). `detach()` cuts a tensor off the graph but copies nothing, "
                  "so changing `{d}` in place changes `{a}` too: `{a}` is now at version "
                  "{found}.").format(how=how, d=d, a=a, made=made, found=err.found),
                _("if you need a copy to change, make a real one: `{d} = {a}.detach()."
                  "clone()`; or change `{d}` only after backward().").format(d=d, a=a))
    if found is not None:
        return (_("Then `{statement}` changed it in place: it is now at version "
                  "{found}.").format(statement=found[1], found=err.found)
                + _renamed_note(err, then, now), None)
    layers = [(p, changes.layer_text(m)) for p, m in changes.inplace_layers(names)]
    calls = [c for c in changes.inplace_calls(sources) if not c.startswith("nn.")]
    flagged = [c for c in calls if "inplace" in c]  # `h.relu_()` only where it fits
    fitting = [(p, text) for p, text in layers if changes.matches(text, now)] or \
        [(None, c) for c in calls if changes.matches(c, now)] or \
        ([(p, c) for p, c in layers] + [(None, c) for c in flagged])
    if not fitting:
        return None
    path, text = fitting[0]
    where = _(" (`{path}`)").format(path=path) if path else ""
    fields = dict(op=text, where=where, node=node_name(node), found=err.found,
                  plain=changes.without_inplace(text))
    if "inplace" in text:
        return (_("Then `{op}`{where} changed it: an operation with `inplace=True` "
                  "writes its result over its input instead of making a new tensor, and "
                  "{node} needed that input as it was. It is now at version {found}.")
                .format(**fields),
                _("remove `inplace=True` (`{plain}`): an in-place activation saves "
                  "memory only where no node needs the tensor it overwrites, and here "
                  "{node} does.").format(**fields))
    return (_("Then `{op}` changed it: an in-place operation writes its result over its "
              "input instead of making a new tensor, and {node} needed that input as it "
              "was. It is now at version {found}.").format(**fields),
            _("use the operation that makes a new tensor (`{plain}`): an in-place "
              "operation saves memory only where no node needs the tensor it overwrites, "
              "and here {node} does.").format(**fields))


def saved_modified(err, names) -> Explanation:
    node, name = err.node, node_name(err.node)
    t = err.tensor
    a = name_of(t, names) if t is not None else None
    what = (f"`{a}`" if a else
            _("the value it saved as `{saved}`").format(saved=err.saved_name)
            if err.saved_name else _("a value it saved"))
    then = changes.maker_at_save(node, err.saved_name) if node is not None else None
    now = changes.family(t.grad_fn) if t is not None and t.grad_fn is not None else None
    changes_ = (f"`{a} += 1`, `{a}.mul_(2)`, `{a}[0] = 0`" if a else
                "`+= 1`, `.mul_(2)`, `[0] = 0`")
    leaf = t is not None and t.grad_fn is None and t.requires_grad
    fixes = (_("`{a}` is a leaf that requires grad, so it must keep its values until "
               "backward() has used them: make the change after backward(), as a training "
               "step does (backward first, then update `{a}` under `torch.no_grad()`), or "
               "let the forward pass use a copy, `{a}.clone()`.") if a and leaf else
             _("write the change out of place (`{a} = {a} * 2` instead of `{a} *= 2`), "
               "change a copy (`{a}.clone()`), or make the change after backward().") if a
             else _("write the change out of place (`y = y * 2` rather than `y *= 2`), "
                    "change a copy made with `.clone()`, or make the change after "
                    "backward().")).format(a=a)
    try:
        special = _change(err, names, a, node, then, now)
    except Exception:  # the scene could not be read: say the general things
        special = None
    saved = _("When the forward pass ran, {node} saved {what}{made_by} at version "
              "{expected}.").format(node=name, what=what, made_by=_made_by(then),
                                    expected=err.expected)
    why = _("Every in-place change adds 1 to a tensor's `._version`; backward compares the "
            "two numbers so that it never computes a gradient from values that are gone.")
    if special is None:
        change = _("An in-place operation ({changes}...) has changed it since: it is now "
                   "at version {found}.").format(changes=changes_, found=err.found) + \
            _renamed_note(err, then, now)
    else:
        change, fix = special
        fixes = fix or fixes
    return Explanation(
        _("{node} needs {what} to compute its gradient, but it was changed in place after "
          "it was saved.").format(node=name, what=what),
        [f"{saved} {change} {why}",
         _("Fix: {fix}").format(fix=fixes),
         _("To find the change in a longer program, run it with "
           "`torch.autograd.set_detect_anomaly(True)`: when backward then fails, a warning "
           "also shows the forward line that created {node}.").format(node=name)],
        root=node, culprit=node, culprit_name=name, show_saved=True, names=names)


def graph_freed(err, names) -> Explanation:
    node, name = err.node, node_name(err.node)
    call = culprits.grad_call_on_line(err.traceback)
    if call is None:
        title = _("backward() went through this graph a second time, but its saved values "
                  "were already freed.")
        fix = _("Fix: usually, build the graph again by running the forward computation "
                "again (compute the loss inside the loop). If you really need two backward "
                "passes through one graph, call the first with `backward(retain_graph=True)`.")
    else:
        retained = call[:-1].rstrip().rstrip(",") + ", retain_graph=True)"
        title = _("`torch.autograd.grad` went through this graph a second time, but its "
                  "saved values were already freed.")
        fix = _("Fix: usually, build the graph again by running the forward computation "
                "again. If you really need two passes through one graph, ask the first "
                "`torch.autograd.grad` call to keep it: `{retained}` (and the same for "
                "every call but the last).").format(retained=retained)
    return Explanation(
        title,
        [_("To save memory, the first backward() frees the values that the graph's nodes "
           "kept for it (marked 'freed' in the picture); `torch.autograd.grad` frees them "
           "too. {node} needed one of them again.").format(node=name),
         fix],
        root=node, culprit=node, culprit_name=name, show_saved=True, names=names)
