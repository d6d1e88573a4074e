"""Shared fixtures: devices to run on, and PyTorch as an optional oracle.

Every test that takes ``device`` runs on the CPU and on "cuda".  With a real
GPU, "cuda" is cupy.  Without one (every CI run), it is the strict stand-in of
``standin_device.py``: the same tests, nothing skipped, on a device that
refuses every implicit copy to the host.  Tests that exercise the GPU path
without the ``device`` parameter carry ``@pytest.mark.gpu``; the summary at the
end says how many GPU-path cases ran, and on what.
"""
import numpy as np
import pytest

import autograd_kit as ak
import standin_device
from autograd_kit import backend

pytest_plugins = ["pytester"]

if backend._cupy is not standin_device.module and not ak.cuda.is_available():
    backend.use_cuda_module(standin_device.module)
STANDIN = backend._cupy is standin_device.module
GPU_KIND = "the strict stand-in device (no GPU here)" if STANDIN else "cupy on a real GPU"

DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda")]
_GPU_RUNS: dict = {}  # test id -> "passed", "failed" or "skipped"


@pytest.fixture(params=DEVICES)
def device(request):
    """Every test that takes ``device`` runs on the CPU and on the GPU (or its stand-in)."""
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def _is_gpu_case(item) -> bool:
    spec = getattr(item, "callspec", None)
    return (spec is not None and spec.params.get("device") == "cuda") \
        or item.get_closest_marker("gpu") is not None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_gpu_case(item):
            item.add_marker("gpu")


@pytest.fixture(autouse=True)
def _language_kept():
    """A test that runs a lesson's cells in this process (the Chinese edition calls
    ``set_language("zh")``) must not leave the kit speaking Chinese to the tests
    that run after it, whatever the order."""
    from autograd_kit import i18n
    before = i18n._state["chosen"]
    yield
    if i18n._state["chosen"] != before:
        i18n._state["chosen"], i18n._state["lang"], i18n._state["catalog"] = before, None, None


@pytest.fixture(autouse=True)
def _standin_guard(request):
    """On the stand-in, a refusal the kit caught and hid still fails the test."""
    if not STANDIN or not _is_gpu_case(request.node):
        yield
        return
    del standin_device.VIOLATIONS[:]
    yield
    found, standin_device.VIOLATIONS[:] = list(standin_device.VIOLATIONS), []
    if found:
        pytest.fail("the stand-in GPU refused (cupy would too):\n  " + "\n  ".join(found),
                    pytrace=False)


def pytest_runtest_logreport(report):
    """Counts the GPU-path cases (in the process that reports: with pytest-xdist,
    the controller, which receives every worker's reports)."""
    if "gpu" not in report.keywords:
        return
    if report.skipped:
        _GPU_RUNS[report.nodeid] = "skipped"
    elif report.failed:
        _GPU_RUNS[report.nodeid] = "failed"
    elif report.when == "call":
        _GPU_RUNS.setdefault(report.nodeid, "passed")


def pytest_terminal_summary(terminalreporter):
    counts = {k: list(_GPU_RUNS.values()).count(k) for k in ("passed", "failed", "skipped")}
    ran = counts["passed"] + counts["failed"]
    if _GPU_RUNS:
        terminalreporter.write_sep("-", "GPU path")
        terminalreporter.write_line(
            f"GPU-path cases executed: {ran} on {GPU_KIND} ({counts['passed']} passed, "
            f"{counts['failed']} failed, {counts['skipped']} skipped)")
