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
    assert "new** tensor" in markdown("13")["bbbef5b1"]


def test_complex_tensors_can_require_gradients_too():
    assert "(and complex) tensors can require gradients" in markdown("01")["l1-21"]


def test_dynamic_graphs_are_not_said_to_always_pay_per_op():
    cell = markdown("12")["0566f31e"]
    assert "torch.compile" in cell and "CUDA Graphs" in cell and "asynchronous" in cell


def test_lesson_14_is_said_to_build_on_lesson_13():
    for text in (markdown("00")["cell-02"], markdown("13")["e620024b"]):
        assert "nothing depends on it" not in text and "nothing later depends" not in text
        assert "only Lesson 14" in text


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
