"""Dimension arguments, as PyTorch reads them: ``-1`` is the last dimension,
a tuple names several, and an out-of-range or empty one is refused in
PyTorch's words.  Used by every op that takes a ``dim``."""
from __future__ import annotations

import builtins

from .. import errors


def wrap_dim(d: int, ndim: int) -> int:
    """``d`` as a non-negative axis of a tensor with ``ndim`` dimensions (``-1`` is
    the last); a 0-d tensor takes dims 0 and -1, as PyTorch allows.  Out of range:
    PyTorch's ``IndexError``."""
    n = builtins.max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {d})")
    return d % n


def normalize_dims(dim, ndim: int) -> tuple:
    """``dim`` (int, tuple or None) as a sorted tuple of non-negative axes."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    axes = [wrap_dim(d, ndim) for d in dims]
    if len(axes) > 1 and len(set(axes)) != len(axes):
        repeated = next(d for d in axes if axes.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return tuple(sorted(axes)) if ndim else ()


def check_not_empty(name: str, a, dims) -> None:
    """PyTorch refuses max/min/argmax... over nothing: there is no extreme of no numbers."""
    if dims is None:  # (dims: as PyTorch's message names them)
        if a.size == 0:
            if name.startswith("arg"):
                raise IndexError(errors.EMPTY_REDUCTION.format(name=name))
            raise RuntimeError(errors.EMPTY_REDUCTION.format(name=name)
                               + errors.EMPTY_REDUCTION_HINT)
        return
    for d in dims:
        if a.ndim and a.shape[wrap_dim(d, a.ndim)] == 0:
            raise IndexError(errors.EMPTY_REDUCTION_DIM.format(name=name, dim=d))
