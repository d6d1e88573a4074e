"""Saved tensors: what forward keeps for backward, with the version it had then.

A node keeps its inputs (or its output) as ``SavedTensor`` objects.  Reading one
back (``unpack``) compares the tensor's version counter with the version saved:
a tensor changed in place since would give a wrong gradient, so PyTorch's
"modified by an inplace operation" error is raised instead.  A backward
without ``retain_graph`` releases them; reading a released one raises the
"backward through the graph a second time" error.
"""
from __future__ import annotations

import re

from . import errors
from .tensor import Tensor, type_description
from .versions import DetachedVersion, InferenceVersion

_STRIP = re.compile(r"Backward\d*$")


class SavedTensor:
    """A tensor kept by forward for backward, with the version it had then.

    Every in-place operation bumps a tensor's version counter (shared by its
    views).  Unpacking compares versions: if the tensor changed since it was
    saved, the gradient would be computed from the wrong numbers, so PyTorch's
    "modified by an inplace operation" error is raised instead.
    """

    __slots__ = ("tensor", "data", "counter", "version", "freed", "hooked")

    def __init__(self, tensor, is_output: bool = False):
        self.freed = False
        self.hooked = None
        if SAVED_TENSORS_HOOKS:  # ``autograd.graph.saved_tensors_hooks`` is active
            self._pack(tensor, is_output)
        elif is_output:  # keep the data only: the node itself is this tensor's grad_fn
            self.tensor, self.data = None, tensor._data
            self.counter = tensor._vc
            self.version = self.counter.value
        else:  # keep the tensor; its version is read through it (0 until changed)
            self.tensor, self.data, self.counter = tensor, None, None
            vc = tensor._vcounter
            if vc is None:
                self.version = 0
            elif vc.__class__ is not InferenceVersion:
                self.version = vc.value
            else:  # it has no version to check against: PyTorch refuses to save it
                self.tensor = None
                raise RuntimeError(errors.INFERENCE_SAVED)

    @classmethod
    def holding(cls, value) -> "SavedTensor":
        """A SavedTensor for a value a node keeps otherwise (a number, or None)."""
        saved = cls.__new__(cls)
        saved.freed, saved.hooked, saved.data = False, None, None
        saved.tensor, saved.counter, saved.version = value, None, 0
        return saved

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """``grad_fn._raw_saved_self.register_hooks(pack, unpack)``: from now on
        this saved tensor is kept as ``pack(tensor)`` and read back through
        ``unpack`` -- ``saved_tensors_hooks`` for one saved tensor."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): both hooks must be callable")
        if self.freed:
            raise RuntimeError(errors.HOOKS_AFTER_FREE)
        if self.hooked is not None:
            raise RuntimeError(errors.HOOKS_ALREADY_SET)
        if self.tensor is not None or self.data is None:
            value, is_output = self.tensor, False
        else:  # an output kept as its data: packed as a tensor of those values
                value, is_output = Tensor._make(self.data), True
        self.hooked = (unpack_hook, pack_hook(value), is_output)
        self.tensor = self.data = None
        self.counter, self.version = _NEVER, -1

    def __repr__(self) -> str:
        return f"<autograd_kit.autograd.graph.SavedTensor object at {hex(id(self))}>"

    def _pack(self, tensor, is_output: bool) -> None:
        """Keep only what the pack hook returns; the unpack hook gives the tensor back
        (PyTorch checks no version then: the hooks own the value)."""
        pack, unpack = SAVED_TENSORS_HOOKS[-1]
        active = SAVED_TENSORS_HOOKS[:]
        SAVED_TENSORS_HOOKS.clear()  # what the hook itself computes is saved plainly
        try:
            self.hooked = (unpack, pack(tensor), is_output)
        finally:
            SAVED_TENSORS_HOOKS[:] = active
        self.tensor = self.data = None
        self.counter, self.version = _NEVER, -1  # the fast paths never match: unpack()

    def _unhook(self, node):
        unpack, packed, is_output = self.hooked
        t = unpack(packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        return Tensor._make(t._data, True, node) if is_output else t

    def unpack(self, node, name: str = "self"):
        if self.freed:
            raise errors.GraphFreedError(node)
        if self.hooked is not None:
            return self._unhook(node)
        t = self.tensor
        if t is not None:
            if t._vcounter is not None and t._vcounter.value != self.version:
                if t._vcounter.__class__ is DetachedVersion and self.version.__class__ is int:
                    raise RuntimeError(errors.DETACHED_SAVED)
                err = errors.ModifiedSavedTensorError(
                    node, name, type_description(t._data), _producer(t),
                    t._vcounter.value, self.version)
                err.tensor = t
                raise err
            return t
        if self.counter.value != self.version:
            err = errors.ModifiedSavedTensorError(
                node, name, type_description(self.data), _STRIP.sub("", node.name()),
                self.counter.value, self.version)
            err.tensor = Tensor._make(self.data)  # the (changed) values, for pictures
            raise err
        return Tensor._make(self.data, True, node)

    def unpack_data(self, node, name: str = "self"):
        """``unpack``, giving the array: what formulas run on in a plain backward."""
        t = self.tensor
        if t is not None and not self.freed and (t._vcounter is None
                                                 or t._vcounter.value == self.version):
            return t._data
        if t is None and not self.freed and self.counter.value == self.version:
            return self.data
        return self.unpack(node, name)._data  # raises the right error

    def release(self) -> None:
        self.freed = True
        self.tensor = self.data = self.hooked = None

    def state(self):
        return (self.freed, self.tensor, self.data, self.hooked)

    def restore(self, state) -> None:
        self.freed, self.tensor, self.data, self.hooked = state


# (pack, unpack) pairs pushed by ``autograd.graph.saved_tensors_hooks``; the last applies.
SAVED_TENSORS_HOOKS: list = []


class _Unversioned:
    """The counter of a hooked saved tensor: it never matches, so reading one
    always goes through ``unpack`` and its hook."""
    value = -2


_NEVER = _Unversioned()


def _freed() -> SavedTensor:
    """What a freed saved value becomes: reading it raises the "backward through
    the graph a second time" error, as for any freed tensor."""
    placeholder = SavedTensor.__new__(SavedTensor)
    placeholder.tensor = placeholder.data = placeholder.counter = placeholder.hooked = None
    placeholder.version, placeholder.freed = 0, True
    return placeholder


def _producer(t) -> str | None:
    """The op that made ``t``, as PyTorch names it in the version error."""
    fn = t.grad_fn
    return _STRIP.sub("", fn.name()) if fn is not None else None
