"""A font with Chinese glyphs for matplotlib charts, when the kit speaks Chinese.

matplotlib's default font (DejaVu Sans) has no CJK glyphs: a Chinese axis label
comes out as empty boxes, with a "Glyph ... missing" warning per character.
The ``noto-cjk-sans-otc`` package (Noto Sans CJK, SIL Open Font Licence, on the
package index; installed with the ``lessons`` extra) carries one.  When
:func:`autograd_kit.set_language` chooses Chinese, :func:`follow` registers it
with matplotlib and adds it *after* the default family in ``font.family``:
matplotlib (3.6 and later) takes each glyph from the first family in that list
that has it, so Latin letters and digits keep their usual look and Chinese ones come
from Noto.  Without the package, or without matplotlib, nothing happens.
"""
from __future__ import annotations

FAMILY = "Noto Sans CJK SC"
_registered: list = []


def follow(lang: str) -> bool:
    """Make matplotlib able to draw ``lang``'s letters; True when it can."""
    if lang != "zh":
        return True
    try:
        import noto_cjk_sans_otc
        from matplotlib import font_manager, rcParams
    except ImportError:
        return False
    if not _registered:
        font_manager.fontManager.addfont(str(noto_cjk_sans_otc.FONT_PATH))
        _registered.append(True)
    families = list(rcParams["font.family"])
    if FAMILY not in families:
        rcParams["font.family"] = families + [FAMILY]
    return True
