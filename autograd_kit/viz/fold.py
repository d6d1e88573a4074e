"""Folding long chains, so that a 10,000-step graph still fits on a screen.

A *chain* is a run of op boxes that each have exactly one arrow in and one
arrow out (dashed saved-tensor lines and constants feeding an op don't count):
``y = y * 1.01 + 0.5`` in a loop makes one.  When a picture has more boxes than
``max_nodes``, the longest chains are folded first, each into one box reading
``… 9,996 nodes (MulBackward0 ×4,998, AddBackward0 ×4,998) …`` (the words in
the kit's current language, the op names as they are); the first and last
:data:`KEEP` boxes of the chain stay visible, so one can see what the chain is
made of and where it connects.  Saved-tensor boxes and constants that hang only
on folded boxes disappear into the fold too.

A node with very many inputs (``torch.cat`` of 10,000 tensors) is folded too:
its inputs that feed nothing else, each with whatever feeds only it (a leaf
and its ``AccumulateGrad``, say), are *branches*; all but the first and last
:data:`KEEP` branches go into one box, ``… 19,992 nodes (AccumulateGrad
×9,996, leaf ×9,996) …``, with one arrow into the node.

Every chain long enough to fold gets an id, ``f0``, ``f1``, ... in graph order,
then every wide node's branches, whether or not they are folded;
``unfold={"f0"}`` keeps that one open and ``unfold=True`` turns folding off.
Everything here is loops over lists: linear time, no recursion.
"""
from __future__ import annotations

from collections import Counter

from ..i18n import N_, _, ngettext
from .hubs import MAX_USES
from .boxes import GraphData, VEdge, VNode

KEEP = 2          # boxes kept visible at each end of a folded chain
MIN_FOLD = 2      # fold only when at least this many boxes disappear
FOLDABLE = {"op", "fn", "tensor"}
#: how a fold's label counts the boxes that are not ops (ops go by their names)
COUNTED_AS = {"tensor": N_("tensor"), "saved": N_("saved"), "leaf": N_("leaf"),
              "output": N_("output")}


def hidden_count(ids: list[str]) -> int:
    """How many boxes a fold hides, counting as its label does: constants (ids
    ``c0``, ``c1``..., see :mod:`.model`) ride along uncounted."""
    return sum(1 for i in ids if not i.startswith("c"))


def count_text(n: int) -> str:
    """``"9,996 nodes"``, in the current language."""
    return ngettext("{n} node", "{n} nodes", n).format(n=f"{n:,}")


def _links(data: GraphData) -> tuple[dict, dict]:
    """Each box's flow predecessors and successors (ids).

    The arrows of a box used more than :data:`~.hubs.MAX_USES` times (a weight
    shared by every step of an unrolled loop) are left out: such a box is drawn
    once per use anyway (:mod:`.hubs`), so it does not break the chains it feeds,
    and a fold keeps one arrow from it."""
    uses = Counter(e.tail for e in data.edges if e.kind == "flow")
    hubs = {box for box, k in uses.items() if k > MAX_USES}
    preds: dict[str, list[str]] = {n.id: [] for n in data.nodes}
    succs: dict[str, list[str]] = {n.id: [] for n in data.nodes}
    for e in data.edges:
        if e.kind == "flow" and e.tail not in hubs:
            succs[e.tail].append(e.head)
            preds[e.head].append(e.tail)
    return preds, succs


def chains(data: GraphData, links: tuple[dict, dict] | None = None) -> list[list[str]]:
    """The foldable runs of boxes (ids, in arrow order), in graph order."""
    kinds = {n.id: n.kind for n in data.nodes}
    preds, succs = links or _links(data)
    link = {i for i in kinds
            if kinds[i] in FOLDABLE and len(preds[i]) == 1 and len(succs[i]) == 1}
    runs = []
    for node in data.nodes:
        i = node.id
        if i not in link or preds[i][0] in link:
            continue  # not a link, or not the first link of its run
        run = [i]
        while succs[run[-1]][0] in link:
            run.append(succs[run[-1]][0])
        if len(run) >= 2 * KEEP + MIN_FOLD:
            runs.append(run)
    return runs


def _branch(top: str, preds: dict, succs: dict) -> list[str]:
    """``top`` and every box that feeds only boxes already in the branch (walked
    upwards, breadth first)."""
    members, inside, k = [top], {top}, 0
    while k < len(members):
        for p in preds[members[k]]:
            if p not in inside and all(s in inside for s in succs[p]):
                inside.add(p)
                members.append(p)
        k += 1
    return members


def fans(data: GraphData, links: tuple[dict, dict] | None = None) -> list[list[str]]:
    """For each node with many inputs, in graph order: the boxes of its middle
    branches (all but the first and last :data:`KEEP`), to fold into one."""
    preds, succs = links or _links(data)
    groups = []
    for node in data.nodes:
        own = [p for p in preds[node.id] if succs[p] == [node.id]]
        if len(own) < 2 * KEEP + MIN_FOLD:
            continue
        middle = [i for p in own[KEEP:-KEEP] for i in _branch(p, preds, succs)]
        if len(middle) >= MIN_FOLD:
            groups.append(middle)
    return groups


def fold_chains(data: GraphData, max_nodes: int | None, unfold=None,
                first: int = 0) -> GraphData:
    """Fold the longest chains and the widest fans of inputs until at most
    ``max_nodes`` boxes remain (if it can).  Fold ids start at ``f{first}``
    (a picture folded again for showing, see :class:`~.picture.Graph`, keeps
    the ids of the folds it has)."""
    if max_nodes is None or unfold is True or len(data.nodes) <= max_nodes:
        return data
    keep_open = {str(u) if str(u).startswith("f") else f"f{u}" for u in (unfold or ())}
    links = _links(data)
    groups = [run[KEEP:-KEEP] for run in chains(data, links)] + fans(data, links)
    runs = {f"f{first + k}": group for k, group in enumerate(groups)}
    chosen: dict[str, list[str]] = {}
    taken: set[str] = set()
    count = len(data.nodes)
    for fid in sorted(runs, key=lambda f: -len(runs[f])):  # stable: ties keep graph order
        if count <= max_nodes:
            break
        if fid not in keep_open and taken.isdisjoint(runs[fid]):
            chosen[fid] = runs[fid]
            taken.update(runs[fid])
            count -= len(runs[fid]) - 1
    if not chosen:
        return data
    return _apply(data, dict(sorted(chosen.items(), key=lambda kv: int(kv[0][1:]))))


def _apply(data: GraphData, chosen: dict[str, list[str]]) -> GraphData:
    """Replace the chosen runs by fold boxes and reroute the arrows."""
    where = {i: fid for fid, run in chosen.items() for i in run}
    _absorb_saved(data, where)
    by_id = {n.id: n for n in data.nodes}
    members: dict[str, list[VNode]] = {fid: [] for fid in chosen}
    for i, fid in where.items():
        members[fid].append(by_id[i])
    nodes, placed = [], set()
    for n in data.nodes:
        fid = where.get(n.id)
        if fid is None:
            nodes.append(n)
        elif fid not in placed:
            placed.add(fid)
            nodes.append(_fold_box(fid, members[fid]))
    edges, seen = [], set()
    for e in data.edges:
        tail, head = where.get(e.tail, e.tail), where.get(e.head, e.head)
        if tail == head and (e.tail in where or e.head in where):
            continue
        key = (tail, head, e.kind, e.label)
        if (tail != e.tail or head != e.head) and key in seen:
            continue
        seen.add(key)
        edges.append(VEdge(tail, head, e.kind, e.label))
    folds = {**data.folds, **{fid: [n.id for n in members[fid]] for fid in chosen}}
    return GraphData(nodes, edges, folds, data.order)


def _absorb_saved(data: GraphData, where: dict[str, str]) -> None:
    """Saved boxes and constants joined only to folded ops join the fold of their
    first op."""
    kinds = {n.id: n.kind for n in data.nodes}
    owners: dict[str, list[str]] = {}
    for e in data.edges:
        if e.kind in ("saved", "const"):
            hangs = kinds[e.head] in ("saved", "const")
            box, op = (e.head, e.tail) if hangs else (e.tail, e.head)
            owners.setdefault(box, []).append(op)
    for box, ops in owners.items():
        if all(op in where for op in ops):
            where[box] = where[ops[0]]


def _fold_box(fid: str, members: list[VNode]) -> VNode:
    """``… 9,996 nodes (MulBackward0 ×4,998, AddBackward0 ×4,998) …`` above
    ``fold f0``; the words in the current language, op names as they are."""
    counted = [n for n in members if n.kind != "const"]  # constants ride along
    raw = Counter(n.title if n.kind in ("op", "fn", "acc") else (n.kind,) for n in counted)
    groups = Counter()  # op names as they are; other kinds in the current language
    for key, k in raw.items():
        if isinstance(key, tuple):
            key = _(COUNTED_AS[key[0]]) if key[0] in COUNTED_AS else key[0]
        groups[key] += k
    parts = [f"{name} ×{k:,}" for name, k in groups.most_common(4)]
    if len(groups) > 4:
        parts.append("…")
    first = _("… {nodes} ({parts}) …").format(nodes=count_text(len(counted)),
                                              parts=", ".join(parts))
    objs = [obj for n in members for obj in n.objs]
    return VNode(fid, "fold", "fold", [first, _("fold {id}").format(id=fid)], objs)
