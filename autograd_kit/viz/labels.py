"""The text inside each box of the picture.

Labels are built as lists of lines of plain text; escaping for DOT happens
later, in :mod:`autograd_kit.viz.dot`.  Numbers are short (4 significant
digits) and big tensors are summarised, so a label stays a few lines long:

>>> number(2.0, floating=True), number(0.123456, floating=True), number(3, floating=False)
('2.', '0.1235', '3')
>>> shape_text((2, 3)), shape_text(()), shape_text((5,))
('(2, 3)', '()', '(5)')
"""
from __future__ import annotations

from . import access

SMALL = 6  # tensors with at most this many elements show every value


def number(v, floating: bool) -> str:
    """One number, PyTorch style: floats keep a trailing dot (``2.``)."""
    if isinstance(v, bool) or not floating:
        return str(v)
    if isinstance(v, complex):
        return f"{v:.4g}"
    text = f"{v:.4g}"
    return text + "." if text.lstrip("-").isdigit() else text


def shape_text(shape) -> str:
    """``(2, 3)``, as torchviz writes shapes."""
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _nested(values, floating: bool) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, floating) for v in values) + "]"
    return number(values, floating)


def values_text(arr) -> tuple[str, bool]:
    """``("[1., 2.]", True)`` for small arrays, ``("min .. mean .. max ..", False)``
    for big ones; the flag says whether every value is shown."""
    if arr is None:
        return "?", True
    kind = getattr(getattr(arr, "dtype", None), "kind", "f")
    floating = kind in "fc"
    try:
        if arr.size <= SMALL:
            return _nested(arr.tolist(), floating), True
        if kind == "c":
            return f"{arr.size} complex values", False
        lo, mean, hi = arr.min().item(), float(arr.mean()), arr.max().item()
    except Exception:
        return "?", True
    return (f"min {number(lo, floating)}  mean {number(mean, True)}  "
            f"max {number(hi, floating)}"), False


def tensor_lines(t, name: str, show_values: bool, show_grads: bool) -> list[str]:
    """The label of a tensor box: name (and values, if few), shape, more values, grad.

    ``["w1 · [2.]", "(1)"]`` for a named one-element leaf with ``show_values``;
    ``["w", "(2, 3)"]`` without, as torchviz draws parameters."""
    lines = []
    head, rest = name, None
    if show_values:
        text, small = values_text(access.host_array(t))
        if small:
            head = f"{name} · {text}" if name else text
        else:
            rest = text
    if head:
        lines.append(head)
    lines.append(shape_text(access.shape_of(t)))
    if rest:
        lines.append(rest)
    if show_grads:
        grad = access.grad_of(t)
        shown = "None" if grad is None else values_text(access.host_array(grad))[0]
        lines.append(f"grad {shown}")
    return lines


def saved_lines(t, names: list[str], var_name: str, show_values: bool) -> list[str]:
    """A saved-tensor box: which saved slots hold it (``self``, ``other``...), its
    variable name when known, shape and values.  ``t`` None means it was freed."""
    head = ", ".join(names) + (f" ({var_name})" if var_name else "")
    if isinstance(t, access.Unavailable):
        return [head, f"({t.reason})"]
    return tensor_lines(t, head, show_values, show_grads=False)


def constant_lines(value, name: str = "") -> list[str]:
    """A constant's box (forward view): its value, short.

    ``["3"]`` for the number 3, ``["c · [5., 6.]"]`` for a small tensor named
    ``c``, name (or "constant"), shape and summary for a big one, and
    ``["constant"]`` when the value was not kept (``value`` is not a number or a
    tensor)."""
    if isinstance(value, (bool, int, float, complex)):
        return [number(value, isinstance(value, (float, complex)))]
    if not access.is_tensor(value):
        return [name or "constant"]
    text, small = values_text(access.host_array(value))
    if small:
        return [f"{name} · {text}" if name else text]
    return [name or "constant", shape_text(access.shape_of(value)), text]


def _attr_text(value) -> str:
    if isinstance(value, access.Unavailable):
        return f"({value.reason})"
    if access.is_tensor(value):
        return "[saved tensor]"
    if isinstance(value, (tuple, list)) and any(access.is_tensor(v) for v in value):
        return "[saved tensors]"
    return str(value)


def op_lines(fn, title: str, show_attrs: bool, max_attr_chars: int) -> list[str]:
    """An op box: its name and, with ``show_attrs``, torchviz's table of what it
    saved (``dim: 0``, ``self: [saved tensor]``), values cut to ``max_attr_chars``."""
    if not show_attrs:
        return [title]
    attrs = {n: _attr_text(access.saved_value(fn, n)) for n in access.saved_names(fn)}
    if not attrs:
        return [title]
    width = max(max_attr_chars, 3)
    key_w = max(len(k) for k in attrs)
    val_w = min(max(len(v) for v in attrs.values()), width)

    def cut(text: str) -> str:
        return text[:val_w - 3] + "..." if len(text) > val_w else text

    rows = [f"{k:<{key_w}}: {cut(v):<{val_w}}" for k, v in attrs.items()]
    return [title, "-" * max(key_w + val_w + 2, len(title)), *rows]
