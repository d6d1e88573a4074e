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
    claim = re.compile(r"small constant multiple of (?:the|one) forward pass, typically "
                       r"about two to three times")
    assert claim.search(prose("03")) and claim.search(prose("04"))
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
    text = prose("08")
    assert "set_detect_anomaly" in text and "detect_anomaly" in text
    assert "Error detected in" in text or "traceback of the forward call" in text.lower()
