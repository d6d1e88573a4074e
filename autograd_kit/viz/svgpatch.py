"""Recolouring boxes of a rendered SVG without drawing it again.

A step-by-step widget shows the same graph many times, with different boxes
marked done / current / waiting.  Layout is the slow part of drawing, and the
positions don't change, so the SVG is rendered once and cut into pieces here:
the shape and text tags inside each ``<g id="n3" class="node">`` group become
separate pieces.  :meth:`SvgPatcher.restyle` rewrites only those tags and joins
the pieces again, a few milliseconds even for hundreds of boxes.

Styles use DOT's names (``fillcolor``, ``color``, ``penwidth``, ``fontcolor``) or
SVG's (``fill``, ``stroke``, ``stroke-width``).  Colours are written into the SVG
as given, so use SVG colours (``red``, ``#ffcc00``); the X11-only names of the
built-in themes are translated.
"""
from __future__ import annotations

import re

from .attributes import fit_alt, fit_label, xml_escape

_GROUP = re.compile(r'<g id="([^"]+)" class="(node|edge|cluster)">')
_TAG = re.compile(r"<(polygon|ellipse|path|polyline|text)\b[^>]*>")
_ATTR = re.compile(r'\s([\w:-]+)="([^"]*)"')

TO_SVG = {"fillcolor": "fill", "color": "stroke", "penwidth": "stroke-width",
          "fontcolor": "font", "fill": "fill", "stroke": "stroke",
          "stroke-width": "stroke-width"}
X11 = {"darkolivegreen1": "#caff70", "darkolivegreen3": "#a2cd5a",
       "lightgrey": "#d3d3d3", "lightgray": "#d3d3d3"}


def _xml(value) -> str:
    return xml_escape(fit_label(X11.get(str(value), str(value))))


def set_attrs(tag: str, new: dict[str, str]) -> str:
    """``tag`` with the attributes in ``new`` replaced, or added before its end."""
    present = dict(_ATTR.findall(tag))
    for key, value in new.items():
        if key in present:
            tag = re.sub(rf'(\s{re.escape(key)}=")[^"]*(")',
                         lambda m, v=value: m.group(1) + v + m.group(2), tag, count=1)
        else:
            end = len(tag) - (2 if tag.endswith("/>") else 1)
            tag = f'{tag[:end]} {key}="{value}"{tag[end:]}'
    return tag


class SvgPatcher:
    """An SVG cut into pieces so that node styles can be changed quickly."""

    def __init__(self, svg: str) -> None:
        self.pieces: list[str] = []
        self.shapes: dict[str, list[int]] = {}  # node id -> pieces of its shapes
        self.texts: dict[str, list[int]] = {}   # node id -> pieces of its text
        groups = list(_GROUP.finditer(svg))
        pos = 0
        for k, g in enumerate(groups):
            if g.group(2) != "node":
                continue
            end = groups[k + 1].start() if k + 1 < len(groups) else len(svg)
            for tag in _TAG.finditer(svg, g.end(), end):
                self.pieces.append(svg[pos:tag.start()])
                which = self.texts if tag.group(1) == "text" else self.shapes
                which.setdefault(g.group(1), []).append(len(self.pieces))
                self.pieces.append(tag.group(0))
                pos = tag.end()
        self.pieces.append(svg[pos:])

    def restyle(self, styles: dict[str, dict]) -> str:
        """The SVG with the given node ids restyled; unknown ids are skipped."""
        pieces = list(self.pieces)
        for node_id, style in styles.items():
            shape_attrs, text_attrs = _split(style)
            shapes = self.shapes.get(node_id, [])
            filled = [i for i in shapes if 'fill="none"' not in pieces[i]] or shapes[:1]
            for i in shapes:
                new = dict(shape_attrs)
                if i not in filled:
                    new.pop("fill", None)
                if new:
                    pieces[i] = set_attrs(pieces[i], new)
            for i in self.texts.get(node_id, []) if text_attrs else ():
                pieces[i] = set_attrs(pieces[i], text_attrs)
        return "".join(pieces)


def _split(style: dict) -> tuple[dict[str, str], dict[str, str]]:
    """DOT or SVG style keys -> (attributes of shapes, attributes of text)."""
    shape, text = {}, {}
    for key, value in style.items():
        if key not in TO_SVG:
            raise ValueError(f"restyle can change {sorted(TO_SVG)}, not {key!r}")
        target = TO_SVG[key]
        if target == "font":
            text["fill"] = _xml(value)
        else:
            shape[target] = _xml(value)
    return shape, text


_SVG_TAG = re.compile(r"<svg\b[^>]*?(/?)>")


def with_alt(svg: str, alt: str) -> str:
    """``svg`` with a text alternative: ``role="img"`` and ``aria-label`` on the
    ``<svg>`` element and a ``<title>`` as its first child (what screen readers
    read, and browsers show as a tooltip).  ``alt`` is plain text; it is cleaned,
    cut (:func:`~autograd_kit.viz.attributes.fit_alt`) and escaped."""
    match = _SVG_TAG.search(svg)
    if match is None or not alt:
        return svg
    text = xml_escape(fit_alt(alt))
    opening = set_attrs(match.group(0), {"role": "img", "aria-label": text})
    return f"{svg[:match.start()]}{opening}\n<title>{text}</title>{svg[match.end():]}"
