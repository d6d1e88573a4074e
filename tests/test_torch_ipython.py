"""The magics, the explainer and the tensor card on real PyTorch tensors.

Learners' notebooks mostly use PyTorch itself, so ``%load_ext autograd_kit``
must work there too: PyTorch's own autograd errors explained (their message
kept, the culprit outlined in the graph), PyTorch's graphs drawn and stepped
through, PyTorch's tensors shown as cards.  Skipped where PyTorch is not
installed.
"""

import pytest
from IPython.core.error import UsageError

torch = pytest.importorskip("torch")

from autograd_kit.ipython import display, explain  # noqa: E402
from shell_support import (CAN_RENDER, close_shell, flat, highlighted_titles,  # noqa: E402
                           make_shell, run)

SETUP = ("import torch\n"
         "x = torch.tensor([1., 2.], requires_grad=True)\n"
         "w = torch.tensor([3., 4.], requires_grad=True)\n")
NAMES = ("x", "w", "a", "b", "g", "v", "y", "z", "loss", "f", "h", "total", "torch",
         "grads", "dx", "nz", "c", "wrong")


@pytest.fixture
def ip():
    shell = make_shell()
    shell.run_line_magic("autograd_explain", "on")
    shell.run_cell(SETUP)
    yield shell
    close_shell(shell, NAMES)


# -- PyTorch's errors explained ---------------------------------------------------------------
# code, PyTorch's message (kept in the traceback), words of the explanation, culprit box
CASES = {
    "leaf_inplace": ("x.add_(1)",
                     "a leaf Variable that requires grad is being used in an in-place "
                     "operation.",
                     ["`x` is a leaf tensor that requires grad", "AccumulateGrad",
                      "`with torch.no_grad(): x.add_(1)`", "`y = x.clone()`"], "x\\n(2)"),
    "leaf_setitem": ("x[0] = 5.", "a leaf Variable that requires grad",
                     ["`x` is a leaf tensor", "grad_fn"], "x\\n(2)"),
    "view_of_leaf": ("v = x[0]\nv.mul_(2)",
                     "a view of a leaf Variable that requires grad is being used in an "
                     "in-place operation.",
                     ["`v` is a view of `x`, a leaf tensor"], "v\\n()"),
    "saved_modified": ("a = x * 1\nb = a * a\na.mul_(2)\nb.sum().backward()",
                       "is at version 1; expected version 0 instead",
                       ["MulBackward0 needs `a`", "at version 0", "now at version 1",
                        "`a.clone()`", "torch.autograd.set_detect_anomaly(True)"],
                       "MulBackward0"),
    "graph_freed": ("loss = (x * w).sum()\nloss.backward()\nloss.backward()",
                    "Trying to backward through the graph a second time",
                    ["a second time", "freed", "retain_graph=True"], "MulBackward0"),
    "non_scalar": ("y = x * w\ny.backward()",
                   "grad can be implicitly created only for scalar outputs",
                   ["`y` has shape (2,): 2 numbers", "y.sum().backward()"], "y\\n(2)"),
    "no_grad_fn": ("z = torch.ones(2).sum()\nz.backward()",
                   "element 0 of tensors does not require grad and does not have a grad_fn",
                   ["`z` has no grad_fn", "requires_grad=True"], "z\\n()"),
    "create_graph": ("g, = torch.autograd.grad((x * w).sum(), x)\ng.backward()",
                     "element 0 of tensors does not require grad and does not have a grad_fn",
                     ["`g`, returned by `torch.autograd.grad((x * w).sum(), x)`, is a "
                      "gradient", "`torch.autograd.grad((x * w).sum(), x, "
                      "create_graph=True)`"], "g\\n(2)"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pytorch_errors_are_explained_after_their_own_traceback(ip, case):
    code, message, words, _ = CASES[case]
    result, text, outputs = run(ip, code)
    err = result.error_in_exec
    assert type(err) is RuntimeError and message in str(err)  # PyTorch's own error
    assert "RuntimeError" in text and message in flat(text)  # shown as PyTorch prints it
    assert "autograd_kit explains" not in text
    shown, = outputs
    plain, html = shown.data["text/plain"], shown.data["text/html"]
    assert plain.startswith("autograd_kit explains")
    for word in words:
        assert word in flat(plain)
    if CAN_RENDER:
        assert "data:image/svg+xml;base64," in html and "<svg" not in html  # an <img>
    assert "`" not in html


@pytest.mark.parametrize("case", list(CASES))
def test_pytorch_culprit_is_outlined(ip, case):
    code, _, _, box = CASES[case]
    result, _, _ = run(ip, code)
    exp = explain.explain(result.error_in_exec, ip.user_ns)
    assert highlighted_titles(exp) == [box]


def test_the_explanation_is_shown_once(ip):
    result, text, outputs = run(ip, CASES["saved_modified"][0])
    exp = explain.explain(result.error_in_exec, ip.user_ns)
    shown, = outputs
    assert flat(shown.data["text/plain"]).count(flat(exp.title)) == 1
    assert shown.data["text/html"].count(explain.rich(exp.title)) == 1
    assert exp.title not in flat(text)


def test_a_pytorch_error_inside_a_function_is_traced_to_the_learners_line(ip):
    code = ("def f(t):\n    return t.backward()\n"
            "h = x * w\nf(h)")
    _, _, outputs = run(ip, code)
    plain = flat(outputs[0].data["text/plain"])
    assert "`h` has shape (2,)" in plain


def test_other_pytorch_errors_are_left_alone(ip):
    result, text, outputs = run(ip, "torch.ones(2) + torch.ones(3)")
    assert isinstance(result.error_in_exec, RuntimeError) and outputs == []


def test_explanations_off_leave_pytorchs_error_alone(ip):
    ip.run_line_magic("autograd_explain", "off")
    result, text, outputs = run(ip, "x.add_(1)")
    assert isinstance(result.error_in_exec, RuntimeError) and outputs == []
    assert "a leaf Variable that requires grad" in text


# -- the magics -------------------------------------------------------------------------------
def test_graph_magic_draws_a_pytorch_graph(ip):
    result, _, outputs = run(ip, "loss = (x * w).sum()\n%autograd_graph loss --values")
    assert result.success and len(outputs) == 1
    data = outputs[0].data
    text = data.get("image/svg+xml") or data["text/plain"]
    assert "SumBackward0" in text and "MulBackward0" in text and "w" in text


def test_cell_magic_draws_the_pytorch_tensors_it_built(ip):
    result, _, outputs = run(ip, "%%autograd_graph\nh = x * w\ntotal = h.sum()")
    assert result.success and len(outputs) == 1
    data = outputs[0].data
    text = data.get("image/svg+xml") or data["text/plain"]
    assert "total" in text and "h" in text


def test_cell_magic_shows_a_pytorch_error_with_the_cells_lines_only(ip):
    result, text, outputs = run(ip, "%%autograd_graph\nh = x * w\nh.backward()")
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "h.backward()" in text and "run_cell_magic" not in text
    assert "magics.py" not in text and "parsing.py" not in text
    shown, = outputs  # the explanation after it
    assert "`h` has shape (2,)" in flat(shown.data["text/plain"])


class FakeStepper:
    problem = None

    def __init__(self, root, gradient=None, retain_graph=False, names=None):
        self.root, self.gradient = root, gradient

    def _repr_html_(self):
        return "<b>stepper</b>"


def test_step_magic_opens_the_stepper_on_a_pytorch_tensor(ip, monkeypatch):
    from autograd_kit import widgets
    monkeypatch.setattr(widgets, "BackwardStepper", FakeStepper, raising=False)
    shown = []
    monkeypatch.setattr("autograd_kit.ipython.magics.display", shown.append)
    result, text, _ = run(ip, "%autograd_step (x * w).sum()")
    assert result.success, text
    stepper, = shown
    assert isinstance(stepper.root, torch.Tensor)
    assert stepper.root.grad_fn.name() == "SumBackward0"


@pytest.mark.parametrize("line, words", [
    ("x", ["x is a leaf", "no grad_fn"]),
    ("x * w", ["shape (2,)", "--gradient"]),
])
def test_step_magic_says_why_a_pytorch_root_cannot_be_stepped(ip, line, words):
    result, text, _ = run(ip, f"%autograd_step {line}")
    assert isinstance(result.error_in_exec, UsageError) and text.count("\n") == 1
    for word in words:
        assert word in text


def test_step_magic_with_the_real_widget_on_pytorch(ip):
    """Needs a BackwardStepper that replays PyTorch's backward pass."""
    result, text, outputs = run(ip, "%autograd_step (x * w).sum()")
    assert result.success, text
    widget, = outputs
    assert "BackwardStepper" in widget.data["text/plain"]


# -- the tensor card --------------------------------------------------------------------------
def test_card_shows_a_pytorch_tensor(ip):
    ip.run_line_magic("autograd_display", "card")
    ip.run_cell("h = x * w")
    data, _ = ip.display_formatter.format(ip.user_ns["h"])
    assert data["text/plain"] == "tensor([3., 8.], grad_fn=<MulBackward0>)"
    html = data["text/html"]
    for word in ("<b>h</b>", "torch.Size([2])", "torch.float32", "is_leaf",
                 "&lt;MulBackward0&gt;", "tensor([3., 8.])", "not a leaf"):
        assert word in html
    param, _ = ip.display_formatter.format(torch.nn.Parameter(torch.ones(2)))
    assert "requires_grad" in param["text/html"]  # subclasses too


def test_card_shows_a_pytorch_grad_and_goes_away(ip):
    ip.run_line_magic("autograd_display", "card")
    ip.run_cell("(x * w).sum().backward()")
    html = ip.display_formatter.format(ip.user_ns["x"])[0]["text/html"]
    assert "tensor([3., 4.])" in html  # d (x * w).sum() / dx = w
    ip.run_line_magic("autograd_display", "text")
    assert "text/html" not in ip.display_formatter.format(ip.user_ns["x"])[0]


def test_card_of_something_else_is_a_one_line_type_error():
    with pytest.raises(TypeError) as info:
        display.tensor_card(torch.ones(2).numpy())
    message = str(info.value)
    assert "\n" not in message and "numpy.ndarray" in message
    assert "autograd_kit or PyTorch" in message


@pytest.mark.parametrize("earlier, failing, what", [
    ("g, = torch.autograd.grad((x * x).sum(), x)", "g.backward()", "`g`"),
    ("grads = torch.autograd.grad((x * x).sum(), x)", "torch.autograd.grad(grads[0], x)",
     "`grads[0]`"),
    ("dx = torch.autograd.grad((x * x).sum(), x)[0]", "dx.sum().backward()", "`dx`"),
])
def test_a_pytorch_gradient_from_an_earlier_cell_gets_the_create_graph_fix(ip, earlier,
                                                                           failing, what):
    assert run(ip, earlier, history=True)[0].success  # kept in history, as in a notebook
    result, _, outputs = run(ip, failing, history=True)
    assert type(result.error_in_exec) is RuntimeError
    plain = flat(outputs[0].data["text/plain"])
    assert f"{what}, returned by `torch.autograd.grad((x * x).sum(), x)`, is a gradient" \
        in plain
    assert "`torch.autograd.grad((x * x).sum(), x, create_graph=True)`" in plain
    assert "Fix: compute it again with grad mode on" not in plain


@pytest.mark.parametrize("cells", [
    ["with torch.no_grad():\n    nz = x * 2", "nz.sum().backward()"],
    ["c = torch.ones(2).sum()", "c.backward()"],
    ["torch.ones(2).sum().backward()"],
])
def test_a_pytorch_tensor_made_without_a_graph_gets_no_create_graph_advice(ip, cells):
    for cell in cells[:-1]:
        assert run(ip, cell, history=True)[0].success
    result, _, outputs = run(ip, cells[-1], history=True)
    assert "does not require grad and does not have a grad_fn" in str(result.error_in_exec)
    plain = flat(outputs[0].data["text/plain"])
    assert "has no grad_fn" in plain and "Fix: compute it again with grad mode on" \
        in plain
    assert "create_graph" not in plain and "is a gradient" not in plain


def test_a_pytorch_gradient_of_the_wrong_shape_is_explained(ip):
    result, _, outputs = run(ip, "y = x * w\ny.backward(torch.ones(3))")
    assert "Mismatch in shape" in str(result.error_in_exec)
    plain = flat(outputs[0].data["text/plain"])
    assert "must have the shape of `y`" in plain and "torch.ones_like(y)" in plain


@pytest.mark.parametrize("magic", ["autograd_graph", "autograd_step"])
def test_magics_refuse_the_pytorch_tensor_class_in_the_common_words(ip, magic):
    result, _, outputs = run(ip, f"%{magic} torch.Tensor")
    assert isinstance(result.error_in_exec, UsageError) and outputs == []
    assert str(result.error_in_exec) == (
        f"{magic} takes a tensor of autograd_kit or PyTorch (autograd_kit.Tensor or "
        "torch.Tensor); it was given the class Tensor.")


def test_a_leaf_changed_under_no_grad_after_being_saved(ip):
    result, _, outputs = run(ip, "a = x * x\nwith torch.no_grad():\n    x.mul_(2)\n"
                                 "a.sum().backward()")
    assert "is at version 1; expected version 0" in str(result.error_in_exec)
    plain = flat(outputs[0].data["text/plain"])
    assert "MulBackward0 needs `x`" in plain and "make the change after backward()" in plain
    assert "x = x * 2" not in plain


def test_a_saved_output_changed_in_place_is_named(ip):
    _, _, outputs = run(ip, "v = x.exp()\nv.add_(1)\nv.sum().backward()")
    plain = flat(outputs[0].data["text/plain"])
    assert "ExpBackward0 needs `v`" in plain and "now at version 1" in plain


def test_an_update_inside_a_loop_names_the_leaf(ip):
    _, _, outputs = run(ip, "for step in range(2):\n    loss = (x ** 2).sum()\n"
                            "    loss.backward()\n    x -= 0.1 * x.grad")
    ip.user_ns.pop("step", None)
    plain = flat(outputs[0].data["text/plain"])
    assert "`x` is a leaf tensor" in plain
    assert "`with torch.no_grad(): x -= 0.1 * x.grad`" in plain


def test_unloading_removes_the_pytorch_card_and_explanations(ip):
    ip.run_line_magic("autograd_display", "card")
    ip.run_line_magic("unload_ext", "autograd_kit")
    try:
        data, _ = ip.display_formatter.format(ip.user_ns["x"])
        assert "text/html" not in data
        result, _, outputs = run(ip, "x.add_(1)")
        assert isinstance(result.error_in_exec, RuntimeError) and outputs == []
    finally:
        ip.run_line_magic("load_ext", "autograd_kit")


# -- PyTorch's grad_fn nodes show their picture, as the kit's do -------------------------------
def formatted(ip, obj) -> dict:
    return ip.display_formatter.format(obj)[0]


def test_a_pytorch_node_shows_short_text_and_its_picture(ip):
    ip.run_cell("h = x * w\ntotal = h.sum()")
    node = ip.user_ns["total"].grad_fn
    assert repr(node).startswith("<SumBackward0 object at 0x")  # PyTorch's own repr...
    data = formatted(ip, node)
    assert data["text/plain"] == "<SumBackward0>"  # ...replaced, as for the kit's nodes
    if CAN_RENDER:
        svg = data["image/svg+xml"]
        assert "SumBackward0" in svg and "MulBackward0" in svg and "AccumulateGrad" in svg
        assert svg == display.node_svg(node)  # the very picture the kit's hook draws


def test_a_node_shown_in_the_cell_that_imports_torch_draws_too():
    """Registered by name before PyTorch is imported: the first cell already draws."""
    from autograd_kit.ipython import torch_nodes
    assert "builtins.MulBackward0" in torch_nodes.known_names()
    ip = make_shell()
    try:
        result, _, _ = run(ip, "import torch\nv = torch.ones(2, requires_grad=True) * 3\n"
                               "v.grad_fn")
        assert formatted(ip, result.result)["text/plain"] == "<MulBackward0>"
    finally:
        close_shell(ip, ("v",))


def test_every_pytorch_node_class_draws_once_torch_is_imported(ip):
    ip.run_cell("ln = torch.nn.functional.layer_norm(x, (2,))")  # not in the kit's tables
    node = ip.user_ns.pop("ln").grad_fn
    assert node.name() == "NativeLayerNormBackward0"
    assert formatted(ip, node)["text/plain"] == "<NativeLayerNormBackward0>"


def test_a_custom_functions_node_draws(ip):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    node = Twice.apply(ip.user_ns["x"]).grad_fn
    assert formatted(ip, node)["text/plain"] == "<TwiceBackward>"


def test_unloading_gives_pytorch_nodes_their_own_repr_back(ip):
    ip.run_cell("h = x * w\nln = torch.nn.functional.layer_norm(x, (2,))")
    nodes = [ip.user_ns["h"].grad_fn, ip.user_ns.pop("ln").grad_fn]
    assert all(formatted(ip, n)["text/plain"].startswith("<") for n in nodes)
    ip.run_line_magic("unload_ext", "autograd_kit")
    try:
        for node in nodes:
            data = formatted(ip, node)
            assert " at 0x" in data["text/plain"] and "image/svg+xml" not in data
    finally:
        ip.run_line_magic("load_ext", "autograd_kit")
