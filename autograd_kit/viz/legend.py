"""The key of a picture (``make_dot(..., legend=True)``).

A small framed column beside the graph: one sample box per kind of box the
picture holds, drawn in the theme's own style (so it is right for every
theme, custom ones included) and saying in words what that kind is, and,
when the picture has dashed lines, a sample dashed line labelled "saved for
backward".  Only what the picture shows is explained.

The key is DOT text added at the end of the graph: a cluster named
``cluster_legend`` whose boxes have ids ``legend0``, ``legend1``...; invisible
arrows stack them in a column.  It is not part of the graph's plain data, so
``Graph.nodes`` and the text alternative don't mention it.
"""
from __future__ import annotations

from ..i18n import N_, _
from .boxes import GraphData

#: what each kind of box means, in the order the key lists them (in English:
#: the key says it in the kit's current language, :mod:`autograd_kit.i18n`)
MEANING = {
    "output": N_("output tensor"),
    "leaf": N_("leaf tensor (gets .grad)"),
    "tensor": N_("intermediate tensor"),
    "const": N_("constant (no gradient)"),
    "op": N_("backward function (grad_fn)"),
    "fn": N_("operation"),
    "acc": N_("AccumulateGrad: adds into .grad"),
    "saved": N_("tensor saved for backward"),
    "fold": N_("folded chain of nodes"),
}
DASHED = N_("saved for backward")
SAVED_EDGES = ("saved", "saved_ref")


def legend_dot(data: GraphData, theme: dict, attrs) -> list[str]:
    """DOT lines of the key for ``data`` drawn in ``theme`` (``attrs`` writes an
    escaped attribute list, see :func:`autograd_kit.viz.dot.attrs`)."""
    present = {n.kind for n in data.nodes}
    if "more" in present:  # the rest of a cut graph is drawn as a fold
        present.add("fold")
    kinds = theme.get("kinds", {})
    frame = {"label": _("legend"), "style": "rounded",
             "color": theme.get("edge", {}).get("color", "grey"),
             "fontcolor": theme.get("node", {}).get("fontcolor", "black"),
             "fontname": theme.get("node", {}).get("fontname", "Courier"), "fontsize": "9"}
    lines = ["\tsubgraph cluster_legend {", f"\t\tgraph {attrs(frame)}"]
    ids = []
    for kind, meaning in MEANING.items():
        if kind in present:
            box = f"legend{len(ids)}"
            style = kinds.get(kind, {})
            lines.append(f"\t\t{box} {attrs({'id': box, 'label': _(meaning), **style})}")
            ids.append(box)
    dashed = any(e.kind in SAVED_EDGES for e in data.edges)
    if dashed:
        ends = [f"legend{len(ids)}", f"legend{len(ids) + 1}"]
        for end in ends:
            point = {"id": end, "label": "", "shape": "point", "width": "0.05"}
            lines.append(f"\t\t{end} {attrs(point)}")
        ids.append(ends[0])
    for tail, head in zip(ids, ids[1:]):
        lines.append(f"\t\t{tail} -> {head} {attrs({'style': 'invis'})}")
    if dashed:
        style = {**theme.get("edges", {}).get("saved", {}), "label": _(DASHED)}
        lines.append(f"\t\t{ends[0]} -> {ends[1]} {attrs({'id': 'legend_dashed', **style})}")
    lines.append("\t}")
    return lines if ids else []
