"""Printing tensors exactly as PyTorch prints them.

The rules, followed from PyTorch's own printer: one width for all elements;
floats whose values are all whole print as ``1.``; otherwise four decimals
(``1.0000``), or scientific notation (``1.0000e-05``) when the magnitudes span
more than three orders or leave the comfortable range; tensors with more than
1000 elements are summarised with ``...``; lines wrap at 80 characters.
"""
from __future__ import annotations

import math

from . import backend

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80


class _Formatter:
    """Decides the common style and width of all elements of one tensor."""

    def __init__(self, values: list, floating: bool) -> None:
        self.floating, self.int_mode, self.sci_mode, self.max_width = floating, True, False, 1
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(_plain(v)))
            return
        finite = [v for v in values if isinstance(v, float) and math.isfinite(v) and v != 0]
        if not finite:  # only zeros, infs and nans: PyTorch keeps the width at 1
            return
        absv = [abs(v) for v in finite]
        lo, hi = min(absv), max(absv)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        wide = hi / lo > 1000.0 or hi > 1.0e8
        self.sci_mode = wide if self.int_mode else (wide or lo < 1.0e-4)
        for v in finite:
            if self.sci_mode:
                s = f"{v:.{PRECISION}e}"
            elif self.int_mode:
                s = f"{v:.0f}."
            else:
                s = f"{v:.{PRECISION}f}"
            self.max_width = max(self.max_width, len(s))

    def format_bare(self, v) -> str:
        if not self.floating:
            return _plain(v)
        if isinstance(v, complex):
            return f"{v.real:.{PRECISION}f}{v.imag:+.{PRECISION}f}j"
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        return f"{v:.{PRECISION}f}"

    def format(self, v) -> str:
        s = self.format_bare(v)
        return " " * (self.max_width - len(s)) + s


def _plain(v) -> str:
    return "True" if v is True else "False" if v is False else str(v)


def _summary_values(a, summarize: bool) -> list:
    """The elements that will be printed (edges only when summarising)."""
    if a.ndim == 0:
        return [a.item()]
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = list(range(EDGEITEMS)) + list(range(a.shape[0] - EDGEITEMS, a.shape[0]))
    else:
        rows = range(a.shape[0])
    if a.ndim == 1:
        return [a[i].item() for i in rows]
    return [v for i in rows for v in _summary_values(a[i], summarize)]


def _vector(a, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.max_width + 2)))
    n = a.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    n = a.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        parts = ([_nested(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
                 + [_nested(a[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)])
    else:
        parts = [_nested(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def array_str(a, indent: int = 7) -> str:
    """The bracketed body of a tensor's repr, for a host (numpy) array."""
    if a.size == 0:
        return "[]"
    summarize = a.size > THRESHOLD
    floating = a.dtype.kind in "fc"
    fmt = _Formatter(_summary_values(a, summarize), floating)
    return _nested(a, indent, summarize, fmt)


def tensor_repr(t, prefix: str = "tensor(") -> str:
    """``tensor([1., 2.], requires_grad=True)`` and friends."""
    a = backend.to_host(t._data)
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    d = t.dtype
    default = d in (backend.get_default_dtype(), backend.int64, backend.bool) or (
        d is backend.complex64 and backend.get_default_dtype() is backend.float32)
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if d is not backend.get_default_dtype():
            suffixes.append(f"dtype={d!r}")
        body = "[]"
    else:
        if not default:
            suffixes.append(f"dtype={d!r}")
        body = array_str(a, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    out = [prefix + body]
    last = len(out[0]) - out[0].rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"
