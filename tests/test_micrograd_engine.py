"""micrograd's scalar ``Value`` as a third engine: pictures, the stepper, the
magics and the explainer read it by duck typing, and the Values' own
``_backward`` closures run one per step.

Two kinds of Value are used: ``Value`` below, written as in Karpathy's lecture
(these tests always run), and the ``micrograd`` package's (skipped when it is
not installed).  The oracle is micrograd's own ``backward()``: on the very same
graph once the stepper has put the grads back (the same numbers, bit for bit),
and on an identical fresh graph.
"""
import html
import inspect
import math
import random
import re
import subprocess
import sys
import textwrap

import pytest

from autograd_kit.viz import access, make_dot
from autograd_kit.viz.engines import backward_pass
from autograd_kit.widgets import BackwardStepper
from shell_support import close_shell, make_shell, needs_renderer


# -- the lecture's Value ----------------------------------------------------------------
class Value:
    """The lecture's Value: data, grad, _prev (a set), _op, _backward, label."""

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += 1.0 * out.grad
            other.grad += 1.0 * out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __rmul__(self, other):
        return self * other

    def __pow__(self, k):
        out = Value(self.data ** k, (self,), f"**{k}")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def tanh(self):
        t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class Neuron:
    def __init__(self, nin, rng):
        self.w = [Value(rng.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(rng.uniform(-1, 1))

    def __call__(self, x):
        return sum((wi * xi for wi, xi in zip(self.w, x)), self.b).tanh()

    def parameters(self):
        return self.w + [self.b]


class MLP:
    def __init__(self, nin, nouts, rng):
        sizes = [nin] + nouts
        self.layers = [[Neuron(sizes[i], rng) for _ in range(sizes[i + 1])]
                       for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = [n(x) for n in layer]
        return x[0] if len(x) == 1 else x

    def parameters(self):
        return [p for layer in self.layers for n in layer for p in n.parameters()]


def neuron(cls=Value):
    """The lecture's neuron: o = tanh(x1*w1 + x2*w2 + b), every Value labelled."""
    x1, x2 = cls(2.0, label="x1"), cls(0.0, label="x2")
    w1, w2 = cls(-3.0, label="w1"), cls(1.0, label="w2")
    b = cls(6.8813735870195432, label="b")
    x1w1, x2w2 = x1 * w1, x2 * w2
    n = x1w1 + x2w2 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    return [x1, x2, w1, w2, b], o


def mlp_loss(seed, cls=Value):
    """A small MLP (3 -> 4 -> 4 -> 1) on four examples, squared-error loss."""
    rng = random.Random(seed)
    model = MLP(3, [4, 4, 1], rng)
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys)), cls(0.0))
    return model.parameters(), loss


def every_value(root) -> list:
    """The graph's Values, each once (the test's own walk)."""
    seen, stack, out = set(), [root], []
    while stack:
        v = stack.pop()
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
            stack.extend(v._prev)
    return out


def micrograd_order(root) -> list:
    """The nodes with inputs, in the order micrograd's recursive backward() calls
    their closures (the reference the adapter must follow)."""
    topo, visited = [], set()

    def build(v):
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build(child)
            topo.append(v)
    build(root)
    return [v for v in reversed(topo) if v._prev]


def text(markup: str) -> str:
    """What a reader sees: tags and the SVG dropped, entities decoded."""
    markup = re.sub(r"<svg\b.*?</svg>", " ", markup, flags=re.S)
    markup = re.sub(r"</?(div|li|ul|br)\b[^>]*>", " ", markup)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", markup)))


def status(s) -> str:
    return text(s.status.value)


# -- pictures ---------------------------------------------------------------------------
def test_the_lectures_neuron_is_drawn_one_box_per_value():
    leaves, o = neuron()
    g = make_dot(o)
    assert len(g.nodes) == 10 and len(g.edges) == 9
    kinds = sorted((n.kind, n.lines[0]) for n in g.nodes)
    assert kinds == [("leaf", "b · 6.881"), ("leaf", "w1 · -3."), ("leaf", "w2 · 1."),
                     ("leaf", "x1 · 2."), ("leaf", "x2 · 0."), ("op", "*"), ("op", "*"),
                     ("op", "+"), ("op", "+"), ("op", "tanh")]
    root = g.node_id(o)
    assert [n.lines for n in g.nodes if n.id == root] == [["tanh", "o · 0.7071"]]
    assert g.alt.startswith("Computational graph of 10 nodes: * takes x1 and w1;")
    assert g.alt.endswith("tanh takes +.")


def test_an_arrow_runs_from_each_input_to_the_value_it_made():
    _leaves, o = neuron()
    g = make_dot(o)
    want = {(g.node_id(c), g.node_id(v)) for v in every_value(o) for c in v._prev}
    assert {(e.tail, e.head) for e in g.edges} == want


def test_names_label_boxes_and_grads_show_as_the_kits_do():
    leaves, o = neuron()
    x1 = leaves[0]
    o.backward()
    g = make_dot(o, names={"first": x1}, show_grads=True)
    box = next(n for n in g.nodes if n.id == g.node_id(x1))
    assert box.lines == ["first · 2.", "grad -1.5"]
    root = next(n for n in g.nodes if n.id == g.node_id(o))
    assert root.lines == ["tanh", "o · 0.7071", "grad 1."]


def test_the_same_code_draws_the_same_picture():
    """A set has no order but memory's: the picture must not follow it."""
    first = make_dot(mlp_loss(0)[1], show_grads=True).source
    clutter = [Value(float(k)) for k in range(5000)]  # other addresses for the second graph
    second = make_dot(mlp_loss(0)[1], show_grads=True).source
    assert clutter and first == second


def test_a_small_mlp_is_drawn_whole():
    params, loss = mlp_loss(1)
    values = every_value(loss)
    g = make_dot(loss, max_nodes=None)
    assert len(g.nodes) == len(values)
    assert len(g.edges) == sum(len(v._prev) for v in values)
    leaves = [n for n in g.nodes if n.kind == "leaf"]
    assert len(leaves) == sum(1 for v in values if not v._prev)
    assert {n.lines[0] for n in g.nodes if n.kind == "op"} == {"+", "*", "tanh", "**2"}
    for p in params:
        assert g.node_id(p) in {n.id for n in leaves}


def test_a_value_with_a_script_op_and_label_is_escaped():
    a = Value(1.0, label="<b>a</b>")
    evil = Value(2.0, (a,), "<script>alert(1)</script>", label='"q" & <i>')
    g = make_dot(evil, show_grads=True)
    assert "<script>" not in g.source and "<b>" not in g.source
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in g.source
    assert "&lt;b&gt;a&lt;/b&gt;" in g.source and '\\"q\\" &amp; &lt;i&gt;' in g.source


@needs_renderer
def test_an_escaped_op_reaches_the_svg_as_text():
    evil = Value(2.0, (Value(1.0),), "<script>alert(1)</script>")
    svg = make_dot(evil).svg()
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_a_lookalike_without_the_graph_attributes_is_refused_in_one_line():
    class Half:
        data, grad = 1.0, 0.0

    with pytest.raises(TypeError) as info:
        make_dot(Half())
    assert "takes a tensor of autograd_kit or PyTorch" in str(info.value)
    assert not access.is_value(Value) and access.is_value(Value(1.0))


# -- the pass, through the adapter --------------------------------------------------------
def test_every_step_leaves_the_grads_backward_leaves_there():
    _leaves, loss = mlp_loss(3)
    values = every_value(loss)
    order = micrograd_order(loss)
    source = backward_pass(loss)
    seen = []
    for step in source.steps():
        seen.append(step.node)
        after = {id(c): a for c, _b, a in step.children}
        assert all(c.grad == after[id(c)] for c, _b, _a in step.children)
    assert seen == order
    stepped = [v.grad for v in values]
    source.restore()
    assert all(v.grad == 0 for v in values)
    loss.backward()
    assert [v.grad for v in values] == stepped  # bit for bit: the same closures, same order


def test_local_derivatives_and_contributions_are_the_closures_own():
    leaves, o = neuron()
    x1, _x2, w1, _w2, _b = leaves
    source = backward_pass(o)
    steps = list(source.steps())
    mul = next(s for s in steps if s.node._op == "*" and x1 in s.node._prev)
    kids = [c for c, _b, _a in mul.children]
    local = dict(zip(map(id, kids), (float(t.item()) for t in source.local(mul))))
    assert local[id(x1)] == w1.data and local[id(w1)] == x1.data
    sent = dict(zip(map(id, kids), (float(t.item()) for t in mul.grads_out)))
    g = float(mul.grad_in.item())
    assert sent[id(x1)] == pytest.approx(g * w1.data) and sent[id(w1)] == pytest.approx(
        g * x1.data)
    assert [c for c, _o, _n in mul.leaves] == kids  # both inputs are leaves
    source.restore()


def test_a_node_reached_twice_lists_both_contributions():
    a = Value(0.5, label="a")
    h = a.tanh()
    d = h * 2.0 + h * 4.0
    source = backward_pass(d)
    steps = {id(s.node): s for s in source.steps()}
    at_h = steps[id(h)]
    assert sorted(float(c.item()) for c in at_h.contributions) == [2.0, 4.0]
    assert float(at_h.grad_in.item()) == 6.0 and h.grad == 6.0
    assert id(a) not in steps  # a leaf has no closure to run: not a step
    source.restore()
    assert a.grad == 0.0 and h.grad == 0.0


def test_the_traversal_needs_no_recursion():
    """A chain deeper than Python's recursion limit (micrograd's own recursive
    backward() would fail on it) is stepped and drawn."""
    depth = 3 * sys.getrecursionlimit()
    v = x = Value(0.5, label="x")
    slope = 1.0
    for _ in range(depth):
        v = v.tanh()
        slope *= 1 - v.data ** 2
    source = backward_pass(v)
    assert source.total == depth
    for _step in source.steps():
        pass
    assert x.grad == pytest.approx(slope, rel=1e-9)
    g = make_dot(v, max_nodes=60)
    assert len(g.nodes) <= 60 and len(g.folds) == 1


def test_the_root_grad_can_start_from_another_number():
    leaves, o = neuron()
    source = backward_pass(o, gradient=2.0)
    for _step in source.steps():
        pass
    assert leaves[0].grad == pytest.approx(-3.0)
    with pytest.raises(TypeError):
        backward_pass(o, gradient="one")


def test_a_closure_that_fails_stops_the_pass_with_pythons_words():
    x = Value(2.0, label="x")
    y = x * 3.0

    def broken():
        raise ZeroDivisionError("division by zero")
    y._backward = broken
    z = y.tanh()
    source = backward_pass(z)
    assert source.total == 1 and isinstance(source.stopper, RuntimeError)
    assert str(source.stopper) == "ZeroDivisionError: division by zero"
    assert x.grad == 0.0 and y.grad == 0.0 and z.grad == 0.0


# -- the stepper --------------------------------------------------------------------------
def test_the_stepper_ends_with_the_grads_of_a_fresh_backward():
    leaves, o = neuron()
    s = BackwardStepper(o, names={"x1": leaves[0]})
    assert s.engine == "micrograd" and s.total == 5
    for _ in range(s.total):
        s.step_button.click()
    assert s.finished and "Backward pass complete" in status(s)
    fresh_leaves, fresh = neuron()
    fresh.backward()
    assert [v.grad for v in leaves] == pytest.approx([v.grad for v in fresh_leaves],
                                                     rel=1e-12, abs=1e-15)
    assert "x1.grad = -1.5" in status(s)


def test_the_panel_shows_upstream_times_local_for_each_input():
    leaves, o = neuron()
    s = BackwardStepper(o)
    assert "micrograd starts at tanh" in text(s.panel.value)
    s.step()
    panel = text(s.panel.value)
    assert "Step 1 of 5: tanh" in panel and "input 0 → n:" in panel
    assert "upstream × local = contribution: 1. × 0.5 = 0.5" in panel
    assert "nowhere" not in panel and "AccumulateGrad" not in panel
    s.run()
    at_x1 = next(k for k, step in enumerate(s.steps) if leaves[0] in step.node._prev)
    s.go_to(at_x1 + 1)
    assert "x1.grad: 0. → -1.5" in text(s.panel.value)


def test_back_and_reset_put_every_grad_back():
    params, loss = mlp_loss(4)
    values = every_value(loss)
    s = BackwardStepper(loss)
    s.go_to(10)
    at10 = [v.grad for v in values]
    assert s.position == 10 and any(g != 0 for g in at10)
    s.run()
    s.back()
    s.go_to(10)
    assert [v.grad for v in values] == at10
    s.reset()
    assert all(v.grad == 0 for v in values)


def test_the_stepper_over_an_mlp_matches_backward_on_the_same_graph():
    params, loss = mlp_loss(5)
    s = BackwardStepper(loss)
    s.run()
    stepped = [p.grad for p in params]
    s.reset()
    loss.backward()
    assert [p.grad for p in params] == stepped


def twice(make):
    """The grads of micrograd's backward() called twice on one fresh graph."""
    leaves, root = make()
    root.backward()
    root.backward()
    return [v.grad for v in leaves]


def test_a_second_pass_adds_again_as_a_second_backward_does():
    """The second pass starts again from the root's grad = 1, but every grad
    below it, the intermediate Values' too, holds the first pass's: the leaves
    receive more than twice their first gradient."""
    leaves, o = neuron()
    s = BackwardStepper(o)
    s.run()
    once = leaves[0].grad
    s.step()  # at the end: one more whole pass
    assert [v.grad for v in leaves] == pytest.approx(twice(neuron), rel=1e-12)
    assert leaves[0].grad == pytest.approx(5 * once)
    assert "Pass 2 done" in status(s) and "x1.grad -1.5 → -7.5" in status(s)


# -- the lecture's classic mistakes ----------------------------------------------------------
class SetsGrads(Value):
    """``=`` where ``+=`` belongs."""

    def __add__(self, other):
        other = other if isinstance(other, Value) else SetsGrads(other)
        out = SetsGrads(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad = 1.0 * out.grad
            other.grad = 1.0 * out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else SetsGrads(other)
        out = SetsGrads(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad
        out._backward = _backward
        return out


class ForgetsBackward(Value):
    """``out._backward = _backward`` left out of ``__mul__``."""

    def __mul__(self, other):
        other = other if isinstance(other, Value) else ForgetsBackward(other)
        out = ForgetsBackward(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        return out


OVERWRITES = "sets a.grad with = instead of adding to it with +="
NEVER_SET = "its _backward was never set"
NOT_RESET = "some gradients are not zero"


def test_a_plus_a_with_equals_is_caught():
    a = SetsGrads(3.0, label="a")
    b = a + a
    b.label = "b"
    source = backward_pass(b)
    assert [m.kind for m in source.mistakes] == ["overwrites"]
    (note,) = source.notes()
    assert "The _backward of the node + (b) " + OVERWRITES in note
    s = BackwardStepper(b)
    assert OVERWRITES in status(s)
    s.step()
    assert OVERWRITES in status(s)
    assert a.grad == 1.0  # the bug's own number: micrograd's backward() agrees
    s.reset()
    b.backward()
    assert a.grad == 1.0


def test_a_value_used_by_two_operations_loses_a_gradient_and_the_numbers_say_so():
    a, b = SetsGrads(-2.0, label="a"), SetsGrads(3.0, label="b")
    d, e = a * b, a + b
    d.label, e.label = "d", "e"
    f = d * e
    f.label = "f"
    source = backward_pass(f)
    notes = " ".join(source.notes())
    assert OVERWRITES in notes
    assert re.search(r"a\.grad was -?[\d.]+ before this step and -?[\d.]+ after it: the "
                     r"-?[\d.]+ it already held was lost", notes)
    fine = [Value(-2.0), Value(3.0)]
    (fine[0] * fine[1] * (fine[0] + fine[1])).backward()
    for _step in source.steps():
        pass
    assert a.grad != pytest.approx(fine[0].grad)  # the lost gradient, for real


def test_a_backward_never_set_is_caught():
    x, y = ForgetsBackward(2.0, label="x"), ForgetsBackward(3.0, label="y")
    z = (x * y).tanh()
    source = backward_pass(z)
    assert [m.kind for m in source.mistakes] == ["no_backward"]
    (note,) = source.notes()
    assert NEVER_SET in note and ("reaches x, y" in note or "reaches y, x" in note)
    s = BackwardStepper(z)
    s.run()
    assert x.grad == 0.0 and y.grad == 0.0
    s.go_to(2)
    assert NEVER_SET in status(s)


def test_grads_not_reset_between_passes_are_caught():
    leaves, o = neuron()
    o.backward()
    source = backward_pass(o)
    assert {m.kind for m in source.mistakes} == {"not_reset"}
    (note,) = source.notes()
    assert NOT_RESET in note and "x1.grad = -1.5" in note
    s = BackwardStepper(o)
    assert NOT_RESET in status(s)
    s.run()
    assert [v.grad for v in leaves] == pytest.approx(twice(neuron), rel=1e-12)


def test_a_correct_graph_has_nothing_to_say():
    a = Value(3.0, label="a")
    b = a + a  # one input used twice, added correctly
    _params, loss = mlp_loss(6)
    for root in (b, loss, neuron()[1]):
        source = backward_pass(root)
        assert source.mistakes == [] and source.notes() == []
    s = BackwardStepper(loss)
    s.run()
    assert NOT_RESET not in status(s) and OVERWRITES not in status(s)


def test_the_explainer_names_the_mistake_and_outlines_the_node():
    from autograd_kit.ipython.explain import explain_value
    a = SetsGrads(3.0, label="a")
    b = a + a
    exp = explain_value(b, {"b": b, "a": a})
    assert OVERWRITES in exp.title and exp.culprit is b
    picture = exp.picture()
    culprit = picture.node_id(b)
    assert re.search(rf'\t{culprit} \[[^\]]*color="red"', picture.source)
    assert explain_value(neuron()[1], {}) is None


def test_autograd_explain_speaks_after_a_cell_that_ran_a_faulty_values_backward():
    """With ``%autograd_explain on``, ``b.backward()`` on a Value whose class
    sets grads with ``=`` is followed by the mistake in words (the cell itself
    runs); a correct Value's backward gets no word."""
    from shell_support import close_shell, make_shell, run
    ip = make_shell()
    ip.run_line_magic("autograd_explain", "on")
    try:
        ip.user_ns.update(a=SetsGrads(3.0, label="a"), good=Value(2.0, label="good"))
        result, _, outputs = run(ip, "b = a + a\nb.backward()\n")
        texts = [o.data.get("text/plain", "") for o in outputs]
        assert result.error_in_exec is None
        assert any(OVERWRITES in t for t in texts), texts
        a = ip.user_ns["a"]
        assert a.grad == ip.user_ns["b"].grad  # the cell's own "=" left, as it ran
        result, _, outputs = run(ip, "c = good * good + good\nc.backward()\n")
        assert result.error_in_exec is None and outputs == []
    finally:
        close_shell(ip, ("a", "b", "c", "good"))


# -- micrograd is read, never imported -------------------------------------------------------
def test_micrograd_is_never_imported_by_the_kit(tmp_path):
    code = textwrap.dedent(inspect.getsource(Value)) + textwrap.dedent('''
        import sys
        from autograd_kit.viz import access, make_dot
        from autograd_kit.viz.engines import backward_pass
        from autograd_kit.widgets import BackwardStepper
        x, w = Value(2.0, label="x"), Value(-3.0, label="w")
        o = (x * w + 1.0).tanh()
        make_dot(o, show_grads=True).source
        for step in backward_pass(o).steps():
            pass
        assert abs(x.grad - w.data * (1 - o.data ** 2)) < 1e-12, x.grad
        BackwardStepper(o).run()
        from autograd_kit.ipython.explain import explain_value
        explain_value(o, {})
        print("micrograd" in sys.modules)
    ''')
    script = tmp_path / "lecture.py"
    script.write_text("import math\n" + code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# -- the micrograd package ----------------------------------------------------------------------
def package_neuron(engine):
    x1, x2, w1, w2 = (engine.Value(v) for v in (2.0, 0.0, -3.0, 1.0))
    b = engine.Value(6.8813735870195432)
    return [x1, x2, w1, w2, b], (x1 * w1 + x2 * w2 + b).relu()


def package_mlp(nn, engine, seed):
    random.seed(seed)
    model = nn.MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0]]
    loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, [1.0, -1.0, 1.0])), engine.Value(0))
    return model.parameters(), loss


def test_micrograds_own_neuron_is_drawn_and_stepped():
    engine = pytest.importorskip("micrograd.engine")
    leaves, o = package_neuron(engine)
    g = make_dot(o, names={"x1": leaves[0]})
    assert len(g.nodes) == 10
    assert sorted(n.lines[0] for n in g.nodes if n.kind == "op") == ["*", "*", "+", "+",
                                                                      "ReLU"]
    s = BackwardStepper(o)
    s.run()
    stepped = [v.grad for v in leaves]
    fresh, root = package_neuron(engine)
    root.backward()
    assert stepped == pytest.approx([v.grad for v in fresh], rel=1e-12, abs=1e-15)
    assert backward_pass(o).who == "micrograd"


def test_micrograds_own_mlp_is_drawn_and_stepped_like_its_backward():
    engine = pytest.importorskip("micrograd.engine")
    nn = pytest.importorskip("micrograd.nn")
    params, loss = package_mlp(nn, engine, 7)
    values = every_value(loss)
    assert backward_pass(loss).mistakes == []  # ReLU's zeros are no mistake
    g = make_dot(loss, max_nodes=None)
    assert len(g.nodes) == len(values)
    s = BackwardStepper(loss, max_nodes=1000)
    for _ in range(s.total):
        s.step_button.click()
    assert s.finished and s.total == len(micrograd_order(loss))
    stepped = [p.grad for p in params]
    fresh, fresh_loss = package_mlp(nn, engine, 7)
    fresh_loss.backward()
    assert stepped == pytest.approx([p.grad for p in fresh], rel=1e-12, abs=1e-15)
    s.reset()
    loss.backward()
    assert [p.grad for p in params] == stepped


# -- the magics ---------------------------------------------------------------------------------
@pytest.fixture
def ip():
    shell = make_shell()
    shell.push({"Value": Value})
    shell.run_cell("x1 = Value(2.0, label='x1'); w1 = Value(-3.0, label='w1')\n"
                   "o = (x1 * w1).tanh()")
    yield shell
    close_shell(shell, ("Value", "x1", "w1", "o"))


def test_the_magics_take_a_value(ip):
    from IPython.utils.capture import capture_output
    with capture_output() as cap:
        result = ip.run_cell("%autograd_graph o --grads")
    assert result.error_in_exec is None and not cap.stderr
    with capture_output() as cap:
        result = ip.run_cell("%autograd_step o")
    assert result.error_in_exec is None and not cap.stderr
    assert any("BackwardStepper" in o.data.get("text/plain", "") for o in cap.outputs)
    with capture_output() as cap:
        ip.run_cell("%autograd_step x1")
    assert "x1 is a leaf Value" in cap.stderr


def test_a_mistake_met_on_two_arrows_from_one_input_is_said_once():
    """A learner's Value may keep ``_prev`` as a tuple: ``a + a`` then has two
    arrows from ``a``, and the mistake is met on both, but said once."""
    a = SetsGrads(3.0, label="a")
    b = a + a
    b.label = "b"
    b._prev = (a, a)
    source = backward_pass(b)
    (note,) = source.notes()
    assert OVERWRITES in note
    s = BackwardStepper(b)
    s.step()
    assert status(s).count(OVERWRITES) == 1
