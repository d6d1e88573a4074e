"""``autograd_kit.utils``: ``utils.data`` (datasets and mini-batches)."""
from . import data

__all__ = ["data"]
