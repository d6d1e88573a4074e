"""From an autograd graph to plain data: boxes (:class:`VNode`) and arrows (:class:`VEdge`).

The walk is an iterative depth-first search from the root(s) along
``next_functions``, first input first, so it never meets a recursion limit and
always visits nodes in the same order.  That order names the boxes:

* ``n0, n1, ...``  output tensors, ops and leaf tensors, in walk order;
* ``t0, t1, ...``  named intermediate tensors (forward view only);
* ``c0, c1, ...``  constant inputs of ops (forward view only, see
  :mod:`autograd_kit.viz.constants`);
* ``s0, s1, ...``  saved tensors (``show_saved``);
* ``f0, f1, ...``  folded chains (see :mod:`autograd_kit.viz.fold`).

Names come from graph position, never from ``id()``, so the same code gives the
same picture, byte for byte, in every run.  The words in the picture ("saved as
self", "constant", "(freed)") are in the kit's language at the time the picture
is made (:mod:`autograd_kit.i18n`), so a picture is the same for the same code
and the same language.

Two views of the same graph:

* ``"backward"``: torchviz's picture: every ``grad_fn`` is a grey box
  (``MulBackward0``), a leaf reaches its ``AccumulateGrad`` box, the output hangs
  under its ``grad_fn``;
* ``"forward"``: the textbook picture: tensors are boxes, ops are small ovals
  named by their forward operation (``Mul``), ``AccumulateGrad`` disappears,
  tensors found in ``names`` appear between the ops that make and use them,
  and inputs that need no gradient (the ``3`` of ``x * 3``) are small value
  boxes feeding their op.

Arrows point from inputs to outputs in both views, as in torchviz.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from ..i18n import _
from . import access, constants, labels

_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


@dataclass(slots=True)
class VNode:
    """A box: ``kind`` is one of op, acc, fn, leaf, tensor, output, const, saved,
    fold.

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

    def finish(self) -> GraphData:
        """Compute the labels still waiting as functions."""
        for node in self.nodes:
            if callable(node.lines):
                node.lines = node.lines()
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


def walk(start: list) -> tuple[list, dict[int, list]]:
    """Every node reachable from ``start``, in iterative depth-first preorder
    (first input first), and each node's ``(input node, input_nr)`` pairs."""
    order, inputs = [], {}
    stack = list(reversed(start))
    while stack:
        fn = stack.pop()
        if id(fn) in inputs:
            continue
        order.append(fn)
        inputs[id(fn)] = edges = access.next_edges(fn)
        stack.extend(n for n, _nr in reversed(edges))
    return order, inputs


def parents_first(fns: list, inputs: dict[int, list]) -> list:
    """``fns`` reordered so that every node comes before its inputs (Kahn's
    algorithm).  Releasing PyTorch's nodes in this order frees one node at a
    time; the other way round, freeing the last one would free the whole chain
    below it recursively, in C++, deep enough to crash on a long chain."""
    waiting = {id(fn): 0 for fn in fns}
    for fn in fns:
        for nxt, _nr in inputs[id(fn)]:
            waiting[id(nxt)] += 1
    ready = [fn for fn in reversed(fns) if waiting[id(fn)] == 0]
    order = []
    while ready:
        fn = ready.pop()
        order.append(fn)
        for nxt, _nr in inputs[id(fn)]:
            waiting[id(nxt)] -= 1
            if waiting[id(nxt)] == 0:
                ready.append(nxt)
    return order


class _Builder:
    """Collects boxes and arrows; remembers which box stands for which object."""

    def __init__(self, opts: Options, inputs: dict[int, list]) -> None:
        self.opts = opts
        self.inputs = inputs  # id(node) -> [(input node, input_nr)]
        self.nodes: list[VNode] = []
        self.edges: list[VEdge] = []
        self.box: dict[int, VNode] = {}
        self.count = {"n": 0, "t": 0, "s": 0, "c": 0}

    def add(self, prefix: str, kind: str, title: str, lines, obj) -> VNode:
        node = VNode(f"{prefix}{self.count[prefix]}", kind, title, lines, [obj])
        self.count[prefix] += 1
        self.nodes.append(node)
        self.box[id(obj)] = node
        return node

    def tensor(self, t, kind: str, prefix: str = "n") -> VNode:
        if id(t) in self.box:
            return self.box[id(t)]
        o = self.opts
        name = o.names.get(id(t), "")
        lines = partial(labels.tensor_lines, t, name, o.show_values, o.show_grads)
        return self.add(prefix, kind, name or kind, lines, t)

    def op(self, fn) -> VNode:
        o = self.opts
        title = access.node_name(fn)
        kind = "acc" if access.leaf_variable(fn) is not None else "op"
        if o.view == "forward":
            title, kind = _BACKWARD_SUFFIX.sub("", title) or title, "fn"
        lines = partial(labels.op_lines, fn, title, o.show_attrs, o.max_attr_chars)
        return self.add("n", kind, title, lines, fn)

    def constant(self, value) -> VNode:
        """The box of a constant input: one per number, one per tensor."""
        if access.is_tensor(value):
            if id(value) in self.box:
                return self.box[id(value)]
            name = self.opts.names.get(id(value), "")
            lines = partial(labels.constant_lines, value, name)
            return self.add("c", "const", name or "constant", lines, value)
        node = VNode(f"c{self.count['c']}", "const", "constant",
                     labels.constant_lines(value))
        self.count["c"] += 1
        self.nodes.append(node)
        return node

    def edge(self, tail, head, kind: str = "flow", label: str = "") -> None:
        self.edges.append(VEdge(self.box[id(tail)].id, self.box[id(head)].id, kind,
                                label))


def build(roots: list, opts: Options) -> GraphData:
    """Walk the graph of ``roots`` (tensors or nodes) and lay it out as data."""
    tensors = [r for r in roots if access.is_tensor(r)]
    start = [r.grad_fn if access.is_tensor(r) else r for r in roots]
    fns, inputs = walk([fn for fn in start if fn is not None])
    b = _Builder(opts, inputs)
    for t in tensors:
        b.tensor(t, "output")
    forward = opts.view == "forward"
    for fn in fns:
        var = access.leaf_variable(fn)
        if var is None or not forward:
            b.op(fn)
        else:
            b.count["n"] += 1  # AccumulateGrad keeps its number, unseen, in both views
        if var is not None:
            leaf = b.tensor(var, "leaf")
            if forward:  # the leaf's box also stands for its AccumulateGrad
                leaf.objs.append(fn)
    if forward:
        _forward_edges(b, fns, tensors)
    else:
        _backward_edges(b, fns, tensors)
    if opts.show_saved:
        _saved(b, fns)
    return GraphData(b.nodes, b.edges, order=parents_first(fns, inputs))


def _backward_edges(b: _Builder, fns: list, tensors: list) -> None:
    """torchviz's arrows: grad_fn -> output, leaf -> AccumulateGrad, input -> op."""
    for t in tensors:
        if t.grad_fn is not None:
            b.edge(t.grad_fn, t)
    for fn in fns:
        var = access.leaf_variable(fn)
        if var is not None:
            b.edge(var, fn)
        for nxt, _nr in b.inputs[id(fn)]:
            b.edge(nxt, fn)


def _forward_edges(b: _Builder, fns: list, tensors: list) -> None:
    """Textbook arrows: tensor -> op -> tensor.  An op's result is drawn as a box
    only when it is an output or a named variable; otherwise ops link directly."""
    pos = {id(fn): i for i, fn in enumerate(fns)}
    made_by: dict[tuple[int, int], object] = {}
    for t in tensors:
        if t.grad_fn is not None:
            made_by.setdefault((id(t.grad_fn), access.output_nr(t)), t)
    named = [t for t in b.opts.named if t.grad_fn is not None and id(t.grad_fn) in pos]
    named.sort(key=lambda t: (pos[id(t.grad_fn)], access.output_nr(t)))
    for t in named:
        key = (id(t.grad_fn), access.output_nr(t))
        if key not in made_by and id(t) not in b.box:
            made_by[key] = t
            b.tensor(t, "tensor", "t")
    for t in made_by.values():
        b.edge(t.grad_fn, t)
    for fn in fns:
        if access.leaf_variable(fn) is not None:
            continue
        for has_grad, item in constants.operands(fn):
            if not has_grad:
                box = b.constant(item)
                b.edges.append(VEdge(box.id, b.box[id(fn)].id, "const"))
                continue
            nxt, nr = item
            var = access.leaf_variable(nxt)
            b.edge(var if var is not None else made_by.get((id(nxt), nr), nxt), fn)


def _saved(b: _Builder, fns: list) -> None:
    """Orange boxes for saved tensors, joined to their op by dashed lines.

    A saved tensor that is already drawn (a leaf, the output, a named variable)
    gets a dashed line (kind "saved_ref", which doesn't move boxes around)
    instead of a second box; a tensor saved twice gets one box listing both
    slot names.  Saved boxes hang below their op in the backward view (as in
    torchviz) and sit above it, like an input, in the forward view.  Each dashed
    line is labelled with the slot it fills: "saved as self" (the words in the
    kit's current language, the slot's name as PyTorch spells it)."""
    drawn = set(b.box)
    slots: dict[int, tuple[object, list[str]]] = {}
    pending: list[tuple[object, object, str]] = []
    for fn in fns:
        if access.leaf_variable(fn) is not None:
            continue
        for name in access.saved_names(fn):
            for slot, value in _tensors_in(name, access.saved_value(fn, name)):
                if isinstance(value, access.Unavailable):
                    value = _Freed(value.reason)
                if id(value) not in drawn:
                    slots.setdefault(id(value), (value, []))[1].append(slot)
                pending.append((fn, value, slot))
    for value, names in slots.values():
        unique = list(dict.fromkeys(names))
        var_name = b.opts.names.get(id(value), "")
        shown = value.marker if isinstance(value, _Freed) else value
        lines = partial(labels.saved_lines, shown, unique, var_name, b.opts.show_values)
        box = b.add("s", "saved", "saved", lines, value)
        box.freed = isinstance(value, _Freed) and value.marker.reason == "freed"
    for fn, value, slot in pending:
        kind = "saved_ref" if id(value) in drawn else "saved"
        label = _("saved as {slot}").format(slot=slot)
        if b.opts.view == "forward":
            b.edge(value, fn, kind, label)
        else:
            b.edge(fn, value, kind, label)


class _Freed:
    """Stands for one saved value that can't be read (each gets its own box)."""

    __slots__ = ("marker",)

    def __init__(self, reason: str) -> None:
        self.marker = access.Unavailable(reason)


def _tensors_in(name: str, value) -> list[tuple[str, object]]:
    """The saved tensors in one saved slot: a tensor, a tuple of them, or a freed one."""
    if isinstance(value, access.Unavailable) or access.is_tensor(value):
        return [(name, value)]
    if isinstance(value, (tuple, list)):
        return [(f"{name}[{i}]", v) for i, v in enumerate(value) if access.is_tensor(v)]
    return []
