"""Shape operations and joining: reshape, transpose, squeeze, expand, cat, stack...

These move numbers around without changing them, so their backward moves the
gradient back the same way: ``transpose`` transposes g, ``reshape`` reshapes it,
``cat`` cuts g into pieces.

Many of them return *views*: tensors sharing memory (and the version counter)
with their input.  A view remembers its base and how to take the same view of
any array (``_base``, ``_view``: see ``graph.make_view``), which in-place operations on views
need (see ``inplace.py``).

Two neighbours live in their own files and are importable from here as well:
``inplace_views.py`` (``x.t_()``, ``x.unsqueeze_(0)``: x itself becomes the view)
and ``where_fill.py`` (``where``, ``masked_fill``: each element from one of two sources).
"""
from __future__ import annotations

from ..views import make_view
from ._rules import record, rule
from .. import backend
from .dims import wrap_dim
# (importable from here, where they used to be)
from .inplace_views import (INPLACE_VIEWS, SqueezeBackward3, SqueezeBackward4,  # noqa: F401
                            TBackward1, TransposeBackward1, UnsqueezeBackward1)
from .where_fill import (MaskedFillBackward0, MaskedFillBackward1, WhereBackward0,  # noqa: F401
                         fill_value, masked_fill, where)


def _view(node, x, out, view_fn, **saved):
    """Record a shape op; when its result shares memory with ``x``, make it a view."""
    t = record(node, out, (x,), **saved)
    if backend.xp_of(out).may_share_memory(out, x._data) or not out.size:
        # (an empty result shares no byte, but in PyTorch it is still a view)
        make_view(t, x, view_fn, node)  # (base, version counter, how it was made)
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
    if x._data.size and not backend.xp_of(out).may_share_memory(out, x._data):
        # not expressible as a view: PyTorch copies (a contiguous clone) and views
        # the copy without tracking it (_unsafe_view); both steps are recorded
        copy = record(CloneBackward0, out.reshape(x._data.shape), (x,))
        return record(UnsafeViewBackward0, out, (copy,), self_sym_sizes=x._data.shape)
    # a view; PyTorch names it ViewBackward0 when the input is contiguous and
    # ReshapeAliasBackward0 (the same gradient) when it is not
    node = ViewBackward0 if x._data.flags.c_contiguous else ReshapeAliasBackward0
    return _view(node, x, out, lambda a, s=shape: a.reshape(s), self_sym_sizes=x._data.shape)


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
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
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
    """``x.T``: all dimensions reversed (a permute in PyTorch's graph, on 0-d and
    1-D tensors too).  Other than on a matrix it is deprecated: PyTorch warns
    once a process, and so does the kit."""
    if x.ndim != 2:
        from ._warn import warn_once
        if x.ndim == 0:
            warn_once("T0", "Tensor.T is deprecated on 0-D tensors. This function is the "
                      "identity in these cases.")
        else:
            warn_once("T", "The use of `x.T` on tensors of dimension other than 2 to reverse "
                      "their shape is deprecated and it will throw an error in a future "
                      "release. Consider `x.mT` to transpose batches of matrices or "
                      "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                      "dimensions of a tensor.")
    return permute(x, tuple(reversed(range(x.ndim))))


def mT(x):
    """``x.mT``: the last two dimensions swapped.  On a 0-d tensor (deprecated,
    warned once) it is the tensor itself, as in PyTorch."""
    if x.ndim == 0:
        from ._warn import warn_once
        warn_once("mT0", "Tensor.mT is deprecated on 0-D tensors. This function is the "
                  "identity in these cases.")
        return x
    if x.ndim == 1:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {x.ndim}-D tensor.")
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
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
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


def swapdims(x, dim0, dim1):
    """Another name of ``transpose``."""
    return transpose(x, dim0, dim1)


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
    if tensors:  # PyTorch's legacy rule: a 1-D empty tensor is left out
        kept = [t_ for t_ in tensors if t_._data.shape != (0,)]
        if len(kept) < len(tensors):
            return _cat_without_empty(tensors, kept, dim)
    d = _cat_axis(tensors, dim)
    xp = backend.xp_of(tensors[0]._data)
    dt = tensors[0]._data.dtype
    for t_ in tensors[1:]:  # every tensor counts alike (dims do not matter here)
        if t_._data.dtype != dt:
            dt = backend.promote_types(dt, t_._data.dtype)
    out = xp.concatenate([t_._data.astype(dt, copy=False) for t_ in tensors], axis=d)
    return record(CatBackward0, out, tensors, dim=d,
                  sizes=tuple(t_._data.shape[d] for t_ in tensors))


def _cat_without_empty(tensors, kept, dim):
    """``cat`` when some tensors are 1-D and empty: they take part in the type
    promotion only (and receive an empty gradient)."""
    dt = tensors[0]._data.dtype
    for t_ in tensors[1:]:
        if t_._data.dtype != dt:
            dt = backend.promote_types(dt, t_._data.dtype)
    if not kept:
        out = backend.xp_of(tensors[0]._data).zeros((0,), dtype=dt)
        return record(CatBackward0, out, tensors, dim=0, sizes=(0,) * len(tensors))
    d = _cat_axis(kept, dim)
    xp = backend.xp_of(kept[0]._data)
    out = xp.concatenate([t_._data.astype(dt, copy=False) for t_ in kept], axis=d)
    sizes = tuple(None if t_._data.shape == (0,) else t_._data.shape[d] for t_ in tensors)
    return record(CatBackward0, out, tensors, dim=d, sizes=sizes)


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
        if t_._data.dtype != dt:
            dt = backend.promote_types(dt, t_._data.dtype)
    out = backend.xp_of(tensors[0]._data).stack(
        [t_._data.astype(dt, copy=False) for t_ in tensors], axis=d)
    return record(StackBackward0, out, tensors, dim=d)


def column_stack(tensors):
    cols = [reshape(t_, t_.numel(), 1) if t_.ndim <= 1 else t_ for t_ in tensors]
    return cat(cols, 1)


def hstack(tensors):
    """Side by side: 0-d tensors count as one-element vectors (atleast_1d), and
    vectors are joined end to end, anything else along dimension 1."""
    tensors = [reshape(t_, 1) if t_.ndim == 0 else t_ for t_ in tensors]
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """One above the other: 0-d and 1-d tensors count as one-row matrices
    (atleast_2d), joined along dimension 0."""
    return cat([reshape(t_, 1, -1) if t_.ndim < 2 else t_ for t_ in tensors], 0)

# Backward formulas: g is the gradient of the output; one formula per input.
ViewBackward0 = rule("ViewBackward0", "self_sym_sizes", self="reshape(g, self_sym_sizes)")
UnsafeViewBackward0 = rule("UnsafeViewBackward0", "self_sym_sizes",
                           self="reshape(g, self_sym_sizes)")
ReshapeAliasBackward0 = rule("ReshapeAliasBackward0", "self_sym_sizes",
                             self="reshape(g, self_sym_sizes)")
AliasBackward0 = rule("AliasBackward0", "", self="g")
TransposeBackward0 = rule("TransposeBackward0", "dim0 dim1", self="transpose(g, dim0, dim1)")
TBackward0 = rule("TBackward0", "", self="t(g)")
PermuteBackward0 = rule("PermuteBackward0", "dims", self="permute(g, inverse_permutation(dims))")
FlipBackward0 = rule("FlipBackward0", "dims", self="flip(g, dims)")
SqueezeBackward0 = rule("SqueezeBackward0", "self_sym_sizes",
                        self="unsqueeze_to(g, self_sym_sizes)")
SqueezeBackward1 = rule("SqueezeBackward1", "dim self_sym_sizes",
                        self="unsqueeze_to(g, self_sym_sizes, dim)")
UnsqueezeBackward0 = rule("UnsqueezeBackward0", "dim", self="squeeze(g, dim)")
ExpandBackward0 = rule("ExpandBackward0", "self_sym_sizes", self="sum_to(g, self_sym_sizes)")
CloneBackward0 = rule("CloneBackward0", "", self="g")
RepeatBackward0 = rule("RepeatBackward0", "repeats self_sym_sizes",
                       self="repeat_backward(g, repeats, self_sym_sizes)")
CatBackward0 = rule("CatBackward0", "dim sizes", variadic="split_sizes(g, sizes, dim)")
StackBackward0 = rule("StackBackward0", "dim", variadic="unbind(g, dim)")

