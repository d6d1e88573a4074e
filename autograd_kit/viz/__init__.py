"""Pictures of autograd graphs: torchviz's ``make_dot``, made for teaching.

>>> from autograd_kit.viz import make_dot          # doctest: +SKIP
>>> make_dot(loss, names=globals(), show_values=True)   # doctest: +SKIP

The pipeline has one module per step:

* :mod:`.model`     graph -> plain data (boxes and arrows), iterative walk;
  :mod:`.constants` finds the inputs that need no gradient (forward view);
* :mod:`.fold`      long chains and wide fans of inputs folded into one box
  (``max_nodes``); a graph too big to walk whole is cut instead (:mod:`.model`);
  :mod:`.progress` shows a bar while a big graph is read;
* :mod:`.hubs`      a box used by many operations drawn once per use (fast layout);
* :mod:`.dot`       plain data -> DOT text, with themes (:mod:`.themes`) and escaping,
  and the key of ``legend=True`` (:mod:`.legend`); :mod:`.attributes` says which
  DOT attributes callers may set, cleans names and keeps every text that goes
  into a picture well-formed XML and short;
* :mod:`.render`    DOT -> SVG, by the system Graphviz or Graphviz in WebAssembly;
  :mod:`.raster` makes PNG and PDF from the SVG without a system Graphviz;
* :mod:`.describe`  the picture in words, its text alternative (alt text);
* :mod:`.picture`   the :class:`Graph` object that notebooks display, shown as an
  ``<img>`` too (:mod:`.embed`) so untrusted notebooks show it, and answering
  torchviz's ``graphviz.Digraph`` idioms (:mod:`.digraph`);
* :mod:`.svgpatch`  recolouring a rendered SVG without a new layout.

Everything reads the graph by duck typing (:mod:`.access`), so autograd_kit's
tensors and PyTorch's tensors are drawn by the same code, and so is micrograd's
scalar ``Value`` (one box per Value); what is none of these is refused in one
sentence (:func:`.access.require_tensor`).  Beside the pictures,
:mod:`.error_facts` reads either engine's autograd errors as facts (kind, node,
versions) for the explanations and the widgets.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import access, attributes
from .fold import fold_chains
from .model import Options, build
from .picture import Graph
from .progress import SILENT, Progress, paused_gc
from .render import RenderError, set_renderer
from .themes import THEMES, get_theme

__all__ = ["make_dot", "Graph", "RenderError", "set_renderer", "THEMES"]


def make_dot(root, params=None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50, *, show_values: bool = False,
             show_grads: bool = False, names: Mapping | None = None,
             view: str = "backward", highlight: Iterable | None = None,
             highlight_style: dict | None = None, node_styles: Mapping | None = None,
             max_nodes: int | None = None, unfold=None, theme: str | dict = "light",
             graph_attr: dict | None = None, legend: bool = False,
             alt: str | None = None) -> Graph:
    """Draw the autograd graph that produced ``root``: a tensor of autograd_kit or
    PyTorch, a ``grad_fn`` node, a micrograd ``Value``, or a non-empty tuple/list
    of them.  Anything else is a one-line ``TypeError``
    (:func:`.access.require_tensor`), also an object that only looks like a tensor.
    A Value's box shows its operation, name (or ``label``) and number, and its
    ``.grad`` with ``show_grads``; ``view`` does not change its picture.

    The first five arguments are torchviz's: ``params`` maps names to tensors
    (``dict(model.named_parameters())``); ``show_attrs`` lists each op's saved
    non-tensor values (cut to ``max_attr_chars``); ``show_saved`` draws saved
    tensors as orange boxes.  Then:

    * ``show_values`` / ``show_grads``: numbers and ``.grad`` in tensor boxes;
    * ``names``: a namespace such as ``globals()``; tensors found in it (by
      identity, names starting with ``_`` skipped) are labelled with their name;
    * ``view``: ``"backward"`` (grad_fn graph, as torchviz) or ``"forward"``
      (tensors and ops as in a textbook);
    * ``highlight``: tensors or nodes drawn with ``highlight_style`` (thick red
      border by default); ``node_styles``: ``{tensor_or_node: {DOT attrs}}``
      (attributes of the look only: links and files are refused, see
      :mod:`.attributes`); names are cleaned of line breaks and control
      characters;
    * ``max_nodes`` / ``unfold``: fold long chains of big graphs (see :mod:`.fold`);
      a graph of more than :data:`.model.WALK_LIMIT` nodes is not walked to its
      end: the ``max_nodes`` boxes nearest the output are drawn and one box
      stands for the rest (see :mod:`.model`), so ``max_nodes=100`` draws a
      graph of a million nodes in a moment.  Without ``max_nodes`` every node
      is read (a bar shows the progress of a big graph when tqdm is
      installed), and a notebook shows a picture of more than
      :data:`.picture.SHOW_MAX` boxes folded to that many (``Graph.show_max``);
    * ``theme``: ``"light"``, ``"dark"``, ``"print"`` or a theme dict;
      ``graph_attr``: extra DOT graph attributes (``{"rankdir": "LR"}``);
    * ``legend``: draw a key to the theme's box colours and the dashed
      "saved for backward" lines;
    * ``alt``: the picture's text alternative, for screen readers and the
      notebook's metadata; by default it is written from the graph
      ("Computational graph of 7 nodes: MulBackward0 takes x and w; ...").
    """
    if view not in ("backward", "forward"):
        raise ValueError(f"view must be 'backward' or 'forward', not {view!r}")
    access.require_tensor(root, "make_dot", many=True, nodes=True, values=True)
    roots = list(root) if isinstance(root, (tuple, list)) else [root]
    named = _names(params, names)
    opts = Options(view=view, show_attrs=show_attrs, show_saved=show_saved,
                   max_attr_chars=max_attr_chars, show_values=show_values,
                   show_grads=show_grads, names={id(t): n for n, t in named},
                   named=[t for _, t in named if access.is_tensor(t)])
    chosen = get_theme(theme)
    if isinstance(theme, dict):
        attributes.check_theme(chosen)
    graph_attr = attributes.check(graph_attr, attributes.GRAPH, "graph_attr")
    mark = (attributes.check(highlight_style, attributes.NODE, "highlight_style")
            if highlight_style is not None else chosen.get("highlight", {}))
    if (access.is_tensor(highlight) or access.is_node(highlight) or access.is_value(highlight)
            or isinstance(highlight, str)):
        highlight = [highlight]
    styles = [(obj, mark) for obj in (highlight or ())]
    styles += [(obj, attributes.check(style, attributes.NODE, "node_styles"))
               for obj, style in (node_styles or {}).items()]
    progress = Progress() if max_nodes is None or unfold is True else SILENT  # bounded work
    try:
        with paused_gc():
            data = build(roots, opts, None if unfold is True else max_nodes, progress)
            data = fold_chains(data, max_nodes, unfold).finish(progress)
            graph = Graph(data, chosen, graph_attr, styles, alt=alt, legend=legend)
    finally:
        progress.close()
    if max_nodes is not None:
        graph.show_max = None  # made as small as asked: shown as it is
    return graph


def _names(params, names) -> list[tuple[str, object]]:
    """``(name, tensor)`` pairs, ``params`` first, each tensor once (micrograd
    Values are named the same way)."""
    pairs: list[tuple[str, object]] = []
    for name, t in dict(params or {}).items():
        if not (access.is_tensor(t) or access.is_value(t)):
            raise TypeError(f"params[{name!r}] is a {type(t).__name__}, not a tensor")
        pairs.append((attributes.clean_name(name), t))
    for name, t in (names or {}).items():
        if isinstance(name, str) and not name.startswith("_") and (
                access.is_tensor(t) or access.is_value(t)):
            pairs.append((attributes.clean_name(name), t))
    seen, unique = set(), []
    for name, t in pairs:
        if name and id(t) not in seen:
            seen.add(id(t))
            unique.append((name, t))
    return unique
