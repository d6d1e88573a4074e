"""Tensor: an array plus what autograd needs to know about it.

* ``data``          the numbers (a numpy or cupy array), shared with views;
* ``requires_grad`` whether gradients should flow back to this tensor;
* ``grad_fn``       the node that made it (None for a *leaf*, made by the user);
* ``grad``          for leaves, the sum of the gradients that reached it;
* ``_version``      bumped by every in-place change, shared with views, so the
                    engine can tell when a value it saved has since changed.

Operations (``+``, ``exp``, ``sum``...) are attached by :mod:`autograd_kit.ops`;
this module holds only the tensor's own state and bookkeeping.
"""
from __future__ import annotations

import threading
import warnings
import weakref

from . import backend, errors
from .formatting import tensor_repr
from .grad_mode import _state
from .handle import RemovableHandle
from .reentrant import _MAX_NESTED, NESTED, _nesting, on_fresh_thread  # noqa: F401
from .tensor_array import TensorArray
from .type_names import (_TYPE_NAMES, scalar_type_name, type_description,  # noqa: F401
                         type_name)
from .versions import DetachedVersion, InferenceVersion, VersionCounter, finish_pending

# Two services of the layers above, which plug them in when they are imported
# (a tensor knows nothing of graphs and engines; ``import autograd_kit`` loads
# them all before any tensor is made):
refresh_view = None  # graph.refresh_view: a view's history after its base changed in place
run_backward = None  # engine.backward: what ``Tensor.backward`` runs


def plug_in(name: str, service) -> None:
    """Fill one of the slots above (``graph.py`` and ``engine.py`` call this as
    they are imported)."""
    if name not in ("refresh_view", "run_backward"):
        raise ValueError(f"no slot {name!r} in tensor.py")
    globals()[name] = service


class Size(tuple):
    """A shape, printed as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item  # x.size()[1:] is a Size

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class Tensor(TensorArray):
    """A multi-dimensional array that can record the operations applied to it."""

    __slots__ = ("_data", "_rg", "_grad_fn", "_grad", "_vcounter", "_base", "_acc", "_hooks",
                 "_view", "__weakref__", "__dict__")
    # _base: for a view, the tensor whose memory it shares (the first one that
    # was no view); _view, set with it: (how to take this view of any array of
    # the base's shape, the version when the view's history was last set)
    __array_priority__ = 1000  # numpy scalars defer to our operators
    __array_ufunc__ = None

    # -- construction -------------------------------------------------------
    def __init__(self, *args, requires_grad: bool = False, dtype=None, device=None):
        """Legacy constructor: ``Tensor([1, 2])`` (data, float) or ``Tensor(2, 3)`` and
        ``Tensor(x.size())`` (that shape; PyTorch leaves it uninitialised, here it is 0)."""
        dt = dtype or backend.get_default_dtype()
        dev = backend.device(device or "cpu")
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        elif not args:
            args = (0,)  # ``Tensor()``: empty
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, (float, complex, bool)):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
            data = data._data if isinstance(data, Tensor) and dtype is None else \
                backend.make_array(data, dt, dev)
        else:
            data = backend.xp_for(dev).zeros(tuple(args), dtype=backend.np_dtype(dt))
        self._init(data, False, None)
        if requires_grad:
            self.requires_grad = True

    def _init(self, data, rg: bool, grad_fn) -> None:
        self._data, self._rg, self._grad_fn = data, rg, grad_fn
        self._grad = self._base = self._acc = self._hooks = self._vcounter = None
        if _state.inference:  # (``Tensor(...)`` in inference mode: an inference tensor)
            self._vcounter = InferenceVersion()

    @staticmethod
    def _make(data, rg: bool = False, grad_fn=None) -> "Tensor":
        """The fast internal constructor used by every operation."""
        if data.__class__ not in _ARRAY_TYPES:
            data = backend.as_array(data)
        t = _new(Tensor)
        t._data, t._rg, t._grad_fn = data, rg, grad_fn
        t._grad = t._base = t._acc = t._hooks = t._vcounter = None
        return t

    @property
    def _vc(self) -> VersionCounter:
        """The version counter, made on first use (most tensors never need one)."""
        vc = self._vcounter
        if vc is None:
            vc = self._vcounter = VersionCounter()
        return vc

    @_vc.setter
    def _vc(self, counter: VersionCounter) -> None:
        self._vcounter = counter

    def is_inference(self) -> bool:
        """True for a tensor made in inference mode (or a view of one)."""
        vc = self._vcounter
        if vc is None and self is _state.pending:
            finish_pending()
            vc = self._vcounter
        return vc.__class__ is InferenceVersion

    def _is_view(self) -> bool:
        """True when this tensor shares the memory of another (its ``_base``)."""
        return self._base is not None

    # -- autograd state -------------------------------------------------------
    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf).

        A view whose base was changed in place since the view was made gets a
        fresh node, ``AsStridedBackward0``: it is now a window onto the new base."""
        if self._base is not None:
            refresh_view(self)
        fn = self._grad_fn
        if fn is not None and fn._output_edge:  # one output of several: show the node
            return fn._next[0]
        return fn

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 unless that node has
        several outputs, as ``unbind`` or a Function returning a tuple)."""
        fn = self._grad_fn
        return fn.output_nr if fn is not None and fn._output_edge else 0

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        """A new history (an in-place change): ``retain_grad`` moves along, so the
        retained gradient stays that of the tensor's newest value, as in PyTorch."""
        old = self._grad_fn
        if old is not None and old._extra is not None and node is not None:
            ref = old._retain
            if ref is not None and ref() is self:
                old._retain = None
                node._retain = ref
        self._grad_fn = node

    @property
    def requires_grad(self) -> bool:
        if self._base is not None:
            refresh_view(self)
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError(errors.NON_LEAF_REQUIRES_GRAD_SHORT if flag
                               else errors.NON_LEAF_REQUIRES_GRAD)
        if flag and self._data.dtype.kind not in "fc":
            raise RuntimeError(errors.INT_REQUIRES_GRAD_ATTR)
        if flag and not _state.inference and self.is_inference():
            raise RuntimeError(errors.INFERENCE_REQUIRES_GRAD)
        if not flag:
            self._let_go_of_grad()
        self._rg = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place (on a non-leaf, only ``True`` is allowed: it
        already requires grad)."""
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(errors.NON_LEAF_REQUIRES_GRAD)
        if requires_grad and self._data.dtype.kind != "f":
            raise RuntimeError(errors.INT_REQUIRES_GRAD_METHOD)
        if requires_grad and not _state.inference and self.is_inference():
            raise RuntimeError(errors.INFERENCE_REQUIRES_GRAD)
        if not requires_grad:
            self._let_go_of_grad()
        self._rg = bool(requires_grad)
        return self

    def _let_go_of_grad(self) -> None:
        """A leaf stops requiring grad: a graph already built still reaches its
        AccumulateGrad node, which must then leave ``.grad`` alone (as PyTorch's
        does).  Any hooks dict, even empty, makes the engine run that node."""
        if self._rg and self._acc is not None and self._hooks is None:
            self._hooks = {}

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user (or that don't require grad)."""
        return self.grad_fn is None

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self.retains_grad:
            warnings.warn(errors.NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        """PyTorch's checks, in its order: a Tensor (or None), not the tensor
        itself, of the tensor's dtype, then of its size."""
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(errors.GRAD_TYPE.format(got=errors.type_path(value)))
            if value is self:
                raise RuntimeError(errors.GRAD_IS_SELF)
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(errors.GRAD_DTYPE.format(
                    got=errors.cpp_type_name(value._data.dtype),
                    want=scalar_type_name(self._data.dtype)))
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(errors.GRAD_SIZE.format(got=list(value.shape),
                                                           want=list(self.shape)))
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        if self.grad_fn is None:  # (also brings a view's history up to date)
            return False
        fn = self._grad_fn  # (for one output of several: its own edge)
        return fn._retain is not None and fn._retain() is self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor too (normally only leaves get one)."""
        if not self._rg:
            raise RuntimeError(errors.RETAIN_GRAD_NO_GRAD)
        if self.grad_fn is not None:
            self._grad_fn._retain = weakref.ref(self)  # (for one output of several: its own)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed.

        The hook may return a new gradient to use instead. Returns a handle whose
        ``remove()`` unregisters it."""
        if not self._rg:
            raise RuntimeError(errors.HOOK_NO_GRAD)
        if self.grad_fn is not None:  # (one output of several: its own edge's hook)
            return self._grad_fn._add_pre_hook(0, hook)
        if self._hooks is None:
            self._hooks = {}
        key = object()
        self._hooks[key] = hook
        return RemovableHandle(self._hooks, key)

    _post_acc_hooks = None  # {key: hook}, in the instance's __dict__ once one is registered
    _creation = None  # how a view was made, when that restricts changing it in place
    #                   (graph.make_view, check_view_inplace): in the instance's __dict__

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after a backward pass has added this leaf's
        gradient into ``.grad`` (all paths summed).  The hook must return None;
        it is the place to update the parameter at once (an optimizer step per
        tensor).  Not run by ``autograd.grad``, which fills no ``.grad``."""
        if not self._rg:
            raise RuntimeError(errors.HOOK_NO_GRAD)
        if self.grad_fn is not None:
            raise RuntimeError(errors.POST_ACC_NON_LEAF)
        hooks = self._post_acc_hooks
        if hooks is None:
            hooks = self._post_acc_hooks = {}
        if self._hooks is None:
            self._hooks = {}  # (a leaf with hooks of any kind: its AccumulateGrad node runs)
        key = object()
        hooks[key] = hook
        return RemovableHandle(hooks, key)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor with respect to the graph's leaves."""
        backward = run_backward
        try:
            if inputs is not None:
                check_backward_inputs(inputs)
            if _nesting.depth >= _MAX_NESTED:
                return on_fresh_thread(backward, self, gradient, retain_graph, create_graph,
                                       inputs=inputs)
            with NESTED:  # (no frame of its own: warnings still point at the caller)
                backward(self, gradient, retain_graph, create_graph, inputs=inputs)
        except Exception as err:
            raise errors.short(err)  # the traceback ends here, as PyTorch's does

    def detach(self) -> "Tensor":
        """The same memory and version counter, cut off from the graph."""
        t = Tensor._make(self._data)
        t._vc = self._vc
        return t

    def detach_(self) -> "Tensor":
        """Cut this tensor off from the graph, in place.  Refused for a view (its
        base's history would still reach it).  A node that saved this tensor
        before can no longer trust it: using it raises PyTorch's error, which
        the counter swap below makes possible without slowing down backward."""
        if self._base is not None:
            raise RuntimeError(errors.DETACH_VIEW_INPLACE)
        if self._grad_fn is not None:
            vc = self._vcounter
            if vc.__class__ is not DetachedVersion:
                self._vcounter = DetachedVersion(0 if vc is None else vc.value)
        else:
            self._let_go_of_grad()  # a leaf: its AccumulateGrad node must see it let go
        self._grad_fn, self._rg = None, False
        return self

    @property
    def data(self) -> "Tensor":
        """The same memory with no graph and its *own* version counter:
        changes made through ``.data`` are invisible to autograd."""
        t = Tensor._make(self._data)
        if self._vcounter.__class__ is InferenceVersion:  # (an inference tensor's stays one)
            t._vcounter = InferenceVersion()
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data

    @property
    def _version(self) -> int:
        vc = self._vcounter
        if vc is None:
            if self is not _state.pending:
                return 0
            finish_pending()
            vc = self._vcounter
        if vc.__class__ is not VersionCounter:
            if vc.__class__ is InferenceVersion:
                raise RuntimeError(errors.INFERENCE_VERSION)
            return int(vc.value)
        return vc.value

    # -- shape, type, device ------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        self._check_dim(dim)
        return self._data.shape[dim]

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __reduce_ex__(self, protocol):
        return (_rebuild, (backend.to_host(self._data), self._rg, str(self.device)))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = type(self).__new__(type(self))
        t._init(self._data.copy(), self._rg, None)
        if self._grad is not None:
            t._grad = Tensor._make(self._grad._data.copy())
        memo[id(self)] = t
        return t


_object_new = _new = object.__new__
_ARRAY_TYPES = backend.ARRAY_TYPES


def check_backward_inputs(inputs) -> None:
    """``backward(inputs=...)``: PyTorch refuses an empty list, and a tensor that
    does not require grad (its gradient would be kept as by ``retain_grad``)."""
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif len(inputs) == 0:
        raise RuntimeError(errors.BACKWARD_INPUTS_EMPTY.format(fn="backward"))
    for t in inputs:
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError(errors.RETAIN_GRAD_NO_GRAD)


# -- inference tensors -----------------------------------------------------------
# A tensor made in inference mode gets an InferenceVersion counter.  Tensors are
# made by ``Tensor._make``, which must stay as fast as it is; so while some thread
# is in inference mode (and only then) ``_make``'s ``_new`` and the ``_vc``
# property are swapped for versions that notice.  ``_make`` sets the counter
# slot to None after ``_new`` returns, so the new tensor cannot be marked at
# once: it is remembered as *pending* (per thread) and given its counter when the
# next tensor is made, when it is asked about, or when inference mode ends.  A
# view made meanwhile takes its base's counter instead, as it should.

_inference_lock = threading.Lock()
_inference_users = 0  # inference_mode blocks open, over all threads


def _new_noticing(cls):
    t = _object_new(cls)
    st = _state
    if st.inference:
        finish_pending()
        st.pending = t
    return t


def _vc_noticing(self) -> VersionCounter:
    vc = self._vcounter
    if vc is None:
        if self is _state.pending:
            finish_pending()
            return self._vcounter
        vc = self._vcounter = VersionCounter()
    return vc


_PLAIN_VC = Tensor._vc
_NOTICING_VC = property(_vc_noticing, _PLAIN_VC.fset, doc=_PLAIN_VC.__doc__)


def inference_started() -> None:
    global _new, _inference_users
    with _inference_lock:
        _inference_users += 1
        if _inference_users == 1:
            _new = _new_noticing
            Tensor._vc = _NOTICING_VC


def inference_ended() -> None:
    global _new, _inference_users
    with _inference_lock:
        _inference_users -= 1
        if _inference_users == 0:
            _new = _object_new
            Tensor._vc = _PLAIN_VC


def _rebuild(data, rg, device="cpu"):
    """Unpickling: the values come back to the device they were saved from."""
    t = Tensor._make(backend.move(data, backend.device(device)))
    t._rg = rg
    return t
