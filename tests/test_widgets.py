"""The widgets, driven from Python: buttons are clicked with ``button.click()``,
and what a learner would see is read from the HTML widgets' values."""
import re

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.widgets import AccumulationDemo, BackwardStepper, DetachDemo, InplaceDemo
from autograd_kit.widgets._common import EnginePass


def text(html: str) -> str:
    """What the browser would show: tags dropped, entities decoded, svg dropped."""
    import html as h
    html = re.sub(r"<svg\b.*?</svg>", " ", html, flags=re.S)
    html = re.sub(r"</?(div|li|ul|tr|td|th|table|br|pre)\b[^>]*>", " ", html)
    return h.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)))


def images(html: str) -> list[str]:
    """The SVG documents held by the ``<img src="data:image/svg+xml;base64,...">``
    elements of ``html``."""
    import base64
    return [base64.b64decode(m).decode("utf-8") for m in
            re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)]


def small_graph():
    x = ak.tensor(2.0, requires_grad=True)
    w = ak.tensor(3.0, requires_grad=True)
    y = x * w
    loss = y * y + x
    return x, w, loss


def grads(*leaves):
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


def same(a, b):
    """Equal lists of grads: both None, or arrays with exactly the same numbers."""
    def eq(p, q):
        return (p is None and q is None) or (p is not None and q is not None
                                             and np.array_equal(p, q))
    return all(eq(p, q) for p, q in zip(a, b, strict=True))


# -- random graphs, built twice from one seed ---------------------------------------
def random_graph(seed, lib=ak):
    """A random graph over a few leaves; intermediates are reused, so some nodes
    receive several contributions.  ``lib`` is autograd_kit or torch."""
    rng = np.random.default_rng(seed)
    shapes = [(3,), (3,), (), (2, 3)]
    leaves = [lib.tensor(rng.normal(size=shapes[i % 4]).tolist(), dtype=lib.float64,
                         requires_grad=True) for i in range(int(rng.integers(2, 5)))]
    pool = list(leaves)
    for _ in range(int(rng.integers(3, 12))):
        a = pool[int(rng.integers(len(pool)))]
        b = pool[int(rng.integers(len(pool)))]
        op = int(rng.integers(9))
        out = [a + b, a * b, a - b, a / (b * b + 1), a.sin(), a.tanh(), (a * 0.3).exp(),
               a ** 2, a.relu() + b][op]
        pool.append(out)
    root = sum(p.sum() for p in pool[len(leaves):]) if len(pool) > len(leaves) \
        else leaves[0].sum()
    return leaves, root


@pytest.mark.parametrize("seed", range(25))
def test_run_gives_the_grads_of_backward(seed):
    leaves, root = random_graph(seed)
    stepper = BackwardStepper(root)
    stepper.run()
    got = grads(*leaves)
    leaves2, root2 = random_graph(seed)
    root2.backward()
    assert same(got, grads(*leaves2))
    assert stepper.position == stepper.total and stepper.finished


@pytest.mark.parametrize("seed", range(6))
def test_stepping_matches_pytorch(seed):
    torch = pytest.importorskip("torch")
    leaves, root = random_graph(seed)
    stepper = BackwardStepper(root)
    while stepper.position < stepper.total:
        stepper.step_button.click()
    tl, troot = random_graph(seed, torch)
    troot.backward()
    for a, b in zip(leaves, tl, strict=True):
        if b.grad is None:  # a leaf the random graph did not use
            assert a.grad is None
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def freed_flags(root):
    """Which saved tensors of the graph are released, node by node."""
    from autograd_kit.engine import count_dependencies
    nodes = sorted(count_dependencies([root.grad_fn]), key=lambda n: n._seq)
    return [(n.name(), sorted(k for k, (freed, *_) in n.snapshot_saved().items() if freed))
            for n in [root.grad_fn, *nodes]]


@pytest.mark.parametrize("seed", range(8))
def test_back_and_reset_restore_exactly(seed):
    leaves, root = random_graph(seed)
    stepper = BackwardStepper(root)
    seen = []
    for _ in range(stepper.total + 1):
        seen.append((grads(*leaves), freed_flags(root)))
        stepper.step()
    assert any(flags for _, flags in seen[-1][1])  # buffers were released on the way
    for k in range(stepper.total, -1, -1):
        stepper.go_to(k)
        assert same(grads(*leaves), seen[k][0]), k
        assert freed_flags(root) == seen[k][1], k
    stepper.run()
    stepper.reset()
    assert stepper.position == 0 and all(t.grad is None for t in leaves)
    root.backward()  # released buffers were put back: a real backward still works
    leaves2, root2 = random_graph(seed)
    root2.backward()
    assert same(grads(*leaves), grads(*leaves2))


def test_buttons_slider_and_panel():
    x, w, loss = small_graph()
    s = BackwardStepper(loss, names={"x": x, "w": w, "loss": loss})
    assert s.total == 5 and s.position == 0
    assert "Ready: 5 steps" in text(s.panel.value)
    s.step_button.click()
    s.step_button.click()
    s.step_button.click()
    assert s.position == 3 and s.slider.value == 3
    panel = text(s.panel.value)
    assert "Step 3 of 5: MulBackward0" in panel
    assert "each input receives g times the other input" in panel
    assert "g * other" in panel
    assert "2 contributions summed: g = 6. + 6. = 12." in panel
    assert "12. × 3. = 36." in panel and "12. × 2. = 24." in panel
    assert "saved tensors freed" in panel
    assert "Step 3 of 5: MulBackward0" in text(s.status.value)
    s.back_button.click()
    assert s.position == 2 and s.slider.value == 2
    s.slider.value = 4  # two leaves made ready together: x first, as in PyTorch
    assert "x.grad: None → 37." in text(s.panel.value)
    s.slider.value = 5
    assert s.position == 5 and x.grad.item() == 37.0 and w.grad.item() == 24.0
    assert "w.grad: None → 24." in text(s.panel.value)
    assert "Backward pass complete" in text(s.status.value)
    s.reset_button.click()
    assert s.position == 0 and x.grad is None and s.play.value == 0
    s.run_button.click()
    assert s.position == 5 and x.grad.item() == 37.0


def test_picture_is_laid_out_once_and_recoloured():
    x, w, loss = small_graph()
    s = BackwardStepper(loss, names={"x": x, "w": w})
    graph = s._graph
    start = s.picture.value
    s.step()
    s.step()
    assert s._graph is graph and s.picture.value != start
    assert "#ffd27f" in s.picture.value and "#c6efce" in s.picture.value  # current, done
    assert "#eeeeee" in s.picture.value  # a freed saved tensor
    boxes = lambda svg: re.findall(r'<g id="(\w+)" class="node">', svg)  # noqa: E731
    assert boxes(start) == boxes(s.picture.value)


def test_second_pass_without_retain_graph_is_refused_in_words():
    x, w, loss = small_graph()
    s = BackwardStepper(loss)
    s.run()
    before = grads(x, w)
    s.step()  # a second pass
    status = text(s.status.value)
    assert "Trying to backward through the graph a second time" in status
    assert "already used by a backward pass" in status and "Traceback" not in status
    assert same(grads(x, w), before)
    s.back()
    assert s.position == 4 and "second time" not in text(s.status.value)


def test_a_refused_pass_is_not_counted_as_a_pass():
    """Pressing Step again on a freed graph is refused each time as the same
    "Pass 2", not as "Pass 3", "Pass 4"...: nothing ran."""
    x, w, loss = small_graph()
    s = BackwardStepper(loss)
    s.run()
    for _ in range(3):
        s.step()
        status = text(s.status.value)
        assert s.passes == 0 and s.position == s.total
        assert "Pass 2:" in status and "Pass 3" not in status
        assert "already used by a backward pass" in status
    s.reset()
    assert s.position == 0 and x.grad is None and "Pass" not in text(s.status.value)
    s.run()
    assert x.grad.item() == 37.0 and w.grad.item() == 24.0  # the pass still runs


def test_passes_that_run_are_counted():
    x, w, loss = small_graph()
    s = BackwardStepper(loss, retain_graph=True)
    s.run()
    s.step()
    assert s.passes == 1 and "Pass 2 done" in text(s.status.value)
    s.step()
    assert s.passes == 2 and "Pass 3 done" in text(s.status.value)
    assert x.grad.item() == 3 * 37.0
    s.go_to(2)
    assert s.passes == 0 and s.position == 2


def test_second_pass_with_retain_graph_accumulates():
    x, w, loss = small_graph()
    s = BackwardStepper(loss, retain_graph=True)
    s.run()
    s.run_again()
    assert x.grad.item() == 74.0 and w.grad.item() == 48.0
    assert "accumulated" in text(s.status.value)
    s.reset()
    assert x.grad is None


def chain(n=400):
    x = ak.tensor([0.5, -0.3, 0.2], requires_grad=True)
    h = x
    for i in range(n):
        h = h.sin() if i % 3 == 0 else (h * 1.01 if i % 3 == 1 else h + 0.1)
    return x, h.sum()


def test_400_node_graph():
    x, loss = chain()
    whole = BackwardStepper(loss, names={"x": x}, max_nodes=10_000)
    assert len(whole._graph.nodes) >= 400 and whole.total == 402
    s = BackwardStepper(loss, names={"x": x})  # folded to FOLD_ABOVE boxes by default
    from autograd_kit.widgets.stepper import FOLD_ABOVE
    assert len(s._graph.nodes) <= FOLD_ABOVE < 400 and s.total == 402
    for _ in range(10):
        s.step()
    assert s.position == 10
    s.run()
    x2, loss2 = chain()
    loss2.backward()
    assert np.array_equal(x.grad.numpy(), x2.grad.numpy())


def test_a_wide_cat_is_folded_and_stepped():
    from autograd_kit.widgets.stepper import FOLD_ABOVE
    xs = [ak.tensor([float(i)], requires_grad=True) for i in range(2000)]
    loss = (ak.cat(xs) * 3).sum()
    s = BackwardStepper(loss)
    assert s.problem is None and len(s._graph.nodes) <= FOLD_ABOVE
    s.step()
    s.step()
    s.step()
    assert s.current.node.name() == "CatBackward0"
    s.run()
    assert all(x.grad.tolist() == [3.0] for x in xs)


def test_grad_mode_is_not_left_off_between_steps():
    x, w, loss = small_graph()
    s = BackwardStepper(loss)
    s.step()
    assert ak.is_grad_enabled()
    assert (x * 2).requires_grad
    with ak.no_grad():
        p = EnginePass(loss, retain_graph=True)
        p.next()
        assert not ak.is_grad_enabled()
        p.close()
    assert ak.is_grad_enabled()


@pytest.mark.parametrize("make, words", [
    (lambda: ak.tensor([1.0, 2.0]) * 2, "not part of any graph"),
    (lambda: ak.tensor([1.0, 2.0], requires_grad=True) * 2, "more than one number"),
    (lambda: 3.0, "given a float"),
])
def test_what_cannot_be_shown_is_said_in_words(make, words):
    s = BackwardStepper(make())
    status = text(s.status.value)
    assert words in status and "Nothing to step through" in status
    assert s.step_button.disabled and s.total == 0
    s.step_button.click()
    s.run()
    assert s.position == 0
    assert "cannot show" in repr(s)


def test_non_scalar_root_with_gradient():
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    s = BackwardStepper(y, gradient=ak.tensor([1.0, 0.5]))
    s.run()
    assert x.grad.tolist() == [2.0, 2.0]


def test_freed_graph_is_said_in_words():
    x = ak.tensor(2.0, requires_grad=True)
    y = x * x  # MulBackward0 needs both saved tensors at once
    y.backward()
    s = BackwardStepper(y)
    assert "already used by a backward pass" in text(s.status.value)
    assert s.total == 0 and s.step_button.disabled
    z = (x * x).sum()  # SumBackward0 saves no tensor: one step works, then the error
    z.backward()
    s = BackwardStepper(z)
    assert s.total == 1 and "Warning: this pass will stop" in text(s.status.value)
    s.step()
    s.step()
    assert "The engine stopped at step 2" in text(s.status.value)


def test_no_stdout_on_creation(capsys):
    x, w, loss = small_graph()
    BackwardStepper(loss, names={"x": x})
    AccumulationDemo()
    DetachDemo()
    InplaceDemo().attempt("saved slice")
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_names_are_escaped():
    x = ak.tensor(2.0, requires_grad=True)
    loss = x * x
    s = BackwardStepper(loss, names={"<script>": x})
    s.run()
    for html in (s.status.value, s.panel.value, s.picture.value):
        assert "<script>" not in html
    assert "&lt;script&gt;" in s.panel.value and "&lt;script&gt;" in s.picture.value
    assert "<script>.grad: None → 4." in text(s.panel.value)


def test_reprs_are_deterministic():
    reprs = []
    for _ in range(2):
        x, w, loss = small_graph()
        s = BackwardStepper(loss)
        s.step()
        reprs.append([repr(s), repr(AccumulationDemo()), repr(DetachDemo()),
                      repr(InplaceDemo())])
    assert reprs[0] == reprs[1]
    assert not any("0x" in r for r in reprs[0])
    assert reprs[0][0] == "BackwardStepper(root=AddBackward0, step 1 of 5, at AddBackward0)"
    bundle = s._repr_mimebundle_()
    assert bundle["text/plain"] == repr(s)


def test_accumulation_demo_clicks():
    d = AccumulationDemo(x_value=2.0)  # loss = x ** 2 * 3: each backward adds 12
    d.retain_button.click()
    d.retain_button.click()
    d.backward_button.click()
    assert d.grads == [None, 12.0, 24.0, 36.0]
    d.backward_button.click()  # the graph was freed by the previous click
    assert d.grads[-1] == 36.0
    status = text(d.status.value)
    assert "second time" in status and "Traceback" not in status
    d.zero_button.click()
    d.forward_button.click()
    d.backward_button.click()
    assert d.grads[-3:] == [0.0, 0.0, 12.0]
    assert "<svg" in d.chart.value and ">36<" in d.chart.value
    assert "engine refused" in text(d.table.value)


def test_accumulation_demo_matches_pytorch():
    torch = pytest.importorskip("torch")
    d = AccumulationDemo(x_value=1.5, loss_fn=lambda x: (x * x).sin() + x ** 3,
                         label="loss = sin(x * x) + x ** 3")
    d.retain_button.click()
    d.retain_button.click()
    x = torch.tensor(1.5, dtype=torch.float32, requires_grad=True)
    loss = (x * x).sin() + x ** 3
    expected = []
    for _ in range(2):
        loss.backward(retain_graph=True)
        expected.append(x.grad.item())
    np.testing.assert_allclose(d.grads[1:], expected, rtol=1e-6)


def test_accumulation_demo_bad_input_in_words():
    d = AccumulationDemo(x_value="two")
    assert "x_value must be a number" in text(d.status.value)
    assert d.backward_button.disabled
    d = AccumulationDemo(loss_fn=lambda x: x.detach())
    assert "must return a single-number tensor" in text(d.status.value)


def test_detach_demo_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    d = DetachDemo(x_value=2.0)
    ways = {
        "a separate leaf": lambda x: torch.tensor(2.0, requires_grad=True),
        "the same tensor": lambda x: x,
        "a constant": lambda x: torch.tensor(2.0),
        "detach().clone()": lambda x: x.detach().clone(),
        "clone()": lambda x: x.clone(),
    }
    for r in d.results:
        x = torch.tensor(2.0, requires_grad=True)
        c = ways[r["way"]](x)
        (x * c).backward()
        assert float(r["x_grad"]) == x.grad.item(), r["way"]
    table = text(d.table.value)
    assert table.count("edge to c cut") == 2
    assert [r["x_grad"] for r in d.results] == ["2.", "4.", "2.", "2.", "4."]
    assert "#d62728" in d.tabs.children[3].value  # the cut input is outlined


def test_inplace_demo():
    d = InplaceDemo()
    leaf = d.attempt("leaf")
    assert not leaf.accepted and leaf.before == leaf.after
    assert "a leaf Variable that requires grad" in text(d.report.value)
    assert "Nothing was changed by the refused line" in text(d.report.value)
    assert "#ff0000" in d.report.value or 'stroke="red"' in d.report.value  # culprit

    nonleaf = d.attempt("non-leaf")
    assert nonleaf.accepted and nonleaf.after["y"][1] == 1 and nonleaf.after["x"][2] == \
        "[2., 2., 2.]"

    sliced = d.attempt("saved slice")
    assert not sliced.accepted and sliced.refused_line == "z.sum().backward()"
    assert sliced.lines[0][1] and sliced.lines[0][3]["y"][1] > sliced.lines[0][2]["y"][1]
    assert sliced.error.node.name() == "SinBackward0"
    assert sliced.before == sliced.after and sliced.after["x"][2] == "None"
    report = text(d.report.value)
    assert "SinBackward0 saved 'self'" in report and "is at version 2" in report

    clone = d.attempt("clone")
    assert clone.accepted and clone.after["y"][1] == 0
    assert d.chooser.value == "clone"
    d.chooser.value = "leaf"
    assert "x += 1" in text(d.report.value)


def test_inplace_clone_case_matches_pytorch():
    torch = pytest.importorskip("torch")
    d = InplaceDemo()
    got = d.attempt("clone").after["x"][2]
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    z = y.sin()
    c = y.clone()
    c[1:] += 1
    z.sum().backward()
    expected = "[" + ", ".join(f"{v:.4g}" for v in x.grad.tolist()) + "]"
    assert got == expected


def test_inplace_view_cat_and_retain_grad_graph_matches_pytorch():
    torch = pytest.importorskip("torch")

    def build(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0], requires_grad=True)
        h = a * 2
        h.retain_grad()
        d = lib.cat([h, b]).clone()
        d[0:1] *= 3  # CopySlices and AsStridedBackward0 in the graph
        return a, b, h, (d * d).sum()

    a, b, h, loss = build(ak)
    s = BackwardStepper(loss, names={"a": a, "b": b, "h": h})
    texts = []
    while s.position < s.total:
        s.step()
        texts.append(text(s.panel.value))
    assert any("CopySlices" in t for t in texts)
    assert any("h.grad (retain_grad) = [36., 8.]" in t for t in texts)
    ta, tb, th, tloss = build(torch)
    tloss.backward()
    assert a.grad.tolist() == ta.grad.tolist() and b.grad.tolist() == tb.grad.tolist()
    assert h.grad.tolist() == th.grad.tolist()


# -- the still copy beside the live view -------------------------------------------
def html_children(widget):
    """Every HTML widget inside ``widget`` (depth first)."""
    import ipywidgets as W
    if isinstance(widget, W.HTML):
        return [widget]
    return [h for c in getattr(widget, "children", ()) for h in html_children(c)]


def stepped():
    x, w, loss = small_graph()
    s = BackwardStepper(loss, names={"x": x, "w": w})
    s.step()
    s.step()
    return s


def inplace_tried():
    d = InplaceDemo()
    d.attempt("saved slice")
    return d


@pytest.mark.parametrize("make", [stepped, AccumulationDemo, DetachDemo, inplace_tried],
                         ids=["stepper", "accumulation", "detach", "inplace"])
def test_output_bundle_has_a_still_copy(make):
    widget = make()
    bundle = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live view stays
    still = bundle["text/html"]
    # pictures as <img> with the SVG inside: an untrusted notebook strips inline <svg>
    assert "<svg" not in still and "<script" not in still
    pictures = images(still)
    assert pictures and all(p.startswith("<svg") and "</svg>" in p for p in pictures)
    shown = text(still)
    for h in html_children(widget):  # every panel's text is in it
        assert text(h.value).strip() in shown
    assert "run the notebook to use its buttons" in shown


def test_still_copy_of_the_stepper_shows_the_current_step():
    s = stepped()
    still = s._repr_mimebundle_()["text/html"]
    assert "Step 2 of 5: MulBackward0" in text(still)
    svg = re.search(r"<svg\b.*</svg>", s.picture.value, re.S).group(0)
    assert svg in images(still)  # the picture, coloured as now
    assert "steps: 2 / 5" in text(still)


def test_still_copy_escapes_names():
    x = ak.tensor(2.0, requires_grad=True)
    s = BackwardStepper(x * x, names={"<img src=x onerror=alert(1)>": x})
    s.run()
    still = s._repr_mimebundle_()["text/html"]
    assert "<img src=x" not in still and "&lt;img src=x onerror=alert(1)&gt;" in still
    assert all("&lt;img src=x onerror=alert(1)&gt;" in p for p in images(still))


def test_legend_explains_the_dashed_saved_tensor_lines():
    from autograd_kit.widgets import marks
    legend = text(marks.legend_html())
    assert "saved tensor" in legend and "dashed" in legend
    assert "dashed" in marks.legend_html().split("border-top:")[1].split(";")[0]
    x, w, loss = small_graph()
    assert marks.legend_html() in BackwardStepper(loss)._repr_mimebundle_()["text/html"]


def test_accumulation_chart_has_an_escaped_accessible_name():
    hostile = "<img src=x onerror=alert(1)>'"
    d = AccumulationDemo(x_value=2.0, label=hostile)
    d.backward_button.click()
    chart = d.chart.value
    svg = re.search(r"<svg[^>]*>", chart).group(0)
    assert 'role="img"' in svg
    label = re.search(r'aria-label="([^"]*)"', svg).group(1)
    title = re.search(r"<title>(.*?)</title>", chart).group(1)
    assert label == title and "x.grad after each click" in title and "12" in title
    assert "<img" not in chart and "&lt;img src=x onerror=alert(1)&gt;&#x27;" in title


# -- hooks that give another gradient ---------------------------------------------------
def hooked_graph(kind):
    """``[1, 2] + [1, 2]`` arrive at y's node; a tensor hook doubles the sum, a
    node pre-hook multiplies it by 5, or a hook returns an equal copy."""
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    c = ak.tensor([1.0, 2.0])
    y = x * 1.0
    if kind == "tensor hook":
        y.register_hook(lambda g: g * 2)
    elif kind == "node pre-hook":
        y.grad_fn.register_prehook(lambda gs: (gs[0] * 5,))
    else:
        y.register_hook(lambda g: g * 1)
    return x, y, (y * c + y * c).sum()


@pytest.mark.parametrize("kind, hooked, grad", [
    ("tensor hook", "[4., 8.]", [4.0, 8.0]),
    ("node pre-hook", "[10., 20.]", [10.0, 20.0]),
    ("equal copy", None, [2.0, 4.0]),
])
def test_panel_shows_the_sum_then_what_a_hook_made_of_it(kind, hooked, grad):
    x, y, loss = hooked_graph(kind)
    s = BackwardStepper(loss, names={"x": x, "y": y})
    for _ in range(s.total):  # to the step of y.grad_fn
        s.step()
        if s.current.node is y.grad_fn:
            break
    assert s.current.node is y.grad_fn
    panel = text(s.panel.value)
    assert "2 contributions summed: g = [1., 2.] + [1., 2.] = [2., 4.]" in panel
    assert s.current.before_hooks is not None  # the engine saw a hook return a gradient
    np.testing.assert_array_equal(s.current.before_hooks.numpy(), [2.0, 4.0])
    if hooked is None:
        assert "A hook changed" not in panel  # the same numbers: nothing to say
    else:
        assert f"A hook changed g to {hooked}: that is the gradient that flowed on." in panel
    s.run()
    assert all(st.before_hooks is None for st in s.steps if st.node is not y.grad_fn)
    x2, _y2, loss2 = hooked_graph(kind)
    loss2.backward()
    assert x.grad.tolist() == x2.grad.tolist() == grad


def test_no_hook_no_before_hooks():
    x, _w, loss = small_graph()
    steps = list(ak.autograd.backward_steps(loss))
    assert steps and all(st.before_hooks is None for st in steps)
    assert x.grad is not None


def test_a_grad_the_user_holds_is_left_alone_and_given_back():
    x, w, loss = small_graph()
    x.grad = ak.tensor(10.0)
    held = x.grad
    s = BackwardStepper(loss)  # its counting pass must not add into held either
    assert x.grad is held and held.item() == 10.0
    s.run()
    x2, _w2, loss2 = small_graph()
    x2.grad = ak.tensor(10.0)
    loss2.backward()
    assert x.grad.item() == x2.grad.item() != 10.0 and held.item() == 10.0
    s.reset()
    assert x.grad is held and held.item() == 10.0 and w.grad is None


def test_a_refused_leaf_change_is_explained_by_the_lost_accumulate_grad():
    """Recording ``x += 1`` would give the leaf a grad_fn: it would stop being a
    leaf and lose its AccumulateGrad, where .grad lands (lessons 07 and 08)."""
    from autograd_kit.widgets.error_words import explain
    d = InplaceDemo()
    errs = [d.attempt("leaf").error]
    torch = pytest.importorskip("torch")
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        x.add_(1)
    errs.append(info.value)
    for words in [text(explain(err)) for err in errs] + [text(d.report.value)]:
        assert "grad_fn" in words and "stop being a leaf" in words
        assert "AccumulateGrad" in words and "fills .grad" in words
        assert "no longer exists" not in words and "would describe" not in words


def test_the_stepper_gives_the_versions_of_a_changed_saved_pytorch_tensor():
    torch = pytest.importorskip("torch")
    from autograd_kit.widgets.error_words import explain
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a * a  # MulBackward0 saves a (version 0)...
    a.mul_(2)  # ...which is now at version 1
    s = BackwardStepper(b.sum())
    s.run()
    status = text(s.status.value)
    assert "PyTorch stopped at step 2" in status
    # the stepper gives its root, so the node PyTorch's message does not name is found
    assert "MulBackward0 saved 'other' for backward at version 0, but that tensor is now " \
        "at version 1" in status
    # without a root, the versions and the shape are still given
    unnamed = text(explain(s._error, "PyTorch"))
    assert "A tensor of shape (2) was saved for backward at version 0, but it is now at " \
        "version 1" in unnamed and "PyTorch stopped instead" in unnamed


def test_pytorch_and_kit_errors_get_the_same_words():
    import functools
    torch = pytest.importorskip("torch")
    from autograd_kit.widgets.error_words import explain
    words = {}
    for lib in (ak, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        cases = {"graph_freed": y.backward, "non_scalar": (x * x).backward,
                 "no_grad_fn": lib.ones(2).sum().backward,
                 "grad_shape": functools.partial((x * x).backward, lib.ones(3))}
        for kind, call in cases.items():
            with pytest.raises(RuntimeError) as info:
                call()
            words[lib.__name__, kind] = text(explain(info.value)).split("message (")[0]
    for kind in ("graph_freed", "non_scalar", "no_grad_fn", "grad_shape"):
        assert words["autograd_kit", kind] == words["torch", kind]
        assert "stopped with an error" not in words["torch", kind]


def test_a_wide_graph_is_scaled_to_the_pictures_width():
    """The stepper's picture shrinks a wide SVG to its column (a browser would
    otherwise hide the graph's right-hand side behind the panel)."""
    from autograd_kit.widgets._common import FIT_CSS
    a = ak.tensor([1.0, 2.0], requires_grad=True)
    wide = sum((a * k).sum() for k in range(1, 9))
    s = BackwardStepper(wide)
    assert "ak-picture" in s.picture._dom_classes
    assert s.picture.value.startswith(FIT_CSS) and "<svg" in s.picture.value
    assert ".ak-picture svg" in FIT_CSS and "max-width: 100%" in FIT_CSS


# -- a bench driven from Python shows its new state under the cell that drove it ----------
class FakeKernelShell:
    """Stands for the notebook's shell: its execution count tells cells apart;
    ``end_cell()`` fires its post_execute callbacks, as IPython does."""

    def __init__(self):
        self.execution_count = 1
        self.shown = []  # (what happened, display id, the still copy's text)
        self.callbacks = []
        shell = self

        class Events:
            def register(self, event, fn):
                assert event == "post_execute"
                shell.callbacks.append(fn)

            def unregister(self, event, fn):
                shell.callbacks.remove(fn)
        self.events = Events()

    def end_cell(self):
        for fn in list(self.callbacks):
            fn()
        self.execution_count += 1


@pytest.fixture
def kernel(monkeypatch):
    from autograd_kit.widgets import notebook
    shell = FakeKernelShell()

    def display(obj):
        shell.shown.append(("display", f"d{len(shell.shown)}", text(obj.still_html())))
        return shell.shown[-1][1]

    monkeypatch.setattr(notebook, "_kernel_shell", lambda: shell)
    monkeypatch.setattr(notebook, "_display", display)
    return shell


def test_driving_a_displayed_stepper_shows_it_once_per_cell(kernel):
    x, w, loss = small_graph()
    s = BackwardStepper(loss)
    s.step()  # never displayed: a check cell's stepper shows nothing
    assert kernel.shown == []
    s._repr_mimebundle_()  # the cell that shows it
    kernel.end_cell()
    s.reset()
    s.step()
    s.step()
    assert kernel.shown == []  # nothing while the cell runs...
    kernel.end_cell()  # ...one still copy when it ends, in the state it left
    assert [k for k, *_ in kernel.shown] == ["display"]
    assert "Step 2 of 5" in kernel.shown[-1][2]
    assert kernel.callbacks == []
    s.run()
    kernel.end_cell()
    assert [k for k, *_ in kernel.shown] == ["display", "display"]
    assert "Backward pass complete" in kernel.shown[-1][2]
    kernel.end_cell()
    assert len(kernel.shown) == 2  # a cell that does not drive it shows nothing


def test_clicks_and_the_slider_show_nothing_new(kernel):
    x, w, loss = small_graph()
    s = BackwardStepper(loss)
    s._repr_mimebundle_()
    s.step_button.click()
    s.slider.value = 3
    s.reset_button.click()
    assert kernel.shown == []
    a = AccumulationDemo()
    a._repr_mimebundle_()
    a.backward_button.click()
    assert kernel.shown == []
    a.backward()
    kernel.end_cell()
    assert [k for k, *_ in kernel.shown] == ["display"]


def test_inplace_still_copy_shows_every_case_tried(kernel):
    d = InplaceDemo(case="saved slice")
    d._repr_mimebundle_()
    kernel.end_cell()
    for case in ("leaf", "non-leaf", "saved slice", "clone"):
        d.attempt(case)
    kernel.end_cell()
    assert [k for k, *_ in kernel.shown] == ["display"]
    shown = kernel.shown[-1][2]
    for title in ("on a leaf", "on a non-leaf", "on a slice of a saved tensor", "on a clone()"):
        assert title in shown
    assert shown.count("Accepted: every line ran.") == 2
    assert shown.count("Refused at") == 2


# -- params=, as make_dot takes it ------------------------------------------------------------
def _params_case(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 1))
    x = lib.ones(4, 3)
    loss = model(x).pow(2).mean()
    return model, loss


@pytest.mark.parametrize("engine", ["autograd_kit", "torch"])
def test_stepper_shows_parameter_names(engine):
    lib = ak if engine == "autograd_kit" else pytest.importorskip("torch")
    model, loss = _params_case(lib)
    params = dict(model.named_parameters())
    s = BackwardStepper(loss, params=params)
    labels = [n.lines[0] for n in s._graph.nodes if n.kind == "leaf"]
    assert sorted(labels) == sorted(params)  # "0.weight", "0.bias", "2.weight", "2.bias"
    s.run()
    shown = text(s.status.value) + " " + text(s.panel.value)
    for name in params:
        assert f"{name}.grad" in shown
    for p in params.values():
        assert p.grad is not None  # the pass really ran


@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
def test_a_choice_shows_its_label_in_the_still_copy_not_its_key(lang):
    from autograd_kit import i18n
    with i18n.language(lang):
        d = InplaceDemo(case="saved slice")
        shown = text(d.still_html())
        label = i18n._("on a slice of a saved tensor")
    assert label in shown
    if lang != "en":
        assert "saved slice" not in shown


# -- the lessons' widgets after Run All ------------------------------------------------
LESSONS = __import__("pathlib").Path(__file__).resolve().parent.parent / "lessons"


def widget_texts(nb, cell_id: str) -> str:
    """The text of every HTML part of the widget that cell ``cell_id`` displays,
    as the widget state saved at the end of the run holds it (what a learner's
    front end shows when the run is over)."""
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    todo = [o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
            for o in cell.outputs if "application/vnd.jupyter.widget-view+json" in
            o.get("data", {})][:1]
    found = []
    while todo:
        model = state[todo.pop(0)]
        if model["model_name"] == "HTMLModel":
            found.append(text(model["state"].get("value", "")))
        todo += [child.removeprefix("IPY_MODEL_") for child in
                 model["state"].get("children", [])]
    return " ".join(found)


@pytest.mark.parametrize("lesson, cell_id, at_start, not_there", [
    ("03_backward_and_chain_rule.ipynb", "cell-15", "Step 0 of 5.",
     ("complete", "Pass 2", "Step 5")),
    ("06_accumulation_and_retain_graph.ipynb", "cell-28", "after start: x.grad = None",
     ("refused", "after backward")),
])
@pytest.mark.slow  # (runs lessons in kernels: left out of the quick loop)
def test_after_run_all_the_learners_widget_is_at_its_start(lesson, cell_id, at_start,
                                                           not_there):
    """The widget the text asks the learner to press is not the one the later
    cells drive: after running the whole lesson it still stands at its start."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(LESSONS / lesson, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                   store_widget_state=True,
                   resources={"metadata": {"path": str(LESSONS)}}).execute()
    shown = widget_texts(nb, cell_id)
    assert at_start in shown
    assert not any(words in shown for words in not_there), shown


class _Kernel:
    """A notebook kernel's shell, as far as the widgets look at it."""

    kernel = object()

    def __init__(self, user_ns):
        self.user_ns = user_ns


@pytest.mark.parametrize("name", ["ak", "torch", "agk"])
def test_code_shown_calls_the_kit_what_the_notebook_calls_it(monkeypatch, name):
    import IPython
    import autograd_kit
    from widgets import DetachDemo
    from widgets.notebook import as_written
    monkeypatch.setattr(IPython, "get_ipython",
                        lambda: _Kernel({"np": object(), name: autograd_kit}))
    assert as_written("c = torch.tensor(2.)  # a torch.tensor") == \
        f"c = {name}.tensor(2.)  # a {name}.tensor"
    shown = DetachDemo(2.0)._table()
    assert f"{name}.tensor(" in shown
    assert name == "torch" or "torch.tensor(" not in shown
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)  # outside a notebook
    assert as_written("torch.ones(3)") == "torch.ones(3)"


def test_code_shown_for_real_pytorch_says_torch_beside_a_kit_called_ak(monkeypatch):
    """``lib=torch`` runs the bench on PyTorch: its code says ``torch.`` even in a
    notebook that calls the kit ``ak`` (the kit's own benches there say ``ak.``)."""
    import IPython
    import autograd_kit
    from autograd_kit.widgets.notebook import as_written
    real = pytest.importorskip("torch")
    monkeypatch.setattr(IPython, "get_ipython",
                        lambda: _Kernel({"ak": autograd_kit, "torch": real}))
    assert as_written("torch.ones(3)", real) == "torch.ones(3)"
    assert as_written("torch.ones(3)") == "ak.ones(3)"
    for shown in (DetachDemo(2.0, lib=real)._table(), DetachDemo(2.0, lib=real)._intro(),
                  text(AccumulationDemo(lib=real).code.value)):
        assert "torch.tensor(" in shown and "ak.tensor" not in shown
    assert "ak.tensor(" in text(AccumulationDemo().code.value)


def test_error_words_call_the_kit_what_the_notebook_calls_it(monkeypatch):
    """The plain-word explanation of the kit's error names the fix the way the
    learner writes it (``ak.ones_like``); PyTorch's keeps ``torch.``."""
    import IPython
    import autograd_kit
    from autograd_kit.widgets.error_words import error_words
    monkeypatch.setattr(IPython, "get_ipython", lambda: _Kernel({"ak": autograd_kit}))
    y = ak.tensor([1., 2.], requires_grad=True) * 2
    with pytest.raises(RuntimeError) as kit_error:
        y.backward()
    assert "gradient=ak.ones_like(root)" in error_words(kit_error.value)
    assert "torch." not in error_words(kit_error.value)
    real = pytest.importorskip("torch")
    t = real.tensor([1., 2.], requires_grad=True) * 2
    with pytest.raises(RuntimeError) as torch_error:
        t.backward()
    assert "gradient=torch.ones_like(root)" in error_words(torch_error.value, "PyTorch")


# -- every label has room, in every language -----------------------------------------
#: the widget library's widths (ipywidgets 8, at its 13 px font): a button or a
#: toggle button without a width of its own, the text inside a tab, a description
BUTTON_ROOM, TAB_ROOM, DESCRIPTION_ROOM, FONT_PX = 148 - 20, 144 - 20, 80, 13


def px(words: str, size: float = FONT_PX) -> float:
    """How wide ``words`` are drawn, on the generous side (the chart's own
    measure: a Chinese character is a square, any other 0.6 of one)."""
    from autograd_kit.widgets.plot import text_width
    return text_width(words, size)


def room(css: str | None, default: float) -> float:
    """The width a CSS length leaves for a label (``auto``: as wide as the label)."""
    if css in ("auto", "max-content", "fit-content", "initial"):
        return float("inf")
    if not css:
        return default
    assert css.endswith("px"), css  # a width in other units is not judged here
    return float(css[:-2]) - 20


def crowded_labels(widget) -> list[str]:
    """The labels of ``widget`` and everything inside it that the width the
    layout gives them would cut with "…"."""
    import ipywidgets as W
    from autograd_kit.widgets._common import WIDE_TABS, WIDE_TABS_CSS
    styles = []

    def html(w):
        if isinstance(w, W.HTML):
            styles.append(w.value)
        for c in getattr(w, "children", ()):
            html(c)
    html(widget)
    found = []

    def visit(w):
        if isinstance(w, W.ToggleButtons):
            space = room(w.style.button_width, BUTTON_ROOM)
            found.extend(label for label in w._options_labels if px(label) > space)
        elif isinstance(w, W.Button):
            if px(w.description) > room(w.layout.width, BUTTON_ROOM):
                found.append(w.description)
        elif isinstance(w, W.Tab):
            wide = WIDE_TABS in w._dom_classes and any(WIDE_TABS_CSS in s for s in styles)
            found.extend(t for t in w.titles if not wide and px(t) > TAB_ROOM)
        elif isinstance(w, W.IntSlider):  # (a Play button shows no description)
            if px(w.description) > room(w.style.description_width, DESCRIPTION_ROOM + 20):
                found.append(w.description)
        for c in getattr(w, "children", ()):
            visit(c)
    visit(widget)
    return found


@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
def test_every_button_tab_and_choice_label_has_room_for_its_words(lang):
    """No label is cut with "…" ("on a slice of a sa…"): the in-place bench's
    choices, the detach bench's tabs, every button, in every language."""
    from autograd_kit.i18n import language
    from autograd_kit.widgets._common import WIDE_TABS_CSS
    with language(lang):
        x, w, loss = small_graph()
        benches = [InplaceDemo("saved slice"), DetachDemo(2.0), AccumulationDemo(),
                   BackwardStepper(loss, names={"x": x, "w": w})]
        assert [crowded_labels(b) for b in benches] == [[], [], [], []]
        chooser = benches[0].chooser
        assert chooser.style.button_width == "auto"
        assert WIDE_TABS_CSS in benches[1].children[0].value


def test_the_check_finds_a_cut_label():
    """The check above is not blind: the library's own width cuts these."""
    import ipywidgets as W
    long = "on a slice of a saved tensor"
    assert crowded_labels(W.ToggleButtons(options=[long, "clone"])) == [long]
    assert crowded_labels(W.Tab(children=[W.HTML()], titles=["отдельный листовой тензор"]))
    assert crowded_labels(W.Button(description=long)) == [long]
    assert crowded_labels(W.Button(description=long, layout=W.Layout(width="auto"))) == []


# -- no doubled full stop after a value ---------------------------------------------------
DOUBLED_STOP = re.compile(r"\d\.\.(?!\.)|\d\.。")


@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
def test_a_value_ending_in_a_dot_is_not_followed_by_another(lang):
    """``k.grad = 4.`` is a float written as PyTorch writes it; no sentence puts a
    full stop after it ("k.grad = 4.."), at any step, in any bench."""
    from autograd_kit.i18n import language
    with language(lang):
        k = ak.tensor(2., requires_grad=True)
        s = BackwardStepper(k * k, names={"k": k})
        shown = []
        for _ in range(s.total + 1):  # every step, then a second pass
            shown += [text(s.status.value), text(s.panel.value)]
            s.step()
        shown += [text(s.status.value), text(s.panel.value)]
        a = AccumulationDemo(x_value=2.0)
        for act in (a.backward, a.backward, a.forward, a.zero_grad):
            act()
            shown.append(text(a.status.value))
        shown.append(text(DetachDemo(2.0).children[0].value))
    assert "k.grad = 4." in " ".join(shown)
    assert [t for t in shown if DOUBLED_STOP.search(t)] == []


# -- the chart -----------------------------------------------------------------------------
def chart_texts(svg: str) -> list[tuple[str, float, float, float, float]]:
    """``(text, left, top, right, bottom)`` of every text of the chart, as drawn:
    from its position, anchor and width (``textLength`` when it is squeezed)."""
    import html as h
    out = []
    for m in re.finditer(r"<text ([^>]*)>([^<]*)</text>", svg):
        attrs = dict(re.findall(r"([\w-]+)='([^']*)'", m[1]))
        words = h.unescape(m[2])
        width = float(attrs.get("textLength", px(words, 10)))
        x, y = float(attrs["x"]), float(attrs["y"])
        left = {"start": x, "middle": x - width / 2, "end": x - width}[
            attrs.get("text-anchor", "start")]
        out.append((words, left, y - 8, left + width, y + 2))
    return out


def chart_of(lang: str, clicks: int) -> str:
    from autograd_kit.i18n import language
    with language(lang):
        d = AccumulationDemo(x_value=1.5)
        for k in range(clicks):
            (d.backward, d.forward, lambda: d.backward(True), d.zero_grad)[k % 4]()
        return d.chart.value


@pytest.mark.parametrize("clicks", [1, 7, 25, 140])
@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
def test_no_text_of_the_chart_overlaps_another_or_leaves_it(lang, clicks):
    """Axis title, tick labels, values and the label above: each in a place of
    its own, inside the chart, for a few clicks and for many, in every language."""
    from autograd_kit.widgets import plot
    svg = chart_of(lang, clicks)
    texts = chart_texts(svg)
    touching = [(a[0], b[0]) for i, a in enumerate(texts) for b in texts[i + 1:]
                if a[1] < b[3] + 2 and b[1] < a[3] + 2 and a[2] < b[4] and b[2] < a[4]]
    assert touching == []
    assert all(0 <= left and right <= plot.W and 0 <= top and bottom <= plot.H
               for _w, left, top, right, bottom in texts)


@pytest.mark.parametrize("clicks", [7, 25, 140])
def test_the_chart_counts_clicks_in_whole_numbers(clicks):
    """The x axis is labelled with click numbers: integers, from 0, evenly spaced
    (every 1, 2, 5, 10... clicks), and the axis title has a line of its own
    below them."""
    svg = chart_of("en", clicks)
    texts = chart_texts(svg)
    lowest = max(bottom for w, *_box, bottom in texts if w.isdigit())
    ticks = [t for t in texts if t[0].isdigit() and t[4] == lowest]  # the bottom row
    numbers = [int(t[0]) for t in ticks]
    assert numbers[0] == 0 and len(numbers) >= 3
    step = numbers[1] - numbers[0]
    assert step in (1, 2, 5, 10, 20, 50) and numbers == list(range(0, clicks + 1, step))
    [title] = [t for t in texts if t[0] == "click"]
    assert title[2] >= lowest  # its top under the numbers' bottom


@pytest.mark.parametrize("lang", ["en", "zh", "ru"])
def test_the_charts_label_fits_its_width_in_every_language(lang):
    """The label above the chart (the y values' name) is drawn whole: within
    the chart's width, squeezed by ``textLength`` if a translation needed it."""
    from autograd_kit.i18n import _, language
    from autograd_kit.widgets import plot
    with language(lang):
        label = _("x.grad after each click")
    svg = chart_of(lang, 3)
    [(words, left, _t, right, _b)] = [t for t in chart_texts(svg) if t[0] == label]
    assert 0 <= left and right <= plot.W
    long = plot.line_chart([(0, 1.0), (1, 2.0)], "x" * 200)
    [(_w, left, _t, right, _b)] = [t for t in chart_texts(long) if t[0] == "x" * 200]
    assert 0 <= left and right <= plot.W and "textLength" in long
