"""A tensor and a number, as PyTorch's backward formulas combine them.

In Python, ``t * 2`` turns the 2 into a 0-d tensor: PyTorch records
MulBackward0, whose second edge is empty (``(None, 0)``).  PyTorch's backward
formulas are C++, and there a number is a ``Scalar``: ``2 * result`` calls
another overload of the op, ``mul.Scalar``, recorded as MulBackward1 with one
edge.  The graph of a gradient made with ``create_graph=True`` is made of
these, so the formulas of our tables name them::

    mul_scalar(x, c)    x * c    MulBackward1   (saves the number as ``other``)
    div_scalar(x, c)    x / c    DivBackward1
    add_scalar(x, c)    x + c    AddBackward1
    sub_scalar(x, c)    x - c    SubBackward1
    rsub_scalar(x, c)   c - x    RsubBackward1

Each word takes either kind, as every word of a formula does: on plain arrays
(an ordinary backward) it is the arithmetic itself, nothing recorded.
"""
from __future__ import annotations

from ..tensor import Tensor
from ._rules import record, rule
from .formula_env import ENV


def _same_type(x, out):
    """PyTorch keeps a float tensor's type when a number joins it (numpy might
    promote a float32 array with a float64 number)."""
    d = x._data
    if getattr(out, "dtype", d.dtype) != d.dtype and d.dtype.kind in "fc":
        out = out.astype(d.dtype)
    return out


def _is_tensor(x) -> bool:
    return x.__class__ is Tensor or isinstance(x, Tensor)


def mul_scalar(x, c):
    if not _is_tensor(x):
        return x * c
    return record(MulBackward1, _same_type(x, x._data * c), (x,), other=c)


def div_scalar(x, c):
    if not _is_tensor(x):
        return x / c
    from .arith import DivBackward1
    return record(DivBackward1, _same_type(x, x._data / c), (x,), other=c)


def add_scalar(x, c):
    if not _is_tensor(x):
        return x + c
    return record(AddBackward1, _same_type(x, x._data + c), (x,))


def sub_scalar(x, c):
    if not _is_tensor(x):
        return x - c
    return record(SubBackward1, _same_type(x, x._data - c), (x,))


def rsub_scalar(x, c):
    if not _is_tensor(x):
        return c - x
    from .arith import RsubBackward1
    return record(RsubBackward1, _same_type(x, c - x._data), (x,), alpha=1)


ENV.update({f.__name__: f for f in (mul_scalar, div_scalar, add_scalar, sub_scalar,
                                    rsub_scalar)})


# Backward formulas (DivBackward1 and RsubBackward1 are arith.py's: x / 4 and
# 2 - x make them in forward code too).
MulBackward1 = rule("MulBackward1", "other", self="mul_scalar(g, other)")
AddBackward1 = rule("AddBackward1", "", self="g")
SubBackward1 = rule("SubBackward1", "", self="g")
