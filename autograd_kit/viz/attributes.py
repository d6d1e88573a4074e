"""Which DOT attributes a caller may set, and names made fit for a picture.

``make_dot(node_styles=..., highlight_style=..., graph_attr=..., theme={...})``
pass DOT attributes through to Graphviz.  Some attributes are links or files:
``URL``/``href`` become ``<a xlink:href="...">`` in the SVG (a
``javascript:`` link runs when clicked), ``image``/``shapefile``/``fontpath``
read files.  Only attributes that change how boxes, lines and the page look
are accepted (:data:`NODE`, :data:`EDGE`, :data:`GRAPH`); anything else is a
``ValueError`` that lists what is allowed.

Names of variables (``names=globals()``, ``params=``) become labels: a name
with line breaks or control characters (``"\\nx"``, ``"x\\x1b[31m"``) is cleaned
by :func:`clean_name`.

>>> clean_name("\\n  w\\tout\\x01")
'w out\\ufffd'
"""
from __future__ import annotations

import re

_LOOK = {"color", "fillcolor", "fontcolor", "fontname", "fontsize", "penwidth", "style",
         "label"}
#: attributes of boxes
NODE = frozenset(_LOOK | {"shape", "width", "height", "margin", "peripheries", "fixedsize",
                          "labelloc", "xlabel", "gradientangle", "orientation", "sides",
                          "skew", "distortion", "regular"})
#: attributes of arrows (themes' ``edge`` and ``edges``)
EDGE = frozenset(_LOOK | {"dir", "arrowhead", "arrowtail", "arrowsize", "constraint",
                          "weight", "minlen", "headlabel", "taillabel", "labelfontsize",
                          "labelfontcolor", "decorate"})
#: attributes of the whole picture
GRAPH = frozenset(_LOOK | {
    "rankdir", "size", "ratio", "bgcolor", "nodesep", "ranksep", "splines", "dpi",
    "labelloc", "labeljust", "margin", "pad", "concentrate", "newrank", "ordering",
    "center", "rotate", "landscape", "compound", "outputorder", "pencolor"})

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check(attrs, allowed: frozenset, what: str) -> dict:
    """``attrs`` as a dict of strings, if every key is in ``allowed``; else a
    ``ValueError`` naming the first key refused and the ones accepted."""
    if attrs is None:
        return {}
    if not isinstance(attrs, dict):
        raise TypeError(f"{what} must be a dict of DOT attributes, not "
                        f"{type(attrs).__name__}")
    for key in attrs:
        if str(key) not in allowed:
            raise ValueError(f"{what} can't set {str(key)!r}: only attributes of the "
                             f"picture's look are accepted ({', '.join(sorted(allowed))})")
    return {str(k): v for k, v in attrs.items()}


def check_theme(theme: dict) -> dict:
    """A custom theme dict, checked section by section (see
    :mod:`autograd_kit.viz.themes` for its shape)."""
    check(theme.get("graph"), GRAPH, "theme['graph']")
    check(theme.get("node"), NODE, "theme['node']")
    check(theme.get("edge"), EDGE, "theme['edge']")
    check(theme.get("highlight"), NODE, "theme['highlight']")
    for kind, attrs in (theme.get("kinds") or {}).items():
        check(attrs, NODE, f"theme['kinds'][{kind!r}]")
    for kind, attrs in (theme.get("edges") or {}).items():
        check(attrs, EDGE, f"theme['edges'][{kind!r}]")
    return theme


def clean_name(name) -> str:
    """A variable name fit for a label: whitespace runs (line breaks, tabs) made
    one space, ends trimmed, other control characters made U+FFFD."""
    return _CONTROL.sub("\ufffd", " ".join(str(name).split()))


def clean_text(text) -> str:
    """Text for an XML attribute or element: control characters made U+FFFD
    (XML 1.0 can't hold them), tabs and line breaks kept."""
    return _CONTROL.sub("\ufffd", str(text))
