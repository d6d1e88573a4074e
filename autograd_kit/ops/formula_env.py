"""The words a backward formula may use.

Formulas in the rule tables are strings such as ``"g * cos(self)"``; they are
compiled once with this dictionary as their globals, and then run in one of
two ways:

* on **Tensors**, under ``backward(create_graph=True)``: every step is a
  recorded Tensor operation, so the gradient has a graph of its own and can be
  differentiated again;
* on **plain arrays**, in an ordinary ``backward()``: the same arithmetic,
  without building Tensors that nobody will differentiate.

So every name here accepts either kind and answers in the same kind: ``cos(x)``
is ``x.cos()`` for a Tensor and the array module's ``cos`` for an array.  The
operators ``+ - * / @ **`` need no help: Tensors and arrays both have them.
Helpers written with Tensor operations only are wrapped in :func:`on_tensors`,
which hands them Tensors and gives back arrays when the formula runs on arrays.
The longer words (the backward of a power, a norm, a variance...) are in
``formula_grads.py``, written with the short ones here.
"""
from __future__ import annotations

import builtins
import functools
import types

from .. import backend
from ..tensor import Tensor

ENV: dict = {"__builtins__": builtins, "__name__": __name__,  # (a name, so that numpy's
              # warnings from a formula are known as the kit's: see ``backend``)
              "multiply_into": backend.multiply_into}  # (g * R written into g: ``_rules``)
_xp = backend.xp_of

#: The recorded operations the words call on Tensors (``OPS.sum``, ``OPS.where``...).
#: The operations sit a layer above the formulas, so they put themselves here
#: when they are imported (``ops/__init__.py``); a word looks them up as it runs.
OPS = types.SimpleNamespace()


def _is_tensor(x) -> bool:
    return x.__class__ is Tensor or isinstance(x, Tensor)


def _raw(x):
    """The array inside a Tensor (a plain array or number is returned as it is)."""
    return x._data if _is_tensor(x) else x


def _like(x, array):
    """``array`` in the same kind as ``x``: a constant Tensor if x is a Tensor."""
    return Tensor._make(array) if _is_tensor(x) else array


def on_tensors(fn):
    """Let a helper written with Tensor operations serve array formulas too:
    array arguments go in as (constant) Tensors, Tensors come out as arrays."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if builtins.any(_is_tensor(a) for a in args):
            return fn(*args, **kwargs)
        out = fn(*(Tensor._make(backend.as_array(a)) if backend.is_array_or_scalar(a) else a
                   for a in args), **kwargs)
        if isinstance(out, (tuple, list)):
            return [_raw(o) for o in out]
        return _raw(out)
    return wrapper


# ------------------------------------------------------ elementwise words ---
def _elementwise(name):
    def fn(x):
        if _is_tensor(x):
            return getattr(x, name)()
        return getattr(_xp(x), name)(x)
    fn.__name__ = name
    return fn


cos, sin, exp, log, abs = (_elementwise(n) for n in ("cos", "sin", "exp", "log", "abs"))


def sign(x):
    """-1, 0 or 1; 0 at NaN, as PyTorch's sign (numpy's gives NaN there)."""
    if _is_tensor(x):
        return x.sign()
    return (x > 0).astype(x.dtype) - (x < 0)


def sgn(x):
    """The sign again, as ``abs`` and ``norm`` differentiate with it: PyTorch's
    ``sgn`` (recorded as SgnBackward0 on Tensors)."""
    if _is_tensor(x):
        recorded = OPS.sgn
        return recorded(x)
    return sign(x)


def clamp(x, min=None, max=None):  # noqa: A002 - PyTorch's names
    if _is_tensor(x):
        return x.clamp(min=min, max=max)
    return _xp(x).clip(x, min, max)


def kept(g, mask):
    """g where ``mask``, else 0 -- on plain arrays, the way a fast backward wants it.

    ``g * mask`` is several times faster than a choice (``where``) on the CPU, and
    equal to it while ``g`` is finite; but where ``g`` holds an infinity or a NaN,
    0 * inf is NaN where the choice gives 0 (relu(x).sqrt() at 0 must not leak
    NaN into x's gradient).  So the product is checked with one sum -- finite only
    if every element is -- and the choice is made where it is not.  On a GPU the
    check would wait for the device: there the choice is made directly, and so it
    is on small arrays, where the two cost the same."""
    if g.__class__ is not backend.ndarray or g.size < _KEPT_BY_PRODUCT:
        return _xp(g).where(mask, g, 0)
    np = backend.np
    with np.errstate(invalid="ignore", over="ignore"):  # (0 * inf: no warning for it)
        out = g * mask
        if out.dtype.kind == "f" and not np.isfinite(out.sum()):
            out = np.where(mask, g, out.dtype.type(0))
    return out


_KEPT_BY_PRODUCT = 4096  # elements from which the product is worth its check


def where(cond, a, b):
    if _is_tensor(cond) or _is_tensor(a) or _is_tensor(b):
        _where = OPS.where
        return _where(cond, a, b)
    xp = _xp(a) if backend.is_array(a) else _xp(b)
    return xp.where(cond, a, b)


# ------------------------------------------------------------ shape words ---
def expand(x, sizes):
    """x repeated (as a broadcast, without copying) up to ``sizes``."""
    if _is_tensor(x):
        return x.expand(sizes)
    return _xp(x).broadcast_to(x, tuple(sizes))


def reshape(x, sizes):
    return x.reshape(tuple(sizes))


def mT(x):  # noqa: N802 - PyTorch's name
    """x with its last two dimensions swapped (each matrix transposed)."""
    return x.mT if _is_tensor(x) else x.swapaxes(-1, -2)


def nansum_backward(g, self, dim, keepdim):
    """sum's gradient, spread back over ``self``, times 0 where ``self`` is NaN
    (PyTorch's ``sum_backward(...) * self.isnan().logical_not()``)."""
    s = _raw(self)
    spread = expand(g if dim is None else unsqueeze_dims(g, dim, keepdim), s.shape)
    return spread * _like(g, ~_xp(s).isnan(s))


def in_dtype_of(x, like):
    """``x`` in ``like``'s dtype, as PyTorch's formulas write
    ``self.to(grad.scalar_type())``: a ``ToCopyBackward0`` on Tensors (none when
    the dtypes already agree)."""
    dtype = _raw(like).dtype
    if _is_tensor(x):
        return x if x._data.dtype == dtype else x.to(backend.to_dtype(dtype))
    return x.astype(dtype, copy=False)


def bmm(x, y):
    """A batch of matrix products, (b, n, m) by (b, m, p): on Tensors the kernel
    itself (``BmmBackward0``), as PyTorch's formulas call it, not ``matmul``."""
    if _is_tensor(x):
        kernel = OPS.bmm
        return kernel(x, y)
    return x @ y


def transpose(x, dim0, dim1):
    if _is_tensor(x):
        return x.transpose(dim0, dim1)
    return x.swapaxes(dim0, dim1) if x.ndim > 1 else x


def t(x):
    return x.t() if _is_tensor(x) else x.T


def permute(x, dims):
    return x.permute(dims) if _is_tensor(x) else x.transpose(dims)


def flip(x, dims):
    if _is_tensor(x):
        return x.flip(dims)
    return _xp(x).flip(x, tuple(dims)) if x.ndim else x


def squeeze(x, dim):
    return x.squeeze(dim) if _is_tensor(x) else x.reshape(
        [n for i, n in enumerate(x.shape) if i != dim % x.ndim])


def unsqueeze(x, dim):
    return x.unsqueeze(dim) if _is_tensor(x) else _xp(x).expand_dims(x, dim)


def unsqueeze_dims(g, dims, keepdim):
    """Put back the dimensions a reduction removed, as size 1, so g broadcasts.
    On Tensors one ``unsqueeze`` per dimension, lowest first (PyTorch's
    ``unsqueeze_multiple``: an UnsqueezeBackward0 node each).  No ``dims``
    (a reduction of everything): g is a single number, it broadcasts as it is."""
    if keepdim or dims is None:
        return g
    if not _is_tensor(g):
        return restore_dims(g, dims, keepdim)
    dims = (dims,) if dims.__class__ is builtins.int else dims
    ndim = g.ndim + len(dims)
    for d in sorted(d % ndim for d in dims):
        g = g.unsqueeze(d)
    return g


def restore_dims(g, dims, keepdim):
    """``unsqueeze_dims`` in one reshape (ViewBackward0 on Tensors), as PyTorch's
    ``restore_reduced_dims`` puts them back for amax and amin."""
    if keepdim:
        return g
    dims = (dims,) if dims.__class__ is builtins.int else dims
    ndim = g.ndim + len(dims)
    shape = list(g.shape)
    for d in sorted(d % ndim for d in dims):
        shape.insert(d, 1)
    return g.reshape(shape)


def unsqueeze_to(g, sizes, dim=None):
    """Put back the size-1 dimensions a ``squeeze`` removed: ``dim`` only (if it
    was 1), or all of them.  On Tensors one ``unsqueeze`` each, as PyTorch does;
    on arrays one reshape."""
    if not _is_tensor(g):
        return g.reshape(tuple(sizes))
    dims = range(len(sizes)) if dim is None else \
        {d % len(sizes) for d in ((dim,) if dim.__class__ is builtins.int else dim)}
    for d in sorted(dims):
        if sizes[d] == 1:
            g = g.unsqueeze(d)
    return g


def masked_fill(x, mask, value):
    """x with ``value`` where ``mask`` (MaskedFillBackward0 on Tensors)."""
    if _is_tensor(x):
        return x.masked_fill(mask if _is_tensor(mask) else Tensor._make(mask), value)
    return _xp(x).where(mask, value, x)


# -------------------------------------------------------- reduction words ---
def sum(x, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    if _is_tensor(x):
        _sum = OPS.sum
        return _sum(x, dim, keepdim)
    return _xp(x).asarray(backend.reduce_sum(x, _axes(dim), keepdims=keepdim))


def mean(x, dim=None, keepdim=False):
    if _is_tensor(x):
        return x.mean(dim, keepdim)
    return _xp(x).asarray(backend.reduce_mean(x, _axes(dim), keepdims=keepdim))


def expand_over(g, sizes, n):
    """g spread over ``sizes`` and divided by n: the backward of a mean.  On
    Tensors PyTorch's order, expand then divide (DivBackward1); on arrays the
    one number is divided first and then broadcast, without a copy."""
    if _is_tensor(g):
        div_scalar = OPS.div_scalar
        return div_scalar(g.expand(sizes), n)
    return _xp(g).broadcast_to(g / n, tuple(sizes))


def _axes(dim):
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def sum_to(g, shape):
    """g summed down to ``shape`` (undoing broadcasting), for either kind."""
    _sum_to = OPS.sum_to
    return _sum_to(g, shape) if _is_tensor(g) else backend.sum_to(g, shape)


# -------------------------------------------------- masks and special cases ---
def inside(self, lo, hi):
    """True where lo <= x <= hi (the gradient of clamp passes)."""
    a = _raw(self)
    mask = _xp(a).ones(a.shape, dtype=bool)
    if lo is not None:
        mask &= a >= lo
    if hi is not None:
        mask &= a <= hi
    return _like(self, mask)


def clamp_grad(g, self, lo, hi):
    """g where lo <= x <= hi, else 0: a choice, so an infinite g cannot leak in."""
    mask = inside(self, lo, hi)
    if _is_tensor(g) or _is_tensor(mask):
        return where(mask, g, 0.0)
    return kept(g, mask)


def div_or_zero(a, b):
    """a / b, but 0 where b is 0: the subgradient PyTorch picks where a function
    has a kink (the gradient of |x| = sqrt(x²) at x = 0, of std at a constant)."""
    if _is_tensor(a) or _is_tensor(b):  # (PyTorch: a masked_fill_ of the quotient)
        return masked_fill(a / b, _raw(b) == 0, 0)
    return where(b == 0, 0.0, a / b)


def floor_divide(a, b):
    """a / b rounded towards -inf (its own gradient is zero)."""
    if _is_tensor(a) or _is_tensor(b):
        div = OPS.div
        return div(a, b, rounding_mode="floor")
    return _xp(a).floor_divide(a, b)


def not_implemented(op):
    """The backward of an op PyTorch cannot differentiate: its error."""
    raise RuntimeError(f"derivative for {op} is not implemented")


def zeros_like(t):
    a = _raw(t)
    return _like(t, _xp(a).zeros_like(a))


def count_of(t, dims):
    n = 1
    for d in dims:
        n *= t.shape[d]
    return n


def select_key(dim, index):
    return (slice(None),) * dim + (index, Ellipsis)


def slice_key(dim, start, end, step):
    return (slice(None),) * dim + (slice(start, end, step),)


def threshold_backward(g, result, threshold):
    """relu's gradient: g where the output is above the threshold, else 0 (a NaN
    output passes g).  On Tensors it is recorded as PyTorch's
    ThresholdBackwardBackward0, which depends on the output with derivative 0: a
    second derivative is zeros, not None."""
    if _is_tensor(g) or _is_tensor(result):
        recorded = OPS.threshold_backward
        return recorded(g, result, threshold)
    return kept(g, ~(result <= threshold))  # (a NaN output passes g, as in PyTorch)


def _threshold_backward_into(g, result, threshold):
    """``threshold_backward`` written into g, whose memory the engine owns."""
    return backend.keep_into(g, ~(result <= threshold))


threshold_backward.into = _threshold_backward_into


def leaky_relu_backward(g, self, negative_slope):
    """g where x > 0, g * slope elsewhere (recorded on Tensors as
    LeakyReluBackwardBackward0, as in PyTorch)."""
    if _is_tensor(g) or _is_tensor(self):
        recorded = OPS.leaky_relu_backward
        return recorded(g, self, negative_slope)
    return _xp(g).where(self > 0, g, g * negative_slope)


def inverse_permutation(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


_WORDS = (cos, sin, exp, log, abs, sign, sgn, div_or_zero, clamp, where, expand, reshape, mT,
          bmm, in_dtype_of, nansum_backward, transpose, t, permute, flip, squeeze, unsqueeze,
          unsqueeze_dims, restore_dims, unsqueeze_to, masked_fill, expand_over, sum, mean,
          sum_to, inside, zeros_like, count_of, select_key, slice_key, inverse_permutation,
          floor_divide, not_implemented, clamp_grad, threshold_backward, leaky_relu_backward)


ENV.update({fn.__name__: fn for fn in _WORDS})
