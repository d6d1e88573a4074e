r"""From plain data (:mod:`autograd_kit.viz.model`) to DOT text.

Every label and attribute value is written as a quoted DOT string and escaped,
so a variable called ``<script>`` is drawn as those eight characters:

* ``&``, ``<``, ``>`` become ``&amp;``, ``&lt;``, ``&gt;`` (Graphviz reads entities
  in labels and copies them into the SVG, where they show as the characters);
* ``\`` and ``"`` get a backslash, newlines become DOT's ``\n``;
* what XML can't hold (control characters, lone surrogates, U+FFFE...) and the
  other Unicode non-characters become U+FFFD, and a long text is cut, each line
  to 100 columns, with "…" (:func:`autograd_kit.viz.attributes.fit_label`, the
  one place that decides both).

>>> escape('<b> & "q"')
'&lt;b&gt; &amp; \\"q\\"'

Each box gets ``id="n3"`` (its model id), which Graphviz copies into the SVG
group ``<g id="n3" class="node">``; :mod:`autograd_kit.viz.svgpatch` relies on it.
"""
from __future__ import annotations

import re

from .attributes import clean_font, fit_label
from .legend import legend_dot
from .boxes import GraphData

_NAME = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")


def escape(text: str) -> str:
    """Text made safe inside a quoted DOT string (and the SVG made from it), cut
    to the length a label may have."""
    text = fit_label(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return text.replace("\n", "\\n")


def attrs(values: dict) -> str:
    """``[key="value" ...]``; keys that aren't plain names are quoted too."""
    parts = []
    for key, value in values.items():
        k = key if _NAME.match(str(key)) else f'"{escape(key)}"'
        if key == "fontname":  # copied into the SVG unescaped: only a font's characters
            value = clean_font(value)
        parts.append(f'{k}="{escape(value)}"')
    return "[" + " ".join(parts) + "]"


def graph_size(n_items: int) -> str:
    """torchviz's ``resize_graph``: 0.15 inch per line of DOT, at least 12 inches."""
    size = max(12.0, n_items * 0.15)
    return f"{size:.4g},{size:.4g}"


def to_dot(data: GraphData, theme: dict, graph_attr: dict | None = None,
           styles: dict[str, dict] | None = None, legend: bool = False) -> str:
    """The DOT source of the picture.

    ``styles`` maps box ids to extra attributes (highlight, node_styles); they are
    applied over the theme's style for the box's kind (the rest of a cut graph,
    kind "more", is drawn as a fold unless the theme says otherwise).  ``legend`` adds the key
    (:mod:`autograd_kit.viz.legend`)."""
    styles = styles or {}
    graph = {"size": graph_size(len(data.nodes) + len(data.edges)),
             **theme.get("graph", {}), **(graph_attr or {})}
    lines = ["digraph {", f"\tgraph {attrs(graph)}"]
    if theme.get("node"):
        lines.append(f"\tnode {attrs(theme['node'])}")
    if theme.get("edge"):
        lines.append(f"\tedge {attrs(theme['edge'])}")
    kinds = theme.get("kinds", {})
    for node in data.nodes:
        kind = kinds.get(node.kind) or (kinds.get("fold", {}) if node.kind == "more" else {})
        a = {"id": node.id, "label": "\n".join(node.lines),
             **kind, **styles.get(node.copy_of or node.id, {})}
        if node.copy_of:  # a copy of a much-used box (see .hubs): dashed border
            style = str(a.get("style", theme.get("node", {}).get("style", "")))
            a["style"] = ",".join([p for p in style.split(",") if p and p != "solid"]
                                  + ["dashed"])
        lines.append(f"\t{node.id} {attrs(a)}")
    edge_kinds = theme.get("edges", {})
    copies = {n.id for n in data.nodes if n.copy_of}
    for k, edge in enumerate(data.edges):
        a = {"id": f"e{k}", **edge_kinds.get(edge.kind, {})}
        if edge.tail in copies or edge.head in copies:
            a.pop("constraint", None)  # a copy sits beside its use, in rank
        if edge.label:
            a["label"] = edge.label
        lines.append(f"\t{edge.tail} -> {edge.head} {attrs(a)}")
    if legend:
        lines += legend_dot(data, theme, attrs)
    lines.append("}")
    return "\n".join(lines) + "\n"
