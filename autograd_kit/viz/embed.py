"""Pictures that show in a notebook opened fresh: SVG as an ``<img>`` with a data URI.

A notebook that was cloned, copied or handed out by a JupyterHub is *untrusted*
until its reader runs it.  JupyterLab then skips ``image/svg+xml`` outputs (an
SVG can carry scripts) and cleans HTML outputs, which strips inline ``<svg>``
elements and leaves only their text ("%3 n0 MulBackward0 ...").  An image
element whose source is the SVG itself, as a ``data:`` URI, passes the cleaning
and shows the picture: a browser never runs scripts inside an image.  The same
markup shows in trusted notebooks, VS Code and nbviewer, so stored outputs use
it everywhere:

* :func:`img_html` turns one SVG into such an ``<img>`` (its text alternative
  as ``alt``);
* :func:`svgs_as_images` does it for every inline ``<svg>`` in an HTML fragment
  (the still copy of a widget, see ``autograd_kit.widgets``).

>>> html = img_html("<svg xmlns='http://www.w3.org/2000/svg'/>", 'a "graph"')
>>> html.startswith('<img src="data:image/svg+xml;base64,') and 'alt="a &quot;graph&quot;"' in html
True
"""
from __future__ import annotations

import base64
import html
import re

from .attributes import clean_text, fit_alt, xml_escape

_SVG = re.compile(r"<svg\b[\s\S]*?</svg>")
_LABEL = re.compile(r"""\baria-label=(["'])(.*?)\1""", re.S)
_TITLE = re.compile(r"<title>([\s\S]*?)</title>")
_XMLNS = 'xmlns="http://www.w3.org/2000/svg"'
STYLE = "max-width:100%;height:auto"


def data_uri(svg: str) -> str:
    """``data:image/svg+xml;base64,...`` holding ``svg`` (UTF-8, so labels in any
    language survive).  An SVG used as an image must name its namespace; one
    that doesn't gets it.  What XML can't hold is replaced first
    (:func:`~autograd_kit.viz.attributes.clean_text`): UTF-8 can't encode a lone
    surrogate, and an image that is not well-formed XML shows nothing."""
    svg = clean_text(svg)
    if "xmlns=" not in svg[:svg.find(">") + 1]:
        svg = svg.replace("<svg", f"<svg {_XMLNS}", 1)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def img_html(svg: str, alt: str = "", style: str = STYLE) -> str:
    """One ``<img>`` showing ``svg``, closed as XML wants it (``<img ... />``, which
    HTML reads the same); ``alt`` (plain text) is cleaned, cut and escaped
    (:func:`~autograd_kit.viz.attributes.fit_alt`), and so is ``style``."""
    return (f'<img src="{data_uri(svg)}" alt="{xml_escape(fit_alt(alt))}" '
            f'style="{xml_escape(style)}" />')


def alt_of(svg: str) -> str:
    """The text alternative an SVG carries: its ``aria-label``, else its first
    ``<title>``, as plain text (entities decoded)."""
    opening = svg[:svg.find(">") + 1]
    found = _LABEL.search(opening) or _TITLE.search(svg)
    return html.unescape(found.group(found.lastindex)) if found else ""


def svgs_as_images(fragment: str) -> str:
    """``fragment`` with every inline ``<svg>...</svg>`` replaced by an ``<img>``
    of it (alt text from the SVG)."""
    return _SVG.sub(lambda m: img_html(m.group(0), alt_of(m.group(0))), fragment)
