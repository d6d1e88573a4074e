"""Spellings that tutorials use: ``torch.sin_(x)``, ``torch.var_mean(x)``, ``x.new_full(...)``...

PyTorch offers many operations both as a Tensor method and as a ``torch.``
function; this module adds the forms the other op files do not define, and
attaches the newer ops (``ordering``, ``diagonal``, ``unary_more``) to Tensor.
Nothing here computes anything new: each name calls an op defined elsewhere.
"""
from __future__ import annotations

from .. import backend
from ..tensor import Tensor
from . import arith, compare, convert, indexing
from . import diagonal as _diag
from . import matmul_plan, ordering, reduce, shape, unary, unary_more
from ._rules import as_tensor_pair
from . import index_select as _index_select
from . import masked as _masked
from . import products as _products
from . import scatter as _scatter
from .arith import matmul
from .inplace import make_inplace
from .moments import moments
from .shape import cat, reshape

# ``x.floor_()`` and the rest: in-place forms of the elementwise ops.
_INPLACE_METHODS = {
    "floor_": make_inplace(unary.floor), "ceil_": make_inplace(unary.ceil),
    "round_": make_inplace(unary.round), "rsqrt_": make_inplace(unary.rsqrt),
    "reciprocal_": make_inplace(unary.reciprocal), "square_": make_inplace(unary.square),
    "clamp_min_": make_inplace(unary.clamp_min), "clamp_max_": make_inplace(unary.clamp_max),
    "log1p_": make_inplace(unary_more.log1p), "expm1_": make_inplace(unary_more.expm1),
    "log2_": make_inplace(unary_more.log2), "log10_": make_inplace(unary_more.log10),
    "tan_": make_inplace(unary_more.tan), "sinh_": make_inplace(unary_more.sinh),
    "cosh_": make_inplace(unary_more.cosh), "tril_": make_inplace(_diag.tril),
    "triu_": make_inplace(_diag.triu),
}

# ``torch.sin_(x)`` is ``x.sin_()``: these exist as torch functions in PyTorch too.
INPLACE_FUNCTIONS = ("abs_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
                     "cosh_", "exp_", "expm1_", "floor_", "log10_", "log1p_", "log2_", "log_",
                     "neg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_",
                     "sinh_", "sqrt_", "square_", "tan_", "tanh_", "zero_", "fill_")


def _function_of(name):
    def fn(input, *args, **kwargs):  # noqa: A002 - PyTorch's name
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"``torch.{name}(x, ...)`` is ``x.{name}(...)``: changes x in place."
    return fn


inplace_functions = {name: _function_of(name) for name in INPLACE_FUNCTIONS}

def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """(variance, mean) over ``dim``, in one call: one VarMeanBackward0 node with
    two outputs, as in PyTorch (see ``moments.py``)."""
    return moments(input, "var", dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """(standard deviation, mean) over ``dim``, in one call: one StdMeanBackward0 node."""
    return moments(input, "std", dim, unbiased, keepdim, correction)


def dstack(tensors):
    """Stack along the third dimension (depth): 1-d (n,) becomes (1, n, 1) and 2-d
    (m, n) becomes (m, n, 1) first, as ``numpy.dstack`` does."""
    def deep(t):
        if t.ndim == 0:
            return reshape(t, 1, 1, 1)
        if t.ndim == 1:
            return reshape(t, 1, -1, 1)
        return reshape(t, *t.shape, 1) if t.ndim == 2 else t
    return cat([deep(t) for t in tensors], 2)


def mv(input, vec):  # noqa: A002
    """Matrix times vector (``MvBackward0``)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {input.ndim}, "
                           f"{vec.ndim}")
    return matmul(input, vec)


def outer(input, vec2):  # noqa: A002
    """The outer product u vᵀ, as u[:, None] * v[None, :]."""
    return reshape(input, -1, 1) * vec2


def bmm(input, mat2):  # noqa: A002
    """A batch of matrix products: (b, n, m) @ (b, m, p)."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, _n, m), (b2, m2, _p) = input.shape, mat2.shape
    if (b2, m2) != (b, m):   # no broadcasting: bmm is the kernel itself
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{b2}, {m2}].")
    as_tensor_pair(input, mat2)   # (the same device, or PyTorch's refusal)
    if input.dtype != mat2.dtype or input.dtype == backend.bool:
        matmul_plan.dtype_refusal(matmul_plan.Plan("batched", "bmm"), input._data, mat2._data)
    return matmul_plan.kernel("bmm", input, mat2)


def _new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """A tensor of that size with this one's dtype and device (zeros here)."""
    from .creation import zeros
    return zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                 requires_grad=requires_grad)


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from .creation import full
    return full(tuple(size), fill_value, dtype=dtype or self.dtype,
                device=device or self.device, requires_grad=requires_grad)


def _new(self, *args, **kwargs):
    """``x.new(...)``, the legacy constructor with x's dtype and device: ``new(2, 3)``
    (a shape: zeros here, uninitialised in PyTorch), ``new([1, 2])`` (data),
    ``new()`` (empty)."""
    kwargs.setdefault("dtype", self.dtype)
    kwargs.setdefault("device", self.device)
    return Tensor(*args, **kwargs)


def _addmm_method(self, mat1, mat2, *, beta=1, alpha=1):
    return arith.addmm(self, mat1, mat2, beta=beta, alpha=alpha)


def _split_with_sizes(self, split_sizes, dim=0):
    return indexing.split(self, list(split_sizes), dim)


METHODS = {
    **_INPLACE_METHODS,
    **shape.INPLACE_VIEWS,
    "erf": unary.erf, "new": _new, "type_as": lambda self, other: convert.to(self, other.dtype),
    "addmm": _addmm_method, "split_with_sizes": _split_with_sizes,
    "swapdims": shape.swapdims, "swapaxes": shape.swapdims,
    "diagonal": _diag.diagonal, "diag": _diag.diag, "trace": _diag.trace,
    "tril": _diag.tril, "triu": _diag.triu,
    "sort": ordering.sort, "argsort": ordering.argsort, "median": ordering.median,
    "log1p": unary_more.log1p, "expm1": unary_more.expm1, "log2": unary_more.log2,
    "log10": unary_more.log10, "tan": unary_more.tan, "sinh": unary_more.sinh,
    "cosh": unary_more.cosh, "cumsum": unary_more.cumsum, "sgn": unary_more.sgn,
    "cumprod": _products.cumprod,
    "mv": mv, "outer": outer, "bmm": bmm, "ger": outer,
    "new_full": _new_full, "new_empty": _new_empty,
    "ndimension": lambda self: self.ndim, "nelement": lambda self: self.numel(),
    "is_contiguous": lambda self, memory_format=None: bool(self._data.flags.c_contiguous),
}

FUNCTIONS = {
    **inplace_functions,
    "erf": unary.erf, "true_divide": arith.div, "floor_divide": arith.floor_divide,
    "remainder": arith.remainder, "atan2": arith.atan2,
    "logical_and": compare.logical_and, "logical_or": compare.logical_or,
    "logical_xor": compare.logical_xor, "bitwise_not": compare.bitwise_not,
    "any": compare.any, "all": compare.all, "searchsorted": ordering.searchsorted,
    "masked_fill": shape.masked_fill, "swapdims": shape.swapdims, "swapaxes": shape.swapdims,
    "split_with_sizes": _split_with_sizes,
    "var_mean": var_mean, "std_mean": std_mean, "dstack": dstack, "mv": mv, "outer": outer,
    "ger": outer, "bmm": bmm, "nansum": reduce.nansum, "nanmean": reduce.nanmean,
    "diagonal": _diag.diagonal, "diag": _diag.diag, "trace": _diag.trace, "tril": _diag.tril,
    "triu": _diag.triu, "sort": ordering.sort, "argsort": ordering.argsort,
    "median": ordering.median, "log1p": unary_more.log1p, "expm1": unary_more.expm1,
    "log2": unary_more.log2, "log10": unary_more.log10, "tan": unary_more.tan,
    "sinh": unary_more.sinh, "cosh": unary_more.cosh, "cumsum": unary_more.cumsum,
    "cumprod": _products.cumprod,
    "sgn": unary_more.sgn, "logit": unary.logit, "index_fill": indexing.index_fill,
    "gather": _scatter.gather, "scatter": _scatter.scatter, "scatter_add": _scatter.scatter_add,
    "index_select": _index_select.index_select, "index_add": _index_select.index_add,
    "masked_select": _masked.masked_select, "masked_scatter": _masked.masked_scatter,
}


def numpy_keywords(fn):
    """Let ``fn`` also take numpy's spellings ``axis=`` and ``keepdims=``, which
    PyTorch accepts as aliases of ``dim=`` and ``keepdim=`` (d2l writes
    ``A.sum(axis=1, keepdims=True)``)."""
    def wrapper(*args, **kwargs):
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    wrapper.__name__, wrapper.__doc__, wrapper.__wrapped__ = fn.__name__, fn.__doc__, fn
    return wrapper


# Ops with a ``dim`` argument that tutorials call with ``axis=`` / ``keepdims=``.
WITH_AXIS = ("sum", "mean", "max", "min", "argmax", "argmin", "std", "var", "amax", "amin",
             "prod", "logsumexp", "cumsum", "cumprod", "median", "sort", "argsort", "softmax",
             "log_softmax", "var_mean", "std_mean", "norm", "all", "any", "nansum", "nanmean")


def install() -> None:
    """Attach the methods to Tensor (the functions are exported by the package)."""
    for name, fn in METHODS.items():
        if not hasattr(Tensor, name):  # never replace a method another file defines
            setattr(Tensor, name, fn)
    for name in WITH_AXIS:
        method = getattr(Tensor, name, None)
        if method is not None and not hasattr(method, "__wrapped__"):
            setattr(Tensor, name, numpy_keywords(method))


def with_axis_functions(namespace: dict) -> dict:
    """The ``torch.`` functions of ``WITH_AXIS`` found in ``namespace``, wrapped."""
    return {name: numpy_keywords(namespace[name]) for name in WITH_AXIS
            if name in namespace and not hasattr(namespace[name], "__wrapped__")}
