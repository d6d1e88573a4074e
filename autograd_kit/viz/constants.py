"""The constants of an operation: inputs that need no gradient.

In ``y = x * 3`` only ``x`` has a path back to a leaf; the node records the
other input as ``None`` in its ``next_functions`` (PyTorch's way, copied by
autograd_kit), or not at all when the input was a plain Python number
(``x ** 2``, ``2 - x``).  The forward view draws these inputs as small value
boxes, so that ``Mul`` is seen with both of its operands.

The value is shown when the node kept it for the backward pass: ``x * 3``
needs ``3`` to compute ``x``'s gradient and saves it as ``other``; ``x ** 2``
saves ``exponent``.  Which saved slot holds which input follows PyTorch's
names (first input ``self``, second ``other``; see :data:`SLOTS`).  An input
the node did not keep (``x + 2`` needs no ``2`` for its gradient) is drawn as a
box reading "constant".
"""
from __future__ import annotations

from . import access

#: saved slots that may hold input ``k`` of a node, first match wins
SLOTS = {0: ("self", "input"), 1: ("other", "exponent", "tensor", "mat2", "vec")}

#: nodes made with a plain number that leaves no entry in ``next_functions``:
#: node name -> (position of the number among the inputs, slot holding it or None)
NUMBER_OPERAND = {
    "PowBackward0": (1, "exponent"),   # x ** 2
    "PowBackward2": (0, "self"),       # 2 ** x
    "RsubBackward1": (0, None),        # 2 - x
    "MulBackward1": (1, "other"),      # x * 3 (older PyTorch)
    "DivBackward1": (1, "other"),      # x / 4 (older PyTorch)
    "AddBackward1": (1, None),         # x + 2 (older PyTorch)
    "SubBackward1": (1, None),         # x - 2 (older PyTorch)
}


class Unknown:
    """A constant whose value the node did not keep (drawn as "constant")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "constant"


UNKNOWN = Unknown()


def _all_edges(fn) -> list:
    """``next_functions`` with the ``None`` entries kept."""
    try:
        return list(getattr(fn, "next_functions", ()))
    except Exception:
        return []


def _value(fn, slots) -> object:
    """The first readable saved value among ``slots``, else :data:`UNKNOWN`."""
    names = set(access.saved_names(fn))
    for slot in slots:
        if slot in names:
            value = access.saved_value(fn, slot)
            if value is not None and not isinstance(value, access.Unavailable):
                return value
    return UNKNOWN


def operands(fn) -> list[tuple[bool, object]]:
    """The inputs of ``fn`` in order: ``(True, (node, input_nr))`` for an input
    with a gradient path, ``(False, value)`` for a constant (:data:`UNKNOWN` when
    the node did not keep its value)."""
    result: list[tuple[bool, object]] = []
    for k, (node, nr) in enumerate(_all_edges(fn)):
        if node is not None:
            result.append((True, (node, nr)))
        else:
            result.append((False, _value(fn, SLOTS.get(k, ()))))
    extra = NUMBER_OPERAND.get(access.node_name(fn))
    if extra is not None:
        position, slot = extra
        value = _value(fn, (slot,)) if slot else UNKNOWN
        result.insert(min(position, len(result)), (False, value))
    return result
