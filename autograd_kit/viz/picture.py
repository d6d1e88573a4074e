"""The :class:`Graph` returned by ``make_dot``: DOT source plus ways to show it.

It renders lazily and once: the SVG is kept, so showing the picture again,
or restyling boxes for a step-by-step widget, does not run Graphviz again.
In a notebook it shows itself through ``_repr_mimebundle_``: the SVG, and the
same SVG as an ``<img>`` in ``text/html``, which a notebook opened fresh
(untrusted) shows too (:mod:`.embed`).  If nothing can draw, it shows a
sentence saying what to install, followed by the start of the DOT source,
instead of raising.
"""
from __future__ import annotations

import weakref

from ..i18n import _, get_language, language
from . import render as _render
from .describe import describe
from .digraph import DigraphIdioms
from .embed import img_html
from .hubs import split_hubs
from .dot import to_dot
from .model import GraphData, VEdge, VNode
from .svgpatch import SvgPatcher, with_alt



def _weak(obj):
    """A weak reference where the object allows one (autograd_kit's tensors and
    nodes, PyTorch's tensors), else None (PyTorch's nodes)."""
    return weakref.ref(obj) if type(obj).__weakrefoffset__ else None


class Graph(DigraphIdioms):
    """A picture of an autograd graph.

    ``source`` is the DOT text; ``svg()`` draws it; ``alt`` says in words what
    it shows; ``node_id(obj)`` tells which box stands for a tensor or node;
    ``restyle({...})`` recolours boxes.  It also answers torchviz's
    ``graphviz.Digraph`` idioms: ``render``, ``view``, ``save``, ``pipe``,
    ``format``, ``attr``, ``graph_attr`` (see :mod:`.digraph`)."""

    def __init__(self, data: GraphData, theme: dict, graph_attr: dict | None = None,
                 styles: list[tuple[object, dict]] = (), alt: str | None = None,
                 legend: bool = False) -> None:
        """Index the boxes, apply ``styles`` (``(object, DOT attrs)`` pairs, later
        ones win) and write the DOT source.  ``alt`` replaces the text alternative
        made from the graph (:func:`autograd_kit.viz.describe.describe`)."""
        self._data = data
        self._alt = describe(data) if alt is None else str(alt)
        self._copies = split_hubs(data)  # after the words: a copy is no new box
        self._index, self._strong = _index_boxes(data)
        self._box_ids = {n.id for n in data.nodes}
        by_box: dict[str, dict] = {}
        for obj, style in styles:
            box = self.node_id(obj)
            if box is not None:
                by_box.setdefault(box, {}).update(style)
        self._theme, self._by_box, self._legend = theme, by_box, legend
        self._lang = get_language()  # the words of the legend, whenever the source is written
        self._init_attrs(graph_attr)
        self.format = "svg"
        self._changed()

    def _changed(self) -> None:
        """Attributes changed (or the picture is new): write the DOT source again
        when asked, and draw it again."""
        self._source: str | None = None
        self._svg: str | None = None
        self._failure: tuple | None = None  # (renderer setting, RenderError)
        self._patcher: SvgPatcher | None = None

    # -- the picture as data -------------------------------------------------
    @property
    def source(self) -> str:
        """The DOT text (identical for identical graphs, run after run)."""
        if self._source is None:
            theme = dict(self._theme)
            if self._node_attr:
                theme["node"] = {**theme.get("node", {}), **self._node_attr}
            if self._edge_attr:
                theme["edge"] = {**theme.get("edge", {}), **self._edge_attr}
            with language(self._lang):
                self._source = to_dot(self._data, theme, dict(self._graph_attr),
                                      self._by_box, self._legend)
        return self._source

    @property
    def nodes(self) -> list[VNode]:
        """The boxes, in drawing order (id, kind, title, label lines)."""
        return list(self._data.nodes)

    @property
    def edges(self) -> list[VEdge]:
        """The arrows (tail id, head id, kind "flow", "saved" or "saved_ref")."""
        return list(self._data.edges)

    @property
    def copies(self) -> dict[str, list[str]]:
        """Much-used boxes drawn once per use: box id -> ids of its copies
        (see :mod:`.hubs`)."""
        return {k: list(v) for k, v in self._copies.items()}

    @property
    def folds(self) -> dict[str, list[str]]:
        """Folded chains: fold id -> ids of the boxes it hides."""
        return dict(self._data.folds)

    @property
    def alt(self) -> str:
        """The text alternative: "Computational graph of 7 nodes: MulBackward0
        takes x and w; ...".  It is in the SVG (``<title>``, ``aria-label``) and in
        the notebook output's metadata."""
        return self._alt

    def node_id(self, obj) -> str | None:
        """The id of the box drawing ``obj``: a tensor, a ``grad_fn`` node, or an
        id string.  A non-leaf tensor without a box of its own answers with its
        ``grad_fn``'s box; objects inside a folded chain with the fold's id;
        objects not in the picture with None."""
        if isinstance(obj, str):
            return obj if obj in self._box_ids else None
        found = self._find(obj)
        if found is None and getattr(obj, "grad_fn", None) is not None:
            found = self._find(obj.grad_fn)
        return found

    def _find(self, obj) -> str | None:
        entry = self._index.get(id(obj))
        if entry is None:
            return None
        ref, box = entry
        return box if ref is None or ref() is obj else None  # None: held in _strong

    def __del__(self) -> None:
        """Let go of PyTorch's nodes parents first (see :func:`_index_boxes`)."""
        strong = getattr(self, "_strong", [])
        for k in range(len(strong)):  # in order: parents before inputs
            strong[k] = None

    def summary(self) -> str:
        """``<Graph: 5 nodes, 4 edges>``"""
        return f"<Graph: {len(self._data.nodes)} nodes, {len(self._data.edges)} edges>"

    __repr__ = summary

    # -- drawing ---------------------------------------------------------------
    def svg(self) -> str:
        """The SVG text (drawn on first call, then kept), with the text alternative
        as its ``<title>`` and ``aria-label``."""
        setting = _render.setting()
        if self._failure is not None and self._failure[0] == setting:
            raise self._failure[1]  # not tried again at every step of a widget
        if self._svg is None:
            try:
                self._svg = with_alt(_render.render_svg(self.source), self._alt)
            except _render.RenderError as err:
                self._failure = (setting, err)  # until another renderer is chosen
                raise
        return self._svg

    def _render_bytes(self, format: str) -> bytes:
        return _render.render(self.source, format)

    def html(self) -> str:
        """The picture as an HTML ``<img>`` holding the SVG, with the text
        alternative as ``alt``: what to put inside HTML of one's own, since a
        notebook opened fresh (untrusted) strips inline ``<svg>`` (:mod:`.embed`)."""
        return img_html(self.svg(), self._alt)

    def restyle(self, node_styles: dict) -> str:
        """The SVG with some boxes' fill and stroke changed, without a new layout.

        ``node_styles`` maps tensors, nodes or box ids to styles such as
        ``{"fillcolor": "#ffd27f", "color": "red", "penwidth": 2}``."""
        if self._patcher is None:
            self._patcher = SvgPatcher(self.svg())
        by_id = {}
        for obj, style in node_styles.items():
            nid = self.node_id(obj)
            if nid is not None:
                by_id[nid] = style
        for nid in [n for n in by_id if n in self._copies]:
            for copy in self._copies[nid]:  # copies of a much-used box go with it
                by_id.setdefault(copy, by_id[nid])
        return self._patcher.restyle(by_id)

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        """``(data, metadata)``: the picture as an ``<img>`` (``text/html``, shown
        by untrusted notebooks too) and as SVG, a one-line summary, and the text
        alternative as the SVG's ``alt`` in the metadata (IPython takes a bundle
        alone or such a pair).  Never raises (see the module docstring)."""
        try:
            svg = self.svg()
            bundle = {"text/html": self.html(), "image/svg+xml": svg,
                      "text/plain": self.summary()}
        except Exception as err:
            reason = (str(err) if isinstance(err, _render.RenderError) else
                      f"The graph could not be drawn ({type(err).__name__}: {err}).")
            bundle = {"text/plain": f"{reason}\n{source_excerpt(self.source)}"}
        if include is not None:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude is not None:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        metadata = {"image/svg+xml": {"alt": self._alt}} if "image/svg+xml" in bundle else {}
        return bundle, metadata


SOURCE_LINES = 30  # lines of DOT shown when the picture can't be drawn


def source_excerpt(source: str, lines: int = SOURCE_LINES) -> str:
    """The first ``lines`` lines of the DOT source, and how many more there are
    (a graph of 10,000 boxes would otherwise print megabytes)."""
    parts = source.splitlines()
    if len(parts) <= lines:
        return source
    more = len(parts) - lines
    return "\n".join(parts[:lines]) + "\n" + _(
        "… {n} more lines (graph.source holds them all)").format(n=f"{more:,}")


def _index_boxes(data: GraphData) -> tuple[dict, list]:
    """``id(obj) -> (weak reference or None, box id)`` for every drawn object.

    The picture keeps no strong reference to what allows a weak one, so a
    picture kept in a notebook's output history does not keep its graph alive;
    the weak reference also checks that an ``id()`` still belongs to the same
    object.  PyTorch's nodes allow no weak reference: they are held strongly,
    in ``strong``, ordered so they can be let go of safely (see
    :func:`autograd_kit.viz.model.parents_first`).  The objects are then removed
    from ``data``, which the picture keeps as plain data."""
    index, strong = {}, []
    for node in data.nodes:
        for obj in node.objs:
            ref = _weak(obj)
            index[id(obj)] = (ref, node.id)
            if ref is None:
                strong.append(obj)
        node.objs = []
    rank = {id(fn): k for k, fn in enumerate(data.order)}
    strong.sort(key=lambda obj: rank.get(id(obj), -1))
    data.order = []
    return index, strong
