"""``autograd.graph.Node``: the class of every grad_fn (for isinstance checks)."""
from ..graph import AccumulateGrad, Node, SavedTensor

__all__ = ["Node", "AccumulateGrad", "SavedTensor"]
