"""``%autograd_explain on``: autograd errors explain themselves, and still fail.

Each kind of error is raised in a cell, as a learner would meet it.  The tests
check the words of the explanation (displayed once, after the traceback), the
picture in it (its culprit highlighted), and that the error itself is still
raised and shown -- also with another extension loaded.  PyTorch's own errors
are tested in test_torch_ipython.py.
"""

import pytest

from autograd_kit import errors
from autograd_kit.ipython import explain
from shell_support import ANSI, CAN_RENDER, flat, highlighted_titles, make_shell, run

SETUP = ("import autograd_kit as torch\n"
         "x = torch.tensor([1., 2.], requires_grad=True)\n"
         "w = torch.tensor([3., 4.], requires_grad=True)\n")


GRADIENT_NAMES = ("g", "grads", "dx", "nz", "c", "unseen")


@pytest.fixture
def ip():
    shell = make_shell()
    shell.run_line_magic("autograd_explain", "on")
    shell.run_cell(SETUP)
    yield shell
    shell.run_line_magic("unload_ext", "autograd_kit")
    for name in ("x", "w", "a", "b", "y", "z", "v", "loss", "<script>", *GRADIENT_NAMES):
        shell.user_ns.pop(name, None)


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


def explanation_of(outputs):
    """The one displayed explanation: (plain text, html)."""
    shown, = outputs
    return shown.data["text/plain"], shown.data["text/html"]


@pytest.mark.parametrize("case", list(CASES))
def test_each_error_explains_itself_and_is_still_raised(ip, case):
    code, cls, words, culprit = CASES[case]
    result, text, outputs = run(ip, code)
    assert isinstance(result.error_in_exec, cls) and not result.success
    # the traceback is the error's own, without the explanation
    assert cls.__name__ in text and flat(str(result.error_in_exec)) in flat(text)
    assert "autograd_kit explains" not in text
    plain, html = explanation_of(outputs)
    for word in words:
        assert word in flat(plain)
    assert plain.rstrip().splitlines()[-1].strip() == \
        f"[the graph below: {culprit} outlined in red]"
    if CAN_RENDER:
        assert "data:image/svg+xml;base64," in html and "<svg" not in html  # an <img>


@pytest.mark.parametrize("case", ["leaf_inplace", "saved_modified", "non_scalar"])
def test_the_explanation_is_shown_once_and_rendered(ip, case):
    result, text, outputs = run(ip, CASES[case][0])
    exp = explain.explain(result.error_in_exec, ip.user_ns)
    plain, html = explanation_of(outputs)
    title_words = exp.title.split("`")[-1].strip()  # the title's last plain words
    assert title_words and text.count(title_words) == 0
    assert flat(plain).count(flat(title_words)) == 1
    assert html.count(explain.rich(exp.title)) == 1
    assert "`" not in html and "<code>" in html  # backticks became code


def test_leaf_inplace_gives_the_real_reason_and_safe_fixes(ip):
    result, _, outputs = run(ip, "x += 1")
    assert isinstance(result.error_in_exec, errors.LeafInplaceError)
    plain = flat(explanation_of(outputs)[0])
    assert "grad_fn" in plain and "AccumulateGrad" in plain and "`x.grad`" in plain
    assert "very value" not in plain
    assert "`with torch.no_grad(): x += 1`" in plain and "`y = x.clone()`" in plain
    assert "x = x + 1" not in plain


def test_the_fix_wraps_the_learners_own_update(ip):
    ip.user_ns["x"].grad = ip.user_ns["w"].detach()
    _, _, outputs = run(ip, "x -= 0.1 * x.grad")
    assert "`with torch.no_grad(): x -= 0.1 * x.grad`" in flat(explanation_of(outputs)[0])


def test_a_fresh_leaf_is_explained_the_same_way(ip):
    """No graph uses the fresh leaf, so the reason can't be stale saved values."""
    result, _, outputs = run(ip, "fresh = torch.zeros(2, requires_grad=True)\n"
                                 "fresh.mul_(2)")
    ip.user_ns.pop("fresh", None)
    plain = flat(explanation_of(outputs)[0])
    assert "`fresh` is a leaf tensor" in plain and "AccumulateGrad" in plain


def test_anomaly_detection_is_advised_for_a_changed_saved_value(ip):
    _, _, outputs = run(ip, CASES["saved_modified"][0])
    assert "torch.autograd.set_detect_anomaly(True)" in flat(explanation_of(outputs)[0])


@pytest.mark.parametrize("code, what, fix", [
    ("g, = torch.autograd.grad((x * w).sum(), x)\ng.backward()",
     "`g`, returned by `torch.autograd.grad((x * w).sum(), x)`, is a gradient",
     "`torch.autograd.grad((x * w).sum(), x, create_graph=True)`"),
    ("(x * w).sum().backward()\nx.grad.sum().backward()",
     "`x.grad` is a gradient", "`loss.backward(create_graph=True)`"),
])
def test_a_gradient_without_create_graph_is_told_apart(ip, code, what, fix):
    result, _, outputs = run(ip, code)
    ip.user_ns.pop("g", None)
    assert isinstance(result.error_in_exec, errors.NoGradFnError)
    plain = flat(explanation_of(outputs)[0])
    assert what in plain and fix in plain
    assert "compute it again with grad mode on" not in plain


# a notebook keeps every cell in its history, where the explainer finds how an
# earlier cell made the tensor: these cells are run with history=True
EARLIER_GRADIENTS = [
    ["g, = torch.autograd.grad((x * x).sum(), x)", "g.backward()", "`g`"],
    ["grads = torch.autograd.grad((x * x).sum(), x)", "torch.autograd.grad(grads[0], x)",
     "`grads[0]`"],
    ["dx = torch.autograd.grad((x * x).sum(), x)[0]", "dx.sum().backward()", "`dx`"],
]
GRAD_CALL = "torch.autograd.grad((x * x).sum(), x)"
CREATE_GRAPH_FIX = ("Fix: ask for that record in the first call: "
                    "`torch.autograd.grad((x * x).sum(), x, create_graph=True)`")
ORDINARY_FIX = "Fix: compute it again with grad mode on"


def explained_after(shell, cells, history=True):
    """Run ``cells`` in turn; the last one fails: its error and explanation."""
    for cell in cells[:-1]:
        assert run(shell, cell, history=history)[0].success
    result, _, outputs = run(shell, cells[-1], history=history)
    return result.error_in_exec, flat(explanation_of(outputs)[0])


@pytest.mark.parametrize("earlier, failing, what", EARLIER_GRADIENTS)
def test_a_gradient_made_in_an_earlier_cell_gets_the_create_graph_fix(ip, earlier, failing,
                                                                      what):
    err, plain = explained_after(ip, [earlier, failing])
    assert isinstance(err, errors.NoGradFnError)
    assert f"{what}, returned by `{GRAD_CALL}`, is a gradient computed without a graph" \
        in plain
    assert CREATE_GRAPH_FIX in plain and ORDINARY_FIX not in plain


@pytest.mark.parametrize("cells", [
    ["with torch.no_grad():\n    nz = x * 2", "nz.sum().backward()"],
    ["c = torch.ones(2).sum()", "c.backward()"],
    ["torch.ones(2).sum().backward()"],
])
def test_a_tensor_made_without_a_graph_gets_no_create_graph_advice(ip, cells):
    err, plain = explained_after(ip, cells)
    assert isinstance(err, errors.NoGradFnError)
    assert "has no grad_fn and does not require grad" in plain and ORDINARY_FIX in plain
    assert "create_graph" not in plain and "is a gradient" not in plain


def test_without_the_history_a_gradient_is_only_named_as_a_possible_cause(ip):
    """The earlier cell is not in the history: where `unseen` came from is not
    known, so both causes are named, and neither is asserted."""
    err, plain = explained_after(ip, ["unseen, = torch.autograd.grad((x * x).sum(), x)",
                                      "unseen.backward()"], history=False)
    assert "`unseen` has no grad_fn" in plain and "is a gradient" not in plain
    assert "unless that call had `create_graph=True`" in plain and ORDINARY_FIX in plain


def test_a_plain_tensor_without_grad_fn_is_not_called_a_gradient(ip):
    _, _, outputs = run(ip, "z = torch.ones(2).sum()\nz.backward()")
    plain = flat(explanation_of(outputs)[0])
    assert "`z` has no grad_fn" in plain and "is a gradient" not in plain
    assert "requires_grad=True" in plain


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
        assert "is at version 1" in flat(text)
        assert "now at version 1" in flat(explanation_of(outputs)[0])
        assert run(ip, "ok = 1 + 1")[0].success
    finally:
        ip.run_line_magic("unload_ext", "autoreload")


def test_names_are_escaped_in_the_picture_html(ip):
    ip.user_ns["<script>"] = ip.user_ns["x"]
    ip.user_ns.pop("x")
    result, text, outputs = run(ip, "globals()['<script>'].add_(1)")
    plain, html = explanation_of(outputs)
    assert "`<script>`" in plain  # plain text keeps the name as it is
    assert "&lt;script&gt;" in html and "<script>" not in html


def test_a_bare_error_still_renders(ip):
    """Errors raised without their details (node None) render their message."""
    for err in (errors.GraphFreedError(), errors.NonScalarBackwardError(),
                errors.DeviceMismatchError("cpu", "cuda:0")):
        lines = explain.render_traceback(err)
        assert str(err)[:40] in ANSI.sub("", "".join(lines))
        exp = explain.explain(err, {})
        assert exp is None or exp.root is None


def test_the_traceback_shows_the_learners_frames_only(ip):
    result, text, _ = run(ip, "def step(t):\n    return t.backward()\n"
                              "y = x * w\nstep(y)")
    ip.user_ns.pop("step", None)
    assert isinstance(result.error_in_exec, errors.NonScalarBackwardError)
    assert "step(y)" in text and "return t.backward()" in text
    assert "skipping hidden" not in text and "interactiveshell.py" not in text


def test_the_render_hook_is_removed_on_unload(ip):
    assert hasattr(errors.NoGradFnError(), "_render_traceback_")
    ip.run_line_magic("unload_ext", "autograd_kit")
    assert not hasattr(errors.NoGradFnError(), "_render_traceback_")
    assert explain.after_cell not in ip.events.callbacks["post_run_cell"]
    ip.run_line_magic("load_ext", "autograd_kit")


def test_turning_on_twice_registers_one_callback(ip):
    ip.run_line_magic("autograd_explain", "on")
    assert ip.events.callbacks["post_run_cell"].count(explain.after_cell) == 1


def test_the_advice_calls_the_kit_what_the_notebook_calls_it(ip):
    """In a notebook that did ``import autograd_kit as ak``, the fix says
    ``ak.no_grad()``: code the learner can paste.  Where the kit is called
    ``torch`` (the fixture) the advice keeps ``torch.``, as above."""
    run(ip, "import autograd_kit as ak\nq = ak.tensor([1., 2.], requires_grad=True)\n"
            "del torch")
    try:
        _, _, outputs = run(ip, "q += 1")
        plain = flat(explanation_of(outputs)[0])
        assert "`with ak.no_grad(): q += 1`" in plain and "torch." not in plain
        _, _, outputs = run(ip, "z = ak.ones(2).sum()\nz.backward()")
        plain = flat(explanation_of(outputs)[0])
        assert "ak.no_grad()" in plain and "torch." not in plain
    finally:
        run(ip, "import autograd_kit as torch")
        ip.user_ns.pop("ak", None)
        ip.user_ns.pop("q", None)


def test_respelling_leaves_type_names_and_unnamed_kits_alone():
    import autograd_kit
    from autograd_kit.ipython import spelling
    text = "`torch.no_grad()`, `torch.autograd.grad(y, x)` and a torch.FloatTensor"
    assert spelling.as_written(text, autograd_kit, {"ak": autograd_kit}) == \
        "`ak.no_grad()`, `ak.autograd.grad(y, x)` and a torch.FloatTensor"
    assert spelling.as_written(text, autograd_kit, {"np": object()}) == text
    assert spelling.as_written(text, autograd_kit, {"_ak": autograd_kit}) == text
