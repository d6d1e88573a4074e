"""The course as a teacher hands it out: lesson notebooks turned into assignments.

The lessons in ``lessons/`` are the one source of truth.  Each exercise there is
three cells (see :mod:`autograd_kit.exercises`): the learner's cell holding
``...``, a folded check cell that prints a verdict, and a folded solution.
:mod:`autograd_kit.course.nbgrader` reads those cells and writes an nbgrader
course directory from them, so that editing a lesson and regenerating is all a
teacher does to keep the class's assignments in step with the course::

    python -m autograd_kit.course nbgrader COURSE_DIR --lang en --lessons 3,6,8
"""
from __future__ import annotations

from .lessons import Exercise, Lesson, find_lessons, read_lesson

__all__ = ["Exercise", "Lesson", "find_lessons", "read_lesson"]
