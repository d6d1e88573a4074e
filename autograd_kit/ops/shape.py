"""Shape operations, indexing and joining: reshape, transpose, x[i], cat, where...

These move numbers around without changing them, so their backward moves the
gradient back the same way: ``transpose`` transposes g, ``reshape`` reshapes it,
``x[i]`` puts g into a zero tensor at position i, ``cat`` cuts g into pieces.

Many of them return *views*: tensors sharing memory (and the version counter)
with their input.  A view remembers its base and how to take the same view of
any array (``_base = (base, view_fn)``), which in-place operations on views
need (see ``inplace.py``).
"""
from __future__ import annotations

import builtins
from types import SimpleNamespace

from ..grad_mode import is_grad_enabled
from ._rules import as_tensor_pair, check_broadcast, record, rule
from .. import backend
from ..tensor import Tensor, scalar_type_name
from .reduce import wrap_dim


def _view(node, x, out, view_fn, **saved):
    """Record a shape op; when its result shares memory with ``x``, make it a view."""
    t = record(node, out, (x,), **saved)
    if backend.xp_of(out).may_share_memory(out, x._data):
        t._vc = x._vc
        if x._base is None:
            t._base = (x, view_fn, t._vc.value)
        else:
            root, prev, _ = x._base
            t._base = (root, lambda a, prev=prev, fn=view_fn: fn(prev(a)), t._vc.value)
        if not is_grad_enabled():  # changing it in place with grad on is refused
            t.__dict__["_no_grad_view"] = True
    return t


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _check_new_shape(shape) -> None:
    """At most one -1 (the size to infer), and no other negative size."""
    inferred = False
    for i, s in enumerate(shape):
        if s == -1:
            if inferred:
                raise RuntimeError("only one dimension can be inferred")
            inferred = True
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")


def reshape(x, *shape):
    shape = _shape_arg(shape)
    if shape and min(shape) < 0:  # (-1: the size to infer)
        _check_new_shape(shape)
    try:
        out = x._data.reshape(shape)
    except ValueError:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                           f"{x._data.size}") from None
    if not backend.xp_of(out).may_share_memory(out, x._data):
        return record(UnsafeViewBackward0, out, (x,), self_sym_sizes=x._data.shape)
    return _view(ViewBackward0, x, out, lambda a, s=shape: a.reshape(s),
                 self_sym_sizes=x._data.shape)


def view(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], backend.dtype):
        raise RuntimeError("view(dtype) is not supported")
    out_shape = _shape_arg(shape)
    if not x._data.flags.c_contiguous and x._data.size > 1:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return reshape(x, *out_shape)


def flatten(x, start_dim=0, end_dim=-1):
    nd = x.ndim
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if nd == 0:
        return reshape(x, 1)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    shape = x.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(x, *(tuple(shape[:s]) + (n,) + tuple(shape[e + 1:])))


def transpose(x, dim0, dim1):
    d0, d1 = wrap_dim(dim0, x.ndim), wrap_dim(dim1, x.ndim)
    return _view(TransposeBackward0, x, x._data.swapaxes(d0, d1) if x.ndim > 1 else x._data,
                 lambda a: a.swapaxes(d0, d1) if a.ndim > 1 else a, dim0=d0, dim1=d1)


def t(x):
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return _view(TBackward0, x, x._data.T, lambda a: a.T)


def permute(x, *dims):
    dims = _shape_arg(dims)
    if len(dims) != x.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {x.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, x.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view(PermuteBackward0, x, x._data.transpose(dims), lambda a: a.transpose(dims),
                 dims=dims)


def flip(x, *dims):
    """``x`` with its entries in reverse order along ``dims`` (a new tensor, not a
    view, as in PyTorch).  Reversing twice gives the input back, so the
    gradient is ``g`` reversed along the same dims."""
    dims = _shape_arg(dims)
    axes = tuple(wrap_dim(d, x.ndim) for d in dims)
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    out = backend.xp_of(x._data).flip(x._data, axes).copy() if x.ndim else x._data.copy()
    return record(FlipBackward0, out, (x,), dims=dims)


def T(x):
    """``x.T``: all dimensions reversed (a permute in PyTorch's graph)."""
    if x.ndim < 2:
        return x
    return permute(x, *reversed(range(x.ndim)))


def mT(x):
    return transpose(x, -2, -1)


def squeeze(x, dim=None):
    a = x._data
    if dim is None:
        out = a.reshape([s for s in a.shape if s != 1])
        return _view(SqueezeBackward0, x, out, lambda b, s=out.shape: b.reshape(s),
                     self_sym_sizes=a.shape)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(wrap_dim(d, a.ndim) for d in dims)
    shape = [s for i, s in enumerate(a.shape) if not (i in dims and s == 1)]
    return _view(SqueezeBackward1, x, a.reshape(shape), lambda b, s=tuple(shape): b.reshape(s),
                 dim=dims, self_sym_sizes=a.shape)


def unsqueeze(x, dim):
    d = wrap_dim(dim, x.ndim + 1)
    xp = backend.xp_of(x._data)
    return _view(UnsqueezeBackward0, x, xp.expand_dims(x._data, d),
                 lambda a: xp.expand_dims(a, d), dim=d)


def expand(x, *sizes):
    sizes = _shape_arg(sizes)
    a = x._data
    lead = len(sizes) - a.ndim
    if lead < 0:
        from ..tensor import type_name
        raise RuntimeError(f"expand({type_name(a)}{{{list(a.shape)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({a.ndim})")
    for i in range(lead):
        if sizes[i] < 0:
            raise RuntimeError(f"The expanded size of the tensor ({sizes[i]}) isn't allowed in a "
                               f"leading, non-existing dimension {i}")
    target = tuple(a.shape[i - lead] if (s == -1 and i >= lead) else s
                   for i, s in enumerate(sizes))
    try:
        out = backend.xp_of(a).broadcast_to(a, target)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({target[-1]}) must match the "
                           f"existing size ({a.shape[-1] if a.ndim else 1}) at non-singleton "
                           f"dimension {len(target) - 1}.  Target sizes: {list(sizes)}.  "
                           f"Tensor sizes: {list(a.shape)}") from None
    return _view(ExpandBackward0, x, out, lambda b: backend.xp_of(b).broadcast_to(b, target),
                 self_sym_sizes=a.shape)


def clone(x, memory_format=None):
    return record(CloneBackward0, x._data.copy(), (x,))


def contiguous(x, memory_format=None):
    return x if x._data.flags.c_contiguous else clone(x)


def repeat(x, *repeats):
    repeats = _shape_arg(repeats)
    if len(repeats) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    sizes = (1,) * (len(repeats) - x.ndim) + tuple(x.shape)
    new = [r * s for r, s in zip(repeats, sizes)]
    for n in new:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {new}")
    out = backend.xp_of(x._data).tile(x._data, repeats)
    return record(RepeatBackward0, out, (x,), repeats=repeats, self_sym_sizes=x._data.shape)


# ------------------------------------------------------------------ joining --
def _cat_axis(tensors, dim) -> int:
    """The axis ``cat`` joins along, after PyTorch's checks, in PyTorch's words:
    a non-empty list of tensors with at least one dimension, all with the same
    number of dimensions and the same sizes except along ``dim``."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    first = tensors[0]._data.shape
    for i, t_ in enumerate(tensors):
        if not t_._data.ndim:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    d = wrap_dim(dim, len(first))
    for i, t_ in enumerate(tensors[1:], 1):
        shape = t_._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{len(first)} and {len(shape)}")
        for k, (want, got) in enumerate(zip(first, shape)):
            if k != d and want != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {want} but got size {got} for tensor "
                                   f"number {i} in the list.")
    return d


def cat(tensors, dim=0):
    tensors = list(tensors)
    d = _cat_axis(tensors, dim)
    xp = backend.xp_of(tensors[0]._data)
    dt = tensors[0]._data.dtype
    for t_ in tensors[1:]:
        dt = backend.promote(tensors[0]._data, t_._data) if t_._data.dtype != dt else dt
    out = xp.concatenate([t_._data.astype(dt, copy=False) for t_ in tensors], axis=d)
    return record(CatBackward0, out, tensors, dim=d,
                  sizes=tuple(t_._data.shape[d] for t_ in tensors))


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t_ in enumerate(tensors[1:], 1):
        if t_._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t_._data.shape)} at "
                               f"entry {i}")
    d = wrap_dim(dim, len(first) + 1)
    dt = tensors[0]._data.dtype
    for t_ in tensors[1:]:  # PyTorch's promotion (numpy's would widen float32 + int64)
        dt = backend.promote(tensors[0]._data.astype(dt, copy=False), t_._data) \
            if t_._data.dtype != dt else dt
    out = backend.xp_of(tensors[0]._data).stack(
        [t_._data.astype(dt, copy=False) for t_ in tensors], axis=d)
    return record(StackBackward0, out, tensors, dim=d)


def column_stack(tensors):
    cols = [reshape(t_, t_.numel(), 1) if t_.ndim <= 1 else t_ for t_ in tensors]
    return cat(cols, 1)


def hstack(tensors):
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([reshape(t_, 1, -1) if t_.ndim == 1 else t_ for t_ in tensors], 0)


def where(condition, a=None, b=None):
    """Elementwise choice: a where condition holds, else b."""
    if a is None and b is None:
        return tuple(Tensor._make(i) for i in backend.xp_of(condition._data).nonzero(
            condition._data))
    a, b, da, db = as_tensor_pair(a, b)
    cond = condition._data if isinstance(condition, Tensor) else backend.as_array(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(cond.dtype)}")
    try:
        out = backend.xp_of(da).where(cond, da, db)
    except ValueError:
        check_broadcast(cond, da)  # (PyTorch checks the shapes in this order)
        check_broadcast(SimpleNamespace(shape=backend.broadcast_shapes(cond.shape, da.shape)),
                        db)
        raise
    return record(WhereBackward0, out, (a, b), condition=Tensor._make(cond))


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char"}


def masked_fill(x, mask, value):
    """x with ``value`` where mask is True; the gradient passes where it is False."""
    x, v, dx, dv = as_tensor_pair(x, value)
    m = mask._data if isinstance(mask, Tensor) else backend.as_array(mask)
    if m.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_NAMES.get(m.dtype.name, m.dtype.name)}")
    try:
        out = backend.xp_of(dx).where(m, dv, dx)
    except ValueError:
        check_broadcast(m, dx)
        raise
    return record(MaskedFillBackward0, out, (x, v) if isinstance(value, Tensor) else (x,),
                  mask=Tensor._make(m))


# Backward formulas: g is the gradient of the output; one formula per input.
ViewBackward0 = rule("ViewBackward0", "self_sym_sizes", self="reshape(g, self_sym_sizes)")
UnsafeViewBackward0 = rule("UnsafeViewBackward0", "self_sym_sizes",
                           self="reshape(g, self_sym_sizes)")
AliasBackward0 = rule("AliasBackward0", "", self="g")
TransposeBackward0 = rule("TransposeBackward0", "dim0 dim1", self="transpose(g, dim0, dim1)")
TBackward0 = rule("TBackward0", "", self="t(g)")
PermuteBackward0 = rule("PermuteBackward0", "dims", self="permute(g, inverse_permutation(dims))")
FlipBackward0 = rule("FlipBackward0", "dims", self="flip(g, dims)")
SqueezeBackward0 = rule("SqueezeBackward0", "self_sym_sizes", self="reshape(g, self_sym_sizes)")
SqueezeBackward1 = rule("SqueezeBackward1", "dim self_sym_sizes",
                        self="reshape(g, self_sym_sizes)")
UnsqueezeBackward0 = rule("UnsqueezeBackward0", "dim", self="squeeze(g, dim)")
ExpandBackward0 = rule("ExpandBackward0", "self_sym_sizes", self="sum_to(g, self_sym_sizes)")
CloneBackward0 = rule("CloneBackward0", "", self="g")
RepeatBackward0 = rule("RepeatBackward0", "repeats self_sym_sizes",
                       self="repeat_backward(g, repeats, self_sym_sizes)")
CatBackward0 = rule("CatBackward0", "dim sizes", variadic="split_sizes(g, sizes, dim)")
MaskedFillBackward0 = rule("MaskedFillBackward0", "mask",
                          self="where(mask, 0.0, g)", value="sum(where(mask, g, 0.0))")
StackBackward0 = rule("StackBackward0", "dim", variadic="unbind(g, dim)")
WhereBackward0 = rule("WhereBackward0", "condition",
                      self="where(condition, g, 0.0)", other="where(condition, 0.0, g)")

