"""In-place operations: ``x.add_(1)``, ``x += 1``, ``x[0] = y``, ``x.zero_()``...

An in-place op overwrites memory other parts of the graph may depend on, so:

1. **Check first, then change.**  A leaf that requires grad (or a view of one)
   may not be modified while grad mode is on: recording the change would give
   the leaf a ``grad_fn`` (step 4), so it would stop being a leaf and lose its
   ``AccumulateGrad`` node, the one that fills ``.grad``.  Shape and dtype are
   checked too.  A failed operation leaves the tensor, its version and its
   graph as they were.
2. **Compute out of place, then write back.**  The new value is computed by the
   ordinary op on an alias holding the *old* value, so the node it records
   keeps what it needs; the result is then copied into the tensor's memory.
3. **Bump the version counter.**  Every saved tensor that shares this memory
   now knows it is stale; backward through it raises PyTorch's
   "modified by an inplace operation" error.
4. **Rebase the graph.**  The tensor's ``grad_fn`` becomes the new node.  For a
   view, its base gets a ``CopySlices`` node: the base's gradient passes
   through unchanged outside the view, and through the op inside it.
"""
from __future__ import annotations

from .. import backend, errors
from ..graph import AsStridedBackward0, Node, edge
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor, scalar_type_name
from ._rules import ORIGINAL, as_tensor_pair, check_broadcast, record, rule
from .inplace_check import _check, _check_writeable  # noqa: F401


def inplace(t, compute, *args):
    """Run ``compute(old_value, *args)`` and store the result into ``t``."""
    try:
        _check(t, args)
        recording = is_grad_enabled() and (t._rg or any(
            isinstance(a, Tensor) and a._rg for a in args)) and t._data.dtype.kind in "fc"
        # (an integer or bool tensor cannot require grad: a value written into it
        # from a tensor that does is cut off from the graph, as in PyTorch)
        if recording:
            old = Tensor._make(t._data.copy(), t._rg, t._grad_fn)  # (_check refreshed it)
            outer = ORIGINAL.old, ORIGINAL.clone
            ORIGINAL.old, ORIGINAL.clone = old, None  # (saved as self: a clone of it)
            try:
                new = compute(old, *args)
            finally:
                ORIGINAL.old, ORIGINAL.clone = outer
        else:
            with no_grad():
                new = compute(t, *args)
        nd, td = new._data, t._data
        if nd.shape != td.shape:
            raise RuntimeError(errors.INPLACE_SHAPE.format(out=list(td.shape),
                                                           bshape=list(nd.shape)))
        if nd.dtype != td.dtype and not _castable(nd.dtype, td.dtype):
            raise RuntimeError(errors.INPLACE_CAST.format(src=scalar_type_name(nd.dtype),
                                                          dst=scalar_type_name(td.dtype)))
        # -- commit: nothing below can fail ----------------------------------
        td[...] = nd
        t._vc.value += 1
        if recording and new.grad_fn is not None:
            if t._base is None:
                t.grad_fn, t._rg = new.grad_fn, True
            else:
                _rebase_view(t, new.grad_fn)
        return t
    except Exception as err:
        raise errors.short(err)  # (copy_, fill_... reach it through one call)


def _castable(src, dst) -> bool:
    order = "biufc"
    return order.index(src.kind if src.kind != "u" else "i") <= order.index(
        dst.kind if dst.kind != "u" else "i")


def _rebase_view(view, fn_node) -> None:
    base, view_fn = view._base, view._view[0]
    cs = CopySlices(edge(base), view_fn, fn_node, base._data.shape)
    base.grad_fn, base._rg = cs, True  # (the setter: retain_grad moves along)
    view.grad_fn, view._rg = AsStridedBackward0((cs, 0), view_fn, base._data.shape), True
    view._view = (view_fn, view._vcounter.value)


class CopySlices(Node):
    """The base of a view that was modified in place.

    Outside the view the base's gradient flows on unchanged (to the base's old
    history); inside the view it goes through the in-place op's own node
    (``fn``), whose first input is the view's old value."""

    __slots__ = ("view_fn", "fn", "size", "released")

    def __init__(self, base_edge, view_fn, fn, size):
        super().__init__((base_edge,) + fn.next_functions[1:])
        self.view_fn, self.fn, self.size = view_fn, fn, size
        self.released = False  # after a backward without retain_graph, as in PyTorch

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, g, needed=None):
        from .indexing import gather_view, scatter_view
        if self.released:  # (PyTorch lets go of the in-place op's node itself)
            raise errors.GraphFreedError(self)
        inside = gather_view(g, self.view_fn)            # the gradient of the new view
        grads = self.fn.apply(inside)                     # through the in-place op
        base = g - scatter_view(inside, self.size, self.view_fn)  # outside the view: as is
        if grads[0] is not None:                          # inside: the old view's share
            base = base + scatter_view(grads[0], self.size, self.view_fn)
        return (base,) + tuple(grads[1:])

    def release_saved(self):
        self.released = True
        return self.fn.release_saved()

    def snapshot_saved(self):
        return {"fn": self.fn.snapshot_saved(), "released": self.released}

    def restore_saved(self, snapshot):
        self.fn.restore_saved(snapshot["fn"])
        self.released = snapshot["released"]

    def saved_names(self):
        return self.fn.saved_names()


# ------------------------------------------------------ the in-place ops ---
def copy(old, src, *, into_view=False):
    """Out-of-place ``copy_``: src broadcast to old's shape and cast to its dtype.

    Leading dimensions of size 1 in ``src`` are dropped first (``s[1] = t`` with
    ``t`` of shape [1] works, as in PyTorch)."""
    if not isinstance(src, Tensor):
        src = Tensor._make(backend.scalar_array(src, old._data))
    xp = backend.xp_of(old._data)
    data = src._data if backend.device_of(src._data) == backend.device_of(old._data) else \
        backend.move(src._data, backend.device_of(old._data))
    while into_view and data.ndim > old._data.ndim and data.shape[0] == 1:
        data = data[0]
    try:
        out = xp.broadcast_to(data, old._data.shape).astype(old._data.dtype, copy=True)
    except ValueError:
        _copy_shape_error(old._data.shape, data.shape, into_view, data)
    return record(CopyBackwards, out, (old, src))


def _copy_shape_error(target, shape, into_view, data=None):
    if not into_view:
        check_broadcast(Tensor._make(backend.np.empty(target)),
                        Tensor._make(backend.np.empty(shape)))
        raise RuntimeError(errors.INPLACE_SHAPE.format(  # src has more dimensions
            out=list(target), bshape=list(backend.broadcast_shapes(target, shape))))
    if len(shape) > len(target):  # (after leading 1s are dropped, as PyTorch drops them)
        from ..tensor import type_name
        raise RuntimeError(
            f"expand({type_name(data)}{{{list(shape)}}}, size={list(target)}): the number of "
            f"sizes provided ({len(target)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        t, s = (target[lead + i] if lead + i >= 0 else None), shape[i]
        if s != 1 and s != t:
            raise RuntimeError(errors.EXPAND_SIZE.format(
                target=t, existing=s, dim=i, tsizes=list(target), sizes=list(shape)))
    raise RuntimeError(errors.EXPAND_SIZE.format(target=target, existing=shape, dim=0,
                                                 tsizes=list(target), sizes=list(shape)))


def fill(old, value):
    """Out-of-place ``fill_``: every element becomes ``value`` (a number or a 0-d
    tensor, which then receives the sum of the gradient)."""
    full = backend.full_like
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return record(FillBackward3, full(old._data, _cast_value(value.item(), old)),
                      (old, value))
    return record(FillBackward2, full(old._data, _cast_value(value, old)), (old,))


def _cast_value(value, old):
    """A number cast to the tensor's dtype as a cast does (-3 in uint8 is 253)."""
    if old._data.dtype.kind in "iub" and isinstance(value, (int, float)):
        return backend.np.asarray(value).astype(old._data.dtype)
    return value


def zero(old):
    return record(ZeroBackward0, backend.xp_of(old._data).zeros_like(old._data), (old,))


def setitem(t, key, value):
    """``t[key] = value``: a copy into a view for basic keys (CopySlices), an
    index_put for integer-array or mask keys (IndexPutBackward0)."""
    from .indexing import (_as_index, _is_basic, as_key, basic_views, check_index_put, getitem,
                           index_put, split_key)
    k = tuple(_as_index(i) for i in as_key(key))
    if value.__class__ in (int, float, bool):  # PyTorch's conversion, and its refusal of
        from .shape import fill_value  # a number the dtype cannot hold, before any write
        try:
            value = fill_value(value, t._data.dtype)
        except RuntimeError as err:
            raise errors.short(err)
        # a number becomes a 0-d tensor of t's type on the CPU, as in PyTorch
        value = Tensor._make(backend.np.asarray(value).astype(t._data.dtype))
    try:
        flag = _bool_key(key)
        if flag is not None and isinstance(key, Tensor) and isinstance(value, Tensor):
            # (a mask tensor: an index put, with its checks)
            check_index_put(t._data, value._data, (int(flag), *t.shape))
        if flag is not None:  # ``t[True] = v``: a view with a new dimension of size 1
            if flag is False and not isinstance(key, Tensor):  # (or 0): PyTorch writes
                return t  # through it (CopySlices); a Python False writes nothing at all
            inplace(getitem(t.unsqueeze(0), slice(0, int(flag))),  # (a copy_, even of
                    lambda old, v: copy(old, v, into_view=True), value)  # a 0-d value)
            return t
        if all(_is_basic(i) for i in k):
            view = basic_views(t, k)
            if view is t:  # the whole tensor: written directly, no view
                return inplace(t, _copy_to, value)
            inplace(view, _copy_to, value)
            return t
        xp = backend.xp_of(t._data)
        if any(i.__class__ is t._data.__class__ and xp.may_share_memory(i, t._data) for i in k):
            raise RuntimeError(errors.INDEX_OVERLAP)  # (an index that is part of t)
        basic, rest = split_key(k)
        view = t if basic is None else basic_views(t, basic)
        if view is not t:  # PyTorch: the views first, then an index put into them
            inplace(view, lambda old, v: index_put(old, rest, v), value)
            return t
        _check(t)
        return inplace(t, lambda old, v: index_put(old, k, v), value)
    except Exception as err:
        raise errors.short(err)  # the learner's line, then this call: no more


def _copy_to(old, value):
    """How PyTorch writes a value into what the key selected: a value of the
    same shape is copied (CopyBackwards); a 0-d value on the CPU -- a number is
    one -- fills a larger selection (FillBackward3); any other value is copied,
    broadcast to the selection's shape."""
    if value.ndim == 0 and old.ndim != 0 and not value.is_cuda:
        return fill(old, value)
    return copy(old, value, into_view=True)


def _bool_key(key):
    """True or False for a key that is one boolean (a Python bool or a 0-d bool
    tensor), else None."""
    if key.__class__ is bool:
        return key
    if isinstance(key, Tensor) and key.ndim == 0 and key._data.dtype.kind == "b":
        return bool(key._data)
    return None


CopyBackwards = rule("CopyBackwards", "", self="zeros_like(g)", src="g")
CopyBackwards.name = lambda self: "torch::autograd::CopyBackwards"  # PyTorch's spelling
FillBackward2 = rule("FillBackward2", "", self="zeros_like(g)")
FillBackward3 = rule("FillBackward3", "", self="zeros_like(g)", value="sum(g)")
ZeroBackward0 = rule("ZeroBackward0", "", self="zeros_like(g)")


def make_inplace(fn, ufunc=None):
    """``x.op_(...)`` from the out-of-place ``op(x, ...)``.

    With ``ufunc`` (the name of the array module's add, subtract...), an update
    that nothing records -- an optimizer step under ``no_grad`` -- writes straight
    into the tensor's memory; anything unusual takes the general path, which also
    raises the errors."""
    np_ufunc = getattr(backend.np, ufunc) if ufunc is not None else None

    def method(self, *args, **kwargs):
        if ufunc is not None and _direct(self, ufunc, np_ufunc, args, kwargs):
            return self
        try:
            return inplace(self, lambda old, *a: fn(old, *a, **kwargs), *args)
        except Exception as err:
            raise errors.short(err)  # the learner's line, then this call: no more
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of ``{fn.__name__}``: changes this tensor's memory."
    return method


def _direct(t, ufunc, np_ufunc, args, kwargs) -> bool:
    """Try ``xp.<ufunc>(t, other * alpha, out=t)``; False when the general path is needed."""
    if len(args) != 1 or set(kwargs) - {"alpha"}:
        return False
    other, alpha = args[0], kwargs.get("alpha", 1)
    recording = is_grad_enabled() and (t._rg or (isinstance(other, Tensor) and other._rg)
                                       or t._base is not None)  # (a view: _check decides)
    if recording or t._data.dtype.kind != "f":
        return False
    if isinstance(other, Tensor):
        # only an operand of the tensor's own dtype: another dtype would be computed
        # in the wider one and rounded twice (PyTorch converts it first), and a bool
        # operand has refusals of its own (sub_)
        if other._data.__class__ is not t._data.__class__ or \
                other._data.dtype != t._data.dtype:
            return False
        other = other._data
    elif other.__class__ not in (int, float):  # (a bool is neither: it takes the long way)
        return False
    if alpha != 1:
        other = other * alpha
    try:
        a = t._data
        if a.__class__ is backend.ndarray:  # the CPU: numpy's ufunc, looked up once
            np_ufunc(a, other, out=a)
        elif backend.overlaps_itself(a):  # (cupy writes into a broadcast: refuse it)
            return False
        else:
            getattr(backend.xp_of(a), ufunc)(a, other, out=a)
    except (ValueError, TypeError, OverflowError):  # shapes, types, a number too big for
        return False                                 # the dtype: the general path explains
    t._vc.value += 1
    return True


def random_fill(t, sample):
    """``uniform_``/``normal_``: overwrite with random numbers (no gradient)."""
    _check(t)
    t._data[...] = sample(t._data.shape).astype(t._data.dtype, copy=False)
    t._vc.value += 1
    return t


__all__ = ["inplace", "copy", "fill", "setitem", "make_inplace", "random_fill",
           "CopySlices", "as_tensor_pair"]
