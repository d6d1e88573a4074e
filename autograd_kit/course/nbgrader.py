"""Lessons -> an nbgrader course directory, one assignment per lesson.

nbgrader (the Jupyter project's grading system) reads cell metadata under
``metadata.nbgrader``.  Each lesson cell becomes one of its kinds:

==========================  ===========================================================
lesson cell                 nbgrader cell
==========================  ===========================================================
``exercise`` (has ``...``)  *autograded answer*: the learner's cell as the lesson has
                            it, then the folded solution between ``### BEGIN
                            SOLUTION`` / ``### END SOLUTION``.  ``generate_assignment``
                            removes that region, so the released cell is the lesson's.
``exercise-check``          *autograded tests*, worth :data:`POINTS` points.  The visible
                            part (:data:`READY`) only asks whether an answer is there and
                            is the right kind of thing, so Validate catches an untouched
                            notebook; the part between ``### BEGIN HIDDEN TESTS`` / ``###
                            END HIDDEN TESTS`` (:data:`GRADED`) grades it.  Both call the
                            package by the exercise's name: the cell shows no answer.
``solution``                left out (it *is* the answer).
anything else               *read-only*: prose and lesson code, restored on grading.
                            What the prose says about checks and folded solutions is
                            said as it holds for the assignment, and a cell tagged
                            ``reveals-answer`` is held back until grading (code) or
                            folded (text): :mod:`autograd_kit.course.release_text`.
==========================  ===========================================================

The graded cell raises the sentence the lesson's own check cell prints
(:func:`autograd_kit.exercises.grade`, the same function with the same answer), so
nbgrader gives the cell zero points and its feedback shows that very sentence.
"""
from __future__ import annotations

import copy
from pathlib import Path

from ..i18n import _, language
from .lessons import Lesson
from .release_text import REVEALS, folded_text, for_assignment, held_code
from .safe_write import read_folder, write_files

POINTS = 1
ASSIGNMENT_PREFIX = "lesson"
CONFIG_FILE = "nbgrader_config.py"

_CONFIG = '''\
# nbgrader settings for the autograd_kit course ({language} edition).
# Written by `python -m autograd_kit.course nbgrader`; regenerate rather than edit
# (a rerun replaces an edited copy only with --force).
c = get_config()  # noqa: F821 - nbgrader provides it
c.CourseDirectory.course_id = {course_id!r}
# a released exercise cell is the lesson's own cell (with its ...): the region
# between the solution markers is removed and nothing is put in its place
c.ClearSolutions.code_stub = {{"python": ""}}
# lessons draw graphs and run small trainings: give a notebook time to finish
c.Execute.timeout = 300
'''


def assignment_name(lesson: Lesson) -> str:
    """``lesson03`` for lesson 3, ``lessonA`` for appendix A, in every language."""
    return f"{ASSIGNMENT_PREFIX}{lesson.key}"


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False,
          locked: bool = False, points: int | None = None) -> dict:
    meta = {"grade": grade, "solution": solution, "locked": locked, "task": False,
            "grade_id": grade_id, "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return meta


def _answer_source(learner: str, solution: str) -> str:
    return (learner.rstrip("\n") + "\n### BEGIN SOLUTION\n" + solution.rstrip("\n")
            + "\n### END SOLUTION")


def exercise_key(lesson: Lesson, number: int) -> str:
    """``lesson03.ex1`` (``lessonA.ex1`` in appendix A): the name
    :func:`autograd_kit.exercises.grade` knows it by."""
    return f"{ASSIGNMENT_PREFIX}{lesson.key}.ex{number}"


#: the hidden part of a graded cell: it binds everything it uses itself.  The
#: exercises package, every module of it, is imported afresh (a learner's
#: ``check = ...``, or a patched ``autograd_kit.exercises.grade`` or check of a
#: lesson's module, is not what runs), only the exercise's answer names are read
#: from the notebook, and the reference values live in the package, so the
#: cell's source shows no answer.  Short lines: the feedback page shows them as
#: they are, and cuts a long one at its right edge.
GRADED = """\
import sys as _ak_sys
for _ak_name in [n for n in _ak_sys.modules.copy()
                 if n.startswith("autograd_kit.exercises")]:
    _ak_sys.modules.pop(_ak_name, None)
import autograd_kit.exercises
_ak_grade = _ak_sys.modules["autograd_kit.exercises"].grade
_ak_grade({key!r}, globals(), graded=True)"""

#: the visible part: the answer is there, is not ``...``, and is the right kind of
#: thing, so that nbgrader's Validate fails on an untouched or unfinished notebook
READY = """\
import autograd_kit.exercises
autograd_kit.exercises.ready({key!r}, globals())"""


def _test_source(check: str, lesson: Lesson, number: int = 0) -> str:
    key = exercise_key(lesson, number)
    with language(lesson.language):
        note = _("# This check runs when your work is graded.")
    return (f"{note}\n{READY.format(key=key)}\n### BEGIN HIDDEN TESTS\n"
            f"{GRADED.format(key=key)}\n### END HIDDEN TESTS")


def _as_assigned(cell, lesson: Lesson, index: int) -> None:
    """A lesson cell (prose or code, not an exercise's) as the assignment has it."""
    reveals = REVEALS in cell.metadata.get("tags", [])
    if cell.cell_type == "markdown":
        cell.source = for_assignment(cell.source, lesson.language)
        if reveals:
            cell.source = folded_text(cell.source, lesson.language)
    elif cell.cell_type == "code" and reveals:
        cell.source = held_code(cell.source, lesson.language, f"{lesson.path.name}, cell {index}")


def to_nbgrader(lesson: Lesson):
    """The lesson as an nbgrader *source* notebook (a new notebook; the lesson's
    own is untouched).  Outputs are cleared: the assignment is run by the learner."""
    nb = copy.deepcopy(lesson.notebook)
    by_index = {}
    for ex in lesson.exercises:
        by_index[ex.answer_cell] = ("answer", ex)
        by_index[ex.check_cell] = ("check", ex)
        by_index[ex.solution_cell] = ("solution", ex)
    cells = []
    for i, cell in enumerate(nb.cells):
        role, ex = by_index.get(i, (None, None))
        if role == "solution":
            continue
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if role == "answer":
            cell.source = _answer_source(cell.source, ex.solution)
            cell.metadata["nbgrader"] = _meta(f"exercise-{ex.number}", solution=True)
        elif role == "check":
            cell.source = _test_source(cell.source, lesson, ex.number)
            cell.metadata["nbgrader"] = _meta(f"exercise-{ex.number}-check", grade=True,
                                              locked=True, points=POINTS)
        else:
            _as_assigned(cell, lesson, i)
            cell.metadata["nbgrader"] = _meta(f"cell-{i}", locked=True)
        cells.append(cell)
    nb.cells = cells
    return nb


def _support_files(lesson: Lesson) -> list[Path]:
    """Files next to the lessons that a lesson's code opens (``images/...``)."""
    code = "\n".join(c.source for c in lesson.notebook.cells if c.cell_type == "code")
    folder = lesson.path.parent
    return [p for p in sorted(folder.iterdir())
            if p.is_dir() and not p.name.startswith((".", "_")) and f"{p.name}/" in code]


def notebook_bytes(nb) -> bytes:
    """A notebook as ``nbformat.write`` puts it in a file."""
    import nbformat
    text = nbformat.writes(nb)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def write_course(outdir: Path, lessons: list[Lesson], course_id: str = "autograd_kit", *,
                 force: bool = False, source: Path | None = None) -> list[str]:
    """Write ``OUTDIR/source/lessonNN/NN_topic.ipynb`` (``lessonA/A_topic.ipynb`` for
    an appendix) for every lesson with
    exercises, and ``OUTDIR/nbgrader_config.py``.  Returns the assignment names.

    Regenerating replaces the files the exporter wrote before, as long as nobody
    edited them (``force`` replaces edited ones too); files it did not write and
    nbgrader's own folders (release, submitted, autograded, feedback, the
    gradebook) are kept.  The rules, and the refusals, are
    :mod:`autograd_kit.course.safe_write`'s; ``source`` (the lessons folder) is
    guarded like the lessons' own folders: the course may not be inside it."""
    files, names = {}, []
    for lesson in lessons:
        if not lesson.exercises:
            continue
        name = assignment_name(lesson)
        files[f"source/{name}/{lesson.name}.ipynb"] = notebook_bytes(to_nbgrader(lesson))
        for extra in _support_files(lesson):
            for rel, data in read_folder(extra).items():
                files[f"source/{name}/{extra.name}/{rel}"] = data
        names.append(name)
    if not names:
        raise ValueError("none of these lessons has an exercise: nothing to grade")
    languages = sorted({lesson.language for lesson in lessons})
    files[CONFIG_FILE] = _CONFIG.format(language=", ".join(languages),
                                        course_id=course_id).encode("utf-8")
    guarded = {lesson.path.parent for lesson in lessons} | ({Path(source)} if source else set())
    write_files(outdir, files, regenerate=[f"source/{name}" for name in names], force=force,
                lesson_folders=sorted(guarded))
    return names
