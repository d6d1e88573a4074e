"""The pre-1.0 loss keywords ``size_average=`` and ``reduce=``, kept for old tutorials.

Before ``reduction="mean" | "sum" | "none"`` existed, two booleans said the same:
``reduce=False`` kept one loss per element; otherwise ``size_average`` chose
between the mean (True, the default) and the sum (False).  PyTorch still
accepts them, translates them, and warns.  ``legacy_keywords`` adds them to a
loss function or to the ``__init__`` of a loss module.
"""
from __future__ import annotations

import functools
import warnings


def warn_size(input, target, stacklevel: int) -> None:
    """PyTorch's warning when a loss's target has another shape than its input (the
    two broadcast, which is rarely what was meant); ``stacklevel`` points at the
    learner's line from the caller's depth."""
    if target.shape != input.shape:  # (``stacklevel``: kept for callers; the line
        # shown is the first outside the kit, whatever the depth)
        from ..ops._warn import warn
        warn(f"Using a target size ({target.shape}) that is different to the input "
             f"size ({input.shape}). This will likely lead to incorrect results due "
             "to broadcasting. Please ensure they have the same size.")


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """The ``reduction`` the two old flags mean (None counts as True)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    return reduction


def legacy_keywords(fn):
    """Let ``fn`` (a loss function, or a loss module's ``__init__``) also take
    ``size_average=`` / ``reduce=``: when either is given, it decides ``reduction``."""
    @functools.wraps(fn)
    def wrapper(*args, size_average=None, reduce=None, **kwargs):
        if size_average is not None or reduce is not None:
            kwargs["reduction"] = legacy_get_string(size_average, reduce)
        return fn(*args, **kwargs)
    return wrapper
