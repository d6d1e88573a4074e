"""The explainers of the graph's own errors, and of two libraries' tensors mixed.

One explainer per kind of error (:mod:`.explain` picks it by the facts' kind):
a leaf changed in place, backward() from a non-scalar or from a tensor without
a graph, a gradient of the wrong shape, a graph that ``%autograd_step`` already
ran backward through; and a tensor of one library handed to the other (``must
be Tensor, not Tensor``: the fix is :func:`autograd_kit.alias_torch`).  Each
takes the error's facts (completed by :func:`.culprits.complete`) and the
notebook's namespace, and returns an :class:`.explanation.Explanation`.
"""
from __future__ import annotations

from ..i18n import _
from . import culprits, saved, steppers
from .display import name_of
from .explanation import Explanation, called, name

_name, _called = name, called  # (``name`` is also a local variable below)


def leaf_inplace(err, names) -> Explanation:
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


def non_scalar(err, names) -> Explanation:
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
    found = culprits.origin(name.split("[", 1)[0],
                           culprits.code_that_ran(err.traceback, err.history))
    if found is None or found[0] != "grad":
        return found and found[0]
    call = found[1]
    fixed = call[:-1].rstrip().rstrip(",") + ", create_graph=True)"
    return (_("`{name}`, returned by `{call}`,").format(name=name, call=call),
            _("ask for that record in the first call: `{fixed}`; then `{name}` has a "
              "grad_fn and `{name}.backward()` works.").format(fixed=fixed, name=name))


def no_grad_fn(err, names) -> Explanation:
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


def grad_shape(err, names) -> Explanation:
    t = err.tensor
    who = _called(t, names, _("the output"))
    return Explanation(
        _("The gradient given to backward() must have the shape of {who}.").format(who=who),
        [f"{err.message} " + _("The gradient passed to `y.backward(g)` says how much each "
                               "number of `y` counts, so `g` needs exactly one entry per "
                               "number of `y`."),
         _("Fix: pass a gradient shaped like the output, e.g. `torch.ones_like(y)`.")],
        root=t, culprit=t, culprit_name=who, names=names)


def graph_freed(err, names) -> Explanation:
    """:func:`.saved.graph_freed`, unless the pass that freed the graph was the one
    ``%autograd_step`` ran to show it: then the explanation says so."""
    roots = culprits.line_tensors(err.traceback, lambda t: True)
    expr = steppers.stepped(roots, [err.node])
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


def mixed(direction: str, t, names) -> Explanation:
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
