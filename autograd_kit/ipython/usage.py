"""Explanations of the errors (and the one warning) met while *using* tensors
with autograd, rather than inside a backward pass:

=================  ==========================================================
``unused``         ``torch.autograd.grad(y, [x, u])`` where ``y`` never used ``u``
``int_grad``       ``torch.tensor([1, 2], requires_grad=True)``: integers
``numpy_grad``     ``x.numpy()`` on a tensor that requires grad
``no_gpu``         ``x.cuda()`` on a machine (or a build) without a GPU
``nonleaf_grad``   reading ``y.grad`` of a tensor that is not a leaf (a warning)
=================  ==========================================================

The facts come from the error's wording (:mod:`autograd_kit.viz.error_facts`),
the tensors from the line that failed (:mod:`.culprits`).  These explanations
draw no picture: the graph is not what went wrong.
"""
from __future__ import annotations

import ast

from ..i18n import _
from ..viz import access
from . import culprits
from .explanation import Explanation, called, name


def _on_line(err, fits) -> object:
    """The first tensor named on the line that failed for which ``fits`` holds."""
    return next(iter(culprits.line_tensors(err.traceback, fits)), None)


def _grad_inputs(tb):
    """``(call text, [source of each input])`` of the ``grad(...)`` call on the
    line that failed, or None."""
    entry = culprits.user_frame(tb)
    stmt, source = culprits.failing_statement(entry) if entry is not None else (None, "")
    for node in ast.walk(stmt) if stmt is not None else ():
        call = culprits._grad_call(node)
        if call is None:
            continue
        inputs = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "inputs"), None)
        if inputs is None:
            return None
        items = inputs.elts if isinstance(inputs, (ast.List, ast.Tuple)) else [inputs]
        text = ast.get_source_segment(source, call)
        return text, [ast.get_source_segment(source, e) for e in items], \
            isinstance(inputs, (ast.List, ast.Tuple))
    return None


def unused(err, names) -> Explanation:
    found = _grad_inputs(err.traceback)
    index = err.index or 0
    who = None
    if found is not None:
        call, items, listed = found
        who = items[index] if listed and index < len(items) else None
    who = f"`{who}`" if who else _("input {i} of the call").format(i=index)
    call = found[0] if found and "\n" not in found[0] and len(found[0]) <= 60 else None
    allowed = (f"`{call[:-1].rstrip().rstrip(',')}, allow_unused=True)`" if call else
               "`torch.autograd.grad(..., allow_unused=True)`")
    return Explanation(
        _("{who} was not used to compute the output, so `torch.autograd.grad` has no "
          "gradient to give it.").format(who=who),
        [_("`torch.autograd.grad(outputs, inputs)` returns one gradient per input, each "
           "found by following the graph back from the output to that input. No path "
           "leads from the output back to {who}: it was computed without it, or from a "
           "copy that is cut off the graph (`.detach()`, a tensor made again from its "
           "numbers). An input that plays no part is often a bug, so `grad` stops "
           "instead of answering None.").format(who=who),
         _("Fix: if {who} really plays no part, say so: {allowed} returns None for it "
           "(add `materialize_grads=True` to get zeros instead). If it should play a "
           "part, check the forward computation: is it used, and is the tensor used the "
           "very one passed here?").format(who=who, allowed=allowed)])


def int_grad(err, names) -> Explanation:
    line = culprits.failing_line(err.traceback)
    fixed = (line.replace("requires_grad=True", "dtype=torch.float32, requires_grad=True")
             if line and line.count("requires_grad=True") == 1 and "dtype" not in line
             else None)
    fix = (_("give the tensor a floating-point dtype: `{fixed}`, or write the numbers as "
             "floats (`1.` instead of `1`).").format(fixed=fixed) if fixed else
           _("give the tensor a floating-point dtype (`dtype=torch.float32`), write the "
             "numbers as floats (`1.` instead of `1`), or convert an existing tensor: "
             "`t = t.float().requires_grad_()`."))
    return Explanation(
        _("Only tensors of floating-point (or complex) numbers can require grad, and this "
          "one holds integers."),
        [_("A gradient says how the result changes when a number moves a tiny bit; an "
           "integer can't move a tiny bit, so autograd does not track integer tensors. "
           "`torch.tensor([1, 2])` makes an integer tensor (dtype `torch.int64`) because "
           "its numbers are written without a decimal point."),
         _("Fix: {fix}").format(fix=fix)])


def numpy_grad(err, names) -> Explanation:
    t = _on_line(err, lambda t: t.requires_grad)
    who = called(t, names, _("This tensor"))
    x = name(t, names) or "x"
    return Explanation(
        _("{who} requires grad, so `.numpy()` refuses to hand out its numbers.").format(
            who=who),
        [_("A numpy array lives outside autograd: nothing computed from it can send a "
           "gradient back to {who}. So that the graph is never cut without a word, "
           "`.numpy()` asks you to cut it yourself, with `.detach()`.").format(who=who),
         _("Fix: `{x}.detach().numpy()` (the same memory, no copy; add `.cpu()` before "
           "`.numpy()` for a tensor on a GPU). For one number, `{x}.item()`; for a list, "
           "`{x}.tolist()`. Plotting a tensor that requires grad needs the same "
           "`.detach()`.").format(x=x)])


def no_gpu(err, names) -> Explanation:
    built_without = "not compiled with CUDA" in err.message
    cause = (_("This PyTorch was built without CUDA (a CPU-only build), so it can't put a "
               "tensor on a GPU.") if built_without else
             _("No GPU can be used here, so the tensor can't be moved to one."))
    return Explanation(
        _("`.cuda()` (or `device='cuda'`) needs a GPU that this notebook can use."),
        [cause + " " + _("`.cuda()`, `.to('cuda')` and `device='cuda'` all need an NVIDIA "
                         "GPU with its driver, and a library built for it (PyTorch with "
                         "CUDA; for autograd_kit, cupy)."),
         _("Fix: write code that runs either way: `device = 'cuda' if "
           "torch.cuda.is_available() else 'cpu'`, then `x = x.to(device)` and "
           "`model.to(device)`. In a hosted notebook (Colab, Kaggle), choose a runtime "
           "with a GPU first.")])


def nonleaf_grad(t, names, made: str | None = None) -> Explanation:
    """Reading ``t.grad`` of a non-leaf ``t`` (PyTorch warns, and gives None);
    ``made``: the statement that assigned it, when the code shows it."""
    who = called(t, names, _("This tensor"))
    y = name(t, names) or "y"
    fn = access.node_name(t.grad_fn) if t is not None and t.grad_fn is not None else "…"
    paragraphs = [
        _("Leaves are the tensors you made yourself with requires_grad=True (weights, "
          "inputs); {who} was computed from tensors that require grad (its grad_fn is "
          "{fn}). backward() sends gradients through such intermediate tensors without "
          "keeping them, to save memory, and fills `.grad` of the leaves "
          "only.").format(who=who, fn=fn),
        _("Fix: to see the gradient of {who}, call `{y}.retain_grad()` before "
          "backward(); then `{y}.grad` is filled.").format(who=who, y=y)]
    if made and "requires_grad" in made:  # `w = torch.randn(3, requires_grad=True) * 0.1`
        paragraphs.append(
            _("`{made}` makes a leaf and then computes {who} from it: the leaf is the "
              "tensor before the last operation, and it has no name. To make {who} a "
              "leaf, compute its value first and ask for gradients last, e.g. "
              "`{y} = (torch.randn(3) * 0.1).requires_grad_()`.").format(
                made=made, who=who, y=y))
    return Explanation(
        _("{who} is not a leaf, so its `.grad` stays None: backward() fills `.grad` only "
          "for leaves.").format(who=who), paragraphs)


EXPLAINERS = {"unused": unused, "int_grad": int_grad, "numpy_grad": numpy_grad,
              "no_gpu": no_gpu}
