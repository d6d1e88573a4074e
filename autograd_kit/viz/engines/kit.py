"""autograd_kit's backward pass, pulled one node at a time from the engine.

Nothing here computes a gradient: every step comes from the engine's own
``backward_steps()`` generator, the one ``backward()`` exhausts.

* ``total`` comes from a counting pass with ``retain_graph=True`` whose effects
  are then undone; it also records each node's local derivatives;
* going back is "restore, then replay": a :class:`GraphSnapshot` taken at the
  start puts grads and saved tensors back exactly, and the deterministic engine
  runs forward again to the wanted step;
* a ``.grad`` the user holds is never written into (the engine adds into
  ``.grad`` in place when it can): every pass works on copies, and ``restore()``
  puts the user's own objects back.
"""
from __future__ import annotations

from autograd_kit.engine import backward_steps
from autograd_kit.errors import NoGradFnError
from autograd_kit.grad_mode import no_grad
from autograd_kit.ops.creation import ones_like
from autograd_kit.snapshot import GraphSnapshot
from autograd_kit.tensor import Tensor

from .base import BackwardPass


MAX_EDGES = 64  # local factors are worked out for nodes with at most this many inputs


def local_factors(step) -> tuple | None:
    """The node's formulas applied to a gradient of ones: one tensor per edge.

    Called while the node's saved tensors still exist (during the counting pass).
    Only formula-table nodes are asked; custom Functions and AccumulateGrad (which
    would change ``.grad``) are not."""
    node = step.node
    if not getattr(node, "formula_text", None) or len(step.grads_out) > MAX_EDGES:
        return None  # a node with thousands of inputs (cat): its panel lists a few edges
    try:
        with no_grad():
            return tuple(node.apply(ones_like(step.grad_in)))
    except Exception:  # a formula that needs more than ones: show the sum only
        return None


class KitPass(BackwardPass):
    """autograd_kit's engine, driven step by step (see the module docstring)."""

    engine = "autograd_kit"
    who = "The engine"
    about = "autograd_kit's engine, run live one node at a time"

    def __init__(self, root, gradient=None, retain_graph: bool = False,
                 tensors=()) -> None:
        # (``tensors`` is not needed: a node knows the tensor that retains its grad)
        self.root, self.gradient, self.retain_graph = root, gradient, bool(retain_graph)
        self._locals: dict[int, tuple | None] = {}
        self._snapshot = None
        if root.grad_fn is None and not root.requires_grad:  # in no graph at all
            self.stopper = NoGradFnError(0)
            return
        self._snapshot = GraphSnapshot(root)
        # the user's own .grad objects (leaves, retained tensors), put back by restore()
        self._held = [(t, t._grad) for t, _ in self._snapshot.grads + self._snapshot.retained]
        self.total, self.stopper = self._count()

    def _lend(self) -> None:
        """Before a pass: every ``.grad`` it may add into becomes a copy."""
        for t, grad in self._held:
            t._grad = None if grad is None else Tensor._make(grad._data.copy())

    def _count(self):
        self._lend()
        return self._dry_run(backward_steps(self.root, self.gradient, retain_graph=True),
                             self._remember_locals)

    def _remember_locals(self, step) -> None:
        self._locals[step.index] = local_factors(step)

    def steps(self):
        """A fresh engine pass (a generator: ``close()`` stops it)."""
        self._lend()
        return backward_steps(self.root, self.gradient, retain_graph=self.retain_graph)

    def restore(self) -> None:
        """Saved tensors and every ``.grad`` as they were, the user's own objects."""
        if self._snapshot is not None:
            self._snapshot.restore()
            for t, grad in self._held:
                t._grad = grad

    def local(self, step) -> tuple | None:
        return self._locals.get(step.index)

    def again(self) -> None:
        for _ in backward_steps(self.root, self.gradient, retain_graph=self.retain_graph):
            pass
