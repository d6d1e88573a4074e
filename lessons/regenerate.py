"""Re-run lesson notebooks and store their outputs, ready for nbval and for readers.

    python lessons/regenerate.py                 # every lesson, in every language
    python lessons/regenerate.py 03 09 A         # lessons whose file names start so
    python lessons/regenerate.py zh/03 ru        # one lesson of one edition; one edition

The Chinese and Russian editions are first rebuilt from the English notebooks and
their translation files (``lessons/editions.py``), then executed like the rest.

Each notebook is executed top to bottom in a fresh kernel, with ``lessons/`` as
the working directory (cells tagged ``raises-exception`` may fail), and stored
with **what the run printed**: every traceback frame, every warning, every
output, as a learner running the notebook sees them.  Only two things change:

* the saved widget state is removed (widgets need a live kernel anyway, and the
  state changes on every run), and so are per-cell execution timestamps;
* the directories of *this* machine that appear in tracebacks and warnings are
  written as ``<site-packages>``, ``<python>`` (the standard library),
  ``<checkout>`` (the repository root) and ``~`` (the home directory), so the
  repository holds no machine's paths.  The rest
  of each line (file name, line number, code) is kept.

Whatever still differs from one machine or run to the next (the kernel's temporary
cell files, memory addresses, paths to ``.py`` files and their line numbers,
timings) is left for nbval's sanitizer, ``tests/nbval_sanitize.cfg``, to even out
when it compares.  nbval 0.11 compares, per output: stream text (stdout and stderr
separately), every ``data`` entry but PNG/JPEG pictures and widget views, and an
error's ``ename`` and ``evalue``; it never compares an error's ``traceback``.
"""
from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import editions  # noqa: E402  (beside this file)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _machine_prefixes() -> list[tuple[str, str]]:
    """(directory, neutral name) pairs, longest directory first, so that the
    site-packages inside a virtual environment inside the checkout is named as
    site-packages, not as part of the checkout."""
    pairs: dict[str, str] = {}
    packages = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    packages.update(getattr(site, "getsitepackages", lambda: [])())
    packages.add(site.getusersitepackages())
    for path in packages:
        pairs[path] = "<site-packages>"
    for key in ("stdlib", "platstdlib"):
        pairs[sysconfig.get_paths()[key]] = "<python>"
    pairs[str(ROOT)] = "<checkout>"
    home = os.path.expanduser("~")
    if home not in ("", "/", "~"):
        pairs[home] = "~"
    for path in list(pairs):
        real = os.path.realpath(path)
        pairs.setdefault(real, pairs[path])
    return sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)


_PREFIXES = _machine_prefixes()


def neutral_paths(text: str) -> str:
    """``text`` with this machine's directories written by their neutral names
    (whole directory names only: ``/home/ann`` does not touch ``/home/anna``)."""
    for path, name in _PREFIXES:
        text = re.sub(re.escape(path) + r"(?![\w.-])", lambda _m, n=name: n, text)
    return text


def tidy(nb) -> None:
    """Remove the widget state and timestamps; name machine directories neutrally.
    Outputs are otherwise stored exactly as the run produced them."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [neutral_paths(line) for line in out["traceback"]]
                out["evalue"] = neutral_paths(out["evalue"])
            elif out.get("output_type") == "stream":
                out["text"] = neutral_paths(out["text"])


def regenerate(path: Path, timeout: int = 600) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    tidy(nb)
    nbformat.write(nb, path)


def lesson_paths(prefixes: list[str]) -> list[Path]:
    """The English lessons, then their editions (``zh/``, ``ru/``), each in course
    order (digits sort before capitals: the main path, then the appendices); a
    prefix such as ``03`` picks lesson 3 in every language, ``A`` appendix A,
    ``zh/03`` or ``zh`` one edition."""
    paths = sorted(HERE.glob("*.ipynb"))
    for lang in editions.EDITIONS:
        paths += sorted((HERE / lang).glob("*.ipynb"))
    if prefixes:
        def picked(p: Path) -> bool:
            rel = p.relative_to(HERE).as_posix()
            return any(rel.startswith(x) or p.name.startswith(x) for x in prefixes)
        paths = [p for p in paths if picked(p)]
    return paths


def main(prefixes: list[str]) -> int:
    built = editions.build_all([x for x in prefixes if "/" not in x and x not in
                                editions.EDITIONS] or None)
    print(f"{len(built)} edition notebook(s) built from the English ones")
    paths = lesson_paths(prefixes)
    for path in paths:
        print(f"running {path.relative_to(HERE).as_posix()} ...", flush=True)
        regenerate(path)
    print(f"{len(paths)} notebook(s) regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
