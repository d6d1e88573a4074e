"""torchviz's idioms: the picture answers like the ``graphviz.Digraph`` torchviz returns.

Code written for torchviz keeps working on :class:`autograd_kit.viz.Graph`::

    dot = make_dot(y)
    dot.format = "png"                      # the format render/view/pipe use
    dot.attr(rankdir="LR")                  # graph attributes (or "node"/"edge", ...)
    dot.graph_attr["size"] = "8,8"          # the same, as a dict; so node_attr, edge_attr
    dot.render("graph")                     # writes 'graph' (DOT) and 'graph.png'
    dot.render("graph", format="pdf")       # 'graph.pdf'; outfile="g.png" works too
    dot.save("graph")                       # the DOT source, as graphviz does
    dot.view()                              # render, then open it where there is a screen
    dot.pipe(format="png")                  # the bytes

As in graphviz, ``render`` writes the DOT source to ``filename`` and the picture
beside it with the format as an extra suffix (``graph.png``), returns the
picture's path, and with ``cleanup=True`` removes the source.  ``view`` opens
the file with the system's viewer and returns at once; on a machine without a
screen (a server, a container, CI) it only writes the files, as graphviz's
``view`` does when no viewer can start.  PNG and PDF need no system Graphviz
(see :mod:`.raster`).

Attributes set this way pass the same allow-list as ``make_dot``'s
(:mod:`.attributes`): no links, no files.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import attributes

DEFAULT_FILENAME = "Digraph.gv"  # graphviz's default name for an unnamed graph
#: suffixes :meth:`DigraphIdioms.save` writes as pictures; any other writes DOT source
PICTURE_SUFFIXES = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".ps": "ps",
                    ".jpg": "jpg", ".jpeg": "jpg"}


class AttrDict(dict):
    """A dict of DOT attributes that tells its picture when it changes (so the
    DOT source is written again) and refuses attributes off the allow-list."""

    def __init__(self, owner, allowed: frozenset, what: str, values=None) -> None:
        super().__init__(attributes.check(dict(values or {}), allowed, what))
        self._owner, self._allowed, self._what = owner, allowed, what

    def _check(self, values: dict) -> dict:
        return attributes.check(values, self._allowed, self._what)

    def __setitem__(self, key, value) -> None:
        self._check({key: value})
        super().__setitem__(str(key), value)
        self._owner._changed()

    def __delitem__(self, key) -> None:
        super().__delitem__(key)
        self._owner._changed()

    def update(self, *args, **kwargs) -> None:
        new = self._check(dict(*args, **kwargs))
        super().update(new)
        self._owner._changed()

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, *args):
        value = super().pop(*args)
        self._owner._changed()
        return value

    def popitem(self):
        item = super().popitem()
        self._owner._changed()
        return item

    def clear(self) -> None:
        super().clear()
        self._owner._changed()


class DigraphIdioms:
    """What torchviz users call on the object ``make_dot`` returns.  The class
    using it provides ``_changed()`` (forget the drawn picture), ``svg()`` and
    ``_render_bytes(format)``."""

    format = "svg"
    filename: str | None = None
    directory: str = ""
    engine = "dot"

    def _init_attrs(self, graph_attr: dict | None) -> None:
        self._graph_attr = AttrDict(self, attributes.GRAPH, "graph_attr", graph_attr)
        self._node_attr = AttrDict(self, attributes.NODE, "node_attr")
        self._edge_attr = AttrDict(self, attributes.EDGE, "edge_attr")

    @property
    def graph_attr(self) -> AttrDict:
        """Attributes of the whole picture (``{"rankdir": "LR"}``); changing them
        draws the picture again."""
        return self._graph_attr

    @graph_attr.setter
    def graph_attr(self, values: dict) -> None:
        self._graph_attr = AttrDict(self, attributes.GRAPH, "graph_attr", values)
        self._changed()

    @property
    def node_attr(self) -> AttrDict:
        """Attributes of every box, over the theme's."""
        return self._node_attr

    @node_attr.setter
    def node_attr(self, values: dict) -> None:
        self._node_attr = AttrDict(self, attributes.NODE, "node_attr", values)
        self._changed()

    @property
    def edge_attr(self) -> AttrDict:
        """Attributes of every arrow, over the theme's."""
        return self._edge_attr

    @edge_attr.setter
    def edge_attr(self, values: dict) -> None:
        self._edge_attr = AttrDict(self, attributes.EDGE, "edge_attr", values)
        self._changed()

    def attr(self, kw: str | None = None, _attributes: dict | None = None, **attrs) -> None:
        """``attr(rankdir="LR")`` or ``attr("graph", ...)`` sets graph attributes;
        ``attr("node", ...)`` / ``attr("edge", ...)`` those of every box or arrow."""
        values = {**(_attributes or {}), **attrs}
        target = {None: self._graph_attr, "graph": self._graph_attr,
                  "node": self._node_attr, "edge": self._edge_attr}.get(kw)
        if target is None:
            raise ValueError(f"attr statement must target graph, node, or edge: {kw!r}")
        target.update(values)

    # -- files -------------------------------------------------------------------
    def pipe(self, format: str | None = None, *args, **kwargs) -> bytes:
        """The picture in ``format`` (default: ``self.format``) as bytes."""
        format = (format or self.format or "svg").lower()
        if format == "svg":
            return self.svg().encode("utf-8")
        return self._render_bytes(format)

    def save(self, filename: str | os.PathLike | None = None,
             directory: str | os.PathLike | None = None) -> Path:
        """Write the DOT source, as graphviz does (``save("graph")``, ``.gv``,
        ``.dot``, any other name), or, for a picture's suffix (``.svg``, ``.png``,
        ``.pdf``...), the picture in that format.  Returns the path."""
        path = self._path(filename, directory)
        path.parent.mkdir(parents=True, exist_ok=True)
        picture = PICTURE_SUFFIXES.get(path.suffix.lower())
        if picture is None:
            path.write_text(self.source, encoding="utf-8")
        else:
            path.write_bytes(self.pipe(picture))
        return path

    def render(self, filename: str | os.PathLike | None = None,
               directory: str | os.PathLike | None = None, view: bool = False,
               cleanup: bool = False, format: str | None = None, *args,
               outfile: str | os.PathLike | None = None, **kwargs) -> str:
        """graphviz's ``render``: the DOT source to ``filename`` (default
        ``Digraph.gv``), the picture to ``filename`` + ``.`` + format; or the
        picture to ``outfile``, its format from its suffix, the source beside it
        as ``.gv``.  ``cleanup`` removes the source afterwards; ``view`` opens
        the picture.  Returns the picture's path."""
        if outfile is not None:
            format = format or Path(outfile).suffix[1:] or self.format
            out = Path(outfile) if directory is None else Path(directory, outfile)
            source = self._path(filename, directory) if filename else out.with_suffix(".gv")
        else:
            format = format or self.format
            source = self._path(filename, directory)
            out = Path(f"{source}.{format.lower()}")
        data = self.pipe(format)
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(self.source, encoding="utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        if cleanup:
            source.unlink()
        if view:
            open_file(out)
        return str(out)

    def view(self, filename: str | os.PathLike | None = None,
             directory: str | os.PathLike | None = None, cleanup: bool = False,
             *args, **kwargs) -> str:
        """Render, then open the picture with the system's viewer (without
        waiting for it); without a screen, only the files are written."""
        return self.render(filename, directory, view=True, cleanup=cleanup)

    def _path(self, filename, directory) -> Path:
        """Where the source goes; a name or folder given is kept for next time,
        as graphviz keeps it."""
        if filename is not None:
            self.filename = os.fspath(filename)
        if directory is not None:
            self.directory = os.fspath(directory)
        name = self.filename or DEFAULT_FILENAME
        return Path(directory or self.directory or "", name)


def has_screen() -> bool:
    """Whether a viewer could show anything: always on macOS and Windows; on
    Linux and the BSDs only with an X11 or Wayland display."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_file(path: Path) -> bool:
    """Open ``path`` with the system's viewer, in the background; False when
    there is no screen or no viewer (nothing is opened, nothing waits)."""
    if not has_screen():
        return False
    try:
        if sys.platform == "win32":
            os.startfile(str(path))  # noqa: S606 (the user's own file, as graphviz does)
            return True
        opener = "open" if sys.platform == "darwin" else shutil.which("xdg-open")
        if opener is None:
            return False
        _launch([opener, str(path)])
        return True
    except OSError:
        return False


def _launch(command: list[str]) -> None:
    """Start a viewer detached from this process, not waiting for it (nor its output)."""
    subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
