"""What every lesson notebook must satisfy besides running: pictures that a screen
reader can describe, a link from the index, and stored outputs that are what a run
prints, with no machine's paths in them and nothing nbval could trip over on
another machine.  The checks of what a notebook holds cover the English lessons
and the Chinese and Russian editions alike.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from autograd_kit.course.lessons import lesson_files, lesson_key

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
LESSON_PATHS = lesson_files(LESSONS)
LANGUAGE_FOLDERS = {"en": LESSONS, "zh": LESSONS / "zh", "ru": LESSONS / "ru"}
#: every lesson in every language: the English ones, then each edition's
ALL_LESSON_PATHS = [p for folder in LANGUAGE_FOLDERS.values()
                    for p in lesson_files(folder)]
SANITIZE_CFG = ROOT / "tests" / "nbval_sanitize.cfg"

PICTURES = ("image/png", "image/jpeg", "image/svg+xml")
# titles Graphviz writes by itself: the anonymous graph (%3), node and edge ids
GRAPHVIZ_TITLE = re.compile(r"%\d+|[A-Za-z]?\d+|.*(->|&#45;&gt;|--).*")


def lesson_id(path):
    lang = path.parent.name if path.parent != LESSONS else "en"
    return f"{lang}/{lesson_key(path.name)}"


def test_every_language_has_every_lesson():
    for lang, folder in LANGUAGE_FOLDERS.items():
        assert [p.name for p in lesson_files(folder)] == \
            [p.name for p in LESSON_PATHS], lang


def test_the_main_path_has_no_gaps_and_the_appendices_follow_it():
    """00 the index, 01, 02... without a gap (PyTorch's autograd), then the
    appendices about the kit itself, lettered A, B...; the index lists them
    under a heading of their own, after the main path."""
    names = [p.name for p in LESSON_PATHS]
    numbered = [n for n in names if n[0].isdigit()]
    lettered = [n for n in names if not n[0].isdigit()]
    assert names == numbered + lettered
    assert [int(n[:2]) for n in numbered] == list(range(len(numbered)))
    assert [n[0] for n in lettered] == [chr(ord("A") + i) for i in range(len(lettered))]
    index = next(c.source for c in read(LESSONS / "00_index.ipynb").cells
                 if c.get("id") == "cell-02")
    appendices = index.index("## Appendices")
    assert all(index.index(f"]({n})") < appendices for n in numbered[1:])
    assert all(index.index(f"]({n})") > appendices for n in lettered)


def read(path):
    return nbformat.read(path, as_version=4)


def outputs(nb):
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            yield index, out


def _load_regenerate():
    spec = importlib.util.spec_from_file_location("lesson_regenerate", LESSONS / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regenerate = _load_regenerate()


# --- pictures have alt text ------------------------------------------------------------

def metadata_alt(out, mime) -> str:
    meta = out.get("metadata", {})
    return str(meta.get("alt") or meta.get(mime, {}).get("alt") or "").strip()


def svg_alt(svg: str) -> str:
    """The SVG's own description: aria-label on the root element, or its first
    <title> unless Graphviz made that up."""
    root = re.search(r"<svg\b[^>]*>", svg)
    label = re.search(r"""aria-label=(["'])(.*?)\1""", root.group(0), re.DOTALL) if root else None
    if label and label.group(2).strip():
        return label.group(2).strip()
    title = re.search(r"<title>(.*?)</title>", svg, re.DOTALL)
    if title and title.group(1).strip() and not GRAPHVIZ_TITLE.fullmatch(title.group(1).strip()):
        return title.group(1).strip()
    return ""


def test_svg_alt_reads_labels_and_skips_graphviz_titles():
    labelled = '<svg aria-label="graph of y = x * x"><title>%3</title></svg>'
    assert svg_alt(labelled) == "graph of y = x * x"
    assert svg_alt("<svg><title>graph of y</title><title>n0</title></svg>") == "graph of y"
    for made_up in ("%3", "n0", "n1&#45;&gt;n0", "G1"):
        assert svg_alt(f"<svg><title>{made_up}</title></svg>") == ""
    assert svg_alt('<svg aria-label=" "></svg>') == ""
    assert svg_alt("<svg width='3' aria-label='a chart'></svg>") == "a chart"


INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL | re.IGNORECASE)


def html_svgs_without_alt(html: str) -> list[str]:
    """The ``<svg>`` pictures inside an HTML output that describe nothing."""
    return [svg for svg in INLINE_SVG.findall(html) if not svg_alt(svg)]


def test_inline_svg_in_html_needs_a_label_or_title():
    chart = "<div><p>Loss</p><svg width='340'><rect/><text>x</text></svg></div>"
    assert html_svgs_without_alt(chart) == ["<svg width='340'><rect/><text>x</text></svg>"]
    assert html_svgs_without_alt(chart.replace("<svg ", "<svg aria-label='loss per step' ")) == []
    assert html_svgs_without_alt(chart.replace("<rect/>", "<title>loss per step</title>")) == []
    assert html_svgs_without_alt("<svg><title>%3</title></svg>") != []


@pytest.mark.parametrize("path", ALL_LESSON_PATHS, ids=lesson_id)
def test_image_outputs_have_alt_text(path):
    missing = []
    for index, out in outputs(read(path)):
        for mime in PICTURES:
            if mime not in out.get("data", {}):
                continue
            alt = metadata_alt(out, mime)
            if not alt and mime == "image/svg+xml":
                alt = svg_alt(out["data"][mime])
            if not alt:
                missing.append(f"cell {index} ({mime})")
        html = out.get("data", {}).get("text/html", "")
        html = "".join(html) if isinstance(html, list) else html
        missing += [f"cell {index} (<svg> in text/html)" for _svg in html_svgs_without_alt(html)]
    assert not missing, f"{path.name}: pictures without alt text: {', '.join(missing)}"


MARKDOWN_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)]*)\)")
HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.IGNORECASE)


@pytest.mark.parametrize("path", ALL_LESSON_PATHS, ids=lesson_id)
def test_markdown_images_have_alt_text(path):
    missing = []
    for index, cell in enumerate(read(path).cells):
        if cell.cell_type != "markdown":
            continue
        for alt, src in MARKDOWN_IMAGE.findall(cell.source):
            if not alt.strip():
                missing.append(f"cell {index}: {src}")
        for tag in HTML_IMAGE.findall(cell.source):
            alt = (re.search(r'\balt\s*=\s*"([^"]*)"', tag)
                   or re.search(r"\balt\s*=\s*'([^']*)'", tag))
            if not (alt and alt.group(1).strip()):
                missing.append(f"cell {index}: {tag}")
    assert not missing, f"{path.name}: images without alt text: {'; '.join(missing)}"


# --- one sitting per lesson ------------------------------------------------------------

#: the most words of prose a lesson may have, so that a learner finishes it in one sitting
MOST_WORDS = 1800
WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def prose_words(path) -> int:
    """The words of a lesson's prose: its markdown cells without fenced code and
    without the folded solutions (tagged ``solution``)."""
    total = 0
    for c in read(path).cells:
        if c.cell_type != "markdown" or "solution" in c.get("metadata", {}).get("tags", []):
            continue
        total += len(WORD.findall(re.sub(r"```.*?```", " ", c.source, flags=re.DOTALL)))
    return total


@pytest.mark.parametrize("path", [p for p in LESSON_PATHS if not p.name.startswith("00")],
                         ids=lesson_id)
def test_a_lesson_is_one_sitting(path):
    """Each English lesson's prose stays within :data:`MOST_WORDS` words (the
    editions translate the same cells)."""
    words = prose_words(path)
    assert words <= MOST_WORDS, f"{path.name} has {words} words of prose (at most {MOST_WORDS})"


# --- the index links every lesson ------------------------------------------------------

@pytest.mark.parametrize("path", [p for p in ALL_LESSON_PATHS if not p.name.startswith("00")],
                         ids=lesson_id)
def test_every_lesson_is_linked_from_the_index(path):
    """Each language's index links each lesson of that language, beside it."""
    index = "\n".join(c.source for c in read(path.parent / "00_index.ipynb").cells
                      if c.cell_type == "markdown")
    assert f"]({path.name})" in index, f"{lesson_id(path)[:2]}/00_index.ipynb has no link to {path.name}"


# --- stored outputs: what a run prints, no machine paths ------------------------------

def machine_paths() -> list[str]:
    paths = {str(ROOT), sys.prefix, os.path.realpath(str(ROOT))}
    home = os.path.expanduser("~")
    if len(home) > 1:
        paths.add(home + os.sep)
    return sorted(paths)


def output_texts(out):
    for key in ("text", "evalue"):
        if key in out:
            yield out[key]
    yield from out.get("traceback", [])
    for value in out.get("data", {}).values():
        if isinstance(value, str):
            yield value


@pytest.mark.parametrize("path", ALL_LESSON_PATHS, ids=lesson_id)
def test_stored_outputs_hold_no_machine_paths(path):
    found = [f"cell {index}: {p}" for index, out in outputs(read(path))
             for text in output_texts(out) for p in machine_paths() if p in text]
    assert not found, (f"{path.name} stores this machine's paths (regenerate it with "
                       f"lessons/regenerate.py): {found[:3]}")


def sanitize_patterns():
    from nbval.plugin import get_sanitize_patterns
    return get_sanitize_patterns(SANITIZE_CFG.read_text())


def sanitize(text: str) -> str:
    for regex, replace in sanitize_patterns():
        text = re.sub(regex, replace, text)
    return text


def test_nbval_reads_every_sanitizer_rule():
    # nbval only reads 'regex: X' followed by 'replace: Y' with a non-empty Y
    written = len(re.findall(r"^regex:", SANITIZE_CFG.read_text(), re.MULTILINE))
    assert len(sanitize_patterns()) == written > 0


def test_a_stored_warning_matches_a_run_in_another_checkout():
    """regenerate.py stores a warning raised in a library file with the directory
    written neutrally; the same warning printed by a run in another checkout,
    where the file has moved by a few lines, must compare equal after sanitizing."""
    here = f"{ROOT}/autograd_kit/gradcheck.py:80: UserWarning: Input #0 is not double\n  x = 1\n"
    stored = regenerate.neutral_paths(here)
    assert str(ROOT) not in stored and "gradcheck.py:80" in stored
    elsewhere = here.replace(str(ROOT), "/home/student/courses/autograd_kit").replace(":80", ":83")
    windows = here.replace(f"{ROOT}/autograd_kit/", "C:\\Users\\s\\autograd_kit\\")
    assert sanitize(stored) == sanitize(elsewhere) == sanitize(windows)
    assert "UserWarning: Input #0 is not double" in sanitize(stored)


def test_kernel_cell_files_match_in_any_temporary_directory():
    runs = ["/tmp/ipykernel_21162/4121830395.py:5: UserWarning: w",
            "/var/folders/x1/T/ipykernel_7/4121830395.py:5: UserWarning: w",
            "C:\\Users\\s\\AppData\\Local\\Temp\\ipykernel_7\\4121830395.py:5: UserWarning: w"]
    assert len({sanitize(r) for r in runs}) == 1
    assert sanitize(runs[0]).endswith(":5: UserWarning: w")


def test_sanitizing_leaves_ordinary_text_alone():
    text = "tensor([1., 2.], grad_fn=<MulBackward0>)  a/b = 0.5, see lesson 3"
    assert sanitize(text) == text
    node = "<MulBackward0 object at 0x7f59171f7df0>"
    assert sanitize(node) == "<MulBackward0 object at 0xADDRESS>"


def test_tidy_keeps_every_frame_and_changes_only_machine_directories():
    frames = ["\x1b[0;31m------\x1b[0m",
              "Cell \x1b[0;32mIn[3], line 1\x1b[0m\n----> 1 y.backward()",
              f"File \x1b[0;32m{ROOT}/autograd_kit/engine.py:178\x1b[0m, "
              "in \x1b[0;36mbackward_steps\x1b[0m",
              f"File \x1b[0;32m{sys.prefix}/lib/site.py:1\x1b[0m, in \x1b[0;36mf\x1b[0m",
              "\x1b[0;31mRuntimeError\x1b[0m: boom"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("y.backward()")])
    nb.metadata["widgets"] = {"state": {}}
    nb.cells[0].metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stderr",
                               text=f"{ROOT}/lessons/x.py:3: UserWarning: w\n"),
        nbformat.v4.new_output("stream", name="stdout", text="plain text 0x7f59171f7df0\n"),
        nbformat.v4.new_output("error", ename="RuntimeError", evalue="boom",
                               traceback=list(frames))]
    regenerate.tidy(nb)
    stream_err, stream_out, error = nb.cells[0].outputs
    assert "widgets" not in nb.metadata and "execution" not in nb.cells[0].metadata
    assert stream_err.text == "<checkout>/lessons/x.py:3: UserWarning: w\n"
    assert stream_out.text == "plain text 0x7f59171f7df0\n"
    assert len(error.traceback) == len(frames)
    assert error.traceback[:2] == frames[:2] and error.traceback[-1] == frames[-1]
    assert "<checkout>/autograd_kit/engine.py:178" in error.traceback[2]
    assert f"{ROOT}/" not in "".join(error.traceback)  # (a sibling such as ROOT-venv may stay)


@pytest.mark.parametrize("path", ALL_LESSON_PATHS, ids=lesson_id)
def test_stored_errors_keep_their_traceback(path):
    """An error output shows what the learner sees: the frames and, last, the
    error line itself (nothing was cut away when it was stored)."""
    for index, out in outputs(read(path)):
        if out.get("output_type") != "error":
            continue
        plain = re.sub(r"\x1b\[[0-9;]*m", "", out["traceback"][-1]) if out["traceback"] else ""
        assert plain.startswith(out["ename"]), f"{path.name} cell {index}: traceback cut short"
        assert any("Cell In[" in f or "Traceback" in f for f in out["traceback"]), \
            f"{path.name} cell {index}: the traceback lost the notebook's own frame"


# --- end to end: stored in one checkout, checked by nbval in another -------------------

PROBE_LIBRARY = '''import warnings


def noisy():
    warnings.warn("raised inside a library file", UserWarning, stacklevel=1)
    return __file__


def broken():
    raise ValueError(f"cannot read {__file__}")
'''


def _probe_checkout(where: Path) -> Path:
    lessons = where / "lessons"
    (where / "tests").mkdir(parents=True)
    lessons.mkdir()
    for name in ("regenerate.py", "editions.py"):
        (lessons / name).write_text((LESSONS / name).read_text(encoding="utf-8"),
                                    encoding="utf-8")
    (where / "tests" / "nbval_sanitize.cfg").write_text(SANITIZE_CFG.read_text())
    (lessons / "probe_library.py").write_text(PROBE_LIBRARY)
    cells = [nbformat.v4.new_code_cell("import probe_library\nprint(probe_library.noisy())"),
             nbformat.v4.new_code_cell("probe_library.broken()"),
             nbformat.v4.new_code_cell("import warnings\nwarnings.warn('raised in the cell')")]
    cells[1].metadata["tags"] = ["raises-exception"]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, lessons / "99_probe.ipynb")
    return where


def _nbval(checkout: Path, *options: str):
    import subprocess
    return subprocess.run(
        # (no shuffling: this checkout has no conftest to keep a notebook's cells in order)
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
         "--nbval",
         "--nbval-current-env", *options, "lessons/99_probe.ipynb"],
        cwd=checkout, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # (runs lessons in kernels: left out of the quick loop)
def test_stored_outputs_pass_nbval_in_another_checkout(tmp_path):
    """A notebook whose outputs hold paths (a warning and an error raised in a
    library file, the file's name printed, a warning from the kernel's cell file)
    is regenerated in one checkout and checked by nbval in another one, at a
    different path.  (That the sanitizer is what makes them equal is shown, more
    cheaply, by the tests above.)"""
    import subprocess
    first = _probe_checkout(tmp_path / "first" / "checkout")
    second = _probe_checkout(tmp_path / "second" / "elsewhere" / "copy")
    subprocess.run([sys.executable, "lessons/regenerate.py", "99"], cwd=first, check=True,
                   capture_output=True, timeout=300)
    stored = (first / "lessons" / "99_probe.ipynb").read_text()
    assert str(first) not in stored and "<checkout>/lessons/probe_library.py" in stored
    (second / "lessons" / "99_probe.ipynb").write_text(stored)

    run = _nbval(second, "--nbval-sanitize-with", "tests/nbval_sanitize.cfg")
    assert run.returncode == 0, run.stdout[-3000:]
    assert "3 passed" in run.stdout, run.stdout[-3000:]
