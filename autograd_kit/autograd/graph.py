"""``autograd.graph``: the node class, and hooks on what nodes save.

``Node`` is the class of every grad_fn (for isinstance checks).

``saved_tensors_hooks(pack_hook, unpack_hook)``: while the ``with`` block
runs, every tensor an operation saves for backward is handed to
``pack_hook``, and the node keeps only what it returns; when backward (or
``grad_fn._saved_self``) needs the tensor, ``unpack_hook`` turns that back
into a tensor.  It is the hook PyTorch offers to move saved activations to the
CPU or to disk, or to compress them -- and a way to watch what each node saves::

    with saved_tensors_hooks(lambda t: print("saved", t.shape) or t, lambda t: t):
        y = x.exp() * x

``save_on_cpu()`` packs each saved tensor as a CPU copy and unpacks it back to
its device: on a CPU-only machine it changes nothing.
"""
from __future__ import annotations

from ..graph import SAVED_TENSORS_HOOKS, AccumulateGrad, Node, SavedTensor

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks"]

_disabled: list = []  # messages of active ``disable_saved_tensors_hooks`` blocks


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: pack/unpack every tensor saved for backward inside it."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        SAVED_TENSORS_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        SAVED_TENSORS_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Keep saved tensors in CPU memory; move each back to its device for backward."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801
    """Inside, using ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        if SAVED_TENSORS_HOOKS:
            raise RuntimeError(self.error_message)
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc) -> None:
        _disabled.pop()
