"""Which boxes of the picture to colour after some backward steps.

The picture is laid out once; every step only recolours boxes through
``Graph.restyle``:

* nodes already processed: green; the node just processed: orange, red border;
* leaves whose ``.grad`` was updated: green border;
* saved tensors freed (``retain_graph=False``): grey, once every node that
  saved them has run; a saved tensor that was already freed when the picture
  was drawn (its box is marked ``freed``; its label says so in the kit's
  language) is grey from the start, so label and colour never disagree.  (A
  saved tensor hangs off the op that saved it by a dashed line: no gradient
  flows along it; the legend says so.)
  Nodes not reached yet keep the theme's colours.

A replayed pass (PyTorch's) is drawn before its real pass runs, so at step 0,
and after Reset, its saved tensors show their values, as a live pass would; the
status line says that PyTorch has in fact freed them already.
"""
from __future__ import annotations

from autograd_kit.i18n import _

DONE = {"fillcolor": "#c6efce", "color": "#3c8c3c"}
CURRENT = {"fillcolor": "#ffd27f", "color": "#d62728", "penwidth": "3"}
UPDATED = {"color": "#3c8c3c", "penwidth": "3"}
FREED = {"fillcolor": "#eeeeee", "color": "#aaaaaa", "fontcolor": "#999999"}
def legend_html() -> str:
    """The key above the picture, in the current language."""
    dashed = _("{saved}: a dashed line joins a value an op kept for its backward formula "
               "to that op (it is not a path the gradient flows along)").format(
        saved=f"<span style='background:orange;padding:0 4px'>{_('saved tensor')}</span>")
    return (f"<span style='background:#c6efce;padding:0 4px'>{_('done')}</span> "
            "<span style='background:#ffd27f;border:2px solid #d62728;padding:0 4px'>"
            f"{_('current')}</span> <span style='background:#d3d3d3;padding:0 4px'>"
            f"{_('waiting')}</span> <span style='background:#eeeeee;color:#999;"
            f"padding:0 4px'>{_('saved tensor freed')}</span> "
            "<span style='white-space:nowrap'><span style='display:inline-block;"
            "width:26px;border-top:2px dashed #555;vertical-align:middle'></span> "
            f"{dashed}</span>")


def saved_box_owners(graph) -> dict[str, set]:
    """Saved-tensor box id -> ids of the op boxes that saved it.  A box drawn as
    already freed has no owner left to wait for (an empty set): it is grey at
    every step."""
    freed = {n.id for n in graph.nodes if n.kind == "saved" and n.freed}
    owners: dict[str, set] = {}
    for e in graph.edges:
        if e.kind == "saved":
            owners.setdefault(e.head, set())
            if e.head not in freed:
                owners[e.head].add(e.tail)
    return owners


def styles(graph, steps: list, owners: dict[str, set]) -> dict:
    """``{node, tensor or box id: style}`` for the picture after ``steps``."""
    out, released = {}, set()
    for step in steps:
        out[step.node] = DONE
        for t, _old, _new in step.leaves:
            out[t] = UPDATED
        if step.released:
            box_id = graph.node_id(step.node)
            if box_id is not None:
                released.add(box_id)
    for box_id, ops in owners.items():
        if ops <= released:
            out[box_id] = FREED
    if steps:
        out[steps[-1].node] = CURRENT
    return out
