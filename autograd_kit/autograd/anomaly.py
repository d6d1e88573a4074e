"""Anomaly detection: which line of *your* forward code made the failing node?

A backward error names a node (``ExpBackward0``), but the node was made long
before, somewhere in the forward pass.  With anomaly detection on, every node
made remembers the traceback of the forward call that created it; when the
backward pass fails at that node, a ``UserWarning`` shows that traceback, then
the error itself is raised.  With ``check_nan`` it also stops at the first node
whose gradient contains NaN, instead of letting NaN spread to every parameter.

    with autograd.detect_anomaly():      # (or set_detect_anomaly(True))
        loss = model(x)                  # each node records where it was made
        loss.backward()                  # a failure points back at that line

It costs time (a stack walk per node, a NaN test per gradient), so it is meant
for debugging only.  When it is off, recording costs one flag test per node.

(PyTorch prints the whole Python stack.  Here the frames *before* your code --
Jupyter's or pytest's machinery, which in a notebook are a screenful -- and the
kit's own frames are left out: the traceback shows only your code.)
"""
from __future__ import annotations

import functools
import os
import sys
import sysconfig
import traceback
import warnings

from ..grad_mode import (_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                         set_anomaly_enabled)

ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime "
                   "and should only be enabled for debugging.")
TRACE_KEY = "traceback_"  # where PyTorch keeps it too: node.metadata["traceback_"]
PARENT_KEY = "parent_"    # made during backward(create_graph=True): by which node

_KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB = tuple({os.path.abspath(p) + os.sep for p in (
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"])})


class detect_anomaly:
    """Anomaly detection on inside a ``with`` block (or a decorated function).

    ``check_nan=True`` (the default) also raises as soon as a backward formula
    returns NaN.  Warns once that it is on, because it slows everything down."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(ENABLED_WARNING, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev, prev_nan = is_anomaly_enabled(), is_anomaly_check_nan_enabled()
            set_anomaly_enabled(True, check_nan)
            try:
                return fn(*args, **kwargs)
            finally:
                set_anomaly_enabled(prev, prev_nan)
        return wrapper


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` switches anomaly detection on at once, for the
    rest of the program; used as ``with set_detect_anomaly(True):`` the previous
    setting comes back at the end of the block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


# -- recording (forward) --------------------------------------------------------

def forward_trace() -> list[str]:
    """The calling code's stack as PyTorch stores it (``traceback.format_stack``
    lines), from the learner's code only: the kit's own frames are left out, and
    so is everything above the innermost stretch of non-library code (Jupyter's,
    pytest's or runpy's frames before the first line of yours)."""
    frames = []
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith(_KIT):
            pass  # how the kit made the node: not where in your code it was made
        elif frames and _is_library(name):
            break
        else:
            frames.append(traceback.FrameSummary(name, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    frames.reverse()  # outermost first, as tracebacks print
    return traceback.StackSummary.from_list(frames).format()


def _is_library(filename: str) -> bool:
    return (filename.startswith(_STDLIB) or "site-packages" in filename
            or "dist-packages" in filename or filename.startswith("<frozen "))


def remember_forward(node) -> None:
    """Store where ``node`` was made (called only while anomaly mode is on), and,
    for a node made by a backward formula, the node whose backward that was."""
    node.metadata[TRACE_KEY] = forward_trace()
    if _anomaly.parent is not None:
        node.metadata[PARENT_KEY] = _anomaly.parent


# -- reporting (backward) ------------------------------------------------------

def report_failure(node) -> None:
    """Warn with the forward traceback of ``node``, whose backward just failed.

    A node made by a backward formula (``create_graph=True``) then names, in one
    more warning each, the node that made it and where *that* one was made, back
    to the forward pass.  (For a node made while anomaly mode was off there is
    nothing to show, and the warning says so, as PyTorch's does.)"""
    if not _anomaly.enabled or node is None:
        return
    level = _outside_kit()
    warnings.warn(_stack_message(node, False), UserWarning, stacklevel=level)
    parent = _metadata(node).get(PARENT_KEY)
    while parent is not None:
        warnings.warn(_stack_message(parent, True), UserWarning, stacklevel=level)
        parent = _metadata(parent).get(PARENT_KEY)


def _metadata(node) -> dict:
    extra = node._extra
    return (extra.get("metadata") or {}) if extra else {}


def _stack_message(node, is_parent: bool) -> str:
    trace = _metadata(node).get(TRACE_KEY)
    if not trace:
        return (f"Error detected in {node.name()}. No forward pass information "
                "available. Enable detect anomaly during forward pass for more "
                "information.")
    stack = "".join(trace).rstrip("\n")
    if is_parent:
        return (f"\n\nPrevious calculation was induced by {node.name()}. Traceback of "
                "forward call that induced the previous calculation:\n" + stack)
    return (f"Error detected in {node.name()}. Traceback of forward call that caused the "
            "error:\n" + stack)


def _outside_kit() -> int:
    """The ``stacklevel`` that makes a warning point at the first caller outside
    the kit (the learner's ``backward()`` line), however deep the engine is."""
    level, f = 2, sys._getframe(2)  # stacklevel 2: the caller of report_failure
    while f is not None and f.f_code.co_filename.startswith(_KIT):
        level += 1
        f = f.f_back
    return level


def check_nan(node, grads) -> None:
    """PyTorch's NaN check: raise if one of ``node``'s output gradients has a NaN."""
    from ..backend import xp_of
    for i, g in enumerate(grads):
        if g is None:
            continue
        data = getattr(g, "_data", g)
        if not hasattr(data, "dtype"):  # (slots on their way into a node with several outputs)
            continue
        if data.dtype.kind in "fc" and bool(xp_of(data).isnan(data).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                               f"{i}th output.")


__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]
