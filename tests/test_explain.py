"""``%autograd_explain on``: autograd errors explain themselves, and still fail.

Each kind of error is raised in a cell, as a learner would meet it.  The tests
check the words of the explanation (in the traceback), the picture displayed
after the cell (its culprit highlighted), and that the error itself is still
raised and shown -- also with another extension loaded.
"""
import re

import pytest
from IPython.utils.capture import capture_output

from autograd_kit import errors
from autograd_kit.ipython import explain
from shell_support import ANSI, CAN_RENDER, make_shell

SETUP = ("import autograd_kit as torch\n"
         "x = torch.tensor([1., 2.], requires_grad=True)\n"
         "w = torch.tensor([3., 4.], requires_grad=True)\n")


@pytest.fixture
def ip():
    shell = make_shell()
    shell.run_line_magic("autograd_explain", "on")
    shell.run_cell(SETUP)
    yield shell
    shell.run_line_magic("unload_ext", "autograd_kit")
    for name in ("x", "w", "a", "b", "y", "z", "v", "loss", "<script>"):
        shell.user_ns.pop(name, None)


def run(shell, code):
    """Run a cell; return (result, stdout + stderr without colours, displays)."""
    with capture_output() as cap:
        result = shell.run_cell(code)
    return result, ANSI.sub("", cap.stdout + cap.stderr), cap.outputs


def flat(text: str) -> str:
    """The text with line breaks and indents folded into single spaces."""
    return " ".join(text.split())


def highlighted_titles(exp) -> list[str]:
    """Labels of the boxes drawn with the highlight style in the DOT source."""
    return [m.group(1) for m in re.finditer(r'label="([^"]*)"[^\]]*color="red" penwidth="3"',
                                            exp.picture().source)]


CASES = {
    "leaf_inplace": ("x.add_(1)", errors.LeafInplaceError,
                     ["`x` is a leaf tensor that requires grad", "in place",
                      "torch.no_grad()"], "`x`"),
    "view_of_leaf": ("v = x[0]\nv.mul_(2)", errors.LeafInplaceError,
                     ["`v` is a view of `x`", "in place"], "`v`"),
    "saved_modified": ("a = x * 1\nb = a * a\na.mul_(2)\nb.sum().backward()",
                       errors.ModifiedSavedTensorError,
                       ["MulBackward0 needs `a`", "at version 0", "now at version 1",
                        "._version", ".clone()"], "MulBackward0"),
    "graph_freed": ("loss = (x * w).sum()\nloss.backward()\nloss.backward()",
                    errors.GraphFreedError,
                    ["a second time", "freed", "retain_graph=True"], "MulBackward0"),
    "non_scalar": ("y = x * w\ny.backward()", errors.NonScalarBackwardError,
                   ["single number", "`y` has shape (2,): 2 numbers", "y.sum().backward()"],
                   "`y`"),
    "no_grad_fn": ("z = torch.ones(2).sum()\nz.backward()", errors.NoGradFnError,
                   ["`z` has no grad_fn", "requires_grad=True", "torch.no_grad()"], "`z`"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_error_explains_itself_and_is_still_raised(ip, case):
    code, cls, words, culprit = CASES[case]
    result, text, outputs = run(ip, code)
    assert isinstance(result.error_in_exec, cls) and not result.success
    shown = flat(text)
    assert "autograd_kit explains" in shown
    for word in words:
        assert word in shown
    # the original error follows the explanation
    assert shown.index("autograd_kit explains") < shown.index(cls.__name__)
    assert flat(str(result.error_in_exec)) in shown
    picture, = outputs
    caption = f"[graph of the error above: {culprit} outlined in red]"
    assert picture.data["text/plain"].split("\n")[0] == caption
    if CAN_RENDER:
        assert "<svg" in picture.data["text/html"]


@pytest.mark.parametrize("case, box", [
    ("leaf_inplace", "x\\n(2)"), ("saved_modified", "MulBackward0"),
    ("graph_freed", "MulBackward0"), ("non_scalar", "y\\n(2)"), ("no_grad_fn", "z\\n()"),
])
def test_the_culprit_is_highlighted(ip, case, box):
    result, _, _ = run(ip, CASES[case][0])
    exp = explain.explain(result.error_in_exec, ip.user_ns)
    assert highlighted_titles(exp) == [box]


def test_saved_and_freed_values_are_drawn(ip):
    result, _, _ = run(ip, CASES["graph_freed"][0])
    source = explain.explain(result.error_in_exec, ip.user_ns).picture().source
    assert "(freed)" in source
    result, _, _ = run(ip, CASES["saved_modified"][0])
    source = explain.explain(result.error_in_exec, ip.user_ns).picture().source
    assert "(modified)" in source


def test_off_gives_the_plain_error(ip):
    ip.run_line_magic("autograd_explain", "off")
    result, text, outputs = run(ip, "x.add_(1)")
    assert isinstance(result.error_in_exec, errors.LeafInplaceError)
    assert "autograd_kit explains" not in text and "LeafInplaceError" in text
    assert outputs == []


def test_other_errors_are_left_alone(ip):
    result, text, outputs = run(ip, "1 / 0")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "autograd_kit explains" not in text and outputs == []


def test_no_custom_exception_handler_is_installed(ip):
    assert ip.custom_exceptions == ()


def test_works_with_another_extension_loaded(ip):
    ip.run_line_magic("load_ext", "autoreload")
    ip.run_line_magic("autoreload", "2")
    try:
        result, text, outputs = run(ip, CASES["saved_modified"][0])
        assert isinstance(result.error_in_exec, errors.ModifiedSavedTensorError)
        assert "now at version 1" in flat(text) and len(outputs) == 1
        assert run(ip, "ok = 1 + 1")[0].success
    finally:
        ip.run_line_magic("unload_ext", "autoreload")


def test_names_are_escaped_in_the_picture_html(ip):
    ip.user_ns["<script>"] = ip.user_ns["x"]
    ip.user_ns.pop("x")
    result, text, outputs = run(ip, "globals()['<script>'].add_(1)")
    assert "`<script>`" in text  # plain text keeps the name as it is
    html = outputs[0].data.get("text/html", "")
    if html:
        assert "&lt;script&gt;" in html and "<script>" not in html


def test_a_bare_error_still_renders(ip):
    """Errors raised without their details (node None) fall back to plain words."""
    for err in (errors.GraphFreedError(), errors.NonScalarBackwardError(),
                errors.DeviceMismatchError("cpu", "cuda:0")):
        lines = explain.render_traceback(err)
        assert "autograd_kit explains" in lines[0]


def test_the_render_hook_is_removed_on_unload(ip):
    assert hasattr(errors.NoGradFnError(), "_render_traceback_")
    ip.run_line_magic("unload_ext", "autograd_kit")
    assert not hasattr(errors.NoGradFnError(), "_render_traceback_")
    assert explain.after_cell not in ip.events.callbacks["post_run_cell"]
    ip.run_line_magic("load_ext", "autograd_kit")


def test_turning_on_twice_registers_one_callback(ip):
    ip.run_line_magic("autograd_explain", "on")
    assert ip.events.callbacks["post_run_cell"].count(explain.after_cell) == 1
