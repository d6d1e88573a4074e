"""A picture as plain data: boxes (:class:`VNode`), arrows (:class:`VEdge`), the
whole (:class:`GraphData`), and what to draw (:class:`Options`).

:func:`.model.build` makes a :class:`GraphData` from a graph; folding
(:mod:`.fold`), hub copies (:mod:`.hubs`) and the DOT writer (:mod:`.dot`)
work on that data.  Box ids name what a box stands for
(``n0`` a node or a tensor, ``t0`` a named tensor, ``c0`` a constant, ``s0`` a
saved tensor, ``f0`` a fold, ``m0`` the rest of a cut graph; see
:mod:`.model`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .progress import MASK, SILENT, Progress


@dataclass(slots=True)
class VNode:
    """A box: ``kind`` is one of op, acc, fn, leaf, tensor, output, const, saved,
    fold, more (the part of a cut graph not drawn, see :func:`.model.build`).

    ``lines`` (the label) starts as a function and is computed by
    :meth:`GraphData.finish` only for boxes that survive folding: reading values
    of 10,000 tensors that end up inside a fold would be wasted time."""

    id: str
    kind: str
    title: str
    lines: list[str] | Callable[[], list[str]]
    objs: list = field(default_factory=list)
    freed: bool = False  # a saved-tensor box whose value was freed before drawing
    copy_of: str = ""    # a copy of a much-used box, drawn beside one use (see .hubs)


@dataclass(slots=True)
class VEdge:
    """An arrow from ``tail`` to ``head``; ``kind`` is "flow" (inputs to outputs),
    "const" (a constant to its op), "saved" (op to its saved-tensor box) or
    "saved_ref" (op to a drawn tensor that it saved).  ``label`` is written
    beside the line (the saved slot, on dashed lines)."""

    tail: str
    head: str
    kind: str = "flow"
    label: str = ""


@dataclass
class GraphData:
    """The whole picture as plain data, in drawing order."""

    nodes: list[VNode]
    edges: list[VEdge]
    folds: dict[str, list[str]] = field(default_factory=dict)
    order: list = field(default_factory=list)  # graph nodes, each before its inputs

    def finish(self, progress: Progress = SILENT) -> GraphData:
        """Compute the labels still waiting as functions."""
        progress.stage(3, len(self.nodes))
        for k, node in enumerate(self.nodes):
            if callable(node.lines):
                node.lines = node.lines()
            if k & MASK == 0:
                progress.update(k)
        return self


@dataclass
class Options:
    """What to draw; ``names`` maps ``id(tensor)`` to its variable name."""

    view: str = "backward"
    show_attrs: bool = False
    show_saved: bool = False
    max_attr_chars: int = 50
    show_values: bool = False
    show_grads: bool = False
    names: dict[int, str] = field(default_factory=dict)
    named: list = field(default_factory=list)  # the named tensors themselves
