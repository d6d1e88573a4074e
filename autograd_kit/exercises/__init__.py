"""Checking a learner's answer to a lesson exercise, in words.

A lesson exercise is three cells:

1. a code cell tagged ``exercise`` where the learner replaces ``...`` with an
   answer (``my_grad = ...``);
2. a code cell tagged ``exercise-check`` that calls :func:`grade` with the
   exercise's name (``grade("lesson03.ex1", globals())``) or :func:`check`;
3. a markdown cell tagged ``solution`` holding a folded ``<details>`` block with
   one ```` ```python ```` fence: the code that would go into cell 1.

Run untouched, the check says the exercise is still open: the answer is
``...`` (or holds one), or a ``test`` function returns :data:`OPEN` (as
:func:`backward_problem` does for a ``backward`` that still returns ``...``).  The test suite swaps
each solution into its exercise cell and runs the lesson again to see every
check answer "correct".

:func:`check` never raises in a lesson: a lesson run top to bottom carries on past
an open or wrong exercise, and what is wrong is said in a sentence, not a traceback.
An assignment graded by nbgrader (:mod:`autograd_kit.course`) switches on
:func:`grading`, and then that same sentence is raised, so the cell scores nothing.
In a notebook a sentence is shown as HTML that wraps at word boundaries (with
the same text as ``text/plain``); elsewhere it is printed.
The sentences come in the learner's language (:mod:`autograd_kit.i18n`);
:data:`OPEN`, :data:`WRONG` and :data:`RIGHT` are the English words, which a
``test`` function returns and compares (``problem == OPEN``) in every language.

The package, module by module:

* :mod:`.sentences`: the words, grading mode, and how a sentence is shown;
* :mod:`.checking`: :func:`check` and :func:`mismatch`;
* :mod:`.custom_backward`: :func:`backward_problem`, for a custom Function;
* :mod:`.common`: what the checks of several lessons share;
* ``lesson00`` ... ``lesson15``, ``appendix_a``, ``appendix_b``: each lesson's
  checks, with its tables of answer names and words;
* :mod:`.registry`: those tables merged, by exercise name;
* :mod:`.tamper`: whether a notebook replaced a function the checks rely on;
* :mod:`.grader`: :func:`grade`, :func:`ready` and :func:`solved`.
"""
from __future__ import annotations

from .checking import check, mismatch
from .common import N_
from .custom_backward import backward_problem
from .grader import grade, ready, solved
from .registry import EXERCISES as _EXERCISES
from .registry import TEXT as _TEXT
from .sentences import (OPEN, RIGHT, SENTENCE_STYLE, WRONG, ExerciseNotSolved, grading,
                        held_until_graded, sentence_html, show_sentence, wrap_lines)
from .sentences import _columns
from .tamper import foreign as _foreign
from .tamper import homes as _homes
from .tamper import moved as _moved
from .tamper import tampered as _tampered

__all__ = ["OPEN", "WRONG", "RIGHT", "ExerciseNotSolved", "grading", "SENTENCE_STYLE",
           "sentence_html", "show_sentence", "wrap_lines", "held_until_graded", "mismatch",
           "check", "backward_problem", "N_", "grade", "ready", "solved"]
