"""The ``%load_ext autograd_kit`` magics, driven through an IPython shell.

Each test loads the extension into a fresh-state shell, runs cells as a user
would, and looks at what was displayed (``capture_output``).  SVG assertions
are skipped where no Graphviz renderer is installed; everything else runs
everywhere.  The last test runs a small notebook in a real kernel.
"""

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_kit
from autograd_kit import viz
from autograd_kit.ipython import parsing
from shell_support import ANSI, CAN_RENDER, close_shell, make_shell, needs_renderer

@pytest.fixture
def ip():
    shell = make_shell("import autograd_kit as torch\n"
                       "inputs = torch.tensor([1., 2.], requires_grad=True)\n"
                       "weight = torch.tensor([3., 4.], requires_grad=True)\n"
                       "loss = (inputs * weight).sum()")
    yield shell
    close_shell(shell, ("inputs", "weight", "loss"))


def run(shell, code):
    """Run a cell; return (result, stdout, stderr, display outputs)."""
    with capture_output() as cap:
        result = shell.run_cell(code)
    return result, ANSI.sub("", cap.stdout), ANSI.sub("", cap.stderr), cap.outputs


def picture_text(data: dict) -> str:
    """The SVG when drawn, else the text (which then holds the DOT source)."""
    return data.get("image/svg+xml") or data["text/plain"]


@pytest.fixture
def calls(monkeypatch):
    """Record the arguments that the magics pass to ``make_dot``."""
    seen = []
    real = viz.make_dot

    def spy(root, *args, **kwargs):
        seen.append((root, kwargs))
        return real(root, *args, **kwargs)

    monkeypatch.setattr(viz, "make_dot", spy)
    return seen


# -- loading and unloading --------------------------------------------------------
MAGICS = {"line": {"autograd_graph", "autograd_step", "autograd_explain", "autograd_display",
                   "autograd_alias"},
          "cell": {"autograd_graph"}}


def test_load_registers_and_unload_removes_the_magics(ip):
    for kind, names in MAGICS.items():
        assert names <= set(ip.magics_manager.magics[kind])
    ip.run_line_magic("autograd_explain", "on")
    ip.run_line_magic("unload_ext", "autograd_kit")
    for kind, names in MAGICS.items():
        assert not names & set(ip.magics_manager.magics[kind])
    from autograd_kit.ipython import explain
    assert explain.after_cell not in ip.events.callbacks["post_run_cell"]
    assert not hasattr(autograd_kit.errors.NonScalarBackwardError(), "_render_traceback_")
    ip.run_line_magic("load_ext", "autograd_kit")  # the fixture unloads it again


def test_reload_ext_keeps_one_copy_of_everything(ip):
    ip.run_line_magic("reload_ext", "autograd_kit")
    result, _, _, outputs = run(ip, "%autograd_graph loss")
    assert result.success and len(outputs) == 1


def test_usage_is_shown_by_help(ip):
    doc = ip.find_line_magic("autograd_graph").__doc__
    for option in ("--values", "--grads", "--saved", "--attrs", "--theme", "--view",
                   "--max-nodes"):
        assert option in doc


# -- %autograd_graph ------------------------------------------------------------------
def test_graph_of_an_expression_is_displayed_with_the_users_names(ip):
    result, stdout, stderr, outputs = run(ip, "%autograd_graph loss")
    assert result.success and not stderr
    assert len(outputs) == 1
    data = outputs[0].data
    assert data["text/plain"].startswith("<Graph") or "digraph" in data["text/plain"]
    text = picture_text(data)
    assert "inputs" in text and "weight" in text and "SumBackward0" in text


@needs_renderer
def test_graph_svg_is_present(ip):
    _, _, _, outputs = run(ip, "%autograd_graph loss --values")
    svg = outputs[0].data["image/svg+xml"]
    assert svg.lstrip().startswith("<svg") and "weight" in svg


@pytest.mark.parametrize("line, expected", [
    ("loss --values", {"show_values": True}),
    ("loss --grads", {"show_grads": True}),
    ("loss --saved --attrs", {"show_saved": True, "show_attrs": True}),
    ("loss --theme dark", {"theme": "dark"}),
    ("loss --theme print --view forward", {"theme": "print", "view": "forward"}),
    ("loss --max-nodes 5", {"max_nodes": 5}),
    ("--values loss", {"show_values": True}),
    ("(inputs * weight).sum() --values", {"show_values": True}),
])
def test_graph_options_reach_make_dot(ip, calls, line, expected):
    result, _, stderr, outputs = run(ip, f"%autograd_graph {line}")
    assert result.success, stderr
    (root, kwargs), = calls
    assert kwargs["names"] is ip.user_ns
    for key, value in expected.items():
        assert kwargs[key] == value
    assert autograd_kit.is_tensor(root) and root.grad_fn.name() == "SumBackward0"


def test_graph_of_a_grad_fn_and_of_a_tuple(ip, calls):
    assert run(ip, "%autograd_graph loss.grad_fn")[0].success
    assert run(ip, "%autograd_graph (loss, inputs * 2)")[0].success
    assert calls[0][0] is ip.user_ns["loss"].grad_fn
    assert isinstance(calls[1][0], tuple) and len(calls[1][0]) == 2


@pytest.mark.parametrize("line, words", [
    ("loss --theme neon", ["neon", "light", "dark"]),
    ("loss --view sideways", ["sideways"]),
    ("loss --max-nodes x", ["--max-nodes", "x"]),
    ("loss --max-nodes 0", ["--max-nodes", "at least 1"]),
    ("loss --bogus", ["--bogus"]),
    ("", ["give an expression"]),
])
def test_bad_arguments_give_a_one_line_usage_error(ip, line, words):
    result, stdout, stderr, outputs = run(ip, f"%autograd_graph {line}")
    assert isinstance(result.error_in_exec, UsageError)
    assert stderr.startswith("UsageError: autograd_graph: ")
    assert stderr.count("\n") == 1 and "Traceback" not in stdout + stderr
    for word in words:
        assert word in stderr
    assert outputs == []


TAKES = ("{tool} takes a tensor of autograd_kit or PyTorch (autograd_kit.Tensor or "
         "torch.Tensor); it was given {given}.")


@pytest.mark.parametrize("line, message", [
    ("q", "autograd_graph: NameError: name 'q' is not defined"),
    ("loss +", "autograd_graph: SyntaxError: "),
    ("3", TAKES.format(tool="autograd_graph", given="an int")),
    ("torch.Tensor", TAKES.format(tool="autograd_graph",
                                  given="the class Tensor")),
    ("(loss, 3)", TAKES.format(tool="autograd_graph", given="a tuple holding an int")),
    ("[]", TAKES.format(tool="autograd_graph", given="an empty list")),
])
def test_bad_expression_gives_a_short_message(ip, line, message):
    result, stdout, stderr, outputs = run(ip, f"%autograd_graph {line}")
    assert isinstance(result.error_in_exec, UsageError)
    assert stderr.startswith(f"UsageError: {message}")
    assert stderr.count("\n") == 1 and "Traceback" not in stdout + stderr


# -- %%autograd_graph -----------------------------------------------------------------
def test_cell_magic_draws_the_last_expression(ip, calls):
    result, _, _, outputs = run(ip, "%%autograd_graph --values --view forward\n"
                                    "hidden = inputs * weight\nhidden.sum()")
    assert result.success and len(outputs) == 1
    (root, kwargs), = calls
    assert root.grad_fn.name() == "SumBackward0" and kwargs["show_values"]
    assert "hidden" in ip.user_ns  # the cell ran in the user's namespace
    # the forward view shows named intermediate tensors between the ops
    text = picture_text(outputs[0].data)
    assert "hidden" in text and "inputs" in text


def test_cell_magic_draws_every_new_tensor_named_after_the_cell_variables(ip, calls):
    result, _, _, outputs = run(ip, "%%autograd_graph\nscaled = inputs * 3\n"
                                    "total = scaled.sum()\nplain = 5")
    assert result.success
    (root, kwargs), = calls
    assert len(root) == 2
    assert root[0] is ip.user_ns["scaled"] and root[1] is ip.user_ns["total"]
    text = picture_text(outputs[0].data)
    assert "scaled" in text and "total" in text


def test_cell_magic_with_an_expression_on_its_line(ip, calls):
    assert run(ip, "%%autograd_graph out\nout = (inputs ** 2).sum()")[0].success
    assert calls[0][0] is ip.user_ns["out"]


def test_cell_magic_that_builds_nothing_says_so(ip):
    result, stdout, _, outputs = run(ip, "%%autograd_graph\nnothing = 1 + 1")
    assert result.success and outputs == []
    assert "built no graph" in stdout


def test_cell_that_does_not_parse_gives_one_line(ip):
    result, stdout, stderr, outputs = run(ip, "%%autograd_graph\nh = inputs * 2\ny = (h *")
    assert isinstance(result.error_in_exec, UsageError) and outputs == []
    assert stderr.startswith("UsageError: autograd_graph: SyntaxError in the cell, line 2")
    assert stderr.count("\n") == 1 and "Traceback" not in stdout + stderr


@pytest.mark.parametrize("code, error", [
    ("boom = 1 / 0", ZeroDivisionError),
    ("def f(t):\n    return t.backward()\nf(inputs * weight)",
     autograd_kit.errors.NonScalarBackwardError),
])
def test_error_in_the_cell_shows_the_users_traceback_alone(ip, code, error):
    result, stdout, stderr, _ = run(ip, "%%autograd_graph\n" + code)
    ip.user_ns.pop("f", None)
    assert isinstance(result.error_in_exec, error)
    shown = stdout + stderr
    assert code.splitlines()[-1] in shown  # the cell's own line is in the traceback
    for magic_frame in ("run_cell_magic", "magics.py", "parsing.py", "_run_and_collect"):
        assert magic_frame not in shown
    assert shown.count("Traceback") == 1 and error.__name__ in shown


# -- %autograd_step -----------------------------------------------------------------------
class FakeStepper:
    def __init__(self, root, gradient=None, retain_graph=False, names=None):
        self.root, self.gradient = root, gradient
        self.retain_graph, self.names = retain_graph, names

    def _repr_html_(self):
        return "<b>stepper</b>"


def test_step_opens_the_stepper(ip, monkeypatch):
    from autograd_kit import widgets
    monkeypatch.setattr(widgets, "BackwardStepper", FakeStepper, raising=False)
    shown = []
    monkeypatch.setattr("autograd_kit.ipython.magics.display", shown.append)
    result, _, stderr, _ = run(ip, "%autograd_step inputs * weight "
                                   "--gradient torch.ones(2) * 2 --retain-graph")
    assert result.success, stderr
    stepper, = shown
    assert stepper.root.grad_fn.name() == "MulBackward0"
    assert stepper.gradient.tolist() == [2.0, 2.0]
    assert stepper.retain_graph and stepper.names is ip.user_ns


def test_step_without_the_widget_says_so_in_one_line(ip, monkeypatch):
    from autograd_kit import widgets
    monkeypatch.delattr(widgets, "BackwardStepper", raising=False)
    result, stdout, stderr, _ = run(ip, "%autograd_step loss")
    assert isinstance(result.error_in_exec, UsageError)
    assert "not available" in stderr and stderr.count("\n") == 1


def test_step_with_a_bad_expression(ip):
    result, _, stderr, _ = run(ip, "%autograd_step nope")
    assert stderr.startswith("UsageError: autograd_step: NameError")


@pytest.mark.parametrize("line, words", [
    ("inputs", ["inputs is a leaf", "no grad_fn", "nothing"]),
    ("inputs * weight", ["shape (2,)", "single number", "--gradient", "gradient="]),
    ("torch.ones(2).sum()", ["no grad_fn", "does not require grad"]),
    ("3", ["autograd_step takes a tensor of autograd_kit or PyTorch", "given an int"]),
    ("[loss]", ["given a list"]),
])
def test_step_says_why_it_cannot_show_a_root(ip, monkeypatch, line, words):
    from autograd_kit import widgets
    monkeypatch.setattr(widgets, "BackwardStepper", FakeStepper, raising=False)
    result, stdout, stderr, outputs = run(ip, f"%autograd_step {line}")
    assert isinstance(result.error_in_exec, UsageError) and outputs == []
    assert stderr.count("\n") == 1 and "Traceback" not in stdout + stderr
    assert "cannot show this root" not in stderr
    for word in words:
        assert word in stderr


def test_step_reports_the_widgets_own_problem_in_words(ip, monkeypatch):
    from autograd_kit import widgets

    class Troubled(FakeStepper):
        problem = "the graph was already freed"

    monkeypatch.setattr(widgets, "BackwardStepper", Troubled, raising=False)
    result, _, stderr, _ = run(ip, "%autograd_step loss")
    assert isinstance(result.error_in_exec, UsageError)
    assert "cannot step through loss: the graph was already freed" in stderr


@pytest.mark.skipif(not hasattr(__import__("autograd_kit.widgets").widgets,
                                "BackwardStepper"), reason="the widget is not written yet")
def test_step_with_the_real_widget(ip):
    result, _, stderr, outputs = run(ip, "%autograd_step loss --retain-graph")
    assert result.success, stderr
    widget, = outputs
    assert "BackwardStepper" in widget.data["text/plain"]


# -- one sentence for a wrong input, whatever the tool -------------------------------------
class DuckTensor:
    """Every attribute a tool reads from a tensor, but no engine's tensor."""

    grad_fn, requires_grad, is_leaf, grad, shape = None, True, True, None, (2,)


# what a learner might pass by mistake -> how the drawing tools (which also take a
# list of tensors) and the others (one tensor) describe it
WRONG = {
    "[1, 2]": ("a list holding an int", "a list"),
    "[]": ("an empty list", "a list"),
    "numpy.zeros(2)": ("a numpy.ndarray", "a numpy.ndarray"),
    "'loss'": ("a str", "a str"),
    "torch.Tensor": ("the class Tensor",) * 2,
    "DuckTensor()": (f"a {__name__}.DuckTensor",) * 2,
}


@pytest.mark.parametrize("expr", list(WRONG))
def test_every_tool_refuses_a_wrong_input_in_the_same_words(ip, expr):
    import numpy

    from autograd_kit.ipython import display
    from autograd_kit.widgets import BackwardStepper
    value = eval(expr, {"numpy": numpy, "torch": autograd_kit, "DuckTensor": DuckTensor})
    ip.user_ns["wrong"] = value
    drawing, other = WRONG[expr]
    said = {}
    for magic in ("autograd_graph", "autograd_step"):
        result, stdout, stderr, outputs = run(ip, f"%{magic} wrong")
        assert isinstance(result.error_in_exec, UsageError) and outputs == []
        assert stderr.startswith("UsageError: ") and stderr.count("\n") == 1
        said[magic] = stderr.removeprefix("UsageError: ").strip()
    with pytest.raises(TypeError) as info:
        viz.make_dot(value)
    said["make_dot"] = str(info.value)
    with pytest.raises(TypeError) as info:
        display.tensor_card(value)
    said["the tensor card"] = str(info.value)
    said["BackwardStepper"] = BackwardStepper(value).problem
    ip.user_ns.pop("wrong")
    for tool, message in said.items():
        given = drawing if tool in ("make_dot", "autograd_graph") else other
        assert message == TAKES.format(tool=tool, given=given)


# -- the switches --------------------------------------------------------------------------
def test_switches_report_and_reject(ip):
    assert "is off" in run(ip, "%autograd_explain")[1]
    assert "is text" in run(ip, "%autograd_display")[1]
    for line in ("%autograd_explain maybe", "%autograd_display fancy"):
        result, _, stderr, _ = run(ip, line)
        assert isinstance(result.error_in_exec, UsageError) and stderr.count("\n") == 1


# -- reading the line ------------------------------------------------------------------------
def test_line_splitting_respects_brackets_and_quotes():
    assert parsing.split_options("f(a, --b) --values") == ("f(a, --b)", "--values")
    assert parsing.split_options("x - -y --theme dark") == ("x - -y", "--theme dark")
    assert parsing.split_options("d['--x'] ") == ("d['--x']", "")
    assert parsing.tokens("--gradient torch.ones(2, 3) 'a b'") == [
        "--gradient", "torch.ones(2, 3)", "'a b'"]


def test_parsing_doctests():
    import doctest
    assert doctest.testmod(parsing).failed == 0


# -- a real notebook ----------------------------------------------------------------------------
def test_notebook_runs_with_the_extension(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.skip("no python3 kernel")
    cells = [
        "%load_ext autograd_kit\nimport autograd_kit as torch\n"
        "x = torch.tensor([1., 2.], requires_grad=True)\n"
        "w = torch.tensor([3., 4.], requires_grad=True)\nloss = (x * w).sum()",
        "%autograd_graph loss --values",
        "%%autograd_graph\nh = x * w\nh.sum()",
        "loss.grad_fn",
        "%autograd_display card\nx",
        "%autograd_explain on",
        "a = x * 1\nb = a * a\na.mul_(2)\nb.sum().backward()",
        "print('still running')",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.cells[6].metadata["tags"] = ["raises-exception"]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = [c.outputs for c in nb.cells]
    graph, = out[1]
    assert graph.output_type == "display_data"
    assert "x" in picture_text(graph.data) and "w" in picture_text(graph.data)
    assert len(out[2]) == 1 and "h" in picture_text(out[2][0].data)
    node, = out[3]
    assert node.data["text/plain"] == "<SumBackward0>"
    assert ("image/svg+xml" in node.data) == CAN_RENDER
    card, = out[4]
    assert card.data["text/plain"] == "tensor([1., 2.], requires_grad=True)"
    assert "requires_grad" in card.data["text/html"] and "<b>x</b>" in card.data["text/html"]
    kinds = [o.output_type for o in out[6]]
    assert "error" in kinds
    error = out[6][kinds.index("error")]
    assert error.ename == "ModifiedSavedTensorError"
    assert "modified by an inplace operation" in error.evalue
    traceback = ANSI.sub("", "\n".join(error.traceback))
    assert "autograd_kit explains" not in traceback and "version 1" in traceback
    shown = [o for o in out[6] if o.output_type == "display_data"]
    assert len(shown) == 1 and "MulBackward0" in shown[0].data["text/plain"]
    assert "autograd_kit explains" in shown[0].data["text/plain"]
    assert "<code>" in shown[0].data["text/html"]
    assert out[7][0].text == "still running\n"
