"""Whole slices by number: ``x.index_select(dim, index)`` and ``x.index_add(dim,
index, source)``.

``index_select`` copies the slices of ``x`` along ``dim`` that ``index`` names,
in that order (a slice named twice is copied twice); ``index_add`` adds slice
k of ``source`` onto slice ``index[k]`` of ``x``.  Each is the other's
transpose, which is all their backward formulas say:

    index_select, for x:       zeros(x.shape).index_add(dim, index, g)
    index_add, for source:     g.index_select(dim, index)   (times alpha)
    index_add, for x:          g

(a slice selected twice receives both gradients: ``index_add`` adds them.)
"""
from __future__ import annotations

from .. import backend
from ..tensor import Tensor, scalar_type_name
from ._rules import record, rule
from .formula_env import _is_tensor, _raw, select_key
from .dims import wrap_dim




def _vector(op, index):
    """The index as a 1-d int array, after PyTorch's checks."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    if idx.dtype not in (backend.int64.np, backend.int32.np):
        if op == "index_select":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(idx.dtype)}")
    return idx.reshape(-1)


def index_select(x, dim, index):
    """The slices of ``x`` along ``dim`` named by ``index``, in its order
    (IndexSelectBackward0).  A bad index gets the words of PyTorch's CPU
    kernel that would read it."""
    idx = _vector("index_select", index)
    a = x._data
    if not a.ndim and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    d = wrap_dim(dim, x.ndim)
    size = a.shape[d] if a.ndim else 1
    bad = _first_bad(idx, size)
    if a.ndim > 1 and idx.size and a.size == 0:  # (nothing to read: only the bounds)
        if size == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if bad is not None:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                               f"axis_dim={size}")
    elif bad is not None and a.ndim > 1 and d == 1:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    elif bad is not None and (a.ndim <= 1 or idx.size):
        raise IndexError("index out of range in self")
    out = backend.xp_of(a).take(a.reshape(-1) if not a.ndim else a,
                                backend.move_like(idx, a), axis=d)
    if not a.ndim:  # (a 0-d x gives a 0-d result)
        out = out.reshape(())
    return record(IndexSelectBackward0, out, (x,), dim=d, index=index,
                  self_sym_sizes=a.shape)


def _first_bad(idx, size):
    """The first index outside [0, size) (negative ones too: no wrapping here)."""
    host = backend.to_host(idx)
    bad = host[(host < 0) | (host >= size)]
    return int(bad[0]) if bad.size else None


def index_add(x, dim, index, source, *, alpha=1):
    """``x`` with ``alpha * source[k]`` added onto slice ``index[k]`` along
    ``dim`` (IndexAddBackward0); slices named twice receive both."""
    idx = _vector("index_add_", index)
    if not isinstance(source, Tensor):
        raise TypeError(f"index_add(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    a, s = x._data, source._data
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(a.dtype)}) and source "
                           f"({scalar_type_name(s.dtype)}) must have the same scalar type")
    d = wrap_dim(dim, x.ndim)
    if not s.ndim and idx.size != 1:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    count = s.shape[d] if s.ndim else 1
    if idx.size != count:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({count}), for dim: {d}")
    size = a.shape[d] if a.ndim else 1
    bad = _first_bad(idx, size)
    if bad is not None and (a.ndim <= 1 or idx.size and a.size):  # (else nothing is added)
        if a.ndim > 1 and d in (0, a.ndim - 1) and idx.dtype == backend.int64.np and \
                alpha == 1:  # (which of PyTorch's kernels reads the index decides the words)
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
        raise IndexError("index out of range in self")
    if a.size == 0:
        return record(IndexAddBackward0, a.copy(), (x, source), dim=d, index=index,
                      source=source, source_dim=s.ndim, alpha=alpha)
    out = a.copy()
    part = s if alpha == 1 else s * backend.xp_of(s).asarray(alpha, dtype=s.dtype)
    if not a.ndim:
        out = out.reshape(1)
        part = part.reshape(1)
    backend.xp_of(out).add.at(out, select_key(d, backend.move_like(idx, out)), part)
    return record(IndexAddBackward0, out.reshape(a.shape), (x, source), dim=d, index=index,
                  source=source, source_dim=s.ndim, alpha=alpha)


# ------------------------------------------------- words of the formulas ---
def index_select_backward(g, sizes, dim, index):
    """zeros of ``sizes`` with g added at the selected slices."""
    if _is_tensor(g):
        from .creation import zeros
        return index_add(zeros(tuple(sizes), dtype=g.dtype, device=g.device), dim, index, g)
    idx = _raw(index).reshape(-1)
    out = backend.xp_of(g).zeros(tuple(sizes) or (1,), dtype=g.dtype)
    backend.xp_of(out).add.at(out, select_key(dim, backend.move_like(idx, out)),
                              g.reshape(-1) if not sizes else g)
    return out.reshape(tuple(sizes))


def index_add_source_grad(g, dim, index, source, source_dim, alpha):
    """The slices of g the source was added onto, times alpha (PyTorch's
    ``maybe_multiply(g.index_select(dim, index).expand_as(source), alpha)``)."""
    if _is_tensor(g):
        from .scalar import mul_scalar
        if source_dim > 0:
            picked = index_select(g, dim, index).expand_as(source)
        else:
            picked = index_select(g, dim, Tensor._make(index._data.reshape(())))
        return picked if alpha == 1 else mul_scalar(picked, alpha)
    idx = _raw(index).reshape(-1)
    picked = backend.xp_of(g).take(g.reshape(-1) if not g.ndim else g,
                                   backend.move_like(idx, g), axis=dim)
    picked = picked.reshape(source.shape)
    return picked if alpha == 1 else picked * alpha


# Backward formulas: g is the gradient of the output; one formula per input.
IndexSelectBackward0 = rule("IndexSelectBackward0", "dim index self_sym_sizes",
                            self="index_select_backward(g, self_sym_sizes, dim, index)")
IndexAddBackward0 = rule(
    "IndexAddBackward0", "alpha dim index source source_dim",
    self="g", source="index_add_source_grad(g, dim, index, source, source_dim, alpha)")
