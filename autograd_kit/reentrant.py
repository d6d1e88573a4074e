"""Backward passes inside backward passes (a custom Function's backward that
calls ``backward`` or ``autograd.grad`` itself)."""
from __future__ import annotations

import threading

from .grad_mode import _state
from .versions import finish_pending

# -- reentrant backward ----------------------------------------------------------
# A custom Function's backward may itself call backward (or autograd.grad): the
# passes nest, each a few dozen Python frames deep.  PyTorch nests them to any
# depth (past a limit it goes on in another thread, with a fresh stack); so does
# the kit, or a few dozen levels would exhaust Python's recursion limit.

class _Nesting(threading.local):
    depth = 0  # backward passes running on this thread, one inside the other


_nesting = _Nesting()
_MAX_NESTED = 32  # nested passes per thread; the next one runs on a fresh thread


class _Nested:
    """``with NESTED:`` around a backward pass counts it in this thread's depth.
    The caller first checks ``_nesting.depth >= _MAX_NESTED`` and, if so, calls
    ``on_fresh_thread`` instead."""

    def __enter__(self):
        _nesting.depth += 1

    def __exit__(self, *exc):
        _nesting.depth -= 1
        return False


NESTED = _Nested()


def on_fresh_thread(run, *args, **kwargs):
    """``run(*args, **kwargs)`` (a backward pass) on a new thread with this
    thread's grad mode, while this one waits; its result or error comes back."""
    st = _state
    modes = (st.enabled, st.on, st.inference)
    box = {}

    def pass_():
        mine = _state
        mine.enabled, mine.on, mine.inference = modes
        try:
            box["result"] = run(*args, **kwargs)
        except BaseException as err:  # handed to the waiting thread
            box["error"] = err
        finally:
            finish_pending()
    worker = threading.Thread(target=pass_, name="autograd_kit nested backward")
    worker.start()
    worker.join()
    if "error" in box:
        raise box.pop("error")
    return box.get("result")
