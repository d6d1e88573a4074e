"""A progress bar for pictures of big graphs.

``make_dot`` on a graph of a million nodes, without ``max_nodes``, works for
half a minute or more.  After :data:`DELAY` seconds of such work a bar shows
how far it is: tqdm's, a widget in a notebook and a line on stderr elsewhere.
The work has three parts, each counted in nodes: walking the graph (its size
not known yet), making the boxes and arrows, writing the labels; the bar says
which (``make_dot 1/3``...).

tqdm is not a dependency of the kit (the lessons and the tests install it): it
is imported only when a bar is due, and without it nothing is shown.  A bar
appears only once :data:`MIN_NODES` nodes have been counted, so a graph of a
lesson never shows one, however slow the machine, and stored notebook outputs
don't depend on the machine's speed.

The loops report every :data:`EVERY` nodes, so the count costs nothing a
learner would notice (``k & MASK == 0``).

:func:`paused_gc` pauses Python's cycle collector while the plain data of a
picture is made: a graph of a million nodes makes millions of small objects
that all stay alive, and each collection would look at every one of them
again (it made ``make_dot`` about twice as slow).
"""
from __future__ import annotations

import gc
import time
from contextlib import contextmanager

DELAY = 1.0          #: seconds of work before a bar appears
MIN_NODES = 50_000   #: nodes counted before a bar may appear
EVERY = 4096         #: the loops report every this many nodes
MASK = EVERY - 1


def _tqdm():
    """tqdm's bar class for here (a notebook widget or text), or None."""
    try:
        from tqdm.auto import tqdm
    except Exception:  # not installed, or broken: no bar
        return None
    return tqdm


class Progress:
    """The bar of one ``make_dot`` call: ``stage(k, total)`` starts part ``k``,
    ``update(done)`` says how many nodes of it are done, ``close()`` ends it.
    Nothing is drawn before :data:`DELAY` seconds and :data:`MIN_NODES` nodes."""

    def __init__(self, what: str = "make_dot", stages: int = 3) -> None:
        self.what, self.stages = what, stages
        self.start = time.perf_counter()
        self.bar = None
        self.off = False            # tqdm is missing or failed: stay silent
        self.stage_no, self.total, self.counted = 1, None, 0

    def stage(self, number: int, total: int | None) -> None:
        """Part ``number`` (from 1) begins; it has ``total`` nodes (None: not known)."""
        self.stage_no, self.total = number, total
        if self.bar is not None:
            self._safely(lambda: (self.bar.set_description(self._label(), refresh=False),
                                  self.bar.reset(total=total)))

    def update(self, done: int) -> None:
        """``done`` nodes of the current part are done."""
        if self.off:
            return
        self.counted = max(self.counted, done)
        if self.bar is None:
            if self.counted < MIN_NODES or time.perf_counter() - self.start < DELAY:
                return
            self._open()
            if self.bar is None:
                return
        self._safely(lambda: self.bar.update(done - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self._safely(self.bar.close)
            self.bar = None

    def _label(self) -> str:
        return f"{self.what} {self.stage_no}/{self.stages}"

    def _open(self) -> None:
        tqdm = _tqdm()
        if tqdm is None:
            self.off = True
            return
        try:
            self.bar = tqdm(total=self.total, desc=self._label(), leave=False,
                            mininterval=0.5)
        except Exception:
            self.off = True

    def _safely(self, action) -> None:
        """Run ``action`` on the bar; a bar that fails is dropped, never the picture."""
        try:
            action()
        except Exception:
            self.bar, self.off = None, True


class Silent(Progress):
    """No bar at all (the default of the functions that take a ``progress``)."""

    def __init__(self) -> None:
        super().__init__()
        self.off = True

    def stage(self, number: int, total: int | None) -> None:
        pass


SILENT = Silent()


@contextmanager
def paused_gc():
    """Python's cycle collector off inside the block (as it was, after)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
