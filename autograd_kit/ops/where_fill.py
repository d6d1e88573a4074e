"""Elementwise choice: ``where(condition, a, b)`` and ``x.masked_fill(mask, value)``.

Each element comes from one of two sources, so the gradient goes back to the
one it came from, and 0 to the other: ``where`` sends g to ``a`` where the
condition holds and to ``b`` elsewhere; ``masked_fill`` sends g to ``x`` where
the mask is False, and (when ``value`` is a tensor) the sum of the rest to it.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

from .. import backend
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor, scalar_type_name
from ._rules import as_tensor_pair, check_broadcast, record, rule


def where(condition, a=None, b=None):
    """Elementwise choice: a where condition holds, else b."""
    if a is None and b is None:
        c = condition._data
        xp = backend.xp_of(c)
        return tuple(Tensor._make(i.astype(backend.int64.np)) for i in
                     xp.nonzero(c if c.ndim else c.reshape(1)))
    a, b, da, db = as_tensor_pair(a, b)
    cond = condition._data if isinstance(condition, Tensor) else backend.as_array(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(cond.dtype)}")
    try:
        out = backend.xp_of(da).where(cond, da, db)
    except ValueError:
        check_broadcast(cond, da)  # (PyTorch checks the shapes in this order)
        check_broadcast(SimpleNamespace(shape=backend.broadcast_shapes(cond.shape, da.shape)),
                        db)
        raise
    return record(WhereBackward0, out, (a, b), condition=Tensor._make(cond))


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char"}


_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
            "int64": "int64_t", "float16": "c10::Half", "bool": "bool"}


def fill_value(value, dtype):
    """A Python number as an element of ``dtype`` (PyTorch's conversion: a float
    into an integer tensor is truncated, unless it does not fit)."""
    xp = backend.np
    if dtype.kind in "iu":
        info = xp.iinfo(dtype)
        v = value if isinstance(value, (int, bool)) else float(value)
        low = -info.max - 1 if dtype.kind == "u" and isinstance(v, int) else info.min  # (wraps)
        if isinstance(v, float) and not math.isfinite(v) or not low <= v <= info.max:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} "
                               "without overflow")
        return int(v) % (info.max + 1) if dtype.kind == "u" else int(v)
    if dtype.kind == "f" and isinstance(value, (int, float)) and math.isfinite(value) and \
            abs(value) > float(xp.finfo(dtype).max):
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES.get(dtype.name, 'float')}"
                           " without overflow")
    return value


def masked_fill(x, mask, value):
    """x with ``value`` where mask is True; the gradient passes where it is False.
    The result keeps x's dtype (the value is converted to it)."""
    dx = x._data
    m = mask._data if isinstance(mask, Tensor) else backend.as_array(mask)
    if m.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_NAMES.get(m.dtype.name, m.dtype.name)}")
    xp = backend.xp_of(dx)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        dv = value._data
        if dx.dtype.kind in "iubf" and dv.dtype.kind in "iubf":
            fill_value(dv.item(), dx.dtype)  # (refused if it does not fit, as in PyTorch)
        dv = dv.astype(dx.dtype)
    else:
        dv = xp.asarray(fill_value(value, dx.dtype)).astype(dx.dtype)
    try:
        out = xp.where(m, dv, dx)
    except ValueError:
        check_broadcast(m, dx)
        raise
    if isinstance(value, Tensor):
        if out.dtype.kind not in "fc" and value.requires_grad and is_grad_enabled():
            raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(out.dtype)}")
        return record(MaskedFillBackward1, out, (x, value), mask=Tensor._make(m))
    return record(MaskedFillBackward0, out, (x,), mask=Tensor._make(m))


# Backward formulas: g is the gradient of the output; one formula per input.
MaskedFillBackward0 = rule("MaskedFillBackward0", "mask", self="masked_fill(g, mask, 0)")
MaskedFillBackward1 = rule("MaskedFillBackward1", "mask",
                           self="masked_fill(g, mask, 0)", value="sum(masked_select_of(g, mask))")
WhereBackward0 = rule("WhereBackward0", "condition",
                      self="where(condition, g, 0.0)", other="where(condition, 0.0, g)")
