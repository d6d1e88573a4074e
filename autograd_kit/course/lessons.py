"""Reading the lesson notebooks: which lessons exist, and their exercises.

A lesson is ``lessons/NN_topic.ipynb`` (English) or ``lessons/LANG/NN_topic.ipynb``
(an edition).  An exercise is the three-cell convention of
:mod:`autograd_kit.exercises`: a code cell tagged ``exercise`` (the learner
replaces ``...``), the code cell after it tagged ``exercise-check`` (calls
``check``), and the markdown cell after that tagged ``solution`` (a folded
``<details>`` block with one python fence: the code that solves cell one).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

#: the repository's lessons, next to the package in a checkout or editable install
DEFAULT_SOURCE = Path(__file__).resolve().parent.parent.parent / "lessons"
LANGUAGES = ("en", "zh", "ru")
_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


@dataclass
class Exercise:
    """One exercise of a lesson: the indices of its three cells, its solution code."""
    number: int          # 1, 2, ... in the lesson
    answer_cell: int     # the learner's cell
    check_cell: int
    solution_cell: int
    solution: str        # the code that replaces the learner's cell


@dataclass
class Lesson:
    """A lesson notebook, read: its number, language and exercises."""
    path: Path
    number: int
    language: str
    notebook: object                     # an nbformat NotebookNode
    exercises: list[Exercise] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``03_backward_and_chain_rule``: the file name without ``.ipynb``."""
        return self.path.stem


def solution_code(markdown: str) -> str:
    """The python fence of a solution cell (exactly one is allowed)."""
    fences = _FENCE.findall(markdown)
    if len(fences) != 1:
        raise ValueError(f"a solution cell holds exactly one python fence, found {len(fences)}")
    return fences[0]


def _exercises(nb, path: Path) -> list[Exercise]:
    found = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if "exercise" not in _tags(cell):
            continue
        if (i + 2 >= len(cells) or "exercise-check" not in _tags(cells[i + 1])
                or "solution" not in _tags(cells[i + 2])):
            raise ValueError(f"{path.name}, cell {i}: an exercise cell must be followed by "
                             "its exercise-check cell and its solution cell")
        found.append(Exercise(len(found) + 1, i, i + 1, i + 2,
                              solution_code(cells[i + 2].source)))
    return found


def read_lesson(path: Path) -> Lesson:
    """Read one lesson notebook and find its exercises."""
    import nbformat
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    edition = nb.metadata.get("autograd_kit", {}).get("edition")
    language = edition or (path.parent.name if path.parent.name in LANGUAGES else "en")
    return Lesson(path, int(path.name[:2]), language, nb, _exercises(nb, path))


def find_lessons(source: Path = DEFAULT_SOURCE, language: str = "en",
                 numbers: list[int] | None = None) -> list[Lesson]:
    """The lessons of one language, in order; only ``numbers`` when given."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}: choose one of {', '.join(LANGUAGES)}")
    folder = Path(source) if language == "en" else Path(source) / language
    paths = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no lesson notebooks in {folder}")
    if numbers is not None:
        missing = set(numbers) - {int(p.name[:2]) for p in paths}
        if missing:
            raise ValueError(f"no lesson numbered {', '.join(map(str, sorted(missing)))} "
                             f"in {folder}")
        paths = [p for p in paths if int(p.name[:2]) in numbers]
    return [read_lesson(p) for p in paths]
