"""A tiny line chart drawn as SVG text: no plotting library, nothing printed.

It carries its own words (``role="img"``, ``aria-label`` and ``<title>``): what
it plots and the values, for screen readers and for viewers without pictures.

Every text has a place of its own, whatever the language and the number of
clicks: the chart's label on the top line, as wide as the chart (squeezed with
``textLength`` if a translation is longer); the value ticks left of the y axis,
which moves right to make room for the widest; the click numbers (integers)
under the x axis, thinned to every 2nd, 5th, 10th... click when they would
touch; the axis title ("click") on a line of its own under them; a value above
its point only when the points are far enough apart (else above the last one).

>>> svg = line_chart([(0, None), (1, 12.0), (2, 24.0)], "x.grad")
>>> svg.startswith("<svg") and "24" in svg
True
>>> "<title>x.grad. Values: None, 12, 24</title>" in svg
True
"""
from __future__ import annotations

import math
import unicodedata

from autograd_kit.i18n import _

from ._common import esc

W, H = 340, 180
FONT = 10                    # px, every text of the chart
MARGIN = 4                   # px between a text and the chart's edge
TOP = 34                     # y of the highest value (the label line and a value above it)
BOTTOM = H - 34              # y of the lowest value: the x axis
TICK_Y = BOTTOM + 14         # baseline of the click numbers
TITLE_Y = H - MARGIN         # baseline of the x axis title, under the click numbers
RIGHT = W - 14               # x of the last click (room for half its number)
STEPS = (1, 2, 5)            # click numbers every 1, 2, 5, 10, 20, 50... clicks


def text_width(text: str, size: float = FONT) -> float:
    """How wide ``text`` is drawn at ``size`` px, on the generous side: a Chinese
    character is a square, any other character 0.6 of one (sans-serif letters
    and digits are narrower)."""
    return sum(size if unicodedata.east_asian_width(c) in "WF" else 0.6 * size
               for c in text)


def _ticks(lo: float, hi: float) -> list[float]:
    if hi == lo:
        return [lo]
    return [lo + (hi - lo) * k / 4 for k in range(5)]


def _number(value: float) -> str:
    return f"{value:.4g}"


def click_text(click) -> str:
    """A click number as an integer (``3``, never ``3.0``)."""
    return str(int(click)) if float(click).is_integer() else f"{click:g}"


def click_step(clicks: list, spacing: float) -> int:
    """Label every ``step``-th click (1, 2, 5, 10, 20, 50...): the smallest step
    at which neighbouring click numbers, ``spacing`` px apart per click, do not
    touch."""
    widest = max((text_width(click_text(c)) for c in clicks), default=0.0) + FONT / 2
    for power in range(0, 12):
        for base in STEPS:
            step = base * 10 ** power
            if step * spacing >= widest:
                return step
    return step


def _fitted(x: float, y: float, text: str, room: float, anchor: str = "start",
            fill: str = "#555") -> str:
    """A ``<text>`` element, squeezed to ``room`` px when it would be wider."""
    squeeze = (f" textLength='{room:.0f}' lengthAdjust='spacingAndGlyphs'"
               if text_width(text) > room else "")
    return (f"<text x='{x:.1f}' y='{y:.1f}' text-anchor='{anchor}' fill='{fill}'{squeeze}>"
            f"{esc(text)}</text>")


def line_chart(points: list[tuple[int, float | None]], label: str,
               title: str | None = None) -> str:
    """Points ``(click, value)`` joined by lines; ``None`` values leave a gap.

    ``label`` is written above the chart; ``title`` (default: ``label``) says
    what the chart shows, in its accessible name, followed by the values."""
    ys = [y for _click, y in points if y is not None]
    lo, hi = min(ys + [0.0]), max(ys + [0.0])
    if hi == lo:
        hi = lo + 1.0
    n = max(len(points) - 1, 1)
    ticks = _ticks(lo, hi)
    pad = max(30.0, math.ceil(max(text_width(_number(t)) for t in ticks)) + 2 * MARGIN + 2)
    spacing = (RIGHT - pad) / n

    def px(i: int) -> float:
        return pad + spacing * i

    def py(v: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * (v - lo) / (hi - lo)

    name = esc(_("{title}. Values: {values}").format(
        title=label if title is None else title,
        values=", ".join("None" if y is None else f"{y:.4g}" for _click, y in points)))
    # (role and aria-label in double quotes, as the graph pictures write them)
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' "
             f"viewBox='0 0 {W} {H}' font-family='sans-serif' font-size='{FONT}' "
             f'role="img" aria-label="{name}"><title>{name}</title>',
             f"<line x1='{pad:.1f}' y1='{BOTTOM}' x2='{RIGHT + 6}' y2='{BOTTOM}' "
             "stroke='#888'/>",
             f"<line x1='{pad:.1f}' y1='{TOP - 8}' x2='{pad:.1f}' y2='{BOTTOM}' "
             "stroke='#888'/>"]
    for t in ticks:
        parts.append(f"<text x='{pad - MARGIN:.1f}' y='{py(t) + 3:.1f}' text-anchor='end' "
                     f"fill='#555'>{_number(t)}</text>")
    segment: list[str] = []
    for i, (_click, y) in enumerate(points + [(0, None)]):
        if y is None:
            if len(segment) > 1:
                parts.append(f"<polyline fill='none' stroke='#4a7ab5' stroke-width='2' "
                             f"points='{' '.join(segment)}'/>")
            segment = []
            continue
        segment.append(f"{px(i):.1f},{py(y):.1f}")
    shown = [y for _click, y in points if y is not None]
    every_value = spacing >= max((text_width(_number(y)) for y in shown), default=0) + 4
    last = max((i for i, (_click, y) in enumerate(points) if y is not None), default=-1)
    step = click_step([c for c, _y in points], spacing)
    for i, (click, y) in enumerate(points):
        if y is not None:
            parts.append(f"<circle cx='{px(i):.1f}' cy='{py(y):.1f}' r='3' fill='#d62728'/>")
            if every_value or i == last:
                half = text_width(_number(y)) / 2
                x = min(max(px(i), pad + half + 2), W - MARGIN - half)  # inside, off the axis
                parts.append(f"<text x='{x:.1f}' y='{py(y) - 6:.1f}' text-anchor='middle'>"
                             f"{_number(y)}</text>")
        if int(float(click)) % step == 0 or step == 1:
            parts.append(f"<line x1='{px(i):.1f}' y1='{BOTTOM}' x2='{px(i):.1f}' "
                         f"y2='{BOTTOM + 3}' stroke='#888'/>"
                         f"<text x='{px(i):.1f}' y='{TICK_Y}' text-anchor='middle' "
                         f"fill='#555'>{esc(click_text(click))}</text>")
    middle = (pad + RIGHT) / 2  # under the axis, within the chart on both sides
    parts.append(_fitted(middle, TITLE_Y, _("click"), 2 * min(middle - MARGIN, W - MARGIN - middle),
                         "middle"))
    parts.append(_fitted(MARGIN, 12, label, W - 2 * MARGIN))
    parts.append("</svg>")
    return "".join(parts)
