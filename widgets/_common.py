"""Small pieces every widget shares: escaping, numbers and names as text, status
boxes, pictures, tabs whose titles are shown whole, and a safe way to pull
engine steps.

Nothing here knows how backward works; it only formats what the engine reports.
A widget's life in a notebook (its still copy, being shown again by the cell
that drove it, code in the notebook's spelling) is in :mod:`.notebook`; an
engine's error in plain words, in :mod:`.error_words`.
"""
from __future__ import annotations

import html
import re

import ipywidgets as W

from autograd_kit.autograd import backward_steps
from autograd_kit.i18n import N_, _, get_language
from autograd_kit.viz import access, labels

TABLE = ("<style>.ak-table td, .ak-table th {padding: 1px 8px; text-align: left; "
         "vertical-align: top}</style><table class='ak-table'>")
COLOURS = {"info": ("#eef4fb", "#4a7ab5"), "ok": ("#edf7ed", "#3c8c3c"),
           "error": ("#fdeeee", "#c0392b"), "warn": ("#fff6e0", "#c98a00")}


def esc(value) -> str:
    """Any value as text that is safe inside HTML (a variable called ``<script>``
    is shown as those eight characters)."""
    return html.escape(str(value), quote=True)


def values(t) -> str:
    """A tensor's numbers, short: ``12.``, ``[1., 2.]``, ``min .. mean .. max ..``;
    ``None`` for a missing gradient."""
    if t is None:
        return "None"
    if isinstance(t, (int, float)):  # a micrograd Value's grad
        return labels.scalar_text(t)
    if not access.is_tensor(t):
        return str(t)
    return labels.values_text(access.host_array(t))[0]


def name_index(names) -> dict[int, str]:
    """``{id(tensor): name}`` from a namespace such as ``globals()`` (names that
    start with ``_`` are skipped, as ``make_dot`` does)."""
    out: dict[int, str] = {}
    for name, obj in dict(names or {}).items():
        if isinstance(name, str) and not name.startswith("_") and (
                access.is_tensor(obj) or access.is_value(obj)):
            out.setdefault(id(obj), name)
    return out


#: what an unnamed tensor is called, with its shape
KINDS = {"leaf": N_("a leaf of shape {shape}"),
         "retained tensor": N_("a retained tensor of shape {shape}")}


def tensor_name(t, index: dict[int, str], kind: str = "leaf") -> str:
    """The variable name of ``t`` if known, else ``a leaf of shape (3)`` (the
    ``kind`` of tensor, from :data:`KINDS`, with its shape)."""
    name = index.get(id(t))
    if name:
        return name
    return _(KINDS[kind]).format(shape=labels.shape_text(access.shape_of(t)))


#: the same, after ".grad of" and "AccumulateGrad of" (whole phrases, so that a
#: translation can put the tensor in the case the phrase needs)
GRAD_OF = {"leaf": N_(".grad of a leaf of shape {shape}"),
           "retained tensor": N_(".grad of a retained tensor of shape {shape}")}
ACCUMULATE_OF = N_("AccumulateGrad of a leaf of shape {shape}")


def grad_label(t, index: dict[int, str], kind: str = "leaf") -> str:
    """``x.grad`` for a named tensor, ``.grad of a leaf of shape (3)`` otherwise."""
    name = index.get(id(t)) or (labels.value_name(t) if access.is_value(t) else "")
    return f"{name}.grad" if name else _(GRAD_OF[kind]).format(
        shape=labels.shape_text(access.shape_of(t)))


def accumulate_label(t, index: dict[int, str]) -> str:
    """``AccumulateGrad of x``, or ``AccumulateGrad of a leaf of shape (3)``."""
    name = index.get(id(t))
    return _("AccumulateGrad of {tensor}").format(tensor=name) if name else \
        _(ACCUMULATE_OF).format(shape=labels.shape_text(access.shape_of(t)))


_LATIN_THEN_HAN = re.compile(r"([A-Za-z0-9_)])([\u4e00-\u9fff])")


def spaced(text: str) -> str:
    """In Chinese, a space between a Latin word and the Chinese text after it
    ("PyTorch 的"), as the catalog writes everywhere else; other languages as they are."""
    return _LATIN_THEN_HAN.sub(r"\1 \2", text) if get_language() == "zh" else text


def box(message_html: str, kind: str = "info") -> str:
    """A coloured message box (``message_html`` must already be escaped)."""
    fill, edge = COLOURS[kind]
    return (f"<div style='background:{fill};border-left:4px solid {edge};"
            f"padding:4px 8px;margin:2px 0'>{message_html}</div>")


ENGINE = N_("The engine")  # who ran a pass, when it is autograd_kit's engine


def who_text(who: str) -> str:
    """The subject of a sentence about the engine: "The engine" translated,
    ``"PyTorch"`` as it is."""
    return _(ENGINE) if who == ENGINE else who


def picture(graph, styles: dict | None = None) -> tuple[str, str | None]:
    """``(svg, None)`` for a :class:`autograd_kit.viz.Graph`, restyled when ``styles``
    is given, or ``("", reason)`` when nothing can draw it."""
    try:
        return (graph.restyle(styles) if styles else graph.svg()), None
    except Exception as err:  # no Graphviz: say so in words, keep the widget usable
        return "", _("The graph could not be drawn: {error}").format(error=err)


def picture_html(graph, styles: dict | None = None) -> str:
    """The picture as HTML (an SVG that, inside a widget with the class
    ``ak-picture``, shrinks to the widget's width instead of hiding its right-hand
    part), or the reason it could not be drawn."""
    svg, problem = picture(graph, styles)
    return box(esc(problem), "warn") if problem else FIT_CSS + svg


#: a wide graph is scaled down to the width of its ``ak-picture`` widget
FIT_CSS = "<style>.ak-picture svg {max-width: 100%; height: auto}</style>"


class EnginePass:
    """One run of the engine's ``backward_steps`` generator, pulled a step at a time.

    (While the generator is paused between steps, the engine leaves the
    caller's grad mode in force, so the notebook keeps recording as usual.)"""

    def __init__(self, root, gradient=None, retain_graph: bool = False) -> None:
        self._gen = backward_steps(root, gradient, retain_graph=retain_graph)

    def next(self):
        """The next :class:`autograd_kit.engine.Step`; StopIteration at the end;
        engine errors (RuntimeError) pass through unchanged."""
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()


#: the widget library gives every toggle button and every tab one fixed width
#: (about 150 px), and cuts a longer label with "…" ("on a slice of a sa…",
#: and more often in Russian); these widgets' choices are as wide as their labels
WIDE_TABS = "ak-wide-tabs"
WIDE_TABS_CSS = ("<style>"
                 ".jupyter-widgets.jupyter-widget-tab.ak-wide-tabs > .lm-TabBar .lm-TabBar-tab, "
                 ".jupyter-widgets.widget-tab.ak-wide-tabs > .p-TabBar .p-TabBar-tab "
                 "{flex: 0 0 auto; max-width: none}"
                 ".jupyter-widgets.jupyter-widget-tab.ak-wide-tabs > .lm-TabBar "
                 ".lm-TabBar-content, "
                 ".jupyter-widgets.widget-tab.ak-wide-tabs > .p-TabBar .p-TabBar-content "
                 "{flex-wrap: wrap}</style>")


def choices(options: list, value) -> W.ToggleButtons:
    """Toggle buttons, each as wide as its own label (``options``: ``(label,
    key)`` pairs), so that no label is cut, in any language."""
    return W.ToggleButtons(options=options, value=value, style={"button_width": "auto"})


def wide_tabs(children: list, titles: list[str]) -> W.Tab:
    """A Tab whose titles are shown whole: each tab as wide as its title (they
    wrap onto a second row when the notebook is narrow).  The rule that does it
    is :data:`WIDE_TABS_CSS`, which the bench must show in one of its HTML widgets."""
    tab = W.Tab(children=children)
    for i, title in enumerate(titles):
        tab.set_title(i, title)
    tab.add_class(WIDE_TABS)
    return tab
