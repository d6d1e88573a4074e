"""Pictures of autograd graphs: the DOT text that ``make_dot`` writes.

The pictures read the graph by duck typing, so they are checked first against
real PyTorch graphs (the shape autograd_kit copies), then against autograd_kit's
own.  What is neither engine's tensor is refused in one line.
Nothing here renders; rendering is tested in test_viz_render.py.
"""
import doctest
import re
import subprocess
import sys
import textwrap

import pytest

from autograd_kit import viz
from autograd_kit.viz import access, dot, fold, labels, legend, themes
from autograd_kit.viz import make_dot

_NODE = re.compile(r'^\t(\w+) \[(.*)\]$')
_EDGE = re.compile(r'^\t(\w+) -> (\w+) \[(.*)\]$')
_ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse(source: str):
    """``({id: attrs}, [(tail, head, attrs)])`` read back from our DOT text."""
    nodes, edges = {}, []
    for line in source.splitlines():
        if m := _EDGE.match(line):
            edges.append((m[1], m[2], dict(_ATTR.findall(m[3]))))
        elif (m := _NODE.match(line)) and m[1] not in ("graph", "node", "edge"):
            nodes[m[1]] = dict(_ATTR.findall(m[2]))
    return nodes, edges


def label(attrs: dict) -> list[str]:
    return attrs["label"].split("\\n")


def flow(edges):
    return [(t, h) for t, h, a in edges if a.get("style") != "dashed"]


def by_label(nodes, first_line):
    return [i for i, a in nodes.items() if label(a)[0] == first_line]


@pytest.fixture
def torch():
    """PyTorch, the oracle for the graph's shape; tests that need it skip without it."""
    return pytest.importorskip("torch")


@pytest.fixture
def linear(torch):
    """``y = (x * w + b).sum()`` with three leaves."""
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    y = (x * w + b).sum()
    return x, w, b, y


# -- the classic pictures, torchviz's legend ----------------------------------------

GOLDEN = textwrap.dedent('''\
    digraph {
    \tgraph [size="12,12"]
    \tnode [style="filled" shape="box" fontsize="10" height="0.2" fontname="Courier"]
    \tn0 [id="n0" label="y\\n()" fillcolor="darkolivegreen1"]
    \tn1 [id="n1" label="SumBackward0" fillcolor="lightgrey"]
    \tn2 [id="n2" label="AddBackward0" fillcolor="lightgrey"]
    \tn3 [id="n3" label="MulBackward0" fillcolor="lightgrey"]
    \tn4 [id="n4" label="AccumulateGrad" fillcolor="lightgrey"]
    \tn5 [id="n5" label="x\\n(2)" fillcolor="lightblue"]
    \tn6 [id="n6" label="AccumulateGrad" fillcolor="lightgrey"]
    \tn7 [id="n7" label="w\\n(2)" fillcolor="lightblue"]
    \tn8 [id="n8" label="AccumulateGrad" fillcolor="lightgrey"]
    \tn9 [id="n9" label="b\\n()" fillcolor="lightblue"]
    \tn1 -> n0 [id="e0"]
    \tn2 -> n1 [id="e1"]
    \tn3 -> n2 [id="e2"]
    \tn8 -> n2 [id="e3"]
    \tn4 -> n3 [id="e4"]
    \tn6 -> n3 [id="e5"]
    \tn5 -> n4 [id="e6"]
    \tn7 -> n6 [id="e7"]
    \tn9 -> n8 [id="e8"]
    }
    ''')


def test_linear_golden_source(linear):
    x, w, b, y = linear
    g = make_dot(y, names={"x": x, "w": w, "b": b, "y": y})
    assert g.source == GOLDEN
    assert repr(g) == "<Graph: 10 nodes, 9 edges>"


def test_torchviz_readme_model_with_params(torch):
    """torchviz's own example: ``make_dot(y.mean(), params=dict(model.named_parameters()))``."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1))
    y = model(torch.randn(1, 8))
    nodes, edges = parse(make_dot(y.mean(), params=dict(model.named_parameters())).source)
    fills = {i: a["fillcolor"] for i, a in nodes.items()}
    leaves = {tuple(label(nodes[i])) for i, c in fills.items() if c == "lightblue"}
    assert leaves == {("0.weight", "(16, 8)"), ("0.bias", "(16)"),
                      ("2.weight", "(1, 16)"), ("2.bias", "(1)")}
    assert [label(nodes[i]) for i, c in fills.items() if c == "darkolivegreen1"] == [["()"]]
    ops = sorted(label(nodes[i])[0] for i, c in fills.items() if c == "lightgrey")
    assert ops == sorted(["MeanBackward0", "AddmmBackward0", "AddmmBackward0",
                          "TanhBackward0", "TBackward0", "TBackward0"] + ["AccumulateGrad"] * 4)
    assert len(edges) == len(nodes) - 1  # a tree: every box but the output feeds one box


def test_same_input_twice_draws_two_arrows(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * x
    nodes, edges = parse(make_dot(y).source)
    (mul,) = by_label(nodes, "MulBackward0")
    (acc,) = by_label(nodes, "AccumulateGrad")
    assert flow(edges).count((acc, mul)) == 2


def test_multiple_roots_are_all_outputs(linear):
    x, w, b, y = linear
    z = (x * 2).sum()
    nodes, edges = parse(make_dot((y, z), names={"y": y, "z": z, "x": x}).source)
    outputs = [i for i, a in nodes.items() if a["fillcolor"] == "darkolivegreen1"]
    assert [label(nodes[i])[0] for i in outputs] == ["y", "z"]
    assert len(by_label(nodes, "x")) == 1  # the shared leaf is drawn once
    assert len(by_label(nodes, "AccumulateGrad")) == 3


def test_root_that_is_a_leaf_or_a_node(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    nodes, edges = parse(make_dot(x).source)
    assert [a["fillcolor"] for a in nodes.values()] == ["darkolivegreen1"] and edges == []
    y = (x * 3).sum()
    nodes, _ = parse(make_dot(y.grad_fn).source)
    assert "darkolivegreen1" not in {a["fillcolor"] for a in nodes.values()}
    assert by_label(nodes, "SumBackward0") == ["n0"]


def test_copy_slices_is_drawn_with_its_short_name(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    z = torch.zeros(3)
    z[0] = x[0] * 2
    nodes, _ = parse(make_dot(z).source)
    assert by_label(nodes, "CopySlices")
    assert not any("::" in a["label"] for a in nodes.values())


# -- saved tensors and attributes ---------------------------------------------------

def test_show_saved_orange_boxes_dashed_lines(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 2
    y = (h * h).exp().sum()
    g = make_dot(y, names={"h": h}, show_saved=True)
    nodes, edges = parse(g.source)
    saved = {i: label(a) for i, a in nodes.items() if a["fillcolor"] == "orange"}
    # x * 2 saves the 0-d 2 as "other"; h * h saves h twice; exp saves its result
    assert sorted(saved.values()) == [["other", "()"], ["other, self (h)", "(2)"],
                                      ["result", "(2)"]]
    dashed = [(t, h_) for t, h_, a in edges if a.get("style") == "dashed"]
    assert all(h_ in saved for _, h_ in dashed)
    (h_box,) = [i for i, lines in saved.items() if lines[0] == "other, self (h)"]
    square = g.node_id(y.grad_fn.next_functions[0][0].next_functions[0][0])
    # one line for both slots, its label naming them as the box does
    assert [(t, a["label"]) for t, h_, a in edges if h_ == h_box] == [
        (square, "saved as other, self")]
    assert all(a.get("dir") == "none" for *_, a in edges if a.get("style") == "dashed")


@pytest.mark.parametrize("view", ["backward", "forward"])
@pytest.mark.parametrize("engine", ["autograd_kit", "torch"])
def test_a_tensor_an_op_saves_twice_gets_one_line_naming_both_slots(engine, view):
    """``x * x`` saves x as self and as other; ``binary_cross_entropy(p, p)`` as
    self and as target: one dashed line between the op and the tensor, whose
    label names both slots (two lines put their labels side by side, read as
    "saved as selfsaved as target"), whether the tensor has a box of its own (a
    leaf, "saved_ref") or an orange one, in both views and every language."""
    from autograd_kit.i18n import _, language
    lib = pytest.importorskip(engine) if engine == "torch" else __import__(engine)
    x = lib.tensor([1., 2.], requires_grad=True)
    p = lib.tensor([0.25, 0.5], requires_grad=True)
    h = x * 2
    cases = [(x * x, {"x": x}, "x", "other, self"),
             (lib.nn.functional.binary_cross_entropy(p, p), {"p": p}, "p", "self, target"),
             (h * h, {}, None, "other, self")]
    for root, names, saved, slots in cases:
        for lang in ("en", "zh", "ru"):
            with language(lang):
                source = make_dot(root, names=names, show_saved=True, view=view).source
                words = _("saved as {slot}").format(slot=slots)
            nodes, edges = parse(source)
            dashed = [(t, h_, a["label"]) for t, h_, a in edges if a.get("style") == "dashed"]
            pairs = [(t, h_) for t, h_, _label in dashed]
            assert len(pairs) == len(set(pairs)), dashed  # never two lines between two boxes
            box = by_label(nodes, saved)[0] if saved else next(
                i for i, a in nodes.items() if label(a)[0] == slots)
            [(_t, _h, line)] = [d for d in dashed if box in d[:2]]
            assert line == words


def test_saved_leaf_gets_a_line_not_a_second_box(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    y = (x * w).sum()
    nodes, edges = parse(make_dot(y, names={"x": x, "w": w}, show_saved=True).source)
    assert "orange" not in {a["fillcolor"] for a in nodes.values()}
    (mul,) = by_label(nodes, "MulBackward0")
    refs = {h for t, h, a in edges if t == mul and a.get("style") == "dashed"}
    assert refs == set(by_label(nodes, "x") + by_label(nodes, "w"))
    assert all(a["constraint"] == "false" for t, h, a in edges if h in refs and t == mul)


def test_saved_after_backward_are_freed(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    nodes, _ = parse(make_dot(y, show_saved=True, show_attrs=True).source)
    saved = [label(a) for a in nodes.values() if a["fillcolor"] == "orange"]
    assert saved and all(lines[-1] == "(freed)" for lines in saved)
    (exp,) = by_label(nodes, "ExpBackward0")
    assert any("(freed)" in line for line in label(nodes[exp]))


def test_show_attrs_table_and_truncation(torch):
    x = torch.randn(2, 3, requires_grad=True)
    y = torch.stack([x, x], dim=1).sum()
    nodes, _ = parse(make_dot(y, show_attrs=True).source)
    (stack,) = by_label(nodes, "StackBackward0")
    assert label(nodes[stack])[2].strip() == "dim: 1"
    lines = labels.op_lines(y.grad_fn.next_functions[0][0], "StackBackward0", True, 3)
    assert lines[0] == "StackBackward0" and set(lines[1]) == {"-"}
    fake = type("Fake", (), {"name": lambda self: "FakeBackward0",
                             "next_functions": (), "_saved_long": "abcdefghijkl"})()
    assert labels.op_lines(fake, "FakeBackward0", True, 8)[2] == "long: abcde..."


# -- values, gradients, names -------------------------------------------------------

def test_names_from_a_namespace_skip_underscores_and_non_tensors(torch):
    w1 = torch.tensor([2.], requires_grad=True)
    _hidden = torch.tensor([5.], requires_grad=True)
    loss = (w1 * _hidden).sum()
    ns = {"w1": w1, "_hidden": _hidden, "loss": loss, "text": "w1", "Tensor": torch.Tensor}
    nodes, _ = parse(make_dot(loss, names=ns, show_values=True).source)
    firsts = {label(a)[0] for a in nodes.values()}
    assert "w1 · [2.]" in firsts and "loss · 10." in firsts
    assert "[5.]" in firsts  # the hidden leaf is drawn, unnamed
    assert not any("_hidden" in a["label"] for a in nodes.values())


def test_params_win_over_names_and_must_be_tensors(torch):
    w = torch.tensor([1.], requires_grad=True)
    y = (w * 2).sum()
    nodes, _ = parse(make_dot(y, params={"weight": w}, names={"w": w}).source)
    assert by_label(nodes, "weight") and not by_label(nodes, "w")
    with pytest.raises(TypeError, match="params"):
        make_dot(y, params={"w": 3.0})


def test_values_and_grads_are_compact(torch):
    big = torch.arange(12.).reshape(3, 4).requires_grad_()
    s = torch.tensor([1., 2.], requires_grad=True)
    y = (big.sum() * s).sum()
    y.backward()
    nodes, _ = parse(make_dot(y, names={"big": big, "s": s, "y": y},
                              show_values=True, show_grads=True).source)
    (b,) = by_label(nodes, "big")
    assert label(nodes[b]) == ["big", "(3, 4)", "min 0.  mean 5.5  max 11.",
                               "grad min 3.  mean 3.  max 3."]
    (sid,) = by_label(nodes, "s · [1., 2.]")
    assert label(nodes[sid]) == ["s · [1., 2.]", "(2)", "grad [66., 66.]"]
    (out,) = by_label(nodes, "y · 198.")
    assert label(nodes[out]) == ["y · 198.", "()", "grad None"]


@pytest.mark.parametrize("value, floating, text", [
    (2.0, True, "2."), (-3.0, True, "-3."), (0.123456, True, "0.1235"),
    (1234567.0, True, "1.235e+06"), (float("nan"), True, "nan"),
    (float("-inf"), True, "-inf"), (7, False, "7"), (True, False, "True")])
def test_numbers_are_short(value, floating, text):
    assert labels.number(value, floating) == text


def test_values_text_for_each_size():
    import numpy as np
    assert labels.values_text(np.array(2.5)) == ("2.5", True)
    assert labels.values_text(np.array([[1, 2], [3, 4]])) == ("[[1, 2], [3, 4]]", True)
    assert labels.values_text(np.zeros(7)) == ("min 0.  mean 0.  max 0.", False)
    assert labels.values_text(None) == ("?", True)


def test_non_leaf_grad_is_not_read_without_retain_grad(torch):
    x = torch.tensor([1.], requires_grad=True)
    h = x * 2
    y = h.sum()
    y.backward()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch warns when a non-leaf .grad is read
        assert access.grad_of(h) is None
        make_dot(y, names={"h": h}, show_grads=True, view="forward")


def test_host_array_of_bfloat16(torch):
    t = torch.tensor([1.5, 2.0], dtype=torch.bfloat16)
    assert access.host_array(t).tolist() == [1.5, 2.0]


# -- the forward view -------------------------------------------------------------

def test_forward_view_is_the_textbook_picture(linear):
    x, w, b, y = linear
    h = x * w
    y2 = (h + b).sum()
    nodes, edges = parse(make_dot(y2, names={"x": x, "w": w, "b": b, "h": h, "y2": y2},
                                  view="forward").source)
    names = {label(a)[0]: i for i, a in nodes.items()}
    assert set(names) == {"y2", "Sum", "Add", "Mul", "x", "w", "b", "h"}
    assert nodes[names["Mul"]]["shape"] == "ellipse"
    assert nodes[names["h"]]["fillcolor"] == "white"
    arrows = {(label(nodes[t])[0], label(nodes[h_])[0]) for t, h_ in flow(edges)}
    assert arrows == {("x", "Mul"), ("w", "Mul"), ("Mul", "h"), ("h", "Add"), ("b", "Add"),
                      ("Add", "Sum"), ("Sum", "y2")}


def _engine(name):
    return pytest.importorskip("torch") if name == "torch" else _ak()


def inputs_of(nodes, edges, op_id):
    """The first label line of each box feeding ``op_id``, in input order."""
    return [label(nodes[t])[0] for t, h, a in edges if h == op_id and a.get("style") != "dashed"]


@pytest.mark.parametrize("engine", ["autograd_kit", "torch"])
@pytest.mark.parametrize("expr, op, expected", [
    ("x * 3", "Mul", ["x", "3"]),
    ("x / 4", "Div", ["x", "4"]),
    ("x ** 2", "Pow", ["x", "2"]),
    ("x - 2", "Sub", ["x", "constant"]),   # not kept: its gradient needs no 2
    ("2 - x", "Rsub", ["constant", "x"]),
    ("x * c", "Mul", ["x", "c · [5., -6.]"]),
    ("c * x", "Mul", ["c · [5., -6.]", "x"]),
    ("x.pow(c)", "Pow", ["x", "c · [5., -6.]"]),
])
def test_forward_view_draws_constants(engine, expr, op, expected):
    lib = _engine(engine)
    x = lib.tensor([1., 2.], requires_grad=True)
    c = lib.tensor([5., -6.])
    y = eval(expr)
    g = make_dot(y.sum(), names={"x": x, "c": c}, view="forward")
    nodes, edges = parse(g.source)
    [op_id] = by_label(nodes, op)
    assert inputs_of(nodes, edges, op_id) == expected
    consts = [i for i, a in nodes.items() if i.startswith("c")]
    assert consts == ["c0"] and nodes["c0"]["style"] == "filled,rounded"
    assert {n.kind for n in g.nodes if n.id == "c0"} == {"const"}
    if "c" in expr.replace("x", ""):  # a tensor constant is found by identity
        assert g.node_id(c) == "c0"
    back = parse(make_dot(y.sum(), names={"x": x, "c": c}).source)[0]
    assert not [i for i in back if i.startswith("c")]  # the backward view is torchviz's


@pytest.mark.parametrize("engine", ["autograd_kit", "torch"])
def test_constant_values_are_what_the_node_saved(engine):
    """The value in a constant's box is the one PyTorch's node keeps (the oracle)."""
    lib = _engine(engine)
    x = lib.tensor([1., 2.], requires_grad=True)
    y = (x * 2.5) ** 3
    pow_fn = y.grad_fn
    mul_fn = pow_fn.next_functions[0][0]
    other = mul_fn._saved_other
    shown = labels.number(float(other), True) if not isinstance(other, int) else str(other)
    nodes, edges = parse(make_dot(y, names={"x": x}, view="forward").source)
    assert inputs_of(nodes, edges, by_label(nodes, "Mul")[0]) == ["x", shown]
    assert inputs_of(nodes, edges, by_label(nodes, "Pow")[0])[1] == str(pow_fn._saved_exponent)


def test_constant_ids_follow_the_graph_and_fold_away():
    ak = _ak()
    x = ak.tensor([1., 2.], requires_grad=True)
    first = make_dot((x * 3 + 1).sum(), view="forward").source
    x2 = ak.tensor([1., 2.], requires_grad=True)
    assert make_dot((x2 * 3 + 1).sum(), view="forward").source == first
    nodes, _ = parse(first)
    assert [i for i in nodes if i.startswith("c")] == ["c0", "c1"]
    out = x
    for _ in range(100):
        out = out * 1.01 + 0.5
    g = make_dot(out, view="forward", max_nodes=30)
    assert len(g.nodes) <= 30 and g.folds
    [fold_box] = [n for n in g.nodes if n.kind == "fold"]
    hidden = g.folds["f0"]
    ops = 2 * 100 - 2 * fold.KEEP  # the chain's ops, less those kept at each end
    assert sum(i.startswith("c") for i in hidden) == ops  # their constants went too
    assert fold_box.lines[0] == f"… {ops} nodes (Mul ×{ops // 2}, Add ×{ops // 2}) …"


def test_same_object_same_id_in_both_views(linear):
    x, w, b, y = linear
    back = make_dot(y, names={"x": x})
    fwd = make_dot(y, names={"x": x}, view="forward")
    for obj in (x, w, b, y, y.grad_fn):
        assert back.node_id(obj) == fwd.node_id(obj) is not None
    acc = y.grad_fn.next_functions[0][0].next_functions[1][0]  # b's AccumulateGrad
    assert back.node_id(acc) == "n8" and fwd.node_id(acc) == fwd.node_id(b) == "n9"


def test_unknown_view_theme_or_root_is_refused(linear):
    with pytest.raises(ValueError, match="view"):
        make_dot(linear[3], view="sideways")
    with pytest.raises(ValueError, match="theme"):
        make_dot(linear[3], theme="neon")
    with pytest.raises(TypeError, match="it was given a tuple holding a float"):
        make_dot((linear[3], 2.0))


# -- ids, highlight, styles ---------------------------------------------------------

def test_node_id_mapping(linear):
    x, w, b, y = linear
    g = make_dot(y)
    assert g.node_id(y) == "n0" and g.node_id(y.grad_fn) == "n1"
    assert g.node_id(x) == "n5" and g.node_id("n5") == "n5"
    h = x * 2  # not in the graph
    assert g.node_id(h) is None and g.node_id("n99") is None
    assert [n.id for n in g.nodes] == [f"n{k}" for k in range(10)]


def test_node_id_of_non_leaf_tensor_is_its_grad_fn(linear):
    x, w, b, _ = linear
    h = x * w
    y = (h + b).sum()
    g = make_dot(y)
    assert g.node_id(h) == g.node_id(h.grad_fn) == "n3"


def test_highlight_default_and_custom_style(linear):
    x, w, b, y = linear
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0]
    g = make_dot(y, highlight=[mul, x])
    nodes, _ = parse(g.source)
    for obj in (mul, x):
        assert nodes[g.node_id(obj)]["color"] == "red"
        assert nodes[g.node_id(obj)]["penwidth"] == "3"
    assert "color" not in nodes[g.node_id(w)]
    g2 = make_dot(y, highlight={x}, highlight_style={"color": "blue", "style": "filled,bold"})
    assert parse(g2.source)[0][g2.node_id(x)]["color"] == "blue"
    g3 = make_dot(y, highlight=x)  # a single tensor is accepted too
    assert parse(g3.source)[0][g3.node_id(x)]["color"] == "red"


def test_node_styles_override_theme(linear):
    x, w, b, y = linear
    g = make_dot(y, node_styles={y.grad_fn: {"fillcolor": "#c6efce"}, "n5": {"color": "green"}})
    nodes, _ = parse(g.source)
    assert nodes["n1"]["fillcolor"] == "#c6efce" and nodes["n5"]["color"] == "green"


def test_source_is_identical_across_runs_and_processes(torch):
    script = textwrap.dedent("""
        import torch
        from autograd_kit.viz import make_dot
        torch.manual_seed(0)
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        h = torch.tanh(x * w)
        y = (h * h + x).sum()
        print(make_dot(y, names=globals(), show_saved=True, show_values=True,
                       show_attrs=True).source, end="")
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1] and "MulBackward0" in runs[0]
    for token in re.findall(r"\b[ns]\d+\b", runs[0]):
        assert int(token[1:]) < 100  # ids from graph position, never from id()


# -- escaping -----------------------------------------------------------------------

def test_labels_are_escaped(torch):
    x = torch.tensor([1.], requires_grad=True)
    y = (x * 2).sum()
    nasty = 'a"b\\c\nd&e<f>'
    src = make_dot(y, names={"<script>": x, nasty: y}).source
    assert 'label="&lt;script&gt;\\n(1)"' in src
    # a name is one line: its line break becomes a space (see test_viz_safety.py)
    assert 'label="a\\"b\\\\c d&amp;e&lt;f&gt;\\n()"' in src
    assert "<script>" not in src


def test_escape_round_trip_and_control_characters():
    for text in ['plain', '"quoted"', "back\\slash", "two\nlines", "a & b < c > d", "x\ry"]:
        escaped = dot.escape(text)
        assert '"' not in escaped.replace('\\"', "")
        assert "\n" not in escaped
    assert dot.escape("bell\x07") == "bell\ufffd"
    assert dot.attrs({"odd key": "v"}) == '["odd key"="v"]'


# -- folding big graphs ---------------------------------------------------------------

def chain(torch, n_steps):
    x = torch.tensor(1., requires_grad=True)
    y = x
    for _ in range(n_steps):
        y = y * 1.01 + 0.5
    return x, y


def test_fold_a_10000_node_chain(torch):
    x, y = chain(torch, 5000)
    g = make_dot(y, names={"x": x, "y": y}, max_nodes=50)
    assert len(g.nodes) <= 50
    (f,) = [n for n in g.nodes if n.kind == "fold"]
    assert f.id == "f0"
    assert f.lines[0] == "… 9,996 nodes (MulBackward0 ×4,998, AddBackward0 ×4,998) …"
    assert len(g.folds["f0"]) == 9996
    kinds = [n.kind for n in g.nodes]
    assert kinds.count("op") == 2 * fold.KEEP and "leaf" in kinds and "output" in kinds
    # still one path from the leaf to the output, through the fold
    succ = {e.tail: e.head for e in g.edges}
    node, seen = g.node_id(x), []
    while node in succ:
        node = succ[node]
        seen.append(node)
    assert seen[-1] == g.node_id(y) and "f0" in seen
    inner = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    assert g.node_id(inner) == "f0"


def test_unfold_gives_the_full_graph(torch):
    x, y = chain(torch, 50)
    assert len(make_dot(y, max_nodes=20).nodes) < 20
    for unfold in ({"f0"}, [0], True):
        assert len(make_dot(y, max_nodes=20, unfold=unfold).nodes) == 103
    assert len(make_dot(y).nodes) == 103  # no max_nodes: nothing folds


def test_fold_absorbs_saved_boxes_and_keeps_ids_of_the_rest(torch):
    x, y = chain(torch, 200)
    full = make_dot(y, show_saved=True)
    small = make_dot(y, show_saved=True, max_nodes=30)
    assert len(small.nodes) <= 30
    kept = {n.id: n.lines for n in small.nodes if n.kind != "fold"}
    full_lines = {n.id: n.lines for n in full.nodes}
    assert all(full_lines[i] == lines for i, lines in kept.items())
    folded = [n.lines[0] for n in small.nodes if n.kind == "fold"]
    assert "saved ×" in folded[0]


def test_fold_leaves_short_chains_and_branches_alone(linear):
    g = make_dot(linear[3], max_nodes=3)
    assert not g.folds and len(g.nodes) == 10


def test_100000_node_chain_needs_no_recursion(torch):
    x, y = chain(torch, 50_000)
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 60)  # any recursion along the chain would fail
    try:
        g = make_dot(y, max_nodes=40)
    finally:
        sys.setrecursionlimit(old)
    assert len(g.folds["f0"]) == 100_000 - 2 * fold.KEEP


# -- themes -----------------------------------------------------------------------------

def test_themes_are_data_with_the_same_shape():
    assert set(themes.THEMES) == {"light", "dark", "print"}
    kinds = set(themes.LIGHT["kinds"])
    for theme in themes.THEMES.values():
        assert set(theme["kinds"]) == kinds
        assert set(theme["edges"]) == set(themes.LIGHT["edges"])


def test_dark_and_print_themes(linear):
    x, w, b, y = linear
    dark = make_dot(y, theme="dark", show_saved=True)
    assert 'bgcolor="#1e1e1e"' in dark.source
    fills = {a["fillcolor"] for a in parse(dark.source)[0].values()}
    assert fills.isdisjoint({"lightgrey", "lightblue", "darkolivegreen1"})
    printed = make_dot(y, theme="print", highlight=[x])
    assert "fillcolor" not in printed.source and "filled" not in printed.source
    nodes, _ = parse(printed.source)
    assert nodes[printed.node_id(y)]["peripheries"] == "2"
    assert nodes[printed.node_id(x)]["penwidth"] == "4"


def test_custom_theme_and_graph_attr(linear):
    custom = {"kinds": {"op": {"fillcolor": "pink"}}}
    src = make_dot(linear[3], theme=custom, graph_attr={"rankdir": "LR"}).source
    assert 'rankdir="LR"' in src and 'fillcolor="pink"' in src


# -- the package itself ----------------------------------------------------------------

def test_doctests_of_the_viz_modules():
    for module in (labels, dot):
        assert doctest.testmod(module).failed == 0


def test_viz_imports_neither_torch_nor_ipython():
    code = ("import sys, autograd_kit.viz; "
            "print(sorted(m for m in ('torch', 'IPython') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_public_api():
    assert set(viz.__all__) >= {"make_dot", "Graph", "RenderError", "set_renderer"}


# -- the same pictures from autograd_kit's own tensors -----------------------------------

def _ak():
    try:
        import autograd_kit as ak
        x = ak.tensor([1., 2.], requires_grad=True)
        (x * x).sum()
    except Exception as err:  # the engine is not importable yet
        pytest.skip(f"autograd_kit engine not usable: {err}")
    return ak


def test_autograd_kit_linear_matches_torch_golden():
    ak = _ak()
    x = ak.tensor([1., 2.], requires_grad=True)
    w = ak.tensor([3., 4.], requires_grad=True)
    b = ak.tensor(0.5, requires_grad=True)
    y = (x * w + b).sum()
    assert make_dot(y, names={"x": x, "w": w, "b": b, "y": y}).source == GOLDEN


def test_autograd_kit_saved_values_and_freed():
    ak = _ak()
    x = ak.tensor([1., 2.], requires_grad=True)
    h = x * 2
    y = (h * h).exp().sum()
    g = make_dot(y, names={"x": x, "h": h, "y": y}, show_saved=True, show_values=True)
    nodes, _ = parse(g.source)
    saved = sorted(label(a)[0] for a in nodes.values() if a["fillcolor"] == "orange")
    assert "self, other (h) · [2., 4.]" in saved or "other, self (h) · [2., 4.]" in saved
    assert by_label(nodes, "x · [1., 2.]")
    y.backward()
    nodes, _ = parse(make_dot(y, show_saved=True).source)
    freed = [label(a) for a in nodes.values() if a["fillcolor"] == "orange"]
    assert freed and all(lines[-1] == "(freed)" for lines in freed)


def test_autograd_kit_forward_view_and_fold():
    ak = _ak()
    x = ak.tensor([1., 2.], requires_grad=True)
    h = x * 3
    y = h.sum()
    nodes, edges = parse(make_dot(y, names={"x": x, "h": h, "y": y}, view="forward").source)
    arrows = {(label(nodes[t])[0], label(nodes[h_])[0]) for t, h_ in flow(edges)}
    assert arrows == {("x", "Mul"), ("3", "Mul"), ("Mul", "h"), ("h", "Sum"), ("Sum", "y")}
    z = ak.tensor(1., requires_grad=True)
    out = z
    for _ in range(500):
        out = out * 1.01 + 0.5
    g = make_dot(out, max_nodes=20)
    assert len(g.nodes) <= 20 and len(g.folds["f0"]) == 1000 - 2 * fold.KEEP


def test_import_autograd_kit_does_not_import_viz():
    _ak()
    code = "import sys, autograd_kit; print('autograd_kit.viz' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


# -- the legend and the labelled dashed lines -----------------------------------------

def legend_boxes(source: str) -> dict[str, dict]:
    """``{label: attrs}`` of the key's boxes, read from the cluster's lines."""
    inside = source.split("subgraph cluster_legend {", 1)[1]
    found = {}
    for line in inside.splitlines():
        if (m := re.match(r'^\t\t(legend\d+) \[(.*)\]$', line)):
            attrs = dict(_ATTR.findall(m[2]))
            found[attrs["label"]] = attrs
    return found


def test_dashed_lines_say_which_slot_they_fill(linear):
    x, w, b, y = linear
    h = (x * w).exp()
    out = h.sum()
    for view in ("backward", "forward"):
        nodes, edges = parse(make_dot(out, names={"x": x, "w": w}, show_saved=True,
                                      view=view).source)
        dashed = {(t, hd): a.get("label") for t, hd, a in edges if a.get("style") == "dashed"}
        mul = by_label(nodes, "MulBackward0" if view == "backward" else "Mul")[0]
        exp = by_label(nodes, "ExpBackward0" if view == "backward" else "Exp")[0]
        [saved_box] = [i for i in nodes if i.startswith("s")]
        as_input = view == "forward"  # saved boxes feed their op in the forward view
        pair = (lambda op, box: (box, op) if as_input else (op, box))
        xid = by_label(nodes, "x")[0]
        wid = by_label(nodes, "w")[0]
        # the oracle: the slots PyTorch's nodes keep
        assert set(access.saved_names(h.grad_fn)) == {"result"}
        assert set(access.saved_names(h.grad_fn.next_functions[0][0])) >= {"self", "other"}
        assert dashed == {pair(exp, saved_box): "saved as result",
                          pair(mul, xid): "saved as self", pair(mul, wid): "saved as other"}


def test_no_legend_unless_asked(linear):
    x, w, b, y = linear
    assert "legend" not in make_dot(y, show_saved=True).source


@pytest.mark.parametrize("theme", sorted(themes.THEMES))
def test_legend_explains_the_kinds_drawn_in_the_theme_style(linear, theme):
    x, w, b, _ = linear
    y = (x * w).exp().sum()
    g = make_dot(y, names={"y": y}, show_saved=True, legend=True, theme=theme)
    key = legend_boxes(g.source)
    style = themes.THEMES[theme]["kinds"]
    drawn_kinds = {n.kind for n in g.nodes}
    assert drawn_kinds == {"output", "op", "acc", "leaf", "saved"}
    assert {kind for kind, meaning in legend.MEANING.items() if meaning in key} == drawn_kinds
    for kind in drawn_kinds:
        sample = key[legend.MEANING[kind]]
        assert all(sample[k] == v for k, v in style[kind].items()), kind
    assert 'label="saved for backward"' in g.source
    assert re.search(r'legend\d+ -> legend\d+ \[id="legend_dashed" style="dashed"', g.source)
    assert len(g.nodes) == len(make_dot(y, show_saved=True).nodes)  # not part of the graph


def test_legend_without_dashed_lines_has_no_dashed_sample(linear):
    x, w, b, y = linear
    src = make_dot(y, legend=True, view="forward", names={"x": x}).source
    assert "saved for backward" not in src
    assert set(legend_boxes(src)) == {"output tensor", "leaf tensor (gets .grad)", "operation"}


def test_legend_and_labels_are_escaped(linear):
    x, w, b, y = linear
    custom = {**themes.LIGHT, "kinds": {**themes.LIGHT["kinds"],
                                        "leaf": {"fillcolor": 'x"<b>'}}}
    src = make_dot((x * w).sum(), names={"<script>": x}, show_saved=True, legend=True,
                   theme=custom).source
    assert "<script>" not in src and "&lt;script&gt;" in src
    assert 'fillcolor="x\\"&lt;b&gt;"' in src


# -- what make_dot refuses ------------------------------------------------------------

class DuckTensor:
    """Every attribute make_dot reads from a tensor, but no engine's tensor."""

    grad_fn, requires_grad, is_leaf, grad, shape = None, True, True, None, (2,)


class DuckNode:
    """A grad_fn look-alike: ``name()`` and ``next_functions``."""

    next_functions = ()

    def name(self):
        return "MulBackward0"


TAKES = ("make_dot takes a tensor of autograd_kit or PyTorch (autograd_kit.Tensor or "
         "torch.Tensor); it was given {given}.")
DUCK = f"a {__name__}.DuckTensor"


def _ak_leaf():
    import autograd_kit as ak
    return ak.tensor([1., 2.], requires_grad=True)


@pytest.mark.parametrize("make, given", [
    (lambda: [1, 2], "a list holding an int"),
    (lambda: [], "an empty list"),
    (lambda: (), "an empty tuple"),
    (lambda: __import__("numpy").zeros(2), "a numpy.ndarray"),
    (lambda: "loss", "a str"),
    (lambda: __import__("autograd_kit").Tensor, "the class Tensor"),
    (lambda: DuckTensor(), DUCK),
    (lambda: DuckNode(), f"a {__name__}.DuckNode"),
    (lambda: (_ak_leaf() * 2, DuckTensor()), f"a tuple holding {DUCK}"),
    (lambda: [_ak_leaf(), [_ak_leaf()]], "a list holding a list"),
])
def test_make_dot_refuses_anything_but_tensors_in_one_line(make, given):
    with pytest.raises(TypeError) as info:
        make_dot(make())
    assert str(info.value) == TAKES.format(given=given)


def test_make_dot_refuses_the_pytorch_tensor_class(torch):
    with pytest.raises(TypeError) as info:
        make_dot(torch.Tensor)
    assert str(info.value) == TAKES.format(given="the class Tensor")
    with pytest.raises(TypeError) as info:  # a node's class is not a node either
        make_dot(type((torch.ones(1, requires_grad=True) * 2).grad_fn))
    assert str(info.value) == TAKES.format(given="the class MulBackward0")


def test_make_dot_draws_tensors_nodes_and_lists_of_both_engines(torch):
    x = torch.tensor([1., 2.], requires_grad=True)
    a = _ak_leaf()
    for root in ((x * 2).sum(), (x * 2).grad_fn, [x * 2, (x * 3).grad_fn], (a * 2,),
                 (a * 2).grad_fn, [(a * 2).sum(), a]):
        assert make_dot(root).nodes
