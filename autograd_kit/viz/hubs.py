"""A box used by many operations is drawn once per use, so layout stays fast.

An unrolled loop that reuses one weight (``z = torch.tanh(z * w + 0.1)``, a
hundred times) has one box, ``w``'s, with a hundred arrows reaching down
every rank of the picture.  Graphviz's layout spends minutes untangling such
long arrows (depth 70 took more than two minutes), although the graph has
only a few hundred boxes.  Graph viewers such as TensorBoard's answer by taking
high-degree nodes out of the layout; here a box with more than
:data:`MAX_USES` uses keeps its first use, and every other use gets a *copy*
of it right beside the operation that uses it:

* a copy has the same label, colour and shape, with a dashed border, and a
  last line "use 3 of 100" (in the kit's language); the box itself says
  "use 1 of 100", so it is plain that all of them are one tensor;
* a copy of an ``AccumulateGrad`` box also names its leaf (``w``), since the
  leaf itself is drawn once, above the first use;
* the copies' ids are the box's id and ``u2``, ``u3``..., and a picture
  restyles them with their box (:meth:`autograd_kit.viz.Graph.restyle`), so the
  step-by-step widget colours them all together.

Uses are the arrows that start at the box (it feeds an operation) and the
dashed "saved" lines that join it to an operation that saved it (when it is a
box drawn anyway: a leaf, the output, a named tensor).  Everything here is one
pass over the arrows: linear time.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from ..i18n import _
from .boxes import GraphData, VEdge, VNode

MAX_USES = 8  #: a box with more uses than this is drawn once per use


def _uses(data: GraphData, kinds: dict[str, str]) -> dict[str, list[int]]:
    """Box id -> indices of the edges that use it, in drawing order."""
    uses: dict[str, list[int]] = defaultdict(list)
    for k, e in enumerate(data.edges):
        if e.kind in ("flow", "const"):
            uses[e.tail].append(k)
        elif e.kind == "saved_ref":  # the end that is not the op is the tensor
            op_at_tail = kinds.get(e.tail) in ("op", "fn", "acc", "fold")
            uses[e.head if op_at_tail else e.tail].append(k)
    return uses


def split_hubs(data: GraphData, max_uses: int | None = MAX_USES) -> dict[str, list[str]]:
    """Give every use of a box with more than ``max_uses`` uses after the first
    its own copy of the box (``data``'s lists are changed in place, its boxes
    are not; labels must already be computed, see :meth:`GraphData.finish`).
    Returns ``{box id: [copy ids]}``."""
    if max_uses is None:
        return {}
    by_id = {n.id: n for n in data.nodes}
    kinds = {i: n.kind for i, n in by_id.items()}
    leaf_of = {e.head: by_id[e.tail] for e in data.edges
               if e.kind == "flow" and kinds.get(e.head) == "acc"
               and kinds.get(e.tail) == "leaf"}
    copies: dict[str, list[str]] = {}
    added: dict[str, list[VNode]] = {}
    replaced: dict[str, VNode] = {}
    for hub, edge_ids in _uses(data, kinds).items():
        n = len(edge_ids)
        if n <= max_uses or hub not in by_id:
            continue
        box = by_id[hub]
        lines = list(box.lines)
        if hub in leaf_of and leaf_of[hub].lines:
            lines = lines + [leaf_of[hub].lines[0]]
        # a new box, not the old one changed: the picture keeps the boxes as they
        # were, to fold them again for showing (see autograd_kit.viz.picture)
        replaced[hub] = replace(box, lines=list(box.lines)
                                + [_("use {k} of {n}").format(k=1, n=f"{n:,}")])
        copies[hub], added[hub] = [], []
        for k, edge_index in enumerate(edge_ids[1:], start=2):
            copy = VNode(f"{hub}u{k}", box.kind, box.title,
                         lines + [_("use {k} of {n}").format(k=f"{k:,}", n=f"{n:,}")],
                         copy_of=hub)
            e = data.edges[edge_index]
            data.edges[edge_index] = VEdge(copy.id if e.tail == hub else e.tail,
                                           copy.id if e.head == hub else e.head,
                                           e.kind, e.label)
            copies[hub].append(copy.id)
            added[hub].append(copy)
    if added:
        nodes = []
        for node in data.nodes:
            nodes.append(replaced.get(node.id, node))
            nodes.extend(added.get(node.id, ()))
        data.nodes = nodes
    return copies
