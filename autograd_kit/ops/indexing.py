"""Indexing: ``x[i]``, ``x[1:3]``, ``x[mask]``, ``x[[0, 2]]`` and their backward.

Basic keys (integers, slices, ``None``, ``...``) give *views*, recorded as
PyTorch records them: one ``SelectBackward0`` or ``SliceBackward0`` per
indexed dimension.  Integer arrays and boolean masks copy (``IndexBackward0``).
Backward puts the gradient back where the elements came from, into zeros
(``select_backward``, ``slice_backward``, ``index_backward``: PyTorch's kernels,
each recorded as one node under ``create_graph=True``); elements picked twice
add up.  ``gather_view``/``scatter_view``
do the same for any view, for in-place operations on views (``CopySlices``).
"""
from __future__ import annotations

import builtins

from .. import backend
from ..tensor import Tensor, scalar_type_name
from ._rules import record, rule
from ._warn import warn
from .dims import wrap_dim
from .shape import AliasBackward0, _view, unsqueeze


def _is_basic(k) -> bool:
    return k is None or k is Ellipsis or isinstance(k, (int, slice)) and not isinstance(k, bool)


def _as_index(k):
    """A key element as numpy understands it (tensors become arrays; a uint8
    tensor is a mask, as PyTorch still reads it, with its deprecation warning)."""
    if isinstance(k, Tensor):
        d = k._data
        if d.dtype.kind == "u" and d.dtype.itemsize == 1:
            warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                 "torch.bool instead.")
            return d.astype(bool)
        if d.ndim == 0 and d.dtype.kind in "iu":
            return int(d)
        return d
    if isinstance(k, (list, tuple)) and not isinstance(k, Tensor):
        if not k:  # ``x[[]]``: no index at all (numpy would read a float array)
            return backend.np.zeros(0, dtype=backend.int64.np)
        return backend.make_array(k)
    return k


def _check_step(k) -> None:
    if isinstance(k, slice) and k.step is not None and k.step <= 0:
        raise ValueError("step must be greater than zero" if k.step else
                         "slice step cannot be zero")


def getitem(x, key):
    """``x[key]``: basic keys become PyTorch's chain of select/slice views; integer
    arrays and boolean masks make one IndexBackward0 (a copy, not a view).

    As in PyTorch, a key that mixes the two applies its basic parts first (views
    of x) and its tensor indices to what they leave: ``x[0, :, [0, 1]]`` is
    ``x[0][:, [0, 1]]``, of shape (n1, 2), where numpy would give (2, n1)."""
    whole = key.__class__ is not slice  # (x[0:n] alone is a view even of everything)
    key = tuple(_as_index(k) for k in as_key(key))
    if builtins.all(_is_basic(k) for k in key):
        t = basic_views(x, key, skip_whole=whole)
        return t if t is not x else _view(AliasBackward0, x, x._data[...], lambda a: a[...])
    for k in key:
        _check_step(k)
    basic, key = split_key(key)
    if basic is not None:
        x = basic_views(x, basic)
    try:
        data = x._data[key]
    except IndexError as err:  # numpy's words, made PyTorch's
        bad = next((k for k in key if isinstance(k, float)), None)
        if bad is not None:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got float)") from None
        raise _index_error(err, x._data.shape, key) from None
    out = record(IndexBackward0, data, (x,), indices=key, self_sym_sizes=x._data.shape)
    if out._grad_fn is not None:  # its index arrays are freed by backward (graph.py)
        out._grad_fn._holds_tensors = True
    return out


SEQUENCE_KEY = ("Using a non-tuple sequence for multidimensional indexing is deprecated and "
                "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                "which will result either in an error or a different result")


def as_key(key) -> tuple:
    """The key as a tuple of index elements, read as PyTorch reads it: a short
    list (under 32 elements) holding a tensor, a sequence, a slice, None or
    ``...`` is read as a tuple -- ``x[[[0], [1]]]`` is ``x[[0], [1]]`` --, with
    PyTorch's deprecation warning; any other list is one index."""
    if isinstance(key, tuple):
        return key
    if key.__class__ is list and len(key) < 32:
        for k in key:
            if k is None or k is Ellipsis or isinstance(k, (Tensor, list, tuple, slice, str)) \
                    or backend.is_array(k):
                warn(SEQUENCE_KEY)
                return tuple(key)
    return (key,)


def split_key(key):
    """(basic, advanced): the views PyTorch takes first, and the tensor indices
    it then applies to them.  ``basic`` holds the key's ints, slices, Nones and
    ``...`` with full slices where the tensor indices stand (None when it
    changes nothing: only full slices and ``...``); ``advanced`` holds the
    tensor indices with full slices for the dims the views keep."""
    if not builtins.all(_is_basic(k) or k.__class__ is bool or backend.is_array(k)
                        for k in key):
        return None, key  # (a float or another stranger: numpy's path names it)
    basic, advanced = [], []
    for k in key:
        if k.__class__ is bool:  # a new dim of size 1, kept or not by a one-element mask
            basic.append(None)
            advanced.append(backend.np.array([k]))
        elif k is Ellipsis:
            basic.append(k)
            advanced.append(k)
        elif _is_basic(k):  # an int takes its dim away; a slice or None keeps one
            basic.append(k)
            if k is None or isinstance(k, slice):
                advanced.append(slice(None))
        else:
            basic.extend([slice(None)] * (k.ndim if k.dtype.kind == "b" else 1))
            advanced.append(k)
    if builtins.all(k is Ellipsis or k == slice(None) for k in basic):
        return None, key  # (whole slices, kept here, make no view: basic_views)
    return tuple(basic), tuple(advanced)


def basic_views(x, key, skip_whole=True):
    """The chain of select/slice/unsqueeze views for a key of basic elements
    (x itself when the key selects everything).  A slice that keeps a whole
    dim (``0:n``, ``::1``) makes no view, as in PyTorch -- unless it is the
    whole key of ``x[0:n]`` (``skip_whole=False``)."""
    consuming = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if x.ndim == 0 and consuming == 1:  # (PyTorch reads a 0-d tensor's slice first)
        for k in key:
            _check_step(k)
    if consuming > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    t, dim = x, 0
    for i, k in enumerate(key):
        if k is None:
            t, dim = unsqueeze(t, dim), dim + 1
        elif k is Ellipsis:
            later = builtins.sum(1 for k2 in key[i + 1:] if k2 is not None and k2 is not Ellipsis)
            dim = t.ndim - later
        elif isinstance(k, slice):
            _check_step(k)
            if not (skip_whole and _keeps_all(k, t._data.shape[dim])):
                t = _slice(t, dim, k)
            dim += 1
        else:
            t = _select(t, dim, k)
    return t


def _keeps_all(s, n) -> bool:
    """Does slice ``s`` keep a whole dim of size n as PyTorch tests it: from 0
    as written (``-n:`` does not count), step 1, up to n or beyond?"""
    return s.start in (None, 0) and s.step in (None, 1) and (s.stop is None or s.stop >= n)


def select(x, dim, index):
    """``x.select(dim, i)``: the slice at position i along dim (one dimension fewer)."""
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, x.ndim)
    index = int(index)
    n = x._data.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    return _select(x, dim, index)


def _select(x, dim, index):
    """``x[..., i]``, with indexing's own words for an index out of range."""
    n = x._data.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {n}")
    key = (slice(None),) * dim + (index, Ellipsis)  # "..." keeps a 0-d result a view
    return _view(SelectBackward0, x, x._data[key], lambda a: a[key], dim=dim, index=index,
                 self_sym_sizes=x._data.shape)


def _slice(x, dim, s):
    key = (slice(None),) * dim + (s,)
    start, end, step = s.indices(x._data.shape[dim])
    return _view(SliceBackward0, x, x._data[key], lambda a: a[key], dim=dim, start=start,
                 end=end, step=step, self_sym_sizes=x._data.shape)


def index_fill(x, dim, index, value):
    """x with ``value`` written in every slice along ``dim`` that ``index`` names
    (a number, or a 0-d tensor, which then receives the sum of those slices'
    gradients: IndexFillBackward1; a number: IndexFillBackward0)."""
    from .formula_env import select_key
    from .shape import fill_value
    dim = wrap_dim(dim, builtins.max(x.ndim, 1))
    idx = index._data if isinstance(index, Tensor) else backend.make_array(index)
    if idx.dtype != backend.int64.np:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    n = x.shape[dim] if x.ndim else 1
    bad = next((int(i) for i in backend.to_host(idx).reshape(-1) if not -n <= i < n), None)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
    a = x._data
    key = select_key(dim, idx.reshape(-1)) if x.ndim else ()
    out = a.copy()
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        out[key] = backend.xp_of(a).asarray(value._data).astype(a.dtype)
        return record(IndexFillBackward1, out, (x, value), dim=dim, index=Tensor._make(idx))
    out[key] = fill_value(value, a.dtype)
    return record(IndexFillBackward0, out, (x,), dim=dim, index=Tensor._make(idx))


def narrow(x, dim, start, length):
    """``length`` elements along ``dim`` from ``start`` (negative: from the end), as a view."""
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = wrap_dim(dim, x.ndim)
    n = x._data.shape[dim]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], "
                         f"but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(x, dim, slice(start, start + length))


def _index_error(err, shape=None, key=()):
    """numpy's words for an index out of bounds or a mask of the wrong shape,
    made PyTorch's."""
    text = str(err)
    if text.startswith("arrays used as indices must be of integer"):
        return IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if text.startswith("boolean index did not match") and shape is not None:
        mismatch = _mask_mismatch(shape, key)
        if mismatch is not None:
            return mismatch
    if text.endswith(" with size 0"):  # (PyTorch names neither the index nor the dim)
        return IndexError("index is out of bounds for dimension with size 0")
    return IndexError(text.replace(" for axis ", " for dimension "))


def _mask_mismatch(shape, key):
    """PyTorch's words for the first boolean mask whose shape differs from the
    dims it covers: the mask's dim and the tensor's dim are both named."""
    dim = 0
    for i, k in enumerate(key):
        if k is None:
            continue
        if k is Ellipsis:
            dim = len(shape) - builtins.sum(
                (k2.ndim if backend.is_array(k2) and k2.dtype.kind == "b" else 1)
                for k2 in key[i + 1:] if k2 is not None and k2 is not Ellipsis)
            continue
        if backend.is_array(k) and k.dtype.kind == "b":
            for j, n in enumerate(k.shape):
                if dim + j < len(shape) and shape[dim + j] != n:
                    return IndexError(f"The shape of the mask {list(k.shape)} at index {j} does "
                                      f"not match the shape of the indexed tensor {list(shape)} "
                                      f"at index {dim + j}")
            dim += k.ndim
        else:
            dim += 1
    return None


def index_put(x, indices, values, accumulate=False):
    """Out-of-place ``x[indices] = values`` for integer-array or mask keys."""
    from ._rules import as_tensor_pair
    if not isinstance(values, Tensor):  # a number is written in x's type, as PyTorch does
        from .shape import fill_value
        values = Tensor._make(backend.xp_of(x._data).asarray(
            fill_value(values, x._data.dtype)).astype(x._data.dtype))
    fills = _fills_by_mask(indices, values, accumulate)
    if values._data.dtype != x._data.dtype and not fills:
        try:
            selected = x._data[indices].shape
        except IndexError as err:
            raise _index_error(err, x._data.shape, indices) from None
        check_index_put(x._data, values._data, selected)
    x, values, dx, dv = as_tensor_pair(x, values)
    if fills:  # a mask fill writes the one value in x's type
        dx, dv = x._data, dv.astype(x._data.dtype)
    dv = dv.reshape(_without_leading_ones(dv.shape))  # (PyTorch drops them first)
    out = dx.copy()
    try:
        if accumulate:
            backend.xp_of(out).add.at(out, indices, dv)
        else:
            out[indices] = dv
    except IndexError as err:
        raise _index_error(err, dx.shape, indices) from None
    except (ValueError, TypeError):  # (numpy: a shape that does not broadcast)
        from .. import errors
        raise RuntimeError(errors.INDEX_PUT_SHAPE.format(
            value=list(dv.shape), result=list(dx[indices].shape))) from None
    out = record(IndexPutBackward0, out, (x, values), indices=indices, accumulate=accumulate)
    if out._grad_fn is not None:  # its index arrays are freed by backward (graph.py)
        out._grad_fn._holds_tensors = True
    return out


def _without_leading_ones(shape) -> tuple:
    """A value's shape as PyTorch's index put reads it: leading 1s dropped."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def check_index_put(dst, value, selected) -> None:
    """PyTorch's two refusals of ``x[index] = value``, in its order: a value
    that cannot broadcast to the ``selected`` shape, then a value of another
    type than x's (a number has been converted already)."""
    shape, selected = _without_leading_ones(value.shape), tuple(selected)
    try:
        fits = backend.broadcast_shapes(shape, selected) == selected
    except ValueError:
        fits = False
    if not fits:
        from .. import errors
        raise RuntimeError(errors.INDEX_PUT_SHAPE.format(value=list(shape),
                                                         result=list(selected)))
    if value.dtype != dst.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(dst.dtype)} for the destination and "
                           f"{scalar_type_name(value.dtype)} for the source.")


def _fills_by_mask(indices, values, accumulate) -> bool:
    """Does PyTorch write this as a mask fill?  One value (on the CPU) put
    where a single boolean mask says, the key's other parts basic: then the
    value is converted to the tensor's type, where any other index put
    refuses a value of another type."""
    arrays = [i for i in indices if backend.is_array(i)]
    return (not accumulate and values._data.size == 1 and not values.is_cuda
            and len(arrays) == 1 and arrays[0].dtype.kind == "b")


def _embedded(g, sizes, key, accumulate=False):
    """A zero array of shape ``sizes`` with ``g`` written (or added) at ``key``."""
    out = backend.xp_of(g).zeros(sizes, dtype=g.dtype)
    if accumulate:
        backend.xp_of(out).add.at(out, key, g)
    else:
        out[key] = g
    return out


def _is_tensor(x) -> bool:
    return x.__class__ is Tensor or isinstance(x, Tensor)


def select_backward(g, sizes, dim, index):
    """The backward of ``select``: a zero tensor of shape ``sizes`` with ``g``
    written at ``index`` along ``dim``.  On Tensors it is PyTorch's kernel of
    that name, recorded as SelectBackwardBackward0 (whose backward selects again)."""
    if not _is_tensor(g):
        return _embedded(g, sizes, _select_key(dim, index))
    out = _embedded(g._data, sizes, _select_key(dim, index))
    return record(SelectBackwardBackward0, out, (g,), dim=dim, index=index)


def slice_backward(g, sizes, dim, start, end, step):
    """The backward of slicing: zeros with ``g`` written at the slice
    (SliceBackwardBackward0 on Tensors)."""
    key = (slice(None),) * dim + (slice(start, end, step),)
    if not _is_tensor(g):
        return _embedded(g, sizes, key)
    out = _embedded(g._data, sizes, key)
    return record(SliceBackwardBackward0, out, (g,), dim=dim, start=start, end=end, step=step)


def index_backward(g, sizes, indices):
    """The backward of indexing with arrays or masks: zeros with ``g`` added at
    ``indices`` (an element picked twice receives both gradients).  PyTorch
    adds them in place into a new zero tensor (``_index_put_impl_``), recorded
    as IndexPutImplBackward0: its first input is that constant zero tensor."""
    if not _is_tensor(g):
        return _embedded(g, sizes, indices, accumulate=True)
    out = _embedded(g._data, sizes, indices, accumulate=True)
    xp = backend.xp_of(out)
    zeros = Tensor._make(xp.broadcast_to(xp.zeros((), dtype=out.dtype), out.shape))
    return record(IndexPutImplBackward0, out, (zeros, g), indices=indices, accumulate=True)


def _select_key(dim, index):
    return (slice(None),) * dim + (index, Ellipsis)


# The kernels' own backward: pick the same elements again.
SelectBackwardBackward0 = rule("SelectBackwardBackward0", "dim index",
                               grad_output="g[select_key(dim, index)]")
SliceBackwardBackward0 = rule("SliceBackwardBackward0", "dim start end step",
                              grad_output="g[slice_key(dim, start, end, step)]")
IndexPutImplBackward0 = rule("IndexPutImplBackward0", "indices accumulate",
                             self="g if accumulate else zero_at(g, indices)",
                             values="g[indices]")


def gather_view(g, view_fn):
    """The part of ``g`` that a view (described by ``view_fn``) looks at, as a copy."""
    return record(GatherViewBackward0, view_fn(g._data).copy(), (g,), view_fn=view_fn,
                  size=g._data.shape)


def scatter_view(src, size, view_fn):
    """A zero tensor of shape ``size`` with ``src`` written where the view looks."""
    out = backend.xp_of(src._data).zeros(size, dtype=src._data.dtype)
    view_fn(out)[...] = src._data
    return record(ScatterViewBackward0, out, (src,), view_fn=view_fn)


GatherViewBackward0 = rule("GatherViewBackward0", "view_fn size",
                           self="scatter_view(g, size, view_fn)")
ScatterViewBackward0 = rule("ScatterViewBackward0", "view_fn", self="gather_view(g, view_fn)")


# Backward formulas: g is the gradient of the output; one formula per input.
SelectBackward0 = rule("SelectBackward0", "dim index self_sym_sizes",
                       self="select_backward(g, self_sym_sizes, dim, index)")
SliceBackward0 = rule("SliceBackward0", "dim start end step self_sym_sizes",
                      self="slice_backward(g, self_sym_sizes, dim, start, end, step)")
IndexBackward0 = rule("IndexBackward0", "indices self_sym_sizes",
                      self="index_backward(g, self_sym_sizes, indices)")
IndexBackward0._frees = ("indices",)
IndexFillBackward0 = rule("IndexFillBackward0", "dim index",
                          self="index_fill_of(g, dim, index)")
IndexFillBackward1 = rule("IndexFillBackward1", "dim index",
                          self="index_fill_of(g, dim, index)",
                          value="sum(select_indices(g, dim, index))")
IndexPutBackward0 = rule("IndexPutBackward0", "indices accumulate",
                         self="g if accumulate else zero_at(g, indices)", values="g[indices]")
IndexPutBackward0._frees = ("indices",)

# unbind, split and chunk make several views at once (one node): see multi_view.py
from .multi_view import chunk, split, unbind, unsafe_chunk, unsafe_split  # noqa: E402,F401
