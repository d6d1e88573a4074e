"""Warnings that point at the learner's line.

A warning raised deep inside the kit (an op called through a method, a
``torch.`` function, a wrapper that accepts numpy's ``axis=``...) must be shown
at the line that called the kit, as PyTorch's are, not at a line of the kit.
``warn`` counts the kit's own frames instead of guessing a fixed stacklevel.
"""
from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn(message: str, category=UserWarning) -> None:
    """``warnings.warn`` attributed to the first frame outside the kit."""
    level, frame = 2, sys._getframe(1)  # (level 1 is this function)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


_WARNED: set = set()


def warn_once(key: str, message: str, category=UserWarning) -> None:
    """``warn``, the first time only in this process (PyTorch's ``TORCH_WARN_ONCE``:
    its deprecation notices are given once, not at every call)."""
    if key in _WARNED:
        return
    _WARNED.add(key)
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
