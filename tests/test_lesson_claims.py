"""What the English lessons say, checked by content where nbval cannot look.

nbval runs the code cells; the claims a lesson makes in prose are checked here:
each test names the lesson, the cell, and the words that carry the claim, and
the words of an old, wrong explanation that must not come back.  The Chinese
and Russian editions translate these same cells, and ``test_editions.py`` fails
when a translation is older than its English cell.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def markdown(prefix: str) -> dict[str, str]:
    """``{cell id: text}`` of the markdown cells of the lesson ``prefix`` ("08")."""
    [path] = LESSONS.glob(f"{prefix}_*.ipynb")
    nb = nbformat.read(path, as_version=4)
    return {c.id: " ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown"}


def prose(prefix: str) -> str:
    return " ".join(markdown(prefix).values())


@pytest.mark.parametrize("prefix", ["07", "08"])
def test_leaf_in_place_is_refused_for_the_real_reason(prefix):
    """Recording the change would give the leaf a grad_fn: it would stop being a
    leaf and lose its AccumulateGrad, where .grad lands."""
    text = prose(prefix)
    reason = [t for t in markdown(prefix).values()
              if "grad_fn" in t and "AccumulateGrad" in t and "leaf" in t]
    assert reason, f"lesson {prefix} no longer says why a leaf can't change in place"
    assert "very value" not in text and "no longer exists" not in text


def test_backward_costs_the_same_multiple_in_lessons_3_and_4():
    """Each node does about two operations the size of its forward one (one per
    input of a product): about twice the forward pass, not "two to three times"."""
    claim = re.compile(r"about twice")
    assert claim.search(prose("03")) and claim.search(prose("04"))
    assert "two to three" not in prose("03") + prose("04")
    for prefix in ("03", "04"):
        assert not re.search(r"(?:same|equal) (?:cost|time) as (?:the|one) forward",
                             prose(prefix))


def test_backward_is_taught_as_a_vector_jacobian_product():
    """The loose name from the syllabus is named, and corrected without mockery."""
    text = prose("04")
    assert "Jacobian–vector product" in text and "forward mode" in text.lower()
    assert "VJP" in text and "JVP" in text
    for word in ("wrong", "mistake", "incorrect", "nonsense"):
        assert word not in markdown("04")["l4-32a"].lower()


def test_volatile_has_its_history_note():
    """What the flag did, and what replaced it."""
    cell = markdown("07")["cell-14a"]
    assert "volatile" in cell and "0.4" in cell and "no_grad" in cell


def test_requires_grad_is_set_both_ways():
    nb = nbformat.read(next(LESSONS.glob("01_*.ipynb")), as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert re.search(r"^\s*\w+\.requires_grad = True", code, re.M)
    assert ".requires_grad_()" in code


def test_accumulation_misconceptions_are_corrected():
    cells = markdown("06")
    text = prose("06")
    buffer = next(t for t in cells.values() if "buffer to save memory" in t)
    assert "Nothing of the kind happens" in buffer and "AccumulateGrad" in buffer
    optim = next(t for t in cells.values() if "Optimizers accumulate gradients differently" in t)
    assert "no gradient store of its own" in optim
    assert "retain_graph" in text


def test_anomaly_detection_is_taught_where_the_error_is():
    text = prose("09")
    assert "set_detect_anomaly" in text and "detect_anomaly" in text
    assert "Error detected in" in text or "traceback of the forward call" in text.lower()


def test_accumulate_grad_runs_first_among_ready_nodes():
    """AccumulateGrad nodes jump the queue of ready nodes (as in PyTorch): the
    lesson must not say that the newest ready node always runs first."""
    text = prose("03")
    assert "AccumulateGrad` node first" in text
    assert "(PyTorch does the same). That is why" not in text


def test_freed_saved_tensors_are_references_not_memory():
    text = prose("02")
    assert "given back right away" not in text
    assert "drops its references" in text


def test_create_graph_replaces_grad_instead_of_adding_in_place():
    assert "create_graph=True" in markdown("06")["cell-13"]
    assert "new** tensor" in markdown("11")["bbbef5b1"]


def test_complex_tensors_can_require_gradients_too():
    assert "(and complex) tensors can require gradients" in markdown("01")["l1-21"]


def test_dynamic_graphs_are_not_said_to_always_pay_per_op():
    cell = markdown("B")["0566f31e"]
    assert "torch.compile" in cell and "CUDA Graphs" in cell and "asynchronous" in cell


def test_lesson_12_is_said_to_build_on_lesson_11():
    for text in (markdown("00")["cell-02"], markdown("11")["e620024b"]):
        assert "nothing depends on it" not in text and "nothing later depends" not in text
        assert "only Lesson 12" in text


def test_no_grad_error_and_the_three_switches_are_in_the_main_path():
    cells = markdown("07")
    assert "element 0 of tensors does not require grad" in cells["l7-element0-after"]
    table = cells["l7-modes"]
    for name in ("model.eval()", "no_grad()", "inference_mode()", "dropout", "version counters"):
        assert name in table


def test_examples_are_our_own_not_the_syllabus():
    """Lesson 7's five-way table on a + b**2 and lesson 8's id() and also_w demos
    followed a source text line by line; the lessons teach those points with
    examples of their own."""
    code7 = "\n".join(c.source for c in nbformat.read(next(LESSONS.glob("07_*.ipynb")),
                                                       as_version=4).cells)
    code8 = "\n".join(c.source for c in nbformat.read(next(LESSONS.glob("08_*.ipynb")),
                                                       as_version=4).cells
                      if c.get("id") != "cell-65")   # the PyTorch comparison
    assert "a + b ** 2" not in code7 and "scores[2] / total" in code7
    assert "also_w" not in code8 and "start = id(n)" not in code8


def test_autograd_is_not_a_numerical_derivative():
    cell = markdown("01")["l1-15"]
    assert "never nudges" in cell and "exact rule" in cell


def test_scaled_random_weights_are_not_leaves():
    nb = nbformat.read(next(LESSONS.glob("01_*.ipynb")), as_version=4)
    cells = {c.get("id"): c for c in nb.cells}
    assert "* 0.01" in cells["l1-notleaf"].source
    assert ".requires_grad_()" in cells["l1-notleaf-fix"].source
    assert ".to(...)" in markdown("01")["l1-notleaf-after"]


def test_the_recorded_graph_is_called_a_tape():
    assert "tape-based" in markdown("02")["l2-02"]


def test_the_old_claim_that_operations_act_on_data_is_addressed():
    assert "v.data" in markdown("07")["cell-33"]


# -- claims checked against the engines as well as the words ---------------------------
# Each test below runs the behaviour a lesson shows on the kit and, where it is
# installed, on PyTorch, so that a lesson cannot describe either of them wrongly.
def _libraries():
    import autograd_kit
    libs = [autograd_kit]
    try:
        import torch
    except ImportError:
        pass
    else:
        libs.append(torch)
    return libs


LIBS = pytest.mark.parametrize("lib", _libraries(), ids=lambda lib: lib.__name__)


def code_cell(prefix: str, cell_id: str):
    [path] = LESSONS.glob(f"{prefix}_*.ipynb")
    return next(c for c in nbformat.read(path, as_version=4).cells if c.get("id") == cell_id)


@LIBS
def test_gradcheck_without_raising_prints_nothing(lib):
    import contextlib
    import io
    import warnings
    x32 = lib.tensor([-0.5, 0.25, 1.5], requires_grad=True)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = lib.autograd.gradcheck(lambda t: t / (1 + t * t), (x32,), raise_exception=False)
    assert result is False and printed.getvalue() == ""
    cell = markdown("11")["45b26adf"]
    assert "prints its report" not in cell and "prints no report" in cell


@LIBS
def test_a_saved_constant_changed_in_place_is_refused_at_backward(lib):
    v = lib.tensor([1.0, 2.0], requires_grad=True)
    scale = lib.tensor([3.0, 0.5])
    y = (v * scale).sum()
    scale.mul_(2)                               # accepted: scale does not require grad
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert "can be changed in place at any time" not in prose("08")
    assert "raises-exception" in code_cell("08", "l8-saved-constant").metadata["tags"]


def test_in_place_operations_are_not_sold_as_a_memory_saver():
    """PyTorch's autograd notes discourage in-place operations: they rarely save much."""
    assert "save memory, which matters" not in prose("08")
    assert "rarely saves much memory" in markdown("08")["cell-04"]


@LIBS
def test_gradgradcheck_checks_a_vector_jacobian_product(lib):
    """With v = 1 the numerical side of the report is b''(x); a random v scales it."""
    class NumpyBump(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t / (1 + t * t)

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            arr = t.detach().numpy()
            return g * lib.from_numpy((1 - arr * arr) / (1 + arr * arr) ** 2)

    x64 = lib.tensor([-0.5, 0.25, 1.5], dtype=lib.float64, requires_grad=True)
    ones = lib.ones(3, dtype=lib.float64, requires_grad=True)
    with pytest.raises(RuntimeError) as report:
        lib.autograd.gradgradcheck(NumpyBump.apply, (x64,), (ones,))
    numerical = str(report.value).split("analytical")[0]
    for second_derivative in ("1.4080", "-1.2245", "-0.0655"):   # b''(x) = 2x(x²-3)/(1+x²)³
        assert second_derivative in numerical
    cell = markdown("11")["5e890808"]
    assert "random" in cell and "grad_outputs" in cell and "\\nabla_x \\sum" not in cell
    assert "(ones,)" in code_cell("11", "44944660").source


@LIBS
def test_broadcasting_backward_sums_over_the_uses(lib):
    weights = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (lib.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]) * weights).sum().backward()
    assert weights.grad.tolist() == [3.0, 3.0, 3.0]
    cell = markdown("12")["mul-md"]
    assert "(Lesson 4)" not in cell and "sum over all those uses" in cell
    assert ".sum(0)" in markdown("12")["broadcast-after"]


@LIBS
def test_slice_assignment_work_is_counted_not_only_timed(lib):
    """The kit's times are the kit's; the n² gradient numbers of the CopySlices chain
    are the same in every engine."""
    rows, cols, n = 4, 128, 10
    blocks = [lib.ones(rows, cols, requires_grad=True) for _ in range(n)]

    def numbers_received(t):
        received, seen, stack = [], set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            node.register_prehook(lambda grads: received.append(
                sum(g.numel() for g in grads if g is not None)))
            stack.extend(nxt for nxt, _ in node.next_functions)
        t.sum().backward()
        return sum(received)

    big = lib.zeros(n * rows, cols)
    for i, block in enumerate(blocks):
        big[i * rows:(i + 1) * rows] = block * 2
    piece = rows * cols
    assert numbers_received(big) == piece * n * n + 2 * piece * n
    assert numbers_received(lib.cat([block * 2 for block in blocks])) == 3 * piece * n
    assert "this kit's times" in markdown("09")["cell-49"]
    assert "numbers_received" in code_cell("09", "l9-count-work").source


@LIBS
def test_the_recorded_derivative_of_a_power_has_three_nodes(lib):
    x = lib.tensor(2.0, requires_grad=True)
    (dc,) = lib.autograd.grad(x ** 3, x, create_graph=True)
    chain, node = [], dc.grad_fn
    while node is not None:
        chain.append(node.name())
        node = next((nxt for nxt, _ in node.next_functions if nxt is not None), None)
    assert chain == ["MulBackward0", "MulBackward1", "PowBackward0",
                     "torch::autograd::AccumulateGrad"]
    cell = markdown("11")["5db555ad"]
    assert "MulBackward1" in cell and "a power node for $x^2$ and a multiplication node" not in cell


@LIBS
def test_node_hooks_receive_grad_inputs_and_grad_outputs(lib):
    left = lib.tensor(2.0, requires_grad=True)
    product = left * lib.tensor(5.0, requires_grad=True)
    seen = []
    product.grad_fn.register_prehook(lambda grad_outputs: seen.append(grad_outputs))
    product.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append((grad_inputs,
                                                                                 grad_outputs)))
    (3 * product).backward()
    (arrived,), ((to_left, to_right), (again,)) = seen
    assert (arrived.item(), to_left.item(), to_right.item(), again.item()) == (3.0, 15.0, 6.0, 3.0)
    assert "fn(grad_inputs, grad_outputs)" in markdown("05")["l5-torch-01"]


@LIBS
def test_the_version_message_names_the_operation_not_the_saving_node(lib):
    import warnings
    with warnings.catch_warnings(record=True) as caught, lib.autograd.set_detect_anomaly(True):
        warnings.simplefilter("always")
        gain = lib.tensor(2.0, requires_grad=True)
        powers = lib.zeros(3)
        powers[0] = gain
        for i in (1, 2):
            powers[i] = powers[i - 1] * gain
        with pytest.raises(RuntimeError, match="output 0 of AsStrided"):
            powers.sum().backward()
    assert any("Error detected in MulBackward0" in str(w.message) for w in caught)
    assert "names the node whose saved value changed" not in prose("09")
    assert "AsStrided" in markdown("09")["cell-37"]


@LIBS
def test_the_gradient_of_scaled_random_weights_lands_in_the_hidden_leaf(lib):
    small = lib.randn(3, requires_grad=True) * 0.01
    small.sum().backward()
    hidden = small.grad_fn.next_functions[0][0].variable
    assert hidden.is_leaf and hidden.grad.tolist() == pytest.approx([0.01] * 3)
    weights = lib.randn(3, requires_grad=True)
    assert weights.to(lib.float32) is weights and not weights.to(lib.float64).is_leaf
    cell = markdown("01")["l1-notleaf-after"]
    assert "and dropped" not in cell and "nothing to convert" in cell


@LIBS
def test_requires_grad_on_a_result_switches_that_same_tensor(lib):
    g = lib.tensor([1.5, -0.5], requires_grad=True)
    with lib.no_grad():
        cut_off = g * 4
    assert cut_off.requires_grad_() is cut_off and cut_off.is_leaf
    cut_off.sum().backward()
    assert g.grad is None and cut_off.grad.tolist() == [1.0, 1.0]
    assert "makes a new leaf" not in markdown("07")["l7-element0-after"]


@LIBS
def test_a_kept_loss_holds_no_saved_tensors_after_backward(lib):
    net = lib.nn.Sequential(lib.nn.Linear(1, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    loss = lib.nn.MSELoss()(net(lib.ones(5, 1)), lib.zeros(5, 1))
    assert tuple(loss.grad_fn._saved_self.shape) == (5, 1)
    loss.backward()
    with pytest.raises(RuntimeError, match="already been freed"):
        loss.grad_fn._saved_self
    assert "keep every step's graph alive" not in prose("10")
    assert "_saved_self" in code_cell("10", "l11-freed").source


def test_where_gradcheck_error_lives_and_what_mathematics_is_needed():
    """GradcheckError is in torch.autograd.gradcheck, not in torch.autograd; lesson 1
    does not promise that every snippet runs unchanged, and says what mathematics
    the later lessons use."""
    from autograd_kit.autograd import GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    try:
        import torch
    except ImportError:
        pass
    else:
        from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError
        assert issubclass(TorchGradcheckError, RuntimeError)
        assert not hasattr(torch.autograd, "GradcheckError")
    assert "torch.autograd.gradcheck" in markdown("11")["l13-quiet"]
    assert "most autograd code" in markdown("01")["l1-02"]
    start = markdown("01")["l1-00"]
    assert "Jacobian" in start and "Taylor" in start


@LIBS
def test_backward_leaves_the_parameter_and_its_grad_apart(lib):
    param = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    before = param.detach().clone()
    (3 * param ** 2).sum().backward()
    assert bool(lib.equal(param, before)) and param.grad.data_ptr() != param.data_ptr()
    param.grad.mul_(100)
    assert bool(lib.equal(param, before))
    assert "never changes a parameter" in markdown("06")["l6-26a"]
    assert "data_ptr" in code_cell("06", "l6-26b").source


def test_gradcheck_error_lives_where_pytorch_keeps_it():
    """``from torch.autograd.gradcheck import GradcheckError`` has a kit spelling
    too, and ``autograd.gradcheck`` stays the function."""
    import autograd_kit as ak
    from autograd_kit.autograd.gradcheck import GradcheckError
    assert GradcheckError is ak.autograd.GradcheckError
    assert callable(ak.autograd.gradcheck) and not isinstance(ak.autograd.gradcheck, type(ak))
    torch = pytest.importorskip("torch")
    from torch.autograd.gradcheck import GradcheckError as theirs
    assert issubclass(theirs, RuntimeError) and issubclass(GradcheckError, RuntimeError)
