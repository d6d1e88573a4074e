"""PNG (and PDF) from the SVG, for machines without a system Graphviz.

The system ``dot`` writes every format itself.  Without it, the picture is
laid out by the WebAssembly Graphviz as SVG (:mod:`.render`) and turned into:

* PNG by `resvg <https://github.com/linebender/resvg>`_, through the
  ``resvg-py`` wheel (installed with the kit: no system library needed), at
  96 dots per inch as ``dot -Tpng`` draws;
* PDF by PyMuPDF (``pip install pymupdf``), when it is installed.

Without them, :class:`~autograd_kit.viz.render.RenderError` says what to install.
"""
from __future__ import annotations

import importlib.util

from ..i18n import _

DPI = 96.0  # as dot -Tpng
RASTER_FORMATS = ("png", "pdf")


class MissingRasteriser(RuntimeError):
    """The package that writes this format is not installed (the message says which)."""


def available(format: str) -> bool:
    """Whether ``format`` can be written without the system Graphviz."""
    module = {"png": "resvg_py", "pdf": "pymupdf"}.get(format)
    return module is not None and importlib.util.find_spec(module) is not None


def convert(svg: str, format: str) -> bytes:
    """``svg`` drawn as ``format`` ("png" or "pdf")."""
    if format == "png":
        try:
            import resvg_py
        except ImportError:
            raise MissingRasteriser(_("Writing png without the Graphviz `dot` program needs "
                                      "resvg-py: `pip install resvg-py` (or install "
                                      "Graphviz, e.g. `apt-get install graphviz`).")) from None
        return bytes(resvg_py.svg_to_bytes(svg_string=svg, dpi=DPI))
    if format == "pdf":
        try:
            import pymupdf
        except ImportError:
            raise MissingRasteriser(_("Writing pdf without the Graphviz `dot` program needs "
                                      "PyMuPDF: `pip install pymupdf` (or install Graphviz, "
                                      "e.g. `apt-get install graphviz`).")) from None
        with pymupdf.open(stream=svg.encode("utf-8"), filetype="svg") as doc:
            return doc.convert_to_pdf()
    raise MissingRasteriser(_("Writing {format} needs the Graphviz `dot` program; without "
                              "it, svg, png and pdf can be written. Install Graphviz "
                              "(e.g. `apt-get install graphviz`).").format(format=format))
