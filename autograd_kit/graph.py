"""The backward graph: nodes (``grad_fn``), edges, saved tensors.

PyTorch's public shape is kept so that every tutorial and torchviz-style drawing
carries over:

* a node is a ``grad_fn`` such as ``MulBackward0``; ``node.name()`` gives that name;
* ``node.next_functions`` is a tuple of ``(node or None, input_nr)`` pairs, one per
  input of the forward operation: the edges along which gradients flow;
* a leaf that requires grad is reached through an ``AccumulateGrad`` node whose
  ``.variable`` is the leaf tensor;
* values the forward pass kept for the backward pass are readable as
  ``node._saved_self``, ``node._saved_other``, ``node._saved_result``...

Ownership runs one way, from later to earlier: a tensor holds its ``grad_fn``, a
node holds its ``next_functions`` and the tensors it saved.  Nothing points
forward, so there are no reference cycles and intermediates are freed by plain
reference counting.  (A leaf holds its ``AccumulateGrad`` only weakly.)
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref

from . import errors
from .accumulate import accumulate
from .grad_mode import _anomaly
from .handle import RemovableHandle
from .tensor import plug_in
from .saved import SAVED_TENSORS_HOOKS, SavedTensor, _freed  # noqa: F401

_next_seq = itertools.count().__next__
LEAF_SEQ = 2 ** 62  # every AccumulateGrad: above every op node (ties: the engine decides)
_STRIP = re.compile(r"Backward\d*$")


def _extra_field(key):
    """A node attribute stored in the node's ``_extra`` dict (None when unset)."""
    def get(node):
        extra = node._extra
        return None if extra is None else extra.get(key)

    def set_(node, value):
        if node._extra is None:
            node._extra = {}
        node._extra[key] = value
    return property(get, set_)


class Node:
    """A step of the backward pass: turns the gradient of an output into gradients
    of the inputs, by the chain rule ``dL/dinput = dL/doutput * doutput/dinput``."""

    __slots__ = ("_next", "_seq", "_extra", "_saved", "_holds_tensors", "__weakref__")
    _output_edge = False  # True for the hidden edge into one output (multi_output.py)
    _frees: tuple = ()    # saved values that are no tensors but are freed too (indices)
    # True where ``apply_array`` only reads the gradient it is given and hands
    # none of it to user code (the formula tables); False where a custom
    # backward or other code may write into it (see ``engine._unborrow``)
    _formulas_only = False

    def __init__(self, next_functions=()):
        self._next = tuple([fn for fn, _ in next_functions])  # one node (or None) per input
        self._seq = _next_seq()
        self._extra = None  # hooks, retain_grad, metadata: see the properties below
        self._saved = {}
        self._holds_tensors = True  # may _saved hold SavedTensors? (False: nothing to free)
        if _anomaly.enabled:  # debugging: remember the forward line that made the node
            from .autograd.anomaly import remember_forward
            remember_forward(self)

    # Rarely used, so kept together in one dict made on first use (most nodes
    # never have any, and the engine asks ``node._extra is None`` just once):
    _pre_hooks = _extra_field("pre_hooks")    # {output_nr: [hook, ...]} (register_hook)
    _post_hooks = _extra_field("post_hooks")  # [hook(grad_inputs, grad_outputs)]
    _retain = _extra_field("retain")          # weakref to the non-leaf that retains grad
    _metadata = _extra_field("metadata")

    # -- PyTorch's public face ---------------------------------------------
    @property
    def next_functions(self) -> tuple:
        """``((node or None, input_nr), ...)``, one pair per input: where each
        input's gradient goes.  (``input_nr`` is 0 except into a node with
        several outputs, see ``multi_output.py``; the engine walks ``_next``,
        the nodes alone.)"""
        return tuple([(fn, 0) if fn is None or not fn._output_edge else
                      (fn._next[0], fn.output_nr) for fn in self._next])

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __getattr__(self, attr):
        # ``_raw_saved_self``: the SavedTensor object itself (``register_hooks``)
        if attr.startswith("_raw_saved_"):
            saved = object.__getattribute__(self, "_saved")
            key = attr[11:]
            if key in saved and key[:1] != "_":
                value = saved[key]
                if value.__class__ is SavedTensor:
                    return value
                if key in self._frees and value.__class__ in _NUMBERS:
                    value = self._number_as_tensor(value)
                return SavedTensor.holding(value)
        # ``_saved_self`` and friends: unpack what forward saved, version-checked.
        if attr.startswith("_saved_"):
            key = attr[7:]
            saved = object.__getattribute__(self, "_saved")
            if key in saved and key[:1] != "_":  # (a key "_x": the formulas' own, see __dir__)
                value = saved[key]
                if not isinstance(value, SavedTensor):
                    if key in self._frees and value.__class__ in _NUMBERS:
                        return self._number_as_tensor(value)
                    return value
                try:
                    return value.unpack(self, key)
                except RuntimeError as err:
                    raise errors.short(err)  # the learner's line, then this one: no more
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def _number_as_tensor(self, value):
        """A number PyTorch saves as a 0-d tensor (the 2 of ``x * 2``): read as
        ``tensor(2)`` (64-bit, as PyTorch wraps Python numbers), and freed by a
        backward without ``retain_graph`` like any saved tensor."""
        if self._holds_tensors == NUMBER_FREED:
            raise errors.short(errors.GraphFreedError(self))
        from . import backend
        from .tensor import Tensor
        return Tensor._make(backend.make_array(value, getattr(backend, _NUMBERS[value.__class__])))

    def __dir__(self):
        # A saved key that starts with "_" is kept for the formulas only, not
        # shown: what PyTorch keeps in a node's metadata (an input's shape),
        # not as a saved value.
        shown = [k for k in self._saved if k[:1] != "_"]
        return sorted(set(super().__dir__()) | {"_saved_" + k for k in shown}
                      | {"_raw_saved_" + k for k in shown})

    @property
    def metadata(self) -> dict:
        """A dict for your own notes on this node (as in PyTorch); made on first use."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def saved_names(self) -> list[str]:
        """Names of the values kept for backward (``self``, ``other``, ``result``...)."""
        return list(self._saved)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its gradients."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return replacement gradients."""
        return self._add_pre_hook(-1, fn)

    def _add_pre_hook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def __call__(self, *grads):
        """``node(g)``: the input gradients for output gradient ``g``, as PyTorch's
        nodes answer when called (recorded when grad mode is on)."""
        if len(grads) != 1:
            raise TypeError(f"expected 1 arguments, got {len(grads)} instead")
        n = len(self._next)
        out = (None,) * n if grads[0] is None else self.apply(grads[0])
        return out[0] if n == 1 else out  # (one input: the gradient alone, as PyTorch)

    # -- what the engine calls ---------------------------------------------
    def apply(self, grad, needed=None):
        """Gradients for each entry of ``next_functions`` (None where not needed).

        ``needed``, when given, is the set of nodes that must receive a gradient;
        edges to other nodes may be skipped (``autograd.grad`` prunes this way)."""
        raise NotImplementedError

    def apply_array(self, grad, needed=None, borrowed=None):
        """``apply`` for an ordinary backward, where gradients travel as plain
        arrays.  Nodes with formula tables run their formulas on the arrays;
        the others (custom Functions, ``CopySlices``...) get a Tensor, as here."""
        from .tensor import Tensor
        grads = self.apply(Tensor._make(grad), needed)
        return tuple(None if gi is None else gi._data for gi in grads)

    def release_saved(self) -> list[str]:
        """Drop the saved tensors (after a backward without ``retain_graph``).

        Returns the names that were released, for the step-by-step display."""
        released = []
        saved = self._saved
        if self._holds_tensors is not True:  # numbers only (HOLDS_NUMBER): from now on,
            self._holds_tensors = True      # unpack, and find them freed below
        for key, value in saved.items():
            if value.__class__ is SavedTensor and not value.freed:
                value.release()
                released.append(key)
        for key in self._frees:  # index arrays: PyTorch keeps them as tensors, and frees them
            if key in saved and saved[key].__class__ is not SavedTensor:
                saved[key] = _freed()
                released.append(key)
        return released

    def restore_saved(self, snapshot) -> None:
        """Undo ``release_saved`` from a ``snapshot_saved()`` (for replaying steps)."""
        for key, state in snapshot.items():
            if key in self._frees and state[0] == "value":
                self._saved[key] = state[1]
            else:
                self._saved[key].restore(state)

    def snapshot_saved(self) -> dict:
        snap = {k: v.state() for k, v in self._saved.items() if isinstance(v, SavedTensor)}
        for key in self._frees:
            value = self._saved.get(key)
            if key in self._saved and value.__class__ is not SavedTensor:
                snap[key] = ("value", value)
        return snap


#: ``Node._holds_tensors`` beyond True/False, for a node whose only saved values are
#: numbers that PyTorch keeps as tensors (``x * 2``): the plain backward marks it
#: NUMBER_FREED instead of calling ``release_saved`` (one store, no loop), and
#: ``apply_array`` then answers as for any freed tensor.
HOLDS_NUMBER, NUMBER_FREED = 2, 3

#: A saved Python number reads back as a 0-d tensor of this dtype (PyTorch's wrapped numbers).
_NUMBERS = {int: "int64", float: "float64", bool: "bool", complex: "complex128"}


def raise_freed(node):
    """The "backward through the graph a second time" error, for ``node``."""
    raise errors.GraphFreedError(node)


class AccumulateGrad(Node):
    """The node that ends every path at a leaf: it adds the gradient into ``.grad``.

    ``x.grad`` is the *sum* of every gradient that reached ``x``, over every
    path and every call to ``backward()`` -- which is why training loops zero it.
    """

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._seq = LEAF_SEQ  # runs as soon as it is ready, as in PyTorch
        self._holds_tensors = False   # it saves nothing

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def run_hooks(self, grad):
        """The leaf's own hooks (``x.register_hook``), which may replace the gradient."""
        for hook in list((self.variable._hooks or {}).values()):
            new = hook(grad)
            if new is not None:
                grad = hook_result(hook, grad, new)
        return grad

    def apply(self, grad, needed=None):
        """The leaf's tensor hooks, the addition into ``.grad``, then the leaf's
        post-accumulate-grad hooks (``register_post_accumulate_grad_hook``)."""
        v = self.variable
        if v._hooks is None:  # no hooks of any kind (the leaf keeps a dict once it has some)
            accumulate(v, grad)
        else:
            self.accumulate(self.run_hooks(grad))
        return ()

    def accumulate(self, grad) -> None:
        """Add ``grad`` (its tensor hooks already run) into ``.grad``, then call the
        post-accumulate-grad hooks with the leaf.  A leaf that no longer requires
        grad (``requires_grad_(False)``, ``detach_()`` since the graph was built)
        is left alone, as in PyTorch."""
        v = self.variable
        if not v._rg:
            return
        accumulate(v, grad)
        hooks = v._post_acc_hooks
        if hooks:
            for hook in list(hooks.values()):
                if hook(v) is not None:
                    raise RuntimeError(errors.POST_ACC_RETURNED)


def hook_result(hook, grad, new):
    """``new``, the gradient a tensor hook returned in place of ``grad``, if it has
    ``grad``'s shape and type; else PyTorch's error naming the hook.  The nodes
    below expect exactly the gradient they would have got: a hook may change the
    numbers, never the size or the type."""
    if new.shape != grad.shape or new.dtype != grad.dtype:
        from .tensor import type_name
        name = getattr(hook, "__name__", type(hook).__name__)
        if new.shape != grad.shape:
            raise RuntimeError(errors.HOOK_CHANGED_SIZE.format(name=name))
        raise RuntimeError(errors.HOOK_CHANGED_TYPE.format(
            name=name, was=type_name(grad._data), got=type_name(new._data)))
    return new


class AsStridedBackward0(Node):
    """The grad_fn of a view whose base was changed in place: the view is now a
    window onto the (new) base, so its gradient is placed into a zero tensor of
    the base's shape, at the view's position."""

    __slots__ = ()

    def __init__(self, base_edge, view_fn, size):
        super().__init__((base_edge,))
        self._saved = {"view_fn": view_fn, "size": size}

    def apply(self, g, needed=None):
        return (scatter_view(g, self._saved["size"], self._saved["view_fn"]),)


# The recorded op AsStridedBackward0 runs (``g`` written into zeros where the view
# looks): an operation, a layer above the graph; ``ops.indexing`` puts it here.
scatter_view = None


def refresh_view(view) -> None:
    """Bring a view's ``grad_fn`` up to date after its base changed in place.

    A view records its base's version when its history was last set; if the
    shared version counter has moved since, the base was modified (through
    itself or another view), so the view's old history is stale: it becomes
    ``AsStridedBackward0`` of the base's current history."""
    view_fn, version = view._view
    current = view._vcounter.value
    if current == version:
        return
    base = view._base
    if base.grad_fn is not None or base._rg:
        view.grad_fn = AsStridedBackward0(edge(base), view_fn, base._data.shape)  # (retain_grad
        view._rg = True                                                          # moves along)
    view._view = (view_fn, current)


def grad_accumulator(tensor) -> AccumulateGrad:
    """The (cached, weakly held) AccumulateGrad node of a leaf tensor."""
    ref = tensor._acc
    node = ref() if ref is not None else None
    if node is None:
        with _ACC_LOCK:  # two threads must not make two nodes for one leaf
            ref = tensor._acc
            node = ref() if ref is not None else None
            if node is None:
                node = AccumulateGrad(tensor)
                tensor._acc = weakref.ref(node)
    return node


_ACC_LOCK = threading.Lock()


def next_node(tensor):
    """The node through which a gradient reaches ``tensor``: its ``grad_fn``,
    its ``AccumulateGrad`` if it is a leaf that requires grad, else None."""
    if tensor._base is not None:
        refresh_view(tensor)
    fn = tensor._grad_fn
    if fn is not None:
        return fn
    if tensor.requires_grad:
        if tensor._base is not None and tensor.__dict__.get("_no_grad_view"):
            return None  # (PyTorch: a view made where nothing records has no accumulator)
        return grad_accumulator(tensor)
    return None


def edge(tensor):
    """The ``(node, input_nr)`` pair through which a gradient reaches ``tensor``."""
    return (next_node(tensor), 0)


plug_in("refresh_view", refresh_view)  # (the tensor calls it for a view)
