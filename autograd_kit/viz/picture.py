"""The :class:`Graph` returned by ``make_dot``: DOT source plus ways to show it.

It renders lazily and once: the SVG is kept, so showing the picture again,
or restyling boxes for a step-by-step widget, does not run Graphviz again.
In a notebook it shows itself through ``_repr_mimebundle_``: the SVG, and the
same SVG as an ``<img>`` in ``text/html``, which a notebook opened fresh
(untrusted) shows too (:mod:`.embed`).  If nothing can draw, it shows a
sentence saying what to install, followed by the start of the DOT source,
instead of raising.

A notebook shows at most :data:`SHOW_MAX` boxes of a picture (``show_max``):
a bigger graph, drawn by ``make_dot`` without ``max_nodes``, is shown folded
to that many (:mod:`.fold`), so a graph of a million nodes ends in a small
picture, not in a Graphviz run of gigabytes.  When folding can't make it that
small, the output is one line saying so.  To see more: ``make_dot(...,
max_nodes=N)`` (shown as drawn), ``graph.show_max = N`` (``None``: every box),
or ``graph.svg()``, ``graph.save(...)``, which always draw every box.
"""
from __future__ import annotations

import weakref

from ..i18n import _, get_language, language
from . import render as _render
from .attributes import fit_alt
from .describe import describe
from .digraph import DigraphIdioms
from .embed import img_html
from .hubs import split_hubs
from .dot import to_dot
from .fold import fold_chains
from .boxes import GraphData, VEdge, VNode
from .progress import paused_gc
from .svgpatch import SvgPatcher, with_alt

#: the most boxes a notebook shows of a picture before folding it (see above)
SHOW_MAX = 1000


class TooBig(Exception):
    """A picture with more boxes than its ``show_max``, even folded (the message
    is the line the notebook shows)."""


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
    ``format``, ``attr``, ``graph_attr`` (see :mod:`.digraph`).

    ``show_max``: the most boxes a notebook shows (:data:`SHOW_MAX`; None, every
    box, for a picture made with ``max_nodes``); a bigger picture is shown
    folded to that many."""

    show_max: int | None = SHOW_MAX

    def __init__(self, data: GraphData, theme: dict, graph_attr: dict | None = None,
                 styles: list[tuple[object, dict]] = (), alt: str | None = None,
                 legend: bool = False) -> None:
        """Index the boxes, apply ``styles`` (``(object, DOT attrs)`` pairs, later
        ones win) and write the DOT source.  ``alt`` replaces the text alternative
        made from the graph (:func:`autograd_kit.viz.describe.describe`)."""
        self._data = data
        self._alt = fit_alt(describe(data) if alt is None else str(alt))
        # the boxes before copies of much-used ones are added: what to fold for showing
        self._plain = GraphData(list(data.nodes), list(data.edges), dict(data.folds))
        self._copies = split_hubs(data)  # after the words: a copy is no new box
        self._index, self._strong = _index_boxes(data)
        for node in self._plain.nodes:  # (a much-used box was replaced, not changed)
            node.objs = []
        self._shown_copy: tuple | None = None  # (show_max, the folded Graph or TooBig)
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
        self._shown_copy = None

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
        """``<Graph: 5 nodes, 4 edges>`` (``1 node``, ``1 edge`` for one)."""
        return f"<Graph: {_count(len(self._data.nodes), 'node')}, " \
               f"{_count(len(self._data.edges), 'edge')}>"

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
        shown = self
        try:
            shown = self.shown()
            svg = shown.svg()
            bundle = {"text/html": shown.html(), "image/svg+xml": svg,
                      "text/plain": self.summary() + self._folded_note(shown)}
        except TooBig as err:
            bundle = {"text/plain": str(err)}
        except Exception as err:
            reason = (str(err) if isinstance(err, _render.RenderError) else
                      f"The graph could not be drawn ({type(err).__name__}: {err}).")
            bundle = {"text/plain": f"{reason}\n{source_excerpt(shown.source)}"}
        if include is not None:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude is not None:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        metadata = {"image/svg+xml": {"alt": shown._alt}} if "image/svg+xml" in bundle else {}
        return bundle, metadata

    def shown(self) -> Graph:
        """What a notebook shows: this picture, or, when it has more boxes than
        :attr:`show_max`, a copy folded to that many (made once).  A picture that
        folding can't make that small raises :class:`TooBig`, whose message is
        the line shown instead."""
        limit, boxes = self.show_max, len(self._plain.nodes)
        if limit is None or boxes <= limit:
            return self
        if self._shown_copy is None or self._shown_copy[0] != limit:
            with paused_gc():
                self._shown_copy = (limit, self._fold_for_showing(limit))
        found = self._shown_copy[1]
        if isinstance(found, TooBig):
            raise found
        return found

    def _fold_for_showing(self, limit: int):
        plain = self._plain
        first = 1 + max((int(f[1:]) for f in plain.folds if f[1:].isdigit()), default=-1)
        data = fold_chains(GraphData(list(plain.nodes), list(plain.edges), dict(plain.folds)),
                           limit, first=first)
        if len(data.nodes) > limit:
            return TooBig(f"{self.summary()}: {len(plain.nodes):,} boxes are too many to "
                          f"show here, even folded (graph.show_max = {limit:,}). Draw a "
                          f"part: make_dot(..., max_nodes={limit}); or all of it: "
                          f"graph.svg(), graph.save('graph.svg').")
        shown = Graph(data, self._theme, dict(self._graph_attr), list(self._by_box.items()),
                      legend=self._legend)
        shown.node_attr, shown.edge_attr = dict(self._node_attr), dict(self._edge_attr)
        shown.show_max, shown._lang = None, self._lang
        return shown

    def _folded_note(self, shown: Graph) -> str:
        """What text/plain adds when the picture shown is folded for showing."""
        if shown is self:
            return ""
        return (f" (shown folded to {len(shown._plain.nodes):,} boxes; graph.show_max = None"
                f" shows all)")


def _count(n: int, noun: str) -> str:
    """``1 node``, ``2 nodes`` (the summary is English, as graphviz's reprs are)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


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
    :func:`autograd_kit.viz.walk.parents_first`).  The objects are then removed
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
