"""Which DOT attributes a caller may set, and names and text made fit for a picture.

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

Every piece of text that goes into a picture (labels, names, the text
alternative, colours...) passes :func:`clean_text`, the one place that keeps
the SVG and HTML well-formed XML whatever the text: XML 1.0 can hold only tab,
line feed, carriage return, U+0020-U+D7FF, U+E000-U+FFFD and U+10000-U+10FFFF,
so control characters, lone surrogates (``"\\ud800"``), U+FFFE and U+FFFF become
U+FFFD, the replacement character.  So do the other Unicode non-characters
(U+FDD0-U+FDEF and the last two code points of every plane, U+1FFFE...
U+10FFFF): XML allows them, but they are not text (Unicode keeps them for a
program's own use) and tools that read the SVG may refuse them; C1 controls
(U+0080-U+009F), invisible as U+007F is, go the same way.

Text is also cut (:func:`shorten`): a name to :data:`MAX_NAME` columns, a
line of a label to :data:`MAX_COLUMNS` columns and a label to :data:`MAX_LINES`
lines, the text alternative to :data:`MAX_ALT` characters, each ending in "…"
where cut, so a name of a million characters makes a box of one line, not a
picture of megabytes.  The plain data (``Graph.nodes``) keeps the whole text
of op names and values; a variable's name is kept as cut.

>>> shorten("a" * 200)[-3:], len(shorten("a" * 200)) == MAX_COLUMNS
('aa…', True)
"""
from __future__ import annotations

import re
import unicodedata

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

MAX_COLUMNS = 100  #: columns of one line of a label (a Chinese character takes two)
MAX_NAME = 60      #: columns of a variable's name (room beside it for its values)
MAX_LINES = 24     #: lines of one label
MAX_ALT = 2000     #: characters of the text alternative
ELLIPSIS = "…"

_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17))
#: what no picture holds: what XML 1.0 can't (controls but tab, line feed and
#: carriage return; lone surrogates; U+FFFE, U+FFFF), C1 controls and the other
#: non-characters
_NOT_TEXT = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff{_NONCHARACTERS}]")
#: what a font's name may hold: Graphviz copies it into the SVG's ``font-family``
#: unescaped (a ``"`` there would end the attribute), so anything else is dropped
_NOT_FONT = re.compile(r"[^\w .,+-]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
_MARKUP = re.compile("[&<>\"']")


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
    one space, ends trimmed, other control characters (and whatever else XML
    can't hold, see :func:`clean_text`) made U+FFFD, cut to :data:`MAX_NAME`
    columns (a label's line holds the name and, with ``show_values``, values)."""
    return shorten(clean_text(" ".join(str(name).split())), MAX_NAME)


def clean_text(text) -> str:
    """Text for an XML attribute or element: what XML 1.0 can't hold (control
    characters, lone surrogates, U+FFFE, U+FFFF) and the other non-characters
    made U+FFFD; tabs and line breaks kept.  Nothing else changes.

    >>> clean_text("a\\x00b\\ud800c\\ufffed\\U0010ffffe\\tf\\n")
    'a\\ufffdb\\ufffdc\\ufffdd\\ufffde\\tf\\n'
    """
    text = str(text)
    return _NOT_TEXT.sub("\ufffd", text) if _NOT_TEXT.search(text) else text


def clean_font(name) -> str:
    """A ``fontname`` value as Graphviz may copy it into the SVG: letters, digits,
    spaces and ``.,+-_`` (``"Courier,monospace"``, ``"Noto Sans CJK SC"``); the
    rest dropped."""
    return shorten(_NOT_FONT.sub("", clean_text(name)))


def xml_escape(text) -> str:
    """``text`` cleaned (:func:`clean_text`) and escaped for XML and HTML, in an
    element or a quoted attribute: ``&``, ``<``, ``>``, ``"`` and ``'`` become
    entities (so ``]]>`` and ``<script>`` stay text)."""
    return _MARKUP.sub(lambda m: _ESCAPES[m.group(0)], clean_text(text))


def _width(c: str) -> int:
    return 2 if unicodedata.east_asian_width(c) in "WF" else 1


def shorten(text: str, columns: int = MAX_COLUMNS) -> str:
    """``text`` in at most ``columns`` columns (a Chinese character takes two),
    ending in "…" when cut."""
    if len(text) * 2 <= columns:  # short enough, whatever its characters
        return text
    used, cut = 0, 0
    for k, c in enumerate(text):
        used += _width(c)
        if used <= columns - 1:
            cut = k + 1  # what fits beside the ellipsis
        elif used > columns:
            return text[:cut] + ELLIPSIS
    return text


def fit_label(text) -> str:
    """A label as drawn: cleaned (:func:`clean_text`), each line cut to
    :data:`MAX_COLUMNS` columns, at most :data:`MAX_LINES` lines (the last one
    "…" when there were more)."""
    text = clean_text(text)
    if "\n" not in text and "\r" not in text:
        return shorten(text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES - 1] + [ELLIPSIS]
    if lines[0] == "":  # the WebAssembly Graphviz can crash on a label that starts
        lines[0] = " "  # with an empty line (a line of one space looks the same)
    return "\n".join(shorten(line) for line in lines)


def fit_alt(text) -> str:
    """A text alternative as written into a picture: cleaned (:func:`clean_text`)
    and cut to :data:`MAX_ALT` characters, ending in "…" when cut."""
    text = clean_text(text)
    return text if len(text) <= MAX_ALT else text[:MAX_ALT - 1] + ELLIPSIS
