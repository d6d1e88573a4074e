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
"""
from __future__ import annotations

import heapq

from .model import GraphData, VNode

MAX_STEPS = 8
OPS = {"op", "fn", "fold"}


def _short(node: VNode) -> str:
    """What a box is called in the sentence."""
    named = node.title not in (node.kind, "saved", "fold")
    if node.kind == "fold":
        return f"a folded chain ({node.lines[0].strip('… ').split(' (')[0]})"
    if node.kind == "const":
        return f"the constant {node.lines[0]}" if node.lines[0] != "constant" else \
            "a constant"
    if node.kind == "saved":
        return "a saved tensor"
    if node.kind in ("op", "fn", "acc") or named:
        return node.title
    return {"leaf": "a leaf tensor", "output": "the output"}.get(node.kind, "a tensor")


def _join(words: list[str]) -> str:
    if len(words) <= 2:
        return " and ".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


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
        return _short(node)

    steps, outputs = [], []
    for node in inputs_first(data):
        if node.kind in OPS:
            took = [name(i) for i in inputs[node.id]]
            what = _short(node)
            steps.append(f"{what} takes {_join(took)}" if took else what)
        elif node.kind == "output" and inputs[node.id]:
            called = name(node.id)
            called = "the output" if called == "the output" else f"output {called}"
            outputs.append(f"{called} comes from {name(inputs[node.id][0])}")
    if len(steps) > MAX_STEPS:
        more = len(steps) - MAX_STEPS + 1
        steps = steps[:MAX_STEPS - 1] + [f"and {more} more operations"]
    saved = sum(1 for n in data.nodes if n.kind == "saved")
    parts = steps + outputs
    if saved:
        parts.append(f"{saved} saved tensor{'s hang' if saved > 1 else ' hangs'} on dashed lines")
    n = len(data.nodes)
    head = f"Computational graph of {n} node{'s' if n != 1 else ''}"
    return head + (": " + "; ".join(parts) if parts else "") + "."
