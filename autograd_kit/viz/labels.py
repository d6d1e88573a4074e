"""The text inside each box of the picture.

Labels are built as lists of lines of plain text; escaping for DOT happens
later, in :mod:`autograd_kit.viz.dot`.  Numbers are short (4 significant
digits) and big tensors are summarised, so a label stays a few lines long.
The words in a label ("constant", "(freed)", "min … mean … max") are in the
kit's current language (:mod:`autograd_kit.i18n`); names, numbers and code are
not translated:

>>> number(2.0, floating=True), number(0.123456, floating=True), number(3, floating=False)
('2.', '0.1235', '3')
>>> shape_text((2, 3)), shape_text(()), shape_text((5,))
('(2, 3)', '()', '(5)')
"""
from __future__ import annotations

import unicodedata

from ..i18n import N_, _, ngettext
from . import access

SMALL = 6  # tensors with at most this many elements show every value

#: why a saved value can't be shown (:class:`~autograd_kit.viz.access.Unavailable`'s
#: reasons), as a label says it
REASONS = {"freed": N_("(freed)"), "modified": N_("(modified)"),
           "unavailable": N_("(unavailable)")}


def reason_text(marker: access.Unavailable) -> str:
    """``"(freed)"``, in the current language."""
    word = REASONS.get(marker.reason)
    return _(word) if word else f"({marker.reason})"


def width(text: str) -> int:
    """Columns ``text`` takes in a monospaced font: Chinese characters take two.

    >>> width("grad"), width("保存的张量")
    (4, 10)
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


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
            n = int(arr.size)
            return ngettext("{n} complex value", "{n} complex values", n).format(n=n), False
        lo, mean, hi = arr.min().item(), float(arr.mean()), arr.max().item()
    except Exception:
        return "?", True
    return _("min {min}  mean {mean}  max {max}").format(
        min=number(lo, floating), mean=number(mean, True), max=number(hi, floating)), False


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


def scalar_text(v) -> str:
    """One number of a micrograd Value, as :func:`number` writes it (``2.``,
    ``-0.7616``, ``3``); anything else a learner stored there as text."""
    if isinstance(v, (bool, int, float, complex)):
        return number(v, isinstance(v, (float, complex)))
    item = getattr(v, "item", None)  # a numpy scalar
    try:
        return scalar_text(item()) if callable(item) else str(v)
    except Exception:
        return str(v)


def value_name(v, names: dict | None = None) -> str:
    """What a sentence calls a micrograd Value: its variable name (``names``:
    ``{id(value): name}``), else its own ``label``, else ``Value(data=2.)``."""
    return ((names or {}).get(id(v)) or access.value_label(v)
            or f"Value(data={scalar_text(getattr(v, 'data', '?'))})")


def value_lines(v, name: str, show_grads: bool) -> list[str]:
    """The box of a micrograd Value: its operation (none for a leaf), then its
    name and number (``x1 · 2.``; a Value is one number, shown as a tensor box
    shows its shape), and with ``show_grads`` its ``.grad`` as tensor boxes show
    theirs (``grad -1.5``)."""
    op = access.value_op(v)
    data = scalar_text(getattr(v, "data", "?"))
    lines = [op] if op else []
    lines.append(f"{name} · {data}" if name else data)
    if show_grads:
        lines.append(f"grad {scalar_text(getattr(v, 'grad', None))}")
    return lines


def saved_lines(t, names: list[str], var_name: str, show_values: bool) -> list[str]:
    """A saved-tensor box: which saved slots hold it (``self``, ``other``...), its
    variable name when known, shape and values.  An :class:`access.Unavailable`
    ``t`` is one that can't be read any more: the box says why (``"(freed)"``)."""
    head = ", ".join(names) + (f" ({var_name})" if var_name else "")
    if isinstance(t, access.Unavailable):
        return [head, reason_text(t)]
    return tensor_lines(t, head, show_values, show_grads=False)


def constant_lines(value, name: str = "") -> list[str]:
    """A constant's box (forward view): its value, short.

    ``["3"]`` for the number 3, ``["c · [5., 6.]"]`` for a small tensor named
    ``c``, name (or "constant"), shape and summary for a big one, and
    ``["constant"]`` when the value was not kept (``value`` is not a number or a
    tensor); "constant" is in the current language."""
    if isinstance(value, (bool, int, float, complex)):
        return [number(value, isinstance(value, (float, complex)))]
    if not access.is_tensor(value):
        return [name or _("constant")]
    text, small = values_text(access.host_array(value))
    if small:
        return [f"{name} · {text}" if name else text]
    return [name or _("constant"), shape_text(access.shape_of(value)), text]


def _attr_text(value) -> str:
    if isinstance(value, access.Unavailable):
        return reason_text(value)
    if access.is_tensor(value):
        return _("[saved tensor]")
    if isinstance(value, (tuple, list)) and any(access.is_tensor(v) for v in value):
        return _("[saved tensors]")
    return str(value)


def _cut(text: str, columns: int) -> str:
    """``text`` in at most ``columns`` columns, ending in "..." when cut."""
    if width(text) <= columns:
        return text
    kept = ""
    for c in text:
        if width(kept + c) > columns - 3:
            break
        kept += c
    return kept + "..."


def _pad(text: str, columns: int) -> str:
    return text + " " * (columns - width(text))


def op_lines(fn, title: str, show_attrs: bool, max_attr_chars: int) -> list[str]:
    """An op box: its name and, with ``show_attrs``, torchviz's table of what it
    saved (``dim: 0``, ``self: [saved tensor]``), values cut to ``max_attr_chars``."""
    if not show_attrs:
        return [title]
    attrs = {n: _attr_text(access.saved_value(fn, n)) for n in access.saved_names(fn)}
    if not attrs:
        return [title]
    key_w = max(width(k) for k in attrs)
    val_w = min(max(width(v) for v in attrs.values()), max(max_attr_chars, 3))
    rows = [f"{_pad(k, key_w)}: {_pad(_cut(v, val_w), val_w)}" for k, v in attrs.items()]
    return [title, "-" * max(key_w + val_w + 2, width(title)), *rows]
