"""Colour themes, kept as plain data: one dict per theme.

Each theme gives DOT attributes for the whole graph, for every node and edge,
for each kind of box and arrow (see :mod:`autograd_kit.viz.model`), and for
highlighted boxes.  ``light`` is torchviz's legend:

* grey ops, light-blue leaves (parameters), orange saved tensors,
  green outputs, as torchviz draws them;
* white boxes for named intermediate tensors (forward view), small rounded
  boxes for constants (forward view) and a dashed box for folded chains.

``dark`` is the same legend for a dark notebook; ``print`` uses no fills at all
and tells kinds apart by line style, for black-and-white paper.  A custom theme
is any dict of the same shape, passed as ``make_dot(..., theme=my_theme)``.

Every theme writes its labels in Courier.  Graphviz sizes each box from its own
estimate of the label's width; the WebAssembly build (the default without a
system Graphviz) has no fonts, only built-in metrics for Courier, Helvetica and
Times, and guesses far too narrow for other names (``monospace`` gave boxes
about 30% too small, cutting labels off).  Courier is monospaced, measured
right by both renderers, and the SVG asks for ``Courier,monospace``, so a
browser without Courier still draws a monospaced font of the same width.
"""
from __future__ import annotations

SAVED_LABEL = {"fontname": "Courier", "fontsize": "8"}  # "saved as self" on dashed lines

LIGHT = {
    "graph": {},
    "node": {"style": "filled", "shape": "box", "fontsize": "10", "height": "0.2",
             "fontname": "Courier"},
    "edge": {},
    "kinds": {
        "op": {"fillcolor": "lightgrey"},
        "acc": {"fillcolor": "lightgrey"},
        "fn": {"fillcolor": "lightgrey", "shape": "ellipse", "fontsize": "9",
               "height": "0.15", "margin": "0.04,0.02"},
        "leaf": {"fillcolor": "lightblue"},
        "tensor": {"fillcolor": "white"},
        "output": {"fillcolor": "darkolivegreen1"},
        "saved": {"fillcolor": "orange"},
        "fold": {"fillcolor": "white", "style": "filled,dashed"},
        "const": {"fillcolor": "whitesmoke", "style": "filled,rounded", "fontsize": "9",
                  "height": "0.15", "margin": "0.04,0.02"},
    },
    "edges": {"flow": {}, "const": {},
              "saved": {"style": "dashed", "dir": "none", **SAVED_LABEL},
              "saved_ref": {"style": "dashed", "dir": "none", "constraint": "false",
                            **SAVED_LABEL}},
    "highlight": {"color": "red", "penwidth": "3"},
}

DARK = {
    "graph": {"bgcolor": "#1e1e1e"},
    "node": {"style": "filled", "shape": "box", "fontsize": "10", "height": "0.2",
             "fontname": "Courier", "color": "#c8c8c8", "fontcolor": "#f0f0f0"},
    "edge": {"color": "#b4b4b4", "fontcolor": "#f0f0f0"},
    "kinds": {
        "op": {"fillcolor": "#4a4a4a"},
        "acc": {"fillcolor": "#4a4a4a"},
        "fn": {"fillcolor": "#4a4a4a", "shape": "ellipse", "fontsize": "9",
               "height": "0.15", "margin": "0.04,0.02"},
        "leaf": {"fillcolor": "#1f5673"},
        "tensor": {"fillcolor": "#2d2d2d"},
        "output": {"fillcolor": "#4a6b1a"},
        "saved": {"fillcolor": "#9a5800"},
        "fold": {"fillcolor": "#2d2d2d", "style": "filled,dashed"},
        "const": {"fillcolor": "#333333", "style": "filled,rounded", "fontsize": "9",
                  "height": "0.15", "margin": "0.04,0.02"},
    },
    "edges": {"flow": {}, "const": {},
              "saved": {"style": "dashed", "dir": "none", **SAVED_LABEL},
              "saved_ref": {"style": "dashed", "dir": "none", "constraint": "false",
                            **SAVED_LABEL}},
    "highlight": {"color": "#ff5c5c", "penwidth": "3"},
}

PRINT = {
    "graph": {"bgcolor": "white"},
    "node": {"style": "solid", "shape": "box", "fontsize": "10", "height": "0.2",
             "fontname": "Courier", "color": "black", "fontcolor": "black"},
    "edge": {"color": "black"},
    "kinds": {
        "op": {"style": "solid"},
        "acc": {"style": "solid"},
        "fn": {"style": "solid", "shape": "ellipse", "fontsize": "9",
               "height": "0.15", "margin": "0.04,0.02"},
        "leaf": {"style": "bold"},
        "tensor": {"style": "rounded"},
        "output": {"style": "bold", "peripheries": "2"},
        "saved": {"style": "dashed"},
        "fold": {"style": "dotted"},
        "const": {"style": "rounded,dotted", "fontsize": "9", "height": "0.15",
                  "margin": "0.04,0.02"},
    },
    "edges": {"flow": {}, "const": {},
              "saved": {"style": "dashed", "dir": "none", **SAVED_LABEL},
              "saved_ref": {"style": "dashed", "dir": "none", "constraint": "false",
                            **SAVED_LABEL}},
    "highlight": {"penwidth": "4", "style": "bold"},
}

THEMES = {"light": LIGHT, "dark": DARK, "print": PRINT}


def get_theme(theme: str | dict) -> dict:
    """A theme by name, or a custom theme dict unchanged."""
    if isinstance(theme, dict):
        return theme
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"unknown theme {theme!r}; choose one of {sorted(THEMES)}"
                         ) from None
