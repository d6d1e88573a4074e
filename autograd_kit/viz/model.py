"""From an autograd graph to plain data: boxes (:class:`VNode`) and arrows (:class:`VEdge`).

The walk (:mod:`.walk`) is an iterative depth-first search from the root(s)
along ``next_functions``, first input first, so it never meets a recursion
limit and always visits nodes in the same order.  That order names the boxes:

* ``n0, n1, ...``  output tensors, ops and leaf tensors, in walk order;
* ``t0, t1, ...``  named intermediate tensors (forward view only);
* ``c0, c1, ...``  constant inputs of ops (forward view only, see
  :mod:`autograd_kit.viz.constants`);
* ``s0, s1, ...``  saved tensors (``show_saved``);
* ``f0, f1, ...``  folded chains (see :mod:`autograd_kit.viz.fold`);
* ``m0``           the part of a very big graph that is not drawn (below).

With ``max_nodes``, a picture costs what its drawn part costs: the walk stops
after :data:`WALK_LIMIT` nodes.  A graph that small is walked whole and folded
(:mod:`autograd_kit.viz.fold`), so its folds count exactly what they hide.  A
bigger graph is *cut* instead: the nodes nearest the output, breadth first,
are drawn while their boxes fit in ``max_nodes`` (:func:`.walk.nearest`), and one
dashed box, ``… 149,901+ nodes …`` above ``max_nodes=100``, stands for the
rest, with an arrow into every drawn node whose inputs it holds.  Its count is
"at least": the rest of the graph is never walked, so a graph of a million
nodes draws in a moment, not in the minute that walking all of it takes.

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

A micrograd ``Value`` is its own node: one box per Value (its operation, name and
number; a leaf is a Value without inputs), arrows from its inputs, the same
picture in both views (micrograd's graph is already the textbook's).
"""
from __future__ import annotations

import re
from functools import partial

from ..i18n import _, ngettext
from . import access, constants, labels
from .boxes import GraphData, Options, VEdge, VNode
from .progress import MASK, SILENT, Progress
from .walk import nearest, parents_first, walk

_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")

#: with ``max_nodes``, graphs of more nodes than this are cut, not folded (see above)
WALK_LIMIT = 150_000


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
        if access.is_value(fn):
            return self.value(fn)
        o = self.opts
        title = access.node_name(fn)
        kind = "acc" if access.leaf_variable(fn) is not None else "op"
        if o.view == "forward":
            title, kind = _BACKWARD_SUFFIX.sub("", title) or title, "fn"
        lines = partial(labels.op_lines, fn, title, o.show_attrs, o.max_attr_chars)
        return self.add("n", kind, title, lines, fn)

    def value(self, v) -> VNode:
        """A micrograd Value's box: an op box, or a leaf box when it has no inputs;
        named by ``names``, else by its own ``label``."""
        name = self.opts.names.get(id(v), "") or access.value_label(v)
        op = access.value_op(v)
        kind = "op" if self.inputs.get(id(v)) or op else "leaf"
        title = op if kind == "op" and op else (
            name or labels.scalar_text(getattr(v, "data", "?")))
        lines = partial(labels.value_lines, v, name, self.opts.show_grads)
        return self.add("n", kind, title, lines, v)

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


def build(roots: list, opts: Options, max_nodes: int | None = None,
          progress: Progress = SILENT) -> GraphData:
    """Walk the graph of ``roots`` (tensors or nodes) and lay it out as data.
    With ``max_nodes``, a graph of more than :data:`WALK_LIMIT` nodes is cut
    to about ``max_nodes`` boxes (see the module docstring)."""
    tensors = [r for r in roots if access.is_tensor(r)]
    start = [r.grad_fn if access.is_tensor(r) else r for r in roots]
    start = [fn for fn in start if fn is not None]
    limit = None if max_nodes is None else WALK_LIMIT
    values = any(access.is_value(fn) for fn in start)  # micrograd: one box per Value
    edges = access.value_edges(start) if values else access.next_edges
    fns, inputs = walk(start, limit, progress, edges)
    cut, walked = [], len(fns)
    if limit is not None and walked > limit:
        budget = max(max_nodes - len(tensors) - 1, 1)  # room for the outputs and the rest
        fns, inputs, cut = nearest(start, budget, opts, edges)
    b = _Builder(opts, inputs)
    for t in tensors:
        b.tensor(t, "output")
    forward = opts.view == "forward" and not values
    progress.stage(2, 2 * len(fns))  # boxes, then arrows
    for k, fn in enumerate(fns):
        if k & MASK == 0:
            progress.update(k)
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
        _forward_edges(b, fns, tensors, progress)
    else:
        _backward_edges(b, fns, tensors, progress)
    if opts.show_saved:
        _saved(b, fns)
    if cut:
        _rest(b, cut, walked - len(fns), max_nodes)
    return GraphData(b.nodes, b.edges, order=parents_first(fns, inputs))


def _rest(b: _Builder, cut: list, at_least: int, max_nodes: int) -> None:
    """The box of what a cut graph leaves out (``m0``): at least ``at_least``
    nodes; an arrow from it into every drawn node it feeds."""
    count = ngettext("{n} node", "{n} nodes", at_least).format(n=f"{at_least:,}+")
    box = VNode("m0", "more", "more", [f"… {count} …", f"max_nodes={max_nodes}"])
    b.nodes.append(box)
    for fn in cut:
        b.edges.append(VEdge(box.id, b.box[id(fn)].id))


def _backward_edges(b: _Builder, fns: list, tensors: list,
                    progress: Progress = SILENT) -> None:
    """torchviz's arrows: grad_fn -> output, leaf -> AccumulateGrad, input -> op."""
    for t in tensors:
        if t.grad_fn is not None:
            b.edge(t.grad_fn, t)
    for k, fn in enumerate(fns):
        if k & MASK == 0:
            progress.update(len(fns) + k)
        var = access.leaf_variable(fn)
        if var is not None:
            b.edge(var, fn)
        for nxt, _nr in b.inputs[id(fn)]:
            b.edge(nxt, fn)


def _forward_edges(b: _Builder, fns: list, tensors: list,
                   progress: Progress = SILENT) -> None:
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
    for k, fn in enumerate(fns):
        if k & MASK == 0:
            progress.update(len(fns) + k)
        if access.leaf_variable(fn) is not None:
            continue
        for has_grad, item in constants.operands(fn):
            if not has_grad:
                box = b.constant(item)
                b.edges.append(VEdge(box.id, b.box[id(fn)].id, "const"))
                continue
            nxt, nr = item
            if id(nxt) not in b.inputs:
                continue  # left out of a cut graph (its box of the rest feeds fn)
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
    kit's current language, the slot's name as PyTorch spells it); a tensor an
    op saved in two slots (``x * x``) gets one line naming both, "saved as
    other, self"."""
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
    # one dashed line per op and tensor, naming every slot it fills ("saved as
    # other, self"): two lines between the same boxes would put their labels
    # side by side, run together ("saved as othersaved as self")
    lines: dict[tuple[int, int], tuple[object, object, list[str]]] = {}
    for fn, value, slot in pending:
        lines.setdefault((id(fn), id(value)), (fn, value, []))[2].append(slot)
    for fn, value, slots in lines.values():
        kind = "saved_ref" if id(value) in drawn else "saved"
        label = _("saved as {slot}").format(slot=", ".join(dict.fromkeys(slots)))
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
