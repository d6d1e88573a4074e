"""The text beside the picture: what one backward step did, in words and numbers.

For the node being processed the panel shows

* its name and, in plain words, what its family of nodes does with ``g``,
  the gradient flowing in;
* the local derivative formulas, straight from the op's formula table
  (``node.formula_text``, e.g. ``{"self": "g * other", "other": "g * self"}``);
* ``g`` itself, and the sum when several gradients arrived;
* per edge: ``upstream × local = contribution`` with the actual numbers;
* leaves whose ``.grad`` changed (``old → new``) and saved tensors freed.

The "local" factor is the node's own formula applied to a gradient of ones
(every formula is linear in ``g``); it is only written as a product when that
product really equals the contribution the engine sent.
"""
from __future__ import annotations

import re

import numpy as np

from autograd_kit.viz import access

from ._common import esc, grad_label, tensor_name, values

_SUFFIX = re.compile(r"Backward\d*$")

WORDS = {
    "Add": "the gradient passes unchanged to both inputs (times alpha for the second)",
    "Sub": "the first input receives g, the second receives -g (times alpha)",
    "Rsub": "the tensor input receives -g",
    "Mul": "each input receives g times the other input",
    "Div": "the numerator receives g / denominator; the denominator receives "
           "-g * numerator / denominator²",
    "Neg": "the input receives -g",
    "Pow": "the base receives g * exponent * base^(exponent-1)",
    "Exp": "the input receives g times the output (e^x is its own derivative)",
    "Log": "the input receives g divided by the input",
    "Sin": "the input receives g times cos(input)",
    "Cos": "the input receives -g times sin(input)",
    "Tanh": "the input receives g * (1 - output²)",
    "Sigmoid": "the input receives g * output * (1 - output)",
    "Relu": "g passes where the output was positive, 0 elsewhere",
    "Sqrt": "the input receives g / (2 * output)",
    "Abs": "the input receives g times the sign of the input",
    "Reciprocal": "the input receives -g * output²",
    "Sum": "every element of the input receives g (copied back to the input's shape)",
    "Mean": "every element of the input receives g divided by the number of elements",
    "Dot": "each vector receives g times the other vector",
    "Mm": "the left matrix receives g @ rightᵀ, the right matrix leftᵀ @ g",
    "Bmm": "the left matrices receive g @ rightᵀ, the right ones leftᵀ @ g",
    "Mv": "the matrix receives the outer product g vecᵀ, the vector matrixᵀ @ g",
    "Addmm": "the bias receives g, the matrices g @ rightᵀ and leftᵀ @ g",
    "View": "g is reshaped back to the input's shape",
    "Transpose": "g is transposed back",
    "T": "g is transposed back",
    "Permute": "g is permuted back",
    "Expand": "g is summed back down to the input's shape",
    "Clone": "g passes through unchanged",
    "Select": "g is placed into zeros at the selected position",
    "Slice": "g is placed into zeros at the sliced positions",
    "Index": "g is placed into zeros at the indexed positions",
    "Cat": "g is cut back into one piece per input",
    "Stack": "g is split back into one piece per input",
    "Max": "g goes to the position(s) of the maximum",
    "Min": "g goes to the position(s) of the minimum",
    "Softmax": "the input receives output * (g - sum(g * output))",
    "LogSoftmax": "the input receives g - softmax * sum(g)",
    "MseLoss": "the input receives g * 2 * (input - target) / n",
    "AccumulateGrad": "adds g into the leaf's .grad: the sum over every path, and over "
                      "every backward call until .grad is zeroed",
    "AsStrided": "g is placed back where the view sits inside its base",
    "CopySlices": "a tensor changed in place through a view: g passes unchanged outside "
                  "the view and through the in-place op's formula inside it",
}


def family(node) -> str:
    """``MulBackward0`` -> ``Mul``; ``torch::autograd::AccumulateGrad`` -> ``AccumulateGrad``."""
    name = access.node_name(node)
    return _SUFFIX.sub("", name) or name


def words_for(node) -> str:
    """One sentence on what the node does with the incoming gradient ``g``."""
    if family(node) in WORDS:
        return WORDS[family(node)]
    if access.formula_text(node):
        return "applies the formula below to g"
    return "runs its own backward code (no formula table for this node)"


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


def _target(node, i: int, index: dict) -> str:
    nxt = node.next_functions[i][0] if i < len(node.next_functions) else None
    if nxt is None:
        return "nowhere (this input does not require grad)"
    var = access.leaf_variable(nxt)
    if var is not None:
        return f"AccumulateGrad of {tensor_name(var, index)}"
    return access.node_name(nxt)


def _input_name(node, i: int) -> str:
    names = access.input_names(node)
    return names[i] if i < len(names) else f"input {i}"


def edges_html(step, local, index: dict) -> list[str]:
    """One line per edge: where the gradient goes and how it was computed."""
    node, g = step.node, step.grad_in
    texts = access.formula_text(node)
    rows = []
    for i, out in enumerate(step.grads_out):
        name = _input_name(node, i)
        where = esc(_target(node, i, index))
        if out is None:
            rows.append(f"<li><b>{esc(name)}</b> → {where}: no gradient sent</li>")
            continue
        lf = local[i] if local is not None and i < len(local) else None
        if _product_holds(g, lf, out):
            calc = (f"upstream × local = contribution: <code>{esc(values(g))} × "
                    f"{esc(values(lf))} = {esc(values(out))}</code>")
        else:
            formula = texts.get(name, "")
            calc = (f"<code>{esc(formula)} = {esc(values(out))}</code>" if formula else
                    f"contribution <code>{esc(values(out))}</code>")
        rows.append(f"<li><b>{esc(name)}</b> → {where}: {calc}</li>")
    return rows


def formulas_html(node) -> str:
    texts = access.formula_text(node)
    if not texts:
        return ""
    rows = []
    for name, formula in texts.items():
        sym = local_symbol(formula)
        local = f" &nbsp;(local derivative: <code>{esc(sym)}</code>)" if sym else ""
        rows.append(f"<li>grad of <b>{esc(name)}</b> = <code>{esc(formula)}</code>{local}</li>")
    return "<div>Formulas (from the op's table):<ul style='margin:2px 0'>" + \
        "".join(rows) + "</ul></div>"


def incoming_html(step) -> str:
    if isinstance(step.grad_in, tuple):  # a node with several outputs (split, unbind)
        each = ", ".join(values(g) for g in step.grad_in)
        return (f"<div>Gradients flowing in, one per output of the node: "
                f"<code>{esc(each)}</code></div>")
    parts = step.contributions or [step.grad_in]
    if len(parts) > 1:
        terms = " + ".join(values(c) for c in parts)
        return (f"<div>Gradient flowing in: {len(parts)} contributions summed: "
                f"<code>g = {esc(terms)} = {esc(values(step.grad_in))}</code></div>")
    return f"<div>Gradient flowing in: <code>g = {esc(values(step.grad_in))}</code></div>"


def changes_html(step, index: dict) -> str:
    rows = [f"<li><b>{esc(grad_label(t, index))}</b>: <code>{esc(values(old))} → "
            f"{esc(values(new))}</code></li>" for t, old, new in step.leaves]
    rows += [f"<li><b>{esc(grad_label(t, index, 'retained tensor'))}</b> "
             f"(retain_grad) = <code>{esc(values(new))}</code></li>"
             for t, new in step.retained]
    if step.released:
        rows.append("<li>saved tensors freed: <code>" +
                    esc(", ".join(step.released)) + "</code></li>")
    return f"<ul style='margin:2px 0'>{''.join(rows)}</ul>" if rows else ""


def step_html(step, total: int, local, index: dict) -> str:
    """The whole panel for one :class:`autograd_kit.engine.Step`."""
    node = step.node
    edges = edges_html(step, local, index)
    sent = f"<div>Sent along each edge:<ul style='margin:2px 0'>{''.join(edges)}</ul></div>" \
        if edges else ""
    return (f"<div class='ak-panel'><div style='font-size:115%'>Step {step.index + 1} of "
            f"{total}: <b class='ak-current'>{esc(access.node_name(node))}</b></div>"
            f"<div><i>{esc(words_for(node))}</i></div>"
            f"{formulas_html(node)}{incoming_html(step)}{sent}{changes_html(step, index)}"
            "</div>")


def start_html(root, gradient, total: int, index: dict, who: str = "The engine") -> str:
    """The panel before the first step."""
    seed = "1 (the root is a single number: d root / d root = 1)" if gradient is None \
        else values(gradient) + " (the gradient you passed)"
    fn = getattr(root, "grad_fn", None)
    first = access.node_name(fn) if fn is not None else "the root's AccumulateGrad"
    return (f"<div class='ak-panel'><div style='font-size:115%'>Ready: {total} steps to go"
            f"</div><div>{esc(who)} starts at <b>{esc(first)}</b> with gradient "
            f"<code>{esc(seed)}</code>. Press Step.</div></div>")
