"""Reading the lesson notebooks: which lessons exist, and their exercises.

A lesson is ``lessons/NN_topic.ipynb`` (English) or ``lessons/LANG/NN_topic.ipynb``
(an edition): ``00`` is the index, then the main path, numbered ``01``, ``02``...
without gaps.  The appendices about the kit itself come after it, lettered
instead of numbered: ``A_topic.ipynb``, ``B_topic.ipynb``...  A lesson's *key*
is what its file name starts with, ``"03"`` or ``"A"``; exercise ids and nbgrader
assignments are named by it (``lesson03.ex1``, ``lessonA.ex1``).

An exercise is the three-cell convention of :mod:`autograd_kit.exercises`: a code
cell tagged ``exercise`` (the learner replaces ``...``), the code cell after it
tagged ``exercise-check`` (calls ``check``), and the markdown cell after that
tagged ``solution`` (a folded ``<details>`` block with one python fence: the code
that solves cell one).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

#: the repository's lessons, next to the package in a checkout or editable install
DEFAULT_SOURCE = Path(__file__).resolve().parent.parent.parent / "lessons"
LANGUAGES = ("en", "zh", "ru")
_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)
#: a lesson's file name: two digits (the main path) or one capital letter (an
#: appendix), an underscore, the topic
LESSON_FILE = re.compile(r"(?P<key>[0-9]{2}|[A-Z])_\w+\.ipynb")


def lesson_key(name: str) -> str:
    """``"03"`` for ``03_backward_and_chain_rule.ipynb``, ``"A"`` for an appendix."""
    match = LESSON_FILE.fullmatch(Path(name).name)
    if not match:
        raise ValueError(f"{Path(name).name} is not a lesson's file name (NN_topic.ipynb "
                         "for a lesson, A_topic.ipynb for an appendix)")
    return match["key"]


def normalise_key(key: int | str) -> str:
    """A lesson as a user names it (``3``, ``"03"``, ``"a"``) -> its key (``"03"``, ``"A"``)."""
    text = str(key).strip()
    if text.isdigit():
        return f"{int(text):02d}"
    if len(text) == 1 and text.isalpha() and text.isascii():
        return text.upper()
    raise ValueError(f"{text!r} names no lesson: a lesson is a number (3), an appendix "
                     "a letter (A)")


def lesson_files(folder: Path) -> list[Path]:
    """The lesson notebooks of one folder in course order: the index and the main
    path by number, then the appendices by letter."""
    found = [p for p in Path(folder).glob("*.ipynb") if LESSON_FILE.fullmatch(p.name)]
    return sorted(found, key=lambda p: (not p.name[0].isdigit(), p.name))


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
    """A lesson notebook, read: its key, language and exercises."""
    path: Path
    key: str                             # "03", or "A" for an appendix
    language: str
    notebook: object                     # an nbformat NotebookNode
    exercises: list[Exercise] = field(default_factory=list)

    @property
    def number(self) -> int | None:
        """The lesson's number on the main path (3 for ``"03"``); None for an appendix."""
        return int(self.key) if self.key.isdigit() else None

    @property
    def is_appendix(self) -> bool:
        return not self.key.isdigit()

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
    return Lesson(path, lesson_key(path.name), language, nb, _exercises(nb, path))


def find_lessons(source: Path = DEFAULT_SOURCE, language: str = "en",
                 numbers: list[int | str] | None = None) -> list[Lesson]:
    """The lessons of one language, in course order; only those named in ``numbers``
    when given (lesson numbers such as ``3``, appendix letters such as ``"A"``)."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}: choose one of {', '.join(LANGUAGES)}")
    folder = Path(source) if language == "en" else Path(source) / language
    paths = lesson_files(folder)
    if not paths:
        raise FileNotFoundError(f"no lesson notebooks in {folder}")
    if numbers is not None:
        wanted = {normalise_key(n) for n in numbers}
        missing = wanted - {lesson_key(p.name) for p in paths}
        if missing:
            missing_numbers = sorted(int(k) for k in missing if k.isdigit())
            letters = sorted(k for k in missing if not k.isdigit())
            said = []
            if missing_numbers:
                said.append(f"no lesson numbered {', '.join(map(str, missing_numbers))}")
            if letters:
                said.append(f"no appendix {', '.join(letters)}")
            raise ValueError(f"{' and '.join(said)} in {folder}")
        paths = [p for p in paths if lesson_key(p.name) in wanted]
    return [read_lesson(p) for p in paths]
