"""The explainer on the mistakes met in real notebooks, on both engines.

Each case runs as a learner would write it, once with ``import autograd_kit as
torch`` and once with real PyTorch (skipped where PyTorch is not installed),
and checks

* that what the explanation claims is true of that engine's graph (the node
  that made a saved value when it was saved, the tensor that shares a version
  counter, the op a bias gradient was summed over...), read with the engine's
  own API;
* the words, in English, Chinese and Russian: the catalog's words for that
  language, with the learner's own names and code in them;
* that the kit and PyTorch get the same explanation.
"""
import re
import warnings

import numpy as np
import pytest

from autograd_kit.i18n import _, language, ngettext
from autograd_kit.ipython import explain
from autograd_kit.ipython.explanation import tidy
from shell_support import close_shell, flat, make_shell, run

LIBS = ["autograd_kit", "torch"]
LANGS = ["en", "zh", "ru"]
NAMES = ("p", "q", "z", "net", "out", "X", "w", "e", "d", "x", "u", "y", "g1", "g2", "t",
         "opt", "loss", "i", "torch", "F", "lin", "h", "ok", "Net", "model", "s", "fresh",
         "act")


def engine(lib: str):
    if lib == "torch":
        return pytest.importorskip("torch")
    import autograd_kit
    return autograd_kit


@pytest.fixture(params=LIBS)
def lib(request):
    engine(request.param)
    return request.param


@pytest.fixture
def shell(lib):
    ip = make_shell(f"import {lib} as torch\n")
    ip.run_line_magic("autograd_explain", "on")
    yield ip
    explain.set_explain_language(None)
    close_shell(ip, NAMES)


def explained(ip, code: str, lang: str = "en", history: bool = False):
    """Run ``code``; (its error, the explanation's plain text on one line each
    paragraph, folded to single spaces, and the raw plain text)."""
    explain.set_explain_language(lang)
    result, _, outputs = run(ip, code, history=history)
    texts = [o.data["text/plain"] for o in outputs if "text/plain" in o.data]
    assert len(texts) == 1, texts
    return result.error_in_exec, flat(texts[0]), texts[0]


def words(lang: str, message: str, **fields) -> str:
    """The catalog's words for ``message`` in ``lang``, filled in."""
    with language(lang):
        text = _(message).format(**fields)
    return tidy(text) if lang == "zh" else text  # as the explanation joins Chinese


def explanations(ip, code, lang="en"):
    explain.set_explain_language(lang)
    return [o.data["text/plain"] for o in run(ip, code)[2] if "text/plain" in o.data]


# -- what made a saved value, and what changed it ----------------------------------
CHANGED = "p = torch.ones(2, requires_grad=True)\nq = p * 2\nz = q * q\nq.add_(1)\n"


@pytest.mark.parametrize("lang", LANGS)
def test_a_changed_value_is_named_by_what_made_it_then_and_what_changed_it(shell, lang):
    err, plain, _ = explained(shell, CHANGED + "z.sum().backward()", lang)
    assert "output 0 of Add" in str(err)  # the engine's message names the changer...
    node = shell.user_ns["z"].grad_fn
    maker = node.next_functions[0][0]  # ...the graph still knows the maker
    assert maker.name() == "MulBackward0" and shell.user_ns["q"].grad_fn.name() == \
        "AddBackward0"
    assert words(lang, " (then the output of {op})", op="Mul") in plain
    assert words(lang, "Then `{statement}` changed it in place: it is now at version "
                 "{found}.", statement="q.add_(1)", found=1) in plain
    assert words(lang, "The error message calls it an output of {now}: it names the "
                 "tensor's grad_fn as it is now, the node of the in-place change, not the "
                 "operation that made it.", now="Add") in plain
    assert "(an output of Add)" not in plain


def test_a_value_changed_by_the_op_that_made_it_gets_no_renaming_note(shell):
    _, plain, _ = explained(shell, "a = torch.ones(2, requires_grad=True) * 1\n"
                                   "b = a * a\na.mul_(2)\nb.sum().backward()")
    shell.user_ns.pop("a"), shell.user_ns.pop("b")
    assert "Then `a.mul_(2)` changed it in place" in plain
    assert "(then the output of Mul)" in plain and "error message calls it" not in plain


def test_a_changed_leaf_is_said_to_be_a_leaf(shell):
    _, plain, _ = explained(shell, "w = torch.ones(2, requires_grad=True)\nz = w * w\n"
                                   "with torch.no_grad():\n    w.add_(1)\n"
                                   "z.sum().backward()")
    assert "saved `w` (a leaf) at version 0" in plain and "`w.add_(1)`" in plain


# -- inplace=True in a layer or a call --------------------------------------------------
INPLACE_LAYER = ("net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sigmoid(), "
                 "torch.nn.ReLU(inplace=True))\nout = net(torch.ones(3, 2))\n"
                 "out.sum().backward()")


@pytest.mark.parametrize("lang", LANGS)
def test_an_inplace_layer_is_named_as_the_cause_and_the_fix(shell, lang):
    err, plain, _ = explained(shell, INPLACE_LAYER, lang)
    assert "modified by an inplace operation" in str(err)
    relu = shell.user_ns["net"][2]
    assert relu.inplace is True and shell.user_ns["out"].grad_fn.name().startswith("Relu")
    assert words(lang, "Then `{op}`{where} changed it: an operation with `inplace=True` "
                 "writes its result over its input instead of making a new tensor, and "
                 "{node} needed that input as it was. It is now at version {found}.",
                 op="nn.ReLU(inplace=True)", where=words(lang, " (`{path}`)", path="net[2]"),
                 node="SigmoidBackward0", found=1) in plain
    assert "`nn.ReLU()`" in plain
    assert "`out *= 2`" not in plain  # the learner wrote no in-place code


def test_an_inplace_call_inside_a_forward_is_named(shell):
    code = ("F = torch.nn.functional\n"
            "class Net(torch.nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.lin = torch.nn.Linear(2, 2)\n"
            "    def forward(self, h):\n"
            "        return F.relu(torch.tanh(self.lin(h)), inplace=True)\n")
    assert run(shell, code, history=True)[0].success
    _, plain, _ = explained(shell, "model = Net()\nout = model(torch.ones(1, 2))\n"
                                   "out.sum().backward()", history=True)
    assert "Then `F.relu(torch.tanh(self.lin(h)), inplace=True)` changed it" in plain
    assert "`F.relu(torch.tanh(self.lin(h)))`" in plain and "TanhBackward0" in plain


def test_an_inplace_method_inside_a_function_is_named(shell):
    assert run(shell, "def act(h):\n    s = torch.sigmoid(h)\n    return s.relu_()\n",
               history=True)[0].success
    _, plain, _ = explained(shell, "x = torch.ones(2, requires_grad=True)\nout = act(x)\n"
                                   "out.sum().backward()", history=True)
    assert shell.user_ns["out"].grad_fn.name().startswith("Relu")
    assert "Then `s.relu_()` changed it: an in-place operation writes" in plain
    assert "(`s.relu()`)" in plain and "SigmoidBackward0" in plain


# -- detach() shares the version counter ------------------------------------------------
DETACHED = ("w = torch.ones(2, requires_grad=True)\ne = w.exp()\nd = e.detach()\n"
            "d.zero_()\ne.sum().backward()")


@pytest.mark.parametrize("lang", LANGS)
def test_detach_is_said_to_share_memory_and_the_version_counter(shell, lang):
    _, plain, _ = explained(shell, DETACHED, lang)
    e, d = shell.user_ns["e"], shell.user_ns["d"]
    assert e._version == d._version == 1  # one counter: d's change moved e's version
    assert float(e.detach().abs().sum()) == 0.0  # and one memory
    how = words(lang, "`{statement}` changed it", statement="d.zero_()")
    assert words(lang, "{how}: `{d}` shares the memory of `{a}` and its version counter "
                 "(`{made}`). `detach()` cuts a tensor off the graph but copies nothing, so "
                 "changing `{d}` in place changes `{a}` too: `{a}` is now at version "
                 "{found}.", how=how, d="d", a="e", made="d = e.detach()", found=1) in plain
    assert "`d = e.detach().clone()`" in plain


def test_data_is_not_taken_for_a_shared_counter(shell, lib):
    """``.data`` shares memory but not the version counter: no error at all."""
    result, _, outputs = run(shell, "w = torch.ones(2, requires_grad=True)\ne = w.exp()\n"
                                    "d = e.data\nd.zero_()\ne.sum().backward()")
    assert result.success and outputs == []
    assert shell.user_ns["e"]._version == 0


# -- autograd.grad twice ------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_grad_twice_gets_the_grad_calls_retain_graph(shell, lang):
    err, plain, _ = explained(shell, "x = torch.ones(2, requires_grad=True)\n"
                                     "y = (x * x).sum()\ng1 = torch.autograd.grad(y, x)\n"
                                     "g2 = torch.autograd.grad(y, x)", lang)
    assert "a second time" in str(err)
    assert "`torch.autograd.grad(y, x, retain_graph=True)`" in plain
    assert "backward(retain_graph=True)" not in plain
    assert words(lang, "`torch.autograd.grad` went through this graph a second time, but "
                 "its saved values were already freed.") in plain


# -- errors met while using tensors --------------------------------------------------------
USAGE = {
    "unused": ("x = torch.ones(2, requires_grad=True)\nu = torch.ones(2, requires_grad=True)"
               "\ny = (x * x).sum()\ntorch.autograd.grad(y, [x, u])",
               "{who} was not used to compute the output, so `torch.autograd.grad` has no "
               "gradient to give it.", {"who": "`u`"},
               "`torch.autograd.grad(y, [x, u], allow_unused=True)`"),
    "int_grad": ("t = torch.tensor([1, 2], requires_grad=True)",
                 "Only tensors of floating-point (or complex) numbers can require grad, and "
                 "this one holds integers.", {},
                 "`t = torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)`"),
    "numpy_grad": ("x = torch.ones(2, requires_grad=True)\nx.numpy()",
                   "{who} requires grad, so `.numpy()` refuses to hand out its numbers.",
                   {"who": "`x`"}, "`x.detach().numpy()`"),
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("case", list(USAGE))
def test_usage_errors_are_explained(shell, case, lang):
    code, title, fields, fix = USAGE[case]
    err, plain, _ = explained(shell, code, lang)
    assert isinstance(err, RuntimeError)
    assert words(lang, title, **fields) in plain and fix in plain


def test_the_unused_input_is_found_by_the_index_in_the_message(shell):
    err, plain, _ = explained(shell, "x = torch.ones(2, requires_grad=True)\n"
                                     "u = torch.ones(2, requires_grad=True)\n"
                                     "torch.autograd.grad((x * 2).sum(), (u, x))")
    assert "index 0" in str(err) and "`u` was not used" in plain


def test_the_fix_for_an_unused_input_really_works(lib):
    """What the explanation promises, checked on the engine."""
    torch = engine(lib)
    x, u = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    gx, gu = torch.autograd.grad((x * x).sum(), [x, u], allow_unused=True)
    assert gu is None and np.allclose(np.asarray(gx.tolist()), 2.0)
    gx, gu = torch.autograd.grad((x * x).sum(), [x, u], allow_unused=True,
                                 materialize_grads=True)
    assert gu.tolist() == [0.0, 0.0]
    t = torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)
    assert t.requires_grad and x.detach().numpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("lang", LANGS)
def test_cuda_without_a_gpu_is_explained(shell, lib, lang, monkeypatch):
    torch = engine(lib)
    if lib != "torch":  # the kit without a GPU module (the suite may serve one)
        from autograd_kit import backend
        monkeypatch.setattr(backend, "_cupy", None)
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    err, plain, _ = explained(shell, "x = torch.ones(2).cuda()", lang)
    assert isinstance(err, (RuntimeError, AssertionError))
    assert words(lang, "`.cuda()` (or `device='cuda'`) needs a GPU that this notebook can "
                 "use.") in plain
    assert "`device = 'cuda' if torch.cuda.is_available() else 'cpu'`" in plain


def test_other_assertion_errors_are_left_alone(shell):
    result, _, outputs = run(shell, "assert 1 == 2, 'no'")
    assert isinstance(result.error_in_exec, AssertionError) and outputs == []


# -- a non-leaf's .grad, and gradients that keep adding up ------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_reading_a_non_leafs_grad_is_explained_and_still_warned(shell, lang):
    explain.set_explain_language(lang)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result, text, outputs = run(shell, "w = torch.randn(3, requires_grad=True) * 0.1\n"
                                           "(w * 2).sum().backward()\ns = w.grad",
                                    history=True)
    assert result.success and shell.user_ns["s"] is None
    assert any("is not a leaf Tensor is being accessed" in str(w.message)
               for w in seen)  # the warning as before
    plain = flat(outputs[0].data["text/plain"])
    assert words(lang, "{who} is not a leaf, so its `.grad` stays None: backward() fills "
                 "`.grad` only for leaves.", who="`w`") in plain
    assert "`w.retain_grad()`" in plain
    assert "`w = torch.randn(3, requires_grad=True) * 0.1`" in plain


def test_a_leafs_grad_is_no_alarm(shell):
    result, text, outputs = run(shell, "w = torch.ones(3, requires_grad=True)\n"
                                       "(w * 2).sum().backward()\ns = w.grad")
    assert result.success and outputs == []


GROWING = ("w = torch.tensor([1., 2.], requires_grad=True)\n"
           "opt = torch.optim.SGD([w], lr=0.1)\n"
           "for i in range(4):\n"
           "    loss = (w * w).sum()\n"
           "    loss.backward()\n"
           "    opt.step()\n")


@pytest.mark.parametrize("lang", LANGS)
def test_gradients_that_keep_adding_up_are_noticed(shell, lang):
    explain.set_explain_language(lang)
    result, _, outputs = run(shell, GROWING)
    assert result.success
    w = shell.user_ns["w"]
    # the teacher's evidence, on the engine: .grad is the sum of all four passes
    torch = shell.user_ns["torch"]
    v, total = torch.tensor([1., 2.], requires_grad=True), np.zeros(2)
    for _i in range(4):
        g, = torch.autograd.grad((v * v).sum(), v)
        total += np.asarray(g.tolist())
        with torch.no_grad():
            v -= 0.1 * torch.tensor(total.tolist())
    assert np.allclose(np.asarray(w.grad.tolist()), total)
    assert w._version == 4
    plain = flat(outputs[0].data["text/plain"])
    assert words(lang, "`{w}.grad` kept adding up: the loop calls backward() and updates "
                 "`{w}`, but never empties its `.grad`.", w="w") in plain
    assert "`opt.zero_grad()`" in plain
    with language(lang):  # "4 times": the language's plural form for the count
        counted = ngettext(UPDATED[0], UPDATED[1], 4).format(w="w", n=4)
    assert counted in plain and (lang != "ru" or "обновлялся 4 раза" in plain)


def test_the_size_of_grad_is_shown_pass_after_pass_for_a_leaf_made_earlier(shell):
    """A leaf that existed before the cell is watched while the loop runs: the
    sizes shown are those of its .grad after each backward(), replayed here."""
    assert run(shell, GROWING.split("for ")[0])[0].success  # w and opt, in a cell of their own
    texts = explanations(shell, "for " + GROWING.split("for ", 1)[1])
    torch = shell.user_ns["torch"]
    v, total, sizes = torch.tensor([1., 2.], requires_grad=True), np.zeros(2), []
    for _i in range(4):
        g, = torch.autograd.grad((v * v).sum(), v)
        total += np.asarray(g.tolist())
        sizes.append(float(np.linalg.norm(total)))
        with torch.no_grad():
            v -= 0.1 * torch.tensor(total.tolist())
    assert sizes[-1] > 2 * sizes[0]  # it grows
    shown = " → ".join(f"{n:.3g}" for n in sizes)
    assert f"The size (norm) of `w.grad` after each backward() of this cell: {shown}." \
        in flat(texts[0])
    # the hooks that watched it are gone
    w = shell.user_ns["w"]
    assert run(shell, "(w * w).sum().backward()")[0].success


UPDATED = ("In this loop `{w}` was updated {n} time (its `._version` went up by {n}), and "
           "each update used `{w}.grad`, the sum of the gradients of every pass so far, not "
           "the gradient of that pass: the steps grow, and training drifts or blows up.",
           "In this loop `{w}` was updated {n} times (its `._version` went up by {n}), and "
           "each update used `{w}.grad`, the sum of the gradients of every pass so far, not "
           "the gradient of that pass: the steps grow, and training drifts or blows up.")


def test_a_models_parameters_are_named_when_they_keep_adding_up(shell):
    assert run(shell, "net = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(net.parameters(), "
                      "lr=0.1)\nX = torch.ones(4, 2)")[0].success
    texts = explanations(shell, "for i in range(3):\n    loss = net(X).pow(2).mean()\n"
                                "    loss.backward()\n    opt.step()")
    assert len(texts) == 1 and "`net.weight.grad` kept adding up" in flat(texts[0])
    assert "`net.bias.grad`" in flat(texts[0])


def test_a_manual_update_gets_a_manual_fix(shell):
    texts = explanations(shell, "w = torch.tensor([1., 2.], requires_grad=True)\n"
                                "for i in range(3):\n    (w * w).sum().backward()\n"
                                "    with torch.no_grad():\n        w -= 0.1 * w.grad")
    assert len(texts) == 1 and "`w.grad.zero_()`" in flat(texts[0])


@pytest.mark.parametrize("code", [
    # zero_grad() in the loop
    GROWING.replace("    loss = ", "    opt.zero_grad()\n    loss = "),
    # emptied by hand
    GROWING.replace("    opt.step()\n", "    opt.step()\n    w.grad = None\n"),
    GROWING.replace("    opt.step()\n", "    opt.step()\n    w.grad.zero_()\n"),
    # deliberate accumulation: a step and zero_grad() every two batches
    GROWING.replace("    opt.step()\n", "    if i % 2 == 1:\n        opt.step()\n"
                                       "        opt.zero_grad()\n"),
    # deliberate accumulation: no update inside the loop
    GROWING.replace("    opt.step()\n", "") + "opt.step()\n",
    # one backward only
    GROWING.replace("range(4)", "range(1)"),
    # emptied by a function of the notebook's
    "def fresh():\n    opt.zero_grad()\n" + GROWING.replace("    loss = ", "    fresh()\n"
                                                            "    loss = "),
])
def test_no_false_alarm_on_emptied_or_deliberately_accumulated_gradients(shell, code):
    result, _, outputs = run(shell, code)
    assert result.success and outputs == []


# -- the plain text never breaks a sentence ---------------------------------------------------
def test_the_plain_text_keeps_each_paragraph_on_one_line(shell):
    err, _, raw = explained(shell, CHANGED + "z.sum().backward()")
    exp = explain.explain(err, shell.user_ns)
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    assert lines[1:1 + 1 + len(exp.paragraphs)] == [exp.title, *exp.paragraphs]
    assert all(len(p) > 88 for p in exp.paragraphs[:1])  # long, and still one line


# -- both engines say the same ----------------------------------------------------------------
@pytest.mark.parametrize("code", [CHANGED + "z.sum().backward()", INPLACE_LAYER, DETACHED,
                                  USAGE["unused"][0], USAGE["numpy_grad"][0]])
def test_the_kit_and_pytorch_get_the_same_explanation(code):
    engine("torch")
    texts = []
    for name in LIBS:
        ip = make_shell(f"import {name} as torch\n")
        ip.run_line_magic("autograd_explain", "on")
        try:
            texts.append(explanations(ip, code))
        finally:
            close_shell(ip, NAMES)
    assert texts[0] == texts[1] and len(texts[0]) == 1


# -- the stepper and %autograd_step --------------------------------------------------------------
def _text(html: str) -> str:
    import html as h
    html = re.sub(r"<svg\b.*?</svg>", " ", html, flags=re.S)
    return h.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


@pytest.mark.parametrize("lang", LANGS)
def test_the_stepper_names_no_grad_for_an_output_made_without_a_graph(lib, lang):
    from autograd_kit.widgets import BackwardStepper
    from autograd_kit.widgets.error_words import ERROR_WORDS
    torch = engine(lib)
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = (w * 2).sum()
    with language(lang):
        st = BackwardStepper(y, names={"w": w, "y": y})
        status = _text(st.status.value)
        expected = _(ERROR_WORDS["no_grad_fn"])
    assert st.problem is not None and expected in status
    for name in ("torch.no_grad()", "torch.inference_mode()", ".detach()"):
        assert name in expected


@pytest.mark.parametrize("lang", LANGS)
def test_step_magic_names_no_grad_for_an_output_made_without_a_graph(shell, lang):
    result, text, _out = run(shell, "w = torch.ones(2, requires_grad=True)\n"
                                    f"with torch.no_grad():\n    y = (w * 2).sum()\n"
                                    f"%autograd_step y --lang {lang}")
    assert "UsageError" in text
    with language(lang):
        expected = _("{expr} has no grad_fn and does not require grad: no graph leads to "
                     "it, so there is nothing to step through. It was computed while "
                     "recording was off (under torch.no_grad() or torch.inference_mode()), "
                     "cut off the graph by .detach() (or .data, .item()), or from inputs "
                     "none of which requires grad; compute it again with grad mode "
                     "on").format(expr="y")
    assert flat(expected) in flat(text)


def test_step_magic_names_inference_mode_for_an_inference_tensor():
    torch = engine("torch")
    ip = make_shell("import torch\n")
    try:
        _, text, _ = run(ip, "w = torch.ones(2, requires_grad=True)\n"
                             "with torch.inference_mode():\n    y = (w * 2).sum()\n"
                             "%autograd_step y")
        assert torch.is_tensor(ip.user_ns["y"]) and ip.user_ns["y"].is_inference()
        assert "y was made under torch.inference_mode()" in flat(text)
    finally:
        close_shell(ip, NAMES)


@pytest.mark.parametrize("lang", LANGS)
def test_step_magic_on_a_freed_graph_explains_as_the_widget_does(shell, lib, lang):
    from autograd_kit.widgets import BackwardStepper
    from autograd_kit.widgets.error_words import explain_text
    result, text, _out = run(shell, "x = torch.ones(2, requires_grad=True)\nloss = x.dot(x)\n"
                                 f"loss.backward()\n%autograd_step loss --lang {lang}")
    assert "UsageError" in text
    loss = shell.user_ns["loss"]
    with language(lang):
        st = BackwardStepper(loss, names=shell.user_ns)
        widget = _text(st.status.value)
        said = explain_text(st.problem, st._source.who, loss)
    assert flat(said) in flat(text)  # the magic's words...
    assert flat(said.split(" Trying to")[0]) in flat(widget)  # ...are the widget's


@pytest.mark.parametrize("lang", LANGS)
def test_the_bias_edge_says_g_was_summed_over_the_batch(lib, lang):
    from autograd_kit.widgets import BackwardStepper
    torch = engine(lib)
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    X = torch.randn(4, 3)
    out = lin(X)
    upstream = torch.randn(4, 2)
    loss = (out * upstream).sum()
    with language(lang):
        st = BackwardStepper(loss, names={"lin": lin, "X": X, "loss": loss})
        while st.current is None or "Addmm" not in st.current.node.name():
            st.step()
        panel = _text(st.panel.value)
        said = _("summed over the batch (dimension 0, one row per example) to the bias's "
                 "shape {shape}").format(shape="(2)")
    assert said in panel
    # the number shown is the upstream gradient summed over the rows: check it so
    sent = st.current.grads_out[0]
    assert np.allclose(np.asarray(sent.tolist()), np.asarray(upstream.sum(0).tolist()),
                       atol=1e-6)


def test_summed_dimensions_are_those_broadcasting_added():
    from autograd_kit.widgets.panel import summed_dims
    assert summed_dims((4, 2), (2,)) == (0,)
    assert summed_dims((5, 4, 3), (4, 1)) == (0, 2)
    assert summed_dims((2, 3), (2, 3)) == ()


def test_a_broadcast_add_names_its_summed_dimension(lib):
    from autograd_kit.widgets import BackwardStepper
    torch = engine(lib)
    b = torch.ones(3, requires_grad=True)
    a = torch.ones(2, 3)
    loss = (a + b).sum()
    st = BackwardStepper(loss, names={"b": b})
    st.step(), st.step()
    with language("en"):
        expected = ngettext("summed over dimension {dims} to the input's shape {shape}",
                            "summed over dimensions {dims} to the input's shape {shape}",
                            1).format(dims="0", shape="(3)")
    assert expected in _text(st.panel.value)


# -- words in Chinese and Russian --------------------------------------------------------
def test_the_stepper_at_the_start_reads_naturally(lib):
    from autograd_kit.widgets import BackwardStepper
    torch = engine(lib)
    x = torch.ones(2, 16, requires_grad=True)
    st = BackwardStepper((x * x).sum())
    with language("ru"):
        assert st.describe().endswith("в начале")
        st.step()
        assert st.describe().endswith("на узле SumBackward0")
    st.reset()
    with language("zh"):
        assert "位于开始" not in st.describe() and st.describe().endswith("尚未开始")


def test_an_unnamed_leaf_is_named_in_the_right_case(lib):
    from autograd_kit.widgets import BackwardStepper
    torch = engine(lib)
    x = torch.ones(2, 16, requires_grad=True)
    with language("ru"):  # the widget keeps the language it was made in
        st = BackwardStepper((x * x).sum())
    st.run()
    text = _text(st.panel.value + st.status.value)
    assert ".grad листового тензора формы (2, 16)" in text
    assert "(листовой тензор формы" not in text
    st.reset(), st.step(), st.step()
    assert "AccumulateGrad листового тензора формы (2, 16)" in _text(st.panel.value)


def test_pytorch_is_spaced_from_chinese_text():
    torch = engine("torch")
    from autograd_kit.widgets import BackwardStepper
    x = torch.ones(2, requires_grad=True)
    loss = x.dot(x)
    loss.backward()
    with language("zh"):
        st = BackwardStepper(loss)
        status = _text(st.status.value)
    assert "PyTorch 的原始消息" in status and "PyTorch的" not in status
    with language("ru"):
        st = BackwardStepper(loss)
    assert "Проходить по шагам нечего" in _text(st.status.value)
