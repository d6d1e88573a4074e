"""Diagonals and triangles: ``diagonal``, ``diag``, ``trace``, ``tril``, ``triu``.

``x.diagonal(offset, dim1, dim2)`` is a *view*: the elements x[.., i, .., i + offset, ..]
(the diagonal dimension goes last).  Its gradient is g written back onto that
diagonal of a zero tensor shaped like x.  ``tril``/``triu`` keep the lower/upper
triangle and zero the rest, so their gradient is g with the same triangle kept.
"""
from __future__ import annotations

from .. import backend
from ._rules import record, rule
from .formula_env import ENV, _is_tensor, _raw
from .dims import wrap_dim
from .shape import _view


def _diagonal_array(a, offset, d1, d2):
    """numpy's diagonal view (read-only by default; made writable so that the
    view can be changed in place, as PyTorch's can)."""
    out = a.diagonal(offset, d1, d2)
    if not getattr(out.flags, "writeable", True) and a.flags.writeable:  # (cupy: always)
        out.flags.writeable = True
    return out


def diagonal(x, offset=0, dim1=0, dim2=1):
    """The elements x[i, i + offset] of the matrices spanned by dim1 and dim2."""
    n = x.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view(DiagonalBackward0, x, _diagonal_array(x._data, offset, d1, d2),
                 lambda a: _diagonal_array(a, offset, d1, d2), offset=offset, dim1=d1,
                 dim2=d2, self_sym_sizes=x._data.shape)


def diag(x, diagonal=0):
    """1-d input: the square matrix with x on its ``diagonal``; 2-d: that diagonal."""
    if x.ndim == 2:
        from .shape import clone
        return clone(globals()["diagonal"](x, diagonal))
    if x.ndim != 1:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{x.ndim}D")
    return record(DiagEmbedBackward0, _embed_array(x._data, diagonal), (x,), offset=diagonal)


def _embed_array(v, offset):
    xp = backend.xp_of(v)
    n = v.shape[-1] + abs(offset)
    out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
    _diagonal_array(out, offset, -2, -1)[...] = v
    return out


def trace(x):
    """The sum of the main diagonal of a matrix."""
    a = x._data
    if a.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if x.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + f"{x.ndim}")
    out = a.trace(dtype="int64" if a.dtype.kind in "iu" else None)  # (integers: int64)
    return record(TraceBackward0, out, (x,), self_sym_sizes=a.shape)


def _triangle(kind):
    def fn(x, diagonal=0):
        if x.ndim < 2:
            raise RuntimeError(f"{kind}: input tensor must have at least 2 dimensions")
        a = x._data
        xp = backend.xp_of(a)
        out = (xp.tril if kind == "tril" else xp.triu)(a, diagonal)
        node = TrilBackward0 if kind == "tril" else TriuBackward0
        return record(node, out, (x,), diagonal=diagonal)
    fn.__name__ = kind
    side = "lower" if kind == "tril" else "upper"
    fn.__doc__ = f"The {side} triangle (from ``diagonal`` on); 0 elsewhere."
    return fn


tril, triu = _triangle("tril"), _triangle("triu")


# ------------------------------------------------- words of the formulas ---
def diagonal_backward(g, sizes, offset, dim1, dim2):
    """g written onto the (offset) diagonal of zeros shaped like the input; on
    Tensors a recorded step, whose own gradient is the diagonal again."""
    ga = _raw(g)
    out = backend.xp_of(ga).zeros(tuple(sizes), dtype=ga.dtype)
    _diagonal_array(out, offset, dim1, dim2)[...] = ga
    if _is_tensor(g):
        return record(DiagonalBackwardBackward0, out, (g,), offset=offset, dim1=dim1,
                      dim2=dim2)
    return out


def diagonal_of(g, offset, dim1=-2, dim2=-1):
    """The (offset) diagonal of g: the backward of ``diag`` (of a vector) and of
    ``diagonal_backward``."""
    if _is_tensor(g):
        return diagonal(g, offset, dim1, dim2)
    return _diagonal_array(g, offset, dim1, dim2).copy()


def triangle(g, kind, diagonal):
    """g with the ``kind`` ("tril" or "triu") triangle kept: the backward of both."""
    if _is_tensor(g):
        return g.tril(diagonal) if kind == "tril" else g.triu(diagonal)
    xp = backend.xp_of(g)
    return (xp.tril if kind == "tril" else xp.triu)(g, diagonal)


ENV.update({"diagonal_backward": diagonal_backward, "diagonal_of": diagonal_of,
            "triangle": triangle})

# Backward formulas: g is the gradient of the output; one formula per input.
DiagonalBackward0 = rule("DiagonalBackward0", "offset dim1 dim2 self_sym_sizes",
                         self="diagonal_backward(g, self_sym_sizes, offset, dim1, dim2)")
DiagonalBackwardBackward0 = rule("DiagonalBackwardBackward0", "offset dim1 dim2",
                                 grad_output="diagonal_of(g, offset, dim1, dim2)")
TraceBackward0 = rule("TraceBackward0", "self_sym_sizes",
                      self="trace_backward(g, self_sym_sizes)")
DiagEmbedBackward0 = rule("DiagEmbedBackward0", "offset", self="diagonal_of(g, offset)")
TrilBackward0 = rule("TrilBackward0", "diagonal", self="triangle(g, 'tril', diagonal)")
TriuBackward0 = rule("TriuBackward0", "diagonal", self="triangle(g, 'triu', diagonal)")
