"""How a check's verdict is said: the words, grading mode, and the sentence on screen.

:data:`OPEN`, :data:`WRONG` and :data:`RIGHT` are the English words, which a
``test`` function returns and compares (``problem == OPEN``) in every language;
the sentences themselves come in the learner's language (:mod:`autograd_kit.i18n`).

A check never raises in a lesson: :func:`say` shows the sentence.  An assignment
graded by nbgrader (:mod:`autograd_kit.course`) switches on :func:`grading`, and
then the sentence of an open or wrong answer is raised as
:class:`ExerciseNotSolved`, so the cell scores nothing.  In a notebook a sentence
is shown as HTML that wraps at word boundaries (with the same text as
``text/plain``); elsewhere it is printed.
"""
from __future__ import annotations

import html
import re
import unicodedata
from contextlib import contextmanager
from typing import Callable, Iterator

OPEN = "not answered yet"
WRONG = "not quite"
RIGHT = "correct"


class ExerciseNotSolved(AssertionError):
    """What :func:`~autograd_kit.exercises.check` raises in grading mode for an open
    or wrong answer.

    An autograder (nbgrader) gives a test cell its points when the cell runs
    without an error, so grading turns the sentence the learner would read into
    the error's message.  IPython shows it as one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        # lines that fit: a notebook front end breaks a long line of an error
        # anywhere ("he/lp"), and nbgrader's feedback page cuts it at the edge
        return wrap_lines(f"{type(self).__name__}: {self}")


_grading = {"on": False}


def grading(on: bool = True) -> None:
    """Switch grading mode on (or off): from then on
    :func:`~autograd_kit.exercises.check` raises :class:`ExerciseNotSolved` with its
    sentence instead of printing it when an answer is open or wrong.  The
    assignments of :mod:`autograd_kit.course` switch it on in their test cells; a
    lesson never does."""
    _grading["on"] = bool(on)


def say(sentence: str, solved: bool, graded: bool = False) -> None:
    """Show ``sentence``; raise it as :class:`ExerciseNotSolved` instead when the
    answer is not solved and this is graded (``graded``, or grading mode on)."""
    if (graded or _grading["on"]) and not solved:
        raise ExerciseNotSolved(sentence)
    show_sentence(sentence)


# -- how a sentence is shown -------------------------------------------------------------

#: JupyterLab shows printed text with ``word-break: break-all``, so a sentence
#: wraps in the middle of a word; as HTML with this style it wraps between words
#: (and between Chinese characters), keeping its own line breaks
SENTENCE_STYLE = "white-space: pre-wrap; overflow-wrap: break-word; word-break: normal"


def sentence_html(sentence: str) -> str:
    """The sentence as an HTML block that wraps at word boundaries; every
    character of it escaped (an answer quoted in it may hold ``<`` or ``&``)."""
    return (f'<div class="ak-check" style="{SENTENCE_STYLE}">'
            f"{html.escape(sentence, quote=True)}</div>")


def _in_notebook() -> bool:
    """Whether this runs in a notebook's kernel (not a terminal or plain Python)."""
    import sys
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def show_sentence(sentence: str) -> None:
    """Say ``sentence``: in a notebook as :func:`sentence_html` (``text/plain``
    holds the same sentence: JupyterLab breaks printed text anywhere, "he/lp"),
    elsewhere printed."""
    if not _in_notebook():
        print(sentence)
        return
    from IPython.display import display
    display({"text/plain": sentence, "text/html": sentence_html(sentence)}, raw=True)


_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
#: the pieces a line may break between: a word with the blanks before it, or one
#: Chinese character with the punctuation that must stay after it
_PIECES = re.compile(rf"\s*(?:[{_CJK}][，。：；、！？）》」』]*|[^\s{_CJK}]+)|\s+")


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_lines(text: str, width: int = 76) -> list[str]:
    """``text`` as lines of at most ``width`` columns (a Chinese character takes
    two), broken between words and between Chinese characters; a single word
    longer than that keeps a line of its own."""
    lines = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for piece in _PIECES.findall(paragraph):
            if line.strip() and _columns(line + piece.rstrip()) > width:
                lines.append(line.rstrip())
                line, piece = "", piece.lstrip()
            line += piece
        lines.append(line.rstrip())
    return lines


@contextmanager
def held_until_graded() -> Iterator[Callable[..., None]]:
    """Around a lesson cell of an assignment whose output would give an answer
    away (:mod:`autograd_kit.course` wraps such cells in it)::

        with held_until_graded() as show:
            L.backward()
            show(w.grad, x.grad)     # what the lesson's cell showed as its result

    The code runs either way, since later cells may use what it computes.  What it
    prints or shows appears only while nbgrader grades the notebook (it sets
    ``NBGRADER_EXECUTION=autograde``), so the learner reads it in the feedback;
    before that, nothing tells the answer, not even whether an answer is right.
    ``show(...)`` shows its value as a cell's last line would (nothing for None)."""
    import os
    from IPython.display import display

    def show(*values) -> None:
        value = values[0] if len(values) == 1 else values
        if value is not None:
            display(value)

    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        yield show
        return
    from IPython.utils.capture import capture_output
    with capture_output(stdout=True, stderr=False, display=True):
        yield show
