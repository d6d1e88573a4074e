"""torchviz's own tests, run with autograd_kit standing in for ``torch``.

torchviz keeps its tests in ``test/test.py`` of its source distribution (the
wheel leaves them out).  This module reads that file from the sdist -- the one
named by the environment variable ``TORCHVIZ_SDIST`` (the ``.tar.gz``, its
unpacked folder, or the test file itself), else one ``pip download`` fetched
once into pytest's cache; without either (offline) the tests are skipped.

The file is imported while ``sys.modules`` maps ``torch`` to autograd_kit and
``torchviz`` to a module whose ``make_dot`` is the kit's; ``sys.modules`` is put
back right after, and the module keeps the names it bound.  Then each of its
``unittest`` methods runs as it is, and the pictures it drew are checked: kit
tensors in, a kit ``Graph`` out.  With PyTorch and torchviz installed, the same
methods run a second time on PyTorch with torchviz's ``make_dot``, and the two
pictures must be the same boxes joined by the same arrows (their labels and
colours; DOT node ids differ).
"""
from __future__ import annotations

import collections
import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
import types
import unittest
from pathlib import Path

import pytest

import autograd_kit as ak
from autograd_kit.viz import Graph, make_dot

UPSTREAM_TESTS = ["test_mlp_make_dot", "test_double_backprop_make_dot", "test_lstm_make_dot"]
DEFAULT_VERSION = "0.0.3"
TEST_FILE = re.compile(r"(^|/)test/test[^/]*\.py$")


# -- finding torchviz's test file -------------------------------------------------------
def _torchviz_version() -> str:
    try:
        return importlib.metadata.version("torchviz")
    except importlib.metadata.PackageNotFoundError:
        return DEFAULT_VERSION


def _read_test_file(path: Path) -> tuple[str, str]:
    """(source, file name) of the test module in an sdist, its folder, or the file."""
    if path.is_file() and path.suffix == ".py":
        return path.read_text(encoding="utf-8"), str(path)
    if path.is_dir():
        found = sorted(p for p in path.rglob("test*.py")
                       if TEST_FILE.search(p.relative_to(path).as_posix()))
        if found:
            return found[0].read_text(encoding="utf-8"), str(found[0])
    elif tarfile.is_tarfile(path):
        with tarfile.open(path) as tar:  # read, never extracted
            members = sorted((m for m in tar.getmembers()
                              if m.isfile() and TEST_FILE.search(m.name)), key=lambda m: m.name)
            if members:
                return tar.extractfile(members[0]).read().decode("utf-8"), members[0].name
    raise FileNotFoundError(f"no torchviz test file (test/test*.py) in {path}")


def _download_sdist(folder: Path, version: str) -> Path:
    wanted = folder / f"torchviz-{version}.tar.gz"
    if not wanted.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--no-binary", ":all:", f"torchviz=={version}", "--dest", str(folder)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        if done.returncode != 0 or not wanted.exists():
            raise OSError((done.stderr.strip().splitlines() or ["pip download failed"])[-1])
    return wanted


@pytest.fixture(scope="module")
def upstream(request, tmp_path_factory) -> tuple[str, str]:
    named = os.environ.get("TORCHVIZ_SDIST")
    if named:
        return _read_test_file(Path(named))
    cache = getattr(request.config, "cache", None)
    folder = (cache.mkdir("torchviz-sdist") if cache is not None
              else tmp_path_factory.mktemp("torchviz-sdist"))
    try:
        return _read_test_file(_download_sdist(Path(folder), _torchviz_version()))
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"torchviz's tests come with its sdist, which could not be fetched "
                    f"({err}); set TORCHVIZ_SDIST to a downloaded copy")


# -- importing it with a stand-in for torch ----------------------------------------------
class Recorder:
    """A ``make_dot`` that remembers every call: (what was drawn, params, the picture)."""

    def __init__(self, draw) -> None:
        self.draw, self.calls = draw, []

    def __call__(self, var, params=None, **options):
        picture = self.draw(var, params, **options)
        self.calls.append((var, params, picture))
        return picture


def _no_trace(trace):
    raise NotImplementedError("make_dot_from_trace is not part of autograd_kit")


def load_upstream(upstream, torch_module, draw, from_trace=_no_trace) -> types.ModuleType:
    """Import torchviz's test module with ``torch`` bound to ``torch_module`` and
    ``torchviz.make_dot`` to ``draw``; ``sys.modules`` is restored afterwards."""
    source, filename = upstream
    standin = types.ModuleType("torchviz")
    standin.make_dot, standin.make_dot_from_trace = draw, from_trace
    swap = {"torch": torch_module, "torch.nn": torch_module.nn,
            "torch.autograd": torch_module.autograd, "torchviz": standin}
    before = {name: sys.modules.get(name) for name in swap}
    sys.modules.update(swap)
    try:
        module = types.ModuleType("torchviz_upstream_tests")
        module.__file__ = filename
        exec(compile(source, filename, "exec"), module.__dict__)
    finally:
        for name, old in before.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module


def run_upstream(upstream, method, torch_module, draw, from_trace=_no_trace):
    """Run one of torchviz's test methods; the calls its ``make_dot`` received."""
    recorder = Recorder(draw)
    module = load_upstream(upstream, torch_module, recorder, from_trace)
    module.TestTorchviz(method).debug()  # raises what the test raises
    return recorder.calls


# -- the tests ------------------------------------------------------------------------------
def test_the_upstream_tests_are_the_ones_run_here(upstream):
    before = {name: sys.modules.get(name) for name in ("torch", "torch.nn", "torchviz")}
    module = load_upstream(upstream, ak, make_dot)
    names = unittest.defaultTestLoader.getTestCaseNames(module.TestTorchviz)
    assert sorted(names) == sorted(UPSTREAM_TESTS)
    assert module.torch is ak and module.nn is ak.nn and module.make_dot is make_dot
    assert {name: sys.modules.get(name) for name in before} == before  # put back


@pytest.mark.parametrize("method", UPSTREAM_TESTS)
def test_torchviz_test_passes_with_the_kit(upstream, method):
    (root, params, picture), = run_upstream(upstream, method, ak, make_dot)
    roots = root if isinstance(root, tuple) else (root,)
    assert all(isinstance(r, ak.Tensor) for r in roots)
    assert all(isinstance(p, ak.Tensor) for p in params.values())
    assert isinstance(picture, Graph)
    drawn = [n for n in picture.nodes if n.kind == "leaf"]
    assert sorted(n.title for n in drawn) == sorted(params)  # every parameter, by its name
    assert sum(n.kind == "output" for n in picture.nodes) == len(roots)



STATEMENT = re.compile(r'^\t(?P<tail>[^\s\[]+)(?: -> (?P<head>[^\s\[]+))?'
                       r'(?: \[(?P<attrs>(?:[^"\]]|"(?:[^"\\]|\\.)*")*)\])?$', re.M)
ATTRIBUTE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"\]]+)')


def boxes_and_arrows(source: str):
    """A DOT picture as multisets: boxes (label, fill colour) and arrows (box, box).
    Labels are compared line by line, blank lines and edge spaces dropped."""
    boxes, arrows, label_of = collections.Counter(), collections.Counter(), {}
    statements = [m for m in STATEMENT.finditer(source) if m["tail"] not in
                  ("graph", "node", "edge")]
    for m in statements:
        if m["head"] is None:
            attrs = {k: v.strip('"') for k, v in ATTRIBUTE.findall(m["attrs"] or "")}
            lines = attrs.get("label", "").replace("\\n", "\n").split("\n")
            text = "\n".join(s.strip() for s in lines if s.strip())
            label_of[m["tail"]] = (text, attrs.get("fillcolor", "lightgrey"))
            boxes[label_of[m["tail"]]] += 1
    for m in statements:
        if m["head"] is not None:
            arrows[label_of[m["tail"]], label_of[m["head"]]] += 1
    return boxes, arrows


@pytest.mark.parametrize("method", [
    "test_mlp_make_dot",
    "test_double_backprop_make_dot",
    "test_lstm_make_dot"])
def test_same_picture_as_torchviz_on_pytorch(upstream, method):
    torch = pytest.importorskip("torch")
    torchviz = pytest.importorskip("torchviz")
    (_, _, theirs), = run_upstream(upstream, method, torch, torchviz.make_dot,
                                   torchviz.make_dot_from_trace)
    (_, _, ours), = run_upstream(upstream, method, ak, make_dot)
    their_boxes, their_arrows = boxes_and_arrows(theirs.source)
    our_boxes, our_arrows = boxes_and_arrows(ours.source)
    assert our_boxes == their_boxes
    assert our_arrows == their_arrows
