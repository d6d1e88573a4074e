"""The text beside the picture: what one backward step did, in words and numbers.

For the node being processed the panel shows

* its name and, in plain words, what its family of nodes does with ``g``,
  the gradient flowing in;
* the local derivative formulas, straight from the op's formula table
  (``node.formula_text``, e.g. ``{"self": "g * other", "other": "g * self"}``);
* ``g`` itself, and the sum when several gradients arrived; when a hook
  returned another gradient in its place, the sum and then the value the hook
  gave, which is the ``g`` the node used (``Step.before_hooks``);
* per edge: ``upstream × local = contribution`` with the actual numbers;
* leaves whose ``.grad`` changed (``old → new``) and saved tensors freed.

The "local" factor is the node's own formula applied to a gradient of ones
(every formula is linear in ``g``); it is only written as a product when that
product really equals the contribution the engine sent.
"""
from __future__ import annotations

import re

import numpy as np

from autograd_kit.i18n import N_, _, ngettext
from autograd_kit.viz import access, labels

from ._common import ENGINE, accumulate_label, esc, grad_label, spaced, values, who_text

_SUFFIX = re.compile(r"Backward\d*$")

WORDS = {
    "Add": N_("the gradient passes unchanged to both inputs (times alpha for the second)"),
    "Sub": N_("the first input receives g, the second receives -g (times alpha)"),
    "Rsub": N_("the tensor input receives -g"),
    "Mul": N_("each input receives g times the other input"),
    "Div": N_("the numerator receives g / denominator; the denominator receives "
              "-g * numerator / denominator²"),
    "Neg": N_("the input receives -g"),
    "Pow": N_("the base receives g * exponent * base^(exponent-1)"),
    "Exp": N_("the input receives g times the output (e^x is its own derivative)"),
    "Log": N_("the input receives g divided by the input"),
    "Sin": N_("the input receives g times cos(input)"),
    "Cos": N_("the input receives -g times sin(input)"),
    "Tanh": N_("the input receives g * (1 - output²)"),
    "Sigmoid": N_("the input receives g * output * (1 - output)"),
    "Relu": N_("g passes where the output was positive, 0 elsewhere"),
    "Sqrt": N_("the input receives g / (2 * output)"),
    "Abs": N_("the input receives g times the sign of the input"),
    "Reciprocal": N_("the input receives -g * output²"),
    "Sum": N_("every element of the input receives g (copied back to the input's shape)"),
    "Mean": N_("every element of the input receives g divided by the number of elements"),
    "Dot": N_("each vector receives g times the other vector"),
    "Mm": N_("the left matrix receives g @ rightᵀ, the right matrix leftᵀ @ g"),
    "Bmm": N_("the left matrices receive g @ rightᵀ, the right ones leftᵀ @ g"),
    "Mv": N_("the matrix receives the outer product g vecᵀ, the vector matrixᵀ @ g"),
    "Addmm": N_("the bias receives g, summed over the batch (the rows of g) when one bias "
                "serves every row; the matrices g @ rightᵀ and leftᵀ @ g"),
    "View": N_("g is reshaped back to the input's shape"),
    "Transpose": N_("g is transposed back"),
    "T": N_("g is transposed back"),
    "Permute": N_("g is permuted back"),
    "Expand": N_("g is summed back down to the input's shape"),
    "Clone": N_("g passes through unchanged"),
    "Select": N_("g is placed into zeros at the selected position"),
    "Slice": N_("g is placed into zeros at the sliced positions"),
    "Index": N_("g is placed into zeros at the indexed positions"),
    "Cat": N_("g is cut back into one piece per input"),
    "Stack": N_("g is split back into one piece per input"),
    "Max": N_("g goes to the position(s) of the maximum"),
    "Min": N_("g goes to the position(s) of the minimum"),
    "Softmax": N_("the input receives output * (g - sum(g * output))"),
    "LogSoftmax": N_("the input receives g - softmax * sum(g)"),
    "MseLoss": N_("the input receives g * 2 * (input - target) / n"),
    "AccumulateGrad": N_("adds g into the leaf's .grad: the sum over every path, and over "
                         "every backward call until .grad is zeroed"),
    "AsStrided": N_("g is placed back where the view sits inside its base"),
    "CopySlices": N_("a tensor changed in place through a view: g passes unchanged outside "
                     "the view and through the in-place op's formula inside it"),
}


FORMULAS = N_("Formulas (from the op's table):")
#: a node with many inputs (``cat`` of 10,000 tensors) lists its first and last edges
FIRST_ROWS, LAST_ROWS = 8, 4


def family(node) -> str:
    """``MulBackward0`` -> ``Mul``; ``torch::autograd::AccumulateGrad`` -> ``AccumulateGrad``."""
    name = access.node_name(node)
    return _SUFFIX.sub("", name) or name


def words_for(node) -> str:
    """One sentence on what the node does with the incoming gradient ``g``."""
    if family(node) in WORDS:
        return _(WORDS[family(node)])
    if access.formula_text(node):
        return _("applies the formula below to g")
    return _("runs its own backward code (no formula table for this node)")


def local_symbol(formula: str) -> str:
    """The local derivative read off a formula ``g * X``: ``X`` (``g`` alone: 1)."""
    f = formula.replace(" ", "")
    simple = {"g": "1", "-g": "-1"}
    if f in simple:
        return simple[f]
    for head, sign in (("g*", ""), ("-g*", "-")):
        if f.startswith(head):
            return sign + formula.split("*", 1)[1].strip()
    if f.startswith("g/"):
        return "1 / " + formula.split("/", 1)[1].strip()
    return ""


def _product_holds(g, local, out) -> bool:
    """Does ``g * local`` give exactly the contribution the engine sent?"""
    if g is None or local is None or out is None:
        return False
    a, b, c = (access.host_array(t) for t in (g, local, out))
    if a is None or b is None or c is None or b.shape != c.shape:
        return False
    if a.size != 1 and a.shape != c.shape:
        return False
    return bool(np.allclose(a * b, c, rtol=1e-6, atol=1e-12, equal_nan=True))


def _target(nexts: tuple, i: int, index: dict) -> str:
    """Where edge ``i`` leads; ``nexts`` is the node's ``next_functions``, read once
    per step (PyTorch and the kit build that tuple anew on every read: per edge, a
    node with 10,000 inputs would take seconds)."""
    nxt = nexts[i][0] if i < len(nexts) else None
    if nxt is None:
        return _("nowhere (this input does not require grad)")
    if access.is_value(nxt):
        return labels.value_name(nxt, index)
    var = access.leaf_variable(nxt)
    if var is not None:
        return accumulate_label(var, index)
    return access.node_name(nxt)


def _input_name(names: tuple, i: int) -> str:
    return names[i] if i < len(names) else _("input {i}").format(i=i)


def summed_dims(g_shape: tuple, shape: tuple) -> tuple:
    """The dimensions of ``g`` that were summed away to give a gradient of
    ``shape`` (broadcasting undone): the leading ones ``shape`` lacks, and those
    where it has 1.  ``()`` when nothing was summed."""
    extra = len(g_shape) - len(shape)
    if extra < 0:
        return ()
    return tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and g_shape[extra + i] != 1)


def summed_words(node, name: str, g, out) -> str:
    """"summed over the batch (dimension 0...) to the bias's shape (2)" when the
    gradient sent on is ``g``'s formula summed down to a smaller input (a bias
    broadcast over the batch); ``""`` otherwise."""
    a, c = access.host_array(g), access.host_array(out)
    if a is None or c is None or a.size == 1 or a.shape == c.shape:
        return ""
    dims = summed_dims(a.shape, c.shape)
    if not dims:
        return ""
    shape = labels.shape_text(tuple(c.shape))
    if family(node) == "Addmm" and name == "self" and dims == (0,):
        return _("summed over the batch (dimension 0, one row per example) to the bias's "
                 "shape {shape}").format(shape=shape)
    return ngettext("summed over dimension {dims} to the input's shape {shape}",
                    "summed over dimensions {dims} to the input's shape {shape}",
                    len(dims)).format(dims=", ".join(map(str, dims)), shape=shape)


def edges_html(step, local, index: dict) -> list[str]:
    """One line per edge: where the gradient goes and how it was computed."""
    node, g = step.node, step.grad_in
    texts = access.formula_text(node)
    nexts = tuple(access.next_edges(node) if access.is_value(node)
                  else getattr(node, "next_functions", ()))
    names = access.input_names(node)
    rows = []
    count = len(step.grads_out)
    for i, out in enumerate(step.grads_out):
        if FIRST_ROWS <= i < count - LAST_ROWS:  # a node with thousands of inputs
            if i == FIRST_ROWS:
                more = count - FIRST_ROWS - LAST_ROWS
                rows.append("<li>" + esc(ngettext("… {n} more edge …", "… {n} more edges …",
                                                  more).format(n=f"{more:,}")) + "</li>")
            continue
        name = _input_name(names, i)
        where = esc(_target(nexts, i, index))
        if out is None:
            rows.append(f"<li><b>{esc(name)}</b> → {where}: {_('no gradient sent')}"
                        "</li>")
            continue
        lf = local[i] if local is not None and i < len(local) else None
        if _product_holds(g, lf, out):
            calc = (f"{_('upstream × local = contribution:')} <code>{esc(values(g))} × "
                    f"{esc(values(lf))} = {esc(values(out))}</code>")
        else:
            formula = texts.get(name, "")
            summed = summed_words(node, name, g, out)
            if formula and summed:
                calc = (f"<code>{esc(formula)}</code>, {esc(summed)}: "
                        f"<code>{esc(values(out))}</code>")
            else:
                calc = (f"<code>{esc(formula)} = {esc(values(out))}</code>" if formula else
                        f"{_('contribution')} <code>{esc(values(out))}</code>")
        rows.append(f"<li><b>{esc(name)}</b> → {where}: {calc}</li>")
    return rows


def formulas_html(node) -> str:
    texts = access.formula_text(node)
    if not texts:
        return ""
    rows = []
    for name, formula in texts.items():
        sym = local_symbol(formula)
        local = (" &nbsp;(" + _("local derivative:") + f" <code>{esc(sym)}</code>)"
                 if sym else "")
        head = _("grad of {input}").format(input=f"<b>{esc(name)}</b>")
        rows.append(f"<li>{head} = <code>{esc(formula)}</code>{local}</li>")
    return (f"<div>{_(FORMULAS)}<ul style='margin:2px 0'>"
            + "".join(rows) + "</ul></div>")


def incoming_html(step) -> str:
    if isinstance(step.grad_in, tuple):  # a node with several outputs (split, unbind)
        each = ", ".join(values(g) for g in step.grad_in)
        return (f"<div>{_('Gradients flowing in, one per output of the node:')} "
                f"<code>{esc(each)}</code></div>")
    parts = step.contributions or [step.grad_in]
    before = getattr(step, "before_hooks", None)
    hooked = before is not None and not _same_values(before, step.grad_in)
    arrived = before if hooked else step.grad_in  # the sum, before any hook
    if len(parts) > 1:
        terms = " + ".join(values(c) for c in parts)
        summed = ngettext("Gradient flowing in: {n} contribution summed:",
                          "Gradient flowing in: {n} contributions summed:",
                          len(parts)).format(n=len(parts))
        text = (f"<div>{esc(summed)} "
                f"<code>g = {esc(terms)} = {esc(values(arrived))}</code></div>")
    else:
        text = (f"<div>{_('Gradient flowing in:')} "
                f"<code>g = {esc(values(arrived))}</code></div>")
    if hooked:
        text += "<div>" + esc(_("A hook changed g to {value}: that is the gradient "
                                "that flowed on.")).format(
            value=f"<code>{esc(values(step.grad_in))}</code>") + "</div>"
    return text


def _same_values(a, b) -> bool:
    """Do two gradients hold the very same numbers (a hook that returned a copy
    changed nothing worth a line)?"""
    x, y = access.host_array(a), access.host_array(b)
    return x is not None and y is not None and x.shape == y.shape and bool(
        np.array_equal(x, y, equal_nan=True))


def changes_html(step, index: dict) -> str:
    rows = [f"<li><b>{esc(grad_label(t, index))}</b>: <code>{esc(values(old))} → "
            f"{esc(values(new))}</code></li>" for t, old, new in step.leaves]
    rows += [f"<li><b>{esc(grad_label(t, index, 'retained tensor'))}</b> "
             f"(retain_grad) = <code>{esc(values(new))}</code></li>"
             for t, new in step.retained]
    if step.released:
        rows.append(f"<li>{_('saved tensors freed:')} <code>" +
                    esc(", ".join(step.released)) + "</code></li>")
    return f"<ul style='margin:2px 0'>{''.join(rows)}</ul>" if rows else ""


def step_html(step, total: int, local, index: dict) -> str:
    """The whole panel for one :class:`autograd_kit.engine.Step`."""
    node = step.node
    edges = edges_html(step, local, index)
    sent = (f"<div>{_('Sent along each edge:')}<ul style='margin:2px 0'>"
            f"{''.join(edges)}</ul></div>") if edges else ""
    head = _("Step {n} of {total}: {node}").format(
        n=step.index + 1, total=total,
        node=f"<b class='ak-current'>{esc(access.node_name(node))}</b>")
    return (f"<div class='ak-panel'><div style='font-size:115%'>{head}</div>"
            f"<div><i>{esc(words_for(node))}</i></div>"
            f"{formulas_html(node)}{incoming_html(step)}{sent}{changes_html(step, index)}"
            "</div>")


def start_html(root, gradient, total: int, index: dict, who: str = ENGINE) -> str:
    """The panel before the first step."""
    seed = _("1 (the root is a single number: d root / d root = 1)") if gradient is None \
        else _("{values} (the gradient you passed)").format(values=values(gradient))
    fn = root if access.is_value(root) else getattr(root, "grad_fn", None)
    first = access.node_name(fn) if fn is not None else _("the root's AccumulateGrad")
    ready = ngettext("Ready: {n} step to go", "Ready: {n} steps to go", total).format(n=total)
    starts = spaced(_("{who} starts at {node} with gradient {seed}. Press Step.").format(
        who=esc(who_text(who)), node=f"<b>{esc(first)}</b>", seed=f"<code>{esc(seed)}</code>"))
    return (f"<div class='ak-panel'><div style='font-size:115%'>{esc(ready)}</div>"
            f"<div>{starts}</div></div>")
