"""Version counters: how a tensor's memory counts its in-place changes.

Every in-place operation bumps the counter, which a tensor shares with its
views; a value saved for backward remembers the count it had, so a later change
is noticed (``SavedTensor.unpack``).  Two special counters: an inference
tensor's, which counts nothing and refuses changes outside inference mode, and
the one ``detach_()`` leaves behind.
"""
from __future__ import annotations

from . import errors
from .grad_mode import _state


class VersionCounter:
    """How many in-place changes a tensor's memory has seen (shared by views)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class InferenceVersion(VersionCounter):
    """The counter of an inference tensor, shared by its views: it counts
    nothing, and outside inference mode it refuses the in-place change that
    would bump it.  (Its class is how an inference tensor is recognised.)"""

    __slots__ = ()

    def __init__(self) -> None:
        pass

    @property
    def value(self) -> int:
        return 0

    @value.setter
    def value(self, _) -> None:
        if not _state.inference:
            raise RuntimeError(errors.INFERENCE_INPLACE)


class DetachedVersion(VersionCounter):
    """The counter a non-leaf gets from ``detach_()``: it continues the old count
    half a step apart, so every SavedTensor that recorded the tensor before
    (an integer version) sees a mismatch and can say why, while anything saved
    afterwards matches.  ``_version`` reports the whole number."""

    __slots__ = ()

    def __init__(self, value) -> None:
        self.value = value + 0.5


def finish_pending() -> None:
    """Give this thread's pending tensor its InferenceVersion (see "inference
    tensors" in ``tensor.py``)."""
    st = _state
    t = st.pending
    if t is not None:
        st.pending = None
        if t._vcounter is None:
            t._vcounter = InferenceVersion()
