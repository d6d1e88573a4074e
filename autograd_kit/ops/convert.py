"""Changing dtype or device: ``x.to(...)``, ``x.double()``, ``x.cuda()``.

The copy is differentiable: the gradient is sent back converted to the
input's dtype and device (``ToCopyBackward0``).
"""
from __future__ import annotations

from .. import backend, errors
from ..tensor import Tensor
from ._rules import record, rule


def parse_to_args(args, kwargs):
    """``(device or None, dtype or None)`` from ``to``'s flexible arguments."""
    dev, dt = kwargs.get("device"), kwargs.get("dtype")
    for a in args:
        if isinstance(a, backend.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, (str, backend.device)):
            dev = a
    return (backend.device(dev) if dev is not None else None), dt


def to(x, *args, **kwargs):
    """``to(device)``, ``to(dtype)``, ``to(other_tensor)`` or ``to(device, dtype)``."""
    try:
        dev, dt = parse_to_args(args, kwargs)
        a = x._data
        same_dev = dev is None or backend.same_place(dev, a)
        same_dt = dt is None or backend.np_dtype(dt) == a.dtype
        if same_dev and same_dt and not kwargs.get("copy", False):
            return x
        out = a if same_dev else backend.move(a, dev)
    except Exception as err:  # ("cuda" with no GPU): the learner's line, then this call
        raise errors.short(err)
    if not same_dt:
        out = out.astype(backend.np_dtype(dt))
        if out.dtype.kind not in "fc":  # integers and booleans have no gradient
            return Tensor._make(out)
    elif out is a:
        out = a.copy()
    return record(ToCopyBackward0, out, (x,), self_device=backend.device_of(a))


def to_device(g, dev):
    return to(g, dev)


def type_(x, dtype=None):
    if dtype is None:
        from ..tensor import _TYPE_NAMES
        return "torch." + _TYPE_NAMES[x.dtype.name]
    return to(x, dtype)


ToCopyBackward0 = rule("ToCopyBackward0", "self_device", self="to_device(g, self_device)")
