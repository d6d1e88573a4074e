"""The pictures and the stepper in a real browser: JupyterLab + headless Chromium (Playwright).

* Stored lessons, opened as a learner first opens them: copied into a fresh
  JupyterLab (so *untrusted*), nothing run, every cell rendered (windowing
  off).  Every picture the notebook stores (graphs, widgets' still copies,
  charts) must show as a loaded image, not as ``<Graph: ...>`` text or the text
  of an SVG, in the English, Chinese and Russian editions.  The lessons come
  from ``lessons/`` (or the folder in ``AUTOGRAD_KIT_LESSONS``, e.g. freshly
  executed copies); a screenshot of one is saved as
  ``test-artifacts/lesson_untrusted.png`` (the README's).
* Lesson 3, run top to bottom: its first stepper (the one the learner is asked
  to press) still stands at step 0, and Step moves it on.
* ``tests/browser_notebooks/stepper.ipynb`` (autograd_kit's engine) and
  ``stepper_torch.ipynb`` (a real PyTorch graph, replayed; skipped without
  PyTorch): all cells run, Step clicked three times, the page must name the node
  being processed, then the pass is played to the end.

Screenshots are saved under ``test-artifacts/``.  Installs nothing: without the
Debian ``chromium`` package or Playwright for Python, it is skipped.
Deselect with ``-m "not browser"``.
"""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "tests" / "browser_notebooks" / "stepper.ipynb"
TORCH_NOTEBOOK = ROOT / "tests" / "browser_notebooks" / "stepper_torch.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs the chromium package"),
]

KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session
            && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""
ALL_RUN = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  return cells.length > 0 && cells.every(c => c.model.executionCount);
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(base: str, proc, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError("JupyterLab exited early")
        try:
            with urllib.request.urlopen(f"{base}/api/status", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError("JupyterLab did not start")


def start_lab(tmp: Path, port: int, windowing: bool = True):
    home = tmp / "home"
    labconfig = home / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    if not windowing:  # render every cell, not only those near the viewport
        tracker = home / "settings" / "@jupyterlab" / "notebook-extension"
        tracker.mkdir(parents=True)
        (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    (labconfig / "page_config.json").write_text(  # no "Jupyter news?" pop-up
        '{"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": true}}')
    env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "run"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
    # A virtual environment made with --system-site-packages imports the base
    # Python's packages (ipywidgets...) but JupyterLab would not see their front-end
    # extensions: widgets would show as text.  Point it at them too.
    base_data = Path(sys.base_prefix) / "share" / "jupyter"
    if base_data.is_dir():
        env["JUPYTER_PATH"] = os.pathsep.join(
            p for p in (os.environ.get("JUPYTER_PATH", ""), str(base_data)) if p)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", "--allow-root", "--IdentityProvider.token=",
           "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
           "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={tmp / 'nb'}"]
    log = open(tmp / "lab.log", "wb")
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log


def stop_lab(proc, base: str) -> None:
    """Ask the server to shut down (it stops its kernels), then make sure."""
    if proc.poll() is None:
        try:
            req = urllib.request.Request(f"{base}/api/shutdown", method="POST")
            urllib.request.urlopen(req, timeout=5).close()
        except OSError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def expected_after_three_steps() -> tuple[str, int]:
    """The same graph as the notebook's, stepped here: (node name, total)."""
    import autograd_kit as torch
    from autograd_kit.widgets import BackwardStepper
    x = torch.tensor(2.0, requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    loss = (x * w).sin() + x ** 2
    s = BackwardStepper(loss)
    for _ in range(3):
        s.step()
    return s.current.node.name(), s.total


@contextlib.contextmanager
def lab_page(tmp_path, notebook: Path, failure_shot: str, windowing: bool = True,
             run_timeout: int = 60_000):
    """JupyterLab serving a copy of ``notebook``, opened in headless Chromium with
    every cell run; yields the Playwright page (a screenshot if the test fails).
    ``windowing=False``: every cell is rendered, so cell ``i`` is the ``i``-th."""
    sync_api = pytest.importorskip("playwright.sync_api")
    pytest.importorskip("jupyterlab")
    (tmp_path / "nb").mkdir()
    shutil.copy(notebook, tmp_path / "nb" / notebook.name)
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc, log = start_lab(tmp_path, port, windowing=windowing)
    try:
        wait_for_server(base, proc)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            try:
                page.goto(f"{base}/lab/tree/{notebook.name}", timeout=60_000)
                page.wait_for_function(KERNEL_IDLE, timeout=60_000)
                page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
                page.wait_for_function(ALL_RUN, timeout=run_timeout)
                page.wait_for_function(KERNEL_IDLE, timeout=run_timeout)
                yield page
            except Exception:
                page.screenshot(path=str(ARTIFACTS / failure_shot))
                raise
            finally:
                browser.close()
    finally:
        stop_lab(proc, base)
        log.close()


def step_and_check(page, total: int, name: str, k: int = 3) -> None:
    """Click Step ``k`` times; the page must name the node being processed."""
    step = page.get_by_role("button", name="Step", exact=True)
    step.wait_for(timeout=30_000)
    # the live widget is shown, not the still copy that sits beside it in the output
    assert page.locator(".jupyter-widgets").count() > 0
    assert page.locator(".ak-still").count() == 0
    for i in range(1, k + 1):
        step.click()
        page.get_by_text(f"Step {i} of {total}:").first.wait_for(timeout=15_000)
    page.get_by_text(f"Step {k} of {total}: {name}").first.wait_for(timeout=15_000)
    assert page.locator(".ak-current").first.inner_text() == name
    assert page.locator("svg g.node").count() > 0  # the picture is there


def play_to_the_end(page, total: int) -> None:
    """Play animates the slider in the browser (jslink); the kernel follows."""
    page.get_by_role("button", name="Reset", exact=True).click()
    page.get_by_text(f"Ready: {total} steps").first.wait_for(timeout=15_000)
    page.locator(".widget-play button").first.click()
    page.get_by_text("Backward pass complete").first.wait_for(timeout=30_000)


def test_stepper_in_jupyterlab(tmp_path):
    name, total = expected_after_three_steps()
    with lab_page(tmp_path, NOTEBOOK, "stepper-failure.png") as page:
        step_and_check(page, total, name)
        page.screenshot(path=str(ARTIFACTS / "stepper.png"))
        play_to_the_end(page, total)


def expected_torch_steps(k: int) -> tuple[str, int]:
    """The PyTorch notebook's graph, stepped here: (node name after ``k`` steps, total)."""
    torch = pytest.importorskip("torch")
    from autograd_kit.viz import access
    from autograd_kit.widgets import BackwardStepper
    x = torch.tensor([1.0, 2.0])
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    b = torch.tensor(0.1, requires_grad=True)
    loss = torch.tanh(x @ w + b) ** 2
    s = BackwardStepper(loss)
    s.go_to(k)
    return access.node_name(s.current.node), s.total


def test_pytorch_stepper_in_jupyterlab(tmp_path):
    """A real PyTorch graph: its pass is replayed in the browser like the kit's.
    The screenshot mid-pass is the one ``lessons/images/stepper_torch.png`` shows."""
    name, total = expected_torch_steps(3)
    with lab_page(tmp_path, TORCH_NOTEBOOK, "stepper-torch-failure.png") as page:
        page.get_by_text("PyTorch's own backward pass, replayed").first.wait_for(
            timeout=30_000)
        step_and_check(page, total, name)
        page.get_by_text("upstream × local = contribution").first.wait_for(timeout=15_000)
        # the widget alone, mid-pass (the picture is taller than the window)
        page.locator(".jp-OutputArea-output").last.screenshot(
            path=str(ARTIFACTS / "stepper_torch.png"))
        play_to_the_end(page, total)
        assert page.get_by_text("b.grad").count() > 0


# -- a lesson run top to bottom: the learner's stepper is at its start --------------------------
LESSON_3 = ROOT / "lessons" / "03_backward_and_chain_rule.ipynb"


def cell_index(notebook: Path, cell_id: str) -> int:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return next(i for i, c in enumerate(cells) if c.get("id") == cell_id)


def test_lesson_3_stepper_starts_at_its_beginning_after_run_all(tmp_path):
    """Lesson 3 after *Run All*: the first stepper, the one the text asks the
    learner to press, stands at step 0 (the later cells drive a stepper of their
    own); Step takes it to step 1, not to a refused "Pass 2"."""
    first = cell_index(LESSON_3, "cell-15")
    with lab_page(tmp_path, LESSON_3, "lesson3-stepper-failure.png", windowing=False,
                  run_timeout=180_000) as page:
        cell = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(first)
        cell.scroll_into_view_if_needed()
        cell.get_by_text("Step 0 of 5.").first.wait_for(timeout=30_000)
        shown = cell.inner_text()
        assert "complete" not in shown and "Pass" not in shown
        cell.get_by_role("button", name="Step", exact=True).click()
        cell.get_by_text("Step 1 of 5: SubBackward0.").first.wait_for(timeout=15_000)
        assert "Pass" not in cell.inner_text()
        cell.screenshot(path=str(ARTIFACTS / "lesson3_stepper_after_run_all.png"))


LESSON_6 = ROOT / "lessons" / "06_accumulation_and_retain_graph.ipynb"


def test_lesson_6_bench_starts_at_its_beginning_after_run_all(tmp_path):
    """Lesson 6 after *Run All*: the bench the text asks the learner to press is
    at its start (a second bench plays the scripted clicks), and backward runs
    at once, without a forward first."""
    first = cell_index(LESSON_6, "cell-28")
    with lab_page(tmp_path, LESSON_6, "lesson6-bench-failure.png", windowing=False,
                  run_timeout=180_000) as page:
        cell = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(first)
        cell.scroll_into_view_if_needed()
        cell.get_by_text("after start: x.grad = None").first.wait_for(timeout=30_000)
        cell.get_by_role("button", name="backward", exact=True).click()
        cell.get_by_text("after backward: x.grad = 9.").first.wait_for(timeout=15_000)
        assert "refused" not in cell.inner_text()


# -- stored lessons, opened fresh (untrusted), nothing run ------------------------------------
LESSONS = Path(os.environ.get("AUTOGRAD_KIT_LESSONS", ROOT / "lessons"))
EDITIONS = ("", "zh", "ru")
SVG_TITLE = "%3"  # Graphviz's graph title: the first text a stripped inline SVG leaves


def picture_outputs(cell) -> int:
    """How many of a stored cell's outputs are pictures: a graph (SVG, or an
    <img> of one), a widget's still copy holding one, a PNG chart."""
    count = 0
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        html = "".join(data.get("text/html", ""))
        if ("image/svg+xml" in data or "image/png" in data or "<svg" in html
                or "data:image/svg+xml" in html):
            count += 1
    return count


def lessons_with_pictures() -> list[tuple[str, Path]]:
    found = []
    for edition in EDITIONS:
        for path in sorted((LESSONS / edition).glob("*.ipynb")):
            nb = json.loads(path.read_text(encoding="utf-8"))
            if any(picture_outputs(c) for c in nb["cells"]):
                found.append((f"{edition or 'en'}/{path.name}", path))
    return found


CELLS = "window.jupyterapp.shell.currentWidget.node.querySelectorAll('.jp-Notebook .jp-Cell')"
CELL_PICTURES = """([i, n]) => {
  const cell = """ + CELLS + """[i];
  const area = cell && cell.querySelector('.jp-OutputArea');
  if (!area) return {images: 0, text: ''};
  const shown = [...area.querySelectorAll('img')].filter(
      img => img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0);
  return {images: shown.length, text: area.innerText};
}"""


def open_untrusted(page, base: str, rel: str, n_cells: int) -> None:
    page.goto(f"{base}/lab/tree/{rel}?reset", timeout=60_000)  # no tabs restored
    page.wait_for_function(
        "n => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!w && w.node.querySelectorAll('.jp-Notebook .jp-Cell').length === n; }",
        arg=n_cells, timeout=60_000)
    page.wait_for_function(  # every stored image decoded
        "() => [...document.querySelectorAll('.jp-OutputArea img')].every(i => i.complete)",
        timeout=60_000)


def test_stored_lessons_show_their_pictures_untrusted(tmp_path):
    """The stored outputs of every lesson with pictures, in every edition, as a
    fresh (untrusted) JupyterLab shows them without running anything."""
    sync_api = pytest.importorskip("playwright.sync_api")
    pytest.importorskip("jupyterlab")
    lessons = lessons_with_pictures()
    if not lessons:
        pytest.skip(f"no lesson with stored pictures under {LESSONS}")
    for rel, path in lessons:  # copies: nothing in the repository is touched or trusted
        target = tmp_path / "nb" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc, log = start_lab(tmp_path, port, windowing=False)
    problems = []
    try:
        wait_for_server(base, proc)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = None
            try:
                for rel, path in lessons:
                    if page is not None:
                        page.close()
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
                    open_untrusted(page, base, rel, len(cells))
                    for i, cell in enumerate(cells):
                        wanted = picture_outputs(cell)
                        if not wanted:
                            continue
                        got = page.evaluate(CELL_PICTURES, [i, wanted])
                        if got["images"] < wanted:
                            problems.append(f"{rel} cell {i}: {got['images']} of {wanted} "
                                            f"pictures shown; text {got['text'][:80]!r}")
                        if "<Graph:" in got["text"] or SVG_TITLE in got["text"]:
                            problems.append(f"{rel} cell {i}: a picture shown as text "
                                            f"{got['text'][:80]!r}")
                    if rel == SCREENSHOT_LESSON:
                        shoot(page, cells)
            except Exception:
                if page is not None:
                    page.screenshot(path=str(ARTIFACTS / "lessons-failure.png"))
                raise
            finally:
                browser.close()
    finally:
        stop_lab(proc, base)
        log.close()
    assert not problems, "\n".join(problems)


SCREENSHOT_LESSON = "en/02_dynamic_graph.ipynb"


def shoot(page, cells) -> None:
    """The first cell with a graph picture and the cell before it, as a reader
    sees them: ``test-artifacts/lesson_untrusted.png``."""
    first = next(i for i, c in enumerate(cells) if picture_outputs(c))
    cell = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(first)
    cell.scroll_into_view_if_needed()
    cell.screenshot(path=str(ARTIFACTS / "lesson_untrusted.png"))
