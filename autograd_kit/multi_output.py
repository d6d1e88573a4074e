"""Nodes with several outputs: ``unbind``, ``split``, a custom Function that
returns a tuple.

In PyTorch such a node is *one* ``grad_fn`` shared by all its outputs
(``a, b = x.unbind()``: ``a.grad_fn is b.grad_fn``), each output knowing its
``output_nr``; its backward runs once, with one gradient per output -- the
outputs no gradient reached get zeros (or None) -- and a hook on such an
output is still called, with None.

Here every node has a single input gradient, so the gradient of output ``k``
travels through a small :class:`OutputEdge` first: the tensor's internal
``_grad_fn`` is that edge, whose ``apply`` puts the gradient into slot ``k`` of
an :class:`OutputGrads`; the slots arriving at the node add up slot by slot,
then the node runs once.  The edges are invisible from outside: ``grad_fn``
and ``next_functions`` show the node itself and ``(node, k)``, as PyTorch does,
and the step-by-step pass yields no step for them.
"""
from __future__ import annotations

import weakref

from .graph import Node


class OutputGrads:
    """The gradients that reached a node with several outputs: one slot per
    output, None where none arrived.  ``a + b`` adds slot by slot."""

    __slots__ = ("slots",)

    def __init__(self, slots) -> None:
        self.slots = slots

    @staticmethod
    def one(k: int, n: int, g) -> "OutputGrads":
        slots = [None] * n
        slots[k] = g
        return OutputGrads(slots)

    def __add__(self, other: "OutputGrads") -> "OutputGrads":
        return OutputGrads([b if a is None else a if b is None else a + b
                            for a, b in zip(self.slots, other.slots)])

    def map(self, fn) -> "OutputGrads":
        return OutputGrads([None if s is None else fn(s) for s in self.slots])


class OutputEdge(Node):
    """Where the gradient of output ``output_nr`` of ``node`` enters the graph
    (see the module docstring).  Tensor hooks and ``retain_grad`` of that output
    live here, so they see exactly that output's gradient."""

    __slots__ = ("output_nr", "n_outputs")
    _output_edge = True
    _formulas_only = True  # g goes on, untouched, to its node's slot

    def __init__(self, node, k: int, n: int) -> None:
        super().__init__(((node, 0),))
        self._seq = node._seq + (k + 1) / (n + 1)  # runs just before its node
        self.output_nr, self.n_outputs = k, n
        self._holds_tensors = False

    def name(self) -> str:
        return self._next[0].name()

    def apply(self, g, needed=None):
        return (OutputGrads.one(self.output_nr, self.n_outputs, g),)

    def apply_array(self, g, needed=None, borrowed=None):
        return (OutputGrads.one(self.output_nr, self.n_outputs, g),)


class MultiOutputNode(Node):
    """Base of nodes with several outputs.  ``_extra`` is never None, so the
    engine processes them with its full step (which sums slot by slot), not its
    shortcut for plain nodes."""

    __slots__ = ()

    def _init_outputs(self, n: int) -> list:
        """Make the ``n`` output edges; the node keeps them only weakly (they
        point at it: a strong reference back would make a cycle)."""
        edges = [OutputEdge(self, k, n) for k in range(n)]
        if self._extra is None:
            self._extra = {}
        self._extra["edges"] = [weakref.ref(e) for e in edges]
        return edges

    def hooks_without_gradient(self, slots) -> None:
        """PyTorch calls the tensor hooks of an output no gradient reached, with None."""
        for ref, g in zip(self._extra.get("edges", ()), slots):
            edge = ref() if g is None else None
            if edge is not None and edge._pre_hooks:
                for hook in list(edge._pre_hooks.get(0, ())):
                    hook(None)

    @property
    def n_outputs(self) -> int:
        return len(self._extra.get("edges", ()))


def public(fn):
    """``fn`` as the user sees it: an output edge shows its node."""
    return fn._next[0] if fn is not None and fn._output_edge else fn
