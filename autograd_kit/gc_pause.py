"""Python's cycle collector, paused while a backward pass runs (``engine``)."""
from __future__ import annotations

import gc
import threading


def _run_paused(steps) -> None:
    """Exhaust ``steps`` with Python's cycle collector paused.

    The graph holds no reference cycles, so nothing is lost; but a full
    collection walks every live tensor and node, which on a big graph costs more
    than the backward pass itself.  (A suspended ``backward_steps`` generator
    never holds the collector paused.)

    Several threads may run passes at once, and the collector's switch is one
    for the whole process.  So the passes that hold it are counted in a set,
    under a lock: the first to start turns it off (remembering whether it was
    on), the last to finish turns it back on.  Ctrl-C cannot leave it off
    either: Python delivers a KeyboardInterrupt only when a function starts,
    after a call returns or at the end of a loop's turn, so everything here is
    written inline with built-in calls, a pass joins the set before the switch
    is touched, ``restore`` is set before the collector is turned off, and the
    ``finally`` undoes whatever part had happened."""
    me = object()
    try:
        with _GC_LOCK:
            _GC_HOLDERS.add(me)
            if _GC_RESTORE[0] is None:
                _GC_RESTORE[0] = gc.isenabled()
                gc.disable()
        for _ in steps:
            pass
    finally:
        with _GC_LOCK:
            _GC_HOLDERS.discard(me)
            if not _GC_HOLDERS and _GC_RESTORE[0] is not None:
                if _GC_RESTORE[0]:
                    gc.enable()
                _GC_RESTORE[0] = None


_GC_LOCK = threading.Lock()
_GC_HOLDERS: set = set()  # the passes running now, each an object of its own
_GC_RESTORE = [None]      # None: the switch is untouched; else: was it on?
