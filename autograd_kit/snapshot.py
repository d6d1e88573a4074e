"""GraphSnapshot: the state a backward pass changes, saved so it can be put back.

A step-by-step viewer goes back by restoring a snapshot and replaying steps
(the engine is deterministic), so the snapshot holds exactly what backward
changes: leaf gradients, retained gradients, and the saved tensors it frees.
"""
from __future__ import annotations

from .engine import _as_tuple, count_dependencies
from .graph import AccumulateGrad, next_node
from .tensor import Tensor


class GraphSnapshot:
    """The state backward changes (leaf grads, retained grads, saved tensors),
    captured so a replaying viewer can put it back exactly."""

    def __init__(self, roots) -> None:
        roots = [n for n in (next_node(t) for t in _as_tuple(roots)) if n is not None]
        nodes = set(roots) | set(count_dependencies(roots))
        nodes.discard(None)
        self.grads, self.saved, self.retained = [], [], []
        for n in nodes:
            if n.__class__ is AccumulateGrad:
                v = n.variable
                self.grads.append((v, None if v._grad is None else v._grad._data.copy()))
            self.saved.append((n, n.snapshot_saved()))
            if n._retain is not None and n._retain() is not None:
                t = n._retain()
                self.retained.append((t, None if t._grad is None else t._grad._data.copy()))

    def restore(self) -> None:
        for t, data in self.grads + self.retained:
            t._grad = None if data is None else Tensor._make(data.copy())
        for n, snap in self.saved:
            n.restore_saved(snap)
