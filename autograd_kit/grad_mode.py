"""Grad mode: whether operations record a graph, per thread.

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` work as context managers
and as decorators, exactly as in PyTorch.  The flag lives in a
``threading.local`` so a notebook's background thread cannot switch recording
off for the main one.
"""
from __future__ import annotations

import functools
import inspect
import threading

class _GradState(threading.local):
    enabled = True  # every thread starts with recording on


_state = _GradState()


def is_grad_enabled() -> bool:
    """True when new operations are recorded in the graph."""
    return _state.enabled


def _set(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradModeContext:
    """Base class: a context manager that also decorates functions."""

    _mode: bool = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set(self._mode)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        cls = self.__class__
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(cls, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with cls():
                return fn(*args, **kwargs)
        return wrapper


def _wrap_generator(make_context, fn):
    """A generator function decorated with a grad mode: the mode holds each time
    the generator runs -- from each resume to its next ``yield`` -- and the
    caller's own mode is back while it is paused (as in PyTorch)."""
    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_context():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException as err:
                    with make_context():
                        response = gen.throw(err)
                else:
                    with make_context():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value
    return generator


class no_grad(_GradModeContext):
    """Don't record operations: results have ``requires_grad=False``.

    Use it for inference and for updating parameters by hand.
    """

    _mode = False


class enable_grad(_GradModeContext):
    """Record operations again, even inside ``no_grad``."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` is ``no_grad()``; it also works as a plain call."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = is_grad_enabled()
        _set(self._mode)  # a plain call takes effect at once, as in PyTorch

    def __enter__(self):
        return self

    def __call__(self, fn):
        _set(self._prev)
        mode = self._mode
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(lambda: set_grad_enabled(mode), fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class _AnomalyState:
    """Anomaly detection's two switches.  Unlike grad mode they are one setting
    for the whole process, not per thread, as in PyTorch."""

    enabled = False    # record each node's forward traceback; report it on failure
    check_nan = True   # also raise when a node's gradient contains NaN
    parent = None      # the node whose backward is running (create_graph=True makes
    #                    new nodes there: they remember it as their "parent_")


_anomaly = _AnomalyState()


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on (see ``autograd.detect_anomaly``)."""
    return _anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly detection also checks every gradient for NaN."""
    return _anomaly.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly detection on or off for the whole process."""
    _anomaly.enabled = bool(enabled)
    _anomaly.check_nan = bool(check_nan)


class inference_mode(no_grad):
    """Accepted for compatibility; behaves as ``no_grad``."""

    def __init__(self, mode: bool = True) -> None:
        self._mode = not mode
