"""Re-run lesson notebooks and store their outputs, ready for nbval and for readers.

    python lessons/regenerate.py                 # every lesson
    python lessons/regenerate.py 03 09           # lessons whose file names start so

Each notebook is executed top to bottom in a fresh kernel (cells tagged
``raises-exception`` may fail), then tidied so the stored file is stable:

* traceback frames that point into installed or library files are dropped,
  keeping the notebook's own frame and the error line (paths differ per machine);
* the saved widget state is removed (widgets need a live kernel anyway, and the
  state changes on every run).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
_FILE_FRAME = re.compile(r'File (\x1b\[[0-9;]*m)*(/|[A-Za-z]:\\)')


def _keep_frame(frame: str) -> bool:
    """A traceback frame that names a file on disk is machine-specific."""
    return not _FILE_FRAME.search(frame)


def tidy(nb) -> None:
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["traceback"] = [f for f in out["traceback"] if _keep_frame(f)]


def regenerate(path: Path, timeout: int = 600) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    tidy(nb)
    nbformat.write(nb, path)


def main(prefixes: list[str]) -> int:
    paths = sorted(HERE.glob("*.ipynb"))
    if prefixes:
        paths = [p for p in paths if any(p.name.startswith(x) for x in prefixes)]
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        regenerate(path)
    print(f"{len(paths)} notebook(s) regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
