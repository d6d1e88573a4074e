"""A picture in words: the text alternative (alt text) of a graph picture.

A screen reader, a search in the notebook, or a reader whose picture did not
load gets one short paragraph made from the same plain data as the picture:

    Computational graph of 7 nodes: MulBackward0 takes x and w; SumBackward0
    takes MulBackward0; output y comes from SumBackward0.

Operations are told inputs first (a topological order of the arrows, ties in
drawing order), so the sentence follows the computation.  ``AccumulateGrad``
boxes are read through: an op "takes x", not "takes AccumulateGrad".  Long
graphs are cut after :data:`MAX_STEPS` operations ("and 40 more operations").
The text is plain; :mod:`.svgpatch` escapes it where it goes into the SVG.
It is written in the kit's current language (:mod:`autograd_kit.i18n`).
"""
from __future__ import annotations

import heapq

from ..i18n import _, ngettext
from .attributes import shorten
from .fold import count_text, hidden_count
from .boxes import GraphData, VNode

MAX_STEPS = 8
OPS = {"op", "fn", "fold"}


def _short(node: VNode, folds: dict[str, list[str]]) -> str:
    """What a box is called in the sentence (``folds``: the hidden boxes of each
    fold); names and op names cut as in the picture's labels (:func:`.shorten`)."""
    named = node.title not in (node.kind, "saved", "fold")
    if node.kind == "more":  # the part of a big graph not drawn: its label says it
        return shorten(node.lines[0])
    if node.kind == "fold":
        return _("a folded chain ({nodes})").format(
            nodes=count_text(hidden_count(folds.get(node.id, []))))
    if node.kind == "const":  # its label: the value, a name, or the word "constant"
        return _("the constant {value}").format(value=shorten(node.lines[0])) \
            if node.lines[0] != _("constant") else _("a constant")
    if node.kind == "saved":
        return _("a saved tensor")
    if node.kind in ("op", "fn", "acc") or named:
        return shorten(node.title)
    if node.kind == "leaf":
        return _("a leaf tensor")
    return _("the output") if node.kind == "output" else _("a tensor")


def _join(words: list[str]) -> str:
    """``x``, ``x and w``, ``x, w and b`` (in the current language)."""
    if len(words) <= 1:
        return "".join(words)
    return _("{first} and {last}").format(first=_(", ").join(words[:-1]), last=words[-1])


def inputs_first(data: GraphData) -> list[VNode]:
    """The boxes in an order where every box comes after the boxes feeding it."""
    index = {n.id: k for k, n in enumerate(data.nodes)}
    waiting = {n.id: 0 for n in data.nodes}
    feeds: dict[str, list[str]] = {n.id: [] for n in data.nodes}
    for e in data.edges:
        if e.kind in ("flow", "const"):
            waiting[e.head] += 1
            feeds[e.tail].append(e.head)
    ready = [index[i] for i, w in waiting.items() if w == 0]
    heapq.heapify(ready)  # the ready box drawn first goes first
    order = []
    while ready:
        node = data.nodes[heapq.heappop(ready)]
        order.append(node)
        for j in feeds[node.id]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, index[j])
    return order


def describe(data: GraphData) -> str:
    """One paragraph saying what the picture shows (see the module docstring)."""
    by_id = {n.id: n for n in data.nodes}
    inputs: dict[str, list[str]] = {n.id: [] for n in data.nodes}
    for e in data.edges:
        if e.kind in ("flow", "const"):
            inputs[e.head].append(e.tail)

    def name(box_id: str) -> str:
        node = by_id[box_id]
        if node.kind == "acc" and inputs[box_id]:  # read through to the leaf
            return name(inputs[box_id][0])
        return _short(node, data.folds)

    steps, outputs, n_steps = [], [], 0
    for node in inputs_first(data):
        if node.kind in OPS:
            n_steps += 1
            if n_steps > MAX_STEPS:
                continue  # counted, not told (a graph may have a million)
            took = [name(i) for i in inputs[node.id]]
            what = _short(node, data.folds)
            steps.append(_("{op} takes {inputs}").format(op=what, inputs=_join(took))
                         if took else what)
        elif node.kind == "output" and inputs[node.id]:
            called, source = name(node.id), name(inputs[node.id][0])
            outputs.append(_("the output comes from {source}").format(source=source)
                           if called == _("the output") else
                           _("output {name} comes from {source}").format(name=called,
                                                                        source=source))
    if n_steps > MAX_STEPS:
        more = n_steps - MAX_STEPS + 1
        steps = steps[:MAX_STEPS - 1] + [ngettext("and {n} more operation",
                                                  "and {n} more operations", more).format(n=more)]
    saved = sum(1 for n in data.nodes if n.kind == "saved")
    parts = steps + outputs
    if saved:
        parts.append(ngettext("{n} saved tensor hangs on dashed lines",
                              "{n} saved tensors hang on dashed lines", saved).format(n=saved))
    n = len(data.nodes)
    head = ngettext("Computational graph of {n} node", "Computational graph of {n} nodes",
                    n).format(n=n)
    if not parts:
        return _("{head}.").format(head=head)
    return _("{head}: {parts}.").format(head=head, parts=_("; ").join(parts))
