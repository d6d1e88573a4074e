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
from ..tensor import Tensor
from ._rules import record, rule
from ._warn import warn
from .reduce import wrap_dim
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
    arrays and boolean masks make one IndexBackward0 (a copy, not a view)."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(_as_index(k) for k in key)
    if not builtins.all(_is_basic(k) for k in key):
        for k in key:
            _check_step(k)
        try:
            data = x._data[key]
        except IndexError as err:  # numpy's words, made PyTorch's
            bad = next((k for k in key if isinstance(k, float)), None)
            if bad is not None:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                                 "byte Variables are valid indices (got float)") from None
            raise _index_error(err) from None
        out = record(IndexBackward0, data, (x,), indices=key, self_sym_sizes=x._data.shape)
        if out._grad_fn is not None:  # its index arrays are freed by backward (graph.py)
            out._grad_fn._holds_tensors = True
        return out
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
            if k != slice(None):
                t = _slice(t, dim, k)
            dim += 1
        else:
            t = _select(t, dim, k)
    return t if t is not x else _view(AliasBackward0, x, x._data[...], lambda a: a[...])


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


def _index_error(err):
    """numpy's words for an index out of bounds, made PyTorch's."""
    text = str(err)
    if text.endswith(" with size 0"):  # (PyTorch names neither the index nor the dim)
        return IndexError("index is out of bounds for dimension with size 0")
    return IndexError(text.replace(" for axis ", " for dimension "))


def index_put(x, indices, values, accumulate=False):
    """Out-of-place ``x[indices] = values`` for integer-array or mask keys."""
    from ._rules import as_tensor_pair
    if not isinstance(values, Tensor):  # a number is written in x's type, as PyTorch does
        from .shape import fill_value
        values = Tensor._make(backend.xp_of(x._data).asarray(
            fill_value(values, x._data.dtype)).astype(x._data.dtype))
    x, values, dx, dv = as_tensor_pair(x, values)
    out = dx.copy()
    try:
        if accumulate:
            backend.xp_of(out).add.at(out, indices, dv)
        else:
            out[indices] = dv
    except IndexError as err:
        raise _index_error(err) from None
    except ValueError:
        from .. import errors
        raise RuntimeError(errors.INDEX_PUT_SHAPE.format(
            value=list(dv.shape), result=list(dx[indices].shape))) from None
    out = record(IndexPutBackward0, out, (x, values), indices=indices, accumulate=accumulate)
    if out._grad_fn is not None:  # its index arrays are freed by backward (graph.py)
        out._grad_fn._holds_tensors = True
    return out


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
IndexPutBackward0 = rule("IndexPutBackward0", "indices accumulate",
                         self="g if accumulate else zero_at(g, indices)", values="g[indices]")
IndexPutBackward0._frees = ("indices",)

# unbind, split and chunk make several views at once (one node): see multi_view.py
from .multi_view import chunk, split, unbind, unsafe_chunk, unsafe_split  # noqa: E402,F401
