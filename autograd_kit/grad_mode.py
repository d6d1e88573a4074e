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
    # Do operations record a graph?  Every thread starts with it on.  Inside
    # inference mode grad mode may be on (``enable_grad()`` there) and yet nothing
    # is recorded: ``enabled`` is then 0, false for the operations, which test
    # its truth, and on for ``is_grad_enabled``, which tests ``is not False``.
    enabled = True
    on = True          # what "grad mode on" is stored as: True, or 0 in inference mode
    inference = False  # inside ``inference_mode()``
    pending = None     # the newest tensor made in inference mode (see ``tensor.py``)


_state = _GradState()


def is_grad_enabled() -> bool:
    """True when grad mode is on (new operations are recorded, unless inference
    mode is on too: it records nothing)."""
    return _state.enabled is not False


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _state.inference


def _set(mode: bool) -> None:
    st = _state
    st.enabled = st.on if mode else False


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

    def clone(self):
        """A fresh context manager of the same kind (one per call of a decorated function)."""
        return self.__class__()

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
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


class inference_mode(_GradModeContext):  # noqa: N801 - PyTorch's name
    """``no_grad`` taken further: inside, nothing is recorded (even under
    ``enable_grad``), and the tensors made are *inference tensors*.

    An inference tensor carries no version counter, so autograd could never tell
    whether it changed since it was saved; PyTorch therefore forbids, outside
    inference mode, changing one in place, saving one for backward (using it in
    an op that records) and making one require grad.  ``tensor.is_inference()``
    tells them apart; a view shares its base's kind.

    ``inference_mode(False)`` switches it off again, and grad mode on.  Works
    as a context manager and as a decorator, with or without parentheses.
    """

    def __new__(cls, mode=True):
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # ``@inference_mode`` without parentheses: mode is the function

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self):
        st = _state
        self._prev = (st.enabled, st.inference, st.on)
        _tensors().finish_pending()
        if self.mode:
            _tensors().inference_started()
            st.inference, st.enabled, st.on = True, False, 0
        else:  # (grad mode on, as PyTorch does)
            st.inference, st.enabled, st.on = False, True, True
        return self

    def __exit__(self, *exc):
        st = _state
        _tensors().finish_pending()
        st.enabled, st.inference, st.on = self._prev
        if self.mode:
            _tensors().inference_ended()
        return False


def _tensors():
    import sys
    return sys.modules[__name__.rpartition(".")[0] + ".tensor"]  # (it imports this module)
