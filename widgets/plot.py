"""A tiny line chart drawn as SVG text: no plotting library, nothing printed.

It carries its own words (``role="img"``, ``aria-label`` and ``<title>``): what
it plots and the values, for screen readers and for viewers without pictures.

>>> svg = line_chart([(0, None), (1, 12.0), (2, 24.0)], "x.grad")
>>> svg.startswith("<svg") and "24" in svg
True
>>> "<title>x.grad. Values: None, 12, 24</title>" in svg
True
"""
from __future__ import annotations

from autograd_kit.i18n import _

from ._common import esc

W, H, PAD = 340, 180, 36
TOP, BOTTOM = 30, 180 - 26  # y of the highest and of the lowest value


def _ticks(lo: float, hi: float) -> list[float]:
    if hi == lo:
        return [lo]
    return [lo + (hi - lo) * k / 4 for k in range(5)]


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

    def px(i: int) -> float:
        return PAD + (W - 2 * PAD + 10) * i / n

    def py(v: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * (v - lo) / (hi - lo)

    name = esc(_("{title}. Values: {values}").format(
        title=label if title is None else title,
        values=", ".join("None" if y is None else f"{y:.4g}" for _click, y in points)))
    # (role and aria-label in double quotes, as the graph pictures write them)
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' "
             f"viewBox='0 0 {W} {H}' font-family='sans-serif' font-size='10' "
             f'role="img" aria-label="{name}"><title>{name}</title>',
             f"<line x1='{PAD}' y1='{py(lo):.1f}' x2='{W - 10}' y2='{py(lo):.1f}' "
             "stroke='#888'/>",
             f"<line x1='{PAD}' y1='{TOP - 8}' x2='{PAD}' y2='{py(lo):.1f}' stroke='#888'/>"]
    for t in _ticks(lo, hi):
        parts.append(f"<text x='{PAD - 4}' y='{py(t) + 3:.1f}' text-anchor='end' "
                     f"fill='#555'>{t:.4g}</text>")
    segment: list[str] = []
    for i, (_click, y) in enumerate(points + [(0, None)]):
        if y is None:
            if len(segment) > 1:
                parts.append(f"<polyline fill='none' stroke='#4a7ab5' stroke-width='2' "
                             f"points='{' '.join(segment)}'/>")
            segment = []
            continue
        segment.append(f"{px(i):.1f},{py(y):.1f}")
    for i, (click, y) in enumerate(points):
        if y is not None:
            parts.append(f"<circle cx='{px(i):.1f}' cy='{py(y):.1f}' r='3' fill='#d62728'/>"
                         f"<text x='{px(i):.1f}' y='{py(y) - 6:.1f}' text-anchor='middle'>"
                         f"{y:.4g}</text>")
        parts.append(f"<text x='{px(i):.1f}' y='{H - 6}' text-anchor='middle' "
                     f"fill='#555'>{click}</text>")
    parts.append(f"<text x='{W - 10}' y='{H - 16}' text-anchor='end' fill='#555'>"
                 f"{esc(_('click'))}</text>"
                 f"<text x='{PAD + 4}' y='11' fill='#555'>{esc(label)}</text></svg>")
    return "".join(parts)
