"""How the suite is cut up for parallel workers (``conftest.py`` at the top):
whatever the random order, a notebook's cells are collected top to bottom and
next to each other, and the scheduler's units keep them together."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _layout():
    spec = importlib.util.spec_from_file_location("suite_layout", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [1, 2])
def test_a_notebooks_cells_are_collected_in_order_whatever_the_seed(seed):
    notebooks = ["lessons/00_index.ipynb", "lessons/zh/14_broadcasting_and_matmul_backward.ipynb"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-n", "0", "-p", "randomly",
         f"--randomly-seed={seed}", *notebooks, "tests/test_import_layers.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    assert ids, run.stdout[-2000:] + run.stderr[-2000:]
    for notebook in notebooks:
        places = [i for i, nodeid in enumerate(ids) if nodeid.startswith(notebook + "::")]
        cells = [int(ids[i].rsplit(" ", 1)[1]) for i in places]
        assert cells == sorted(cells) == list(range(len(cells))), notebook
        assert places == list(range(places[0], places[0] + len(places))), notebook


def test_a_notebook_is_one_unit_and_the_servers_are_one():
    unit = _layout()._unit
    assert unit("lessons/zh/01_a.ipynb::Cell 0") == unit("lessons/zh/01_a.ipynb::Cell 7")
    assert unit("lessons/zh/01_a.ipynb::Cell 0") != unit("lessons/01_a.ipynb::Cell 0")
    assert unit("tests/test_browser.py::test_x") == unit("tests/test_jupyterhub_roundtrip.py::t")
    assert unit("tests/test_engine.py::test_a") != unit("tests/test_engine.py::test_b")
