"""The array backend: the only module that imports numpy or cupy.

Every other module asks for an *array module* ``xp`` (numpy on the CPU, cupy on
an NVIDIA GPU) and writes ``xp.exp(a)``; the same op code then runs on either
device, as in chainer.  This module also owns the two small value types that
PyTorch prints everywhere: ``dtype`` (``torch.float32``) and ``device``
(``device(type='cpu')``).

Data leaves the GPU in this module only (:func:`to_host`, :func:`move`), and
only when asked: to print or draw a tensor, or to convert it (``.cpu()``,
``.numpy()``, ``.tolist()``, pickling).  Values the engine needs as Python
numbers are read with ``float()`` or ``.item()``, which cupy allows as explicit
synchronisations.  The test suite holds the kit to this with a strict stand-in
for cupy (see :func:`use_cuda_module`).
"""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from .i18n import N_, _

try:  # cupy is optional: importing it must never break a CPU-only install
    import cupy as _cupy
except Exception:  # pragma: no cover - depends on the machine
    _cupy = None

ndarray = np.ndarray
_NUMPY_SCALARS = (np.generic,)

# numpy warns ("divide by zero encountered in log", "invalid value encountered in
# multiply", "Mean of empty slice") where PyTorch silently gives inf or NaN.  The
# kit gives the same numbers and, like PyTorch, says nothing: numpy's
# RuntimeWarnings are ignored when they come from the kit's own code.  A warnings
# filter costs nothing until a warning is raised (``np.errstate`` around every op
# would cost a microsecond each), and the learner's own numpy code still warns.
def quiet_numpy_warnings() -> None:
    """Install that filter (again: a ``warnings.catch_warnings()`` block around
    ``import autograd_kit`` -- pytest puts one around collecting the tests --
    takes it away on leaving the block)."""
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autograd_kit(\.|$)")


quiet_numpy_warnings()


# ---------------------------------------------------------------- dtypes --
class dtype:
    """A tensor element type, printed as PyTorch prints it (``torch.float32``).

    The name prefix is ``torch.`` on purpose: the kit promises the same printed
    output as PyTorch, so lessons can put the two side by side.
    """

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "itemsize")

    def __init__(self, name: str, np_dtype) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


float16 = half = dtype("float16", np.float16)
float32 = float = dtype("float32", np.float32)
float64 = double = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
int8 = dtype("int8", np.int8)
uint8 = dtype("uint8", np.uint8)
int16 = short = dtype("int16", np.int16)
int32 = int = dtype("int32", np.int32)
int64 = long = dtype("int64", np.int64)
bool = dtype("bool", np.bool_)  # noqa: A001 - PyTorch's name

_ALL_DTYPES = (float16, float32, float64, complex64, complex128,
               int8, uint8, int16, int32, int64, bool)
_BY_NP = {d.np: d for d in _ALL_DTYPES}
_BY_NAME = {d.name: d for d in _ALL_DTYPES}


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


def to_dtype(x) -> dtype:
    """Our ``dtype`` for a numpy dtype, a numpy scalar type or one of ours."""
    if x.__class__ is dtype:
        return x
    return _BY_NP[np.dtype(x)]


def np_dtype(d):
    """The numpy dtype for one of ours (or anything numpy understands)."""
    return d.np if d.__class__ is dtype else np.dtype(d)


_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if not to_dtype(d).is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = to_dtype(d)


# ---------------------------------------------------------------- devices --
class device:
    """Where a tensor's memory lives: ``device(type='cpu')`` or ``device(type='cuda', index=0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type_or_str="cpu", index: int | None = None) -> None:
        if type_or_str.__class__ is device:
            self.type, self.index = type_or_str.type, type_or_str.index
            return
        text = str(type_or_str)
        if ":" in text:
            text, idx = text.split(":", 1)
            index = builtins.int(idx)
        if text not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: "
                + str(type_or_str))
        self.type = text
        self.index = index if text == "cuda" else None  # device('cuda') has no index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> builtins.bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")

#: The kit's own message (not PyTorch's), so it is said in the learner's language.
CUDA_HELP = N_("autograd_kit runs on a GPU through cupy, which is not available here. "
               "Install it with `pip install autograd_kit[gpu]` (cupy-cuda12x) on a machine "
               "with an NVIDIA GPU and a CUDA driver.")


def cuda_is_available() -> builtins.bool:
    """True when cupy imports and sees at least one GPU."""
    if _cupy is None:
        return False
    try:
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def xp_for(dev: device):
    """The array module for a device; a clear error when cuda cannot be had."""
    if dev.type == "cpu":
        return np
    if not cuda_is_available():
        raise RuntimeError(_(CUDA_HELP))
    return _cupy


def xp_of(a):
    """The array module that owns array ``a`` (numpy or cupy)."""
    if a.__class__ is np.ndarray or _cupy is None:
        return np
    return _cupy.get_array_module(a)


def device_of(a) -> device:
    if a.__class__ is np.ndarray or _cupy is None or not isinstance(a, _cupy.ndarray):
        return CPU
    return device("cuda", a.device.id)


def same_place(dev: device, a) -> builtins.bool:
    """Is array ``a`` already on ``dev``? (``cuda`` without an index means the current GPU.)"""
    here = device_of(a)
    return here.type == dev.type and (dev.index is None or dev.index == here.index)


def move(a, dev: device):
    """Copy an array to ``dev`` (no copy when it is already there)."""
    if dev.type == "cpu":
        return _cupy.asnumpy(a) if (_cupy is not None and isinstance(a, _cupy.ndarray)) else a
    xp = xp_for(dev)
    with xp.cuda.Device(dev.index or 0):
        return xp.asarray(a)


def move_like(a, like):
    """Array ``a`` on the device of array ``like`` (an index or mask the user made
    on the CPU, used on a GPU tensor); no copy when it is already there."""
    return move(a, device_of(like))


def to_host(a):
    """A numpy array with the same values.

    This is the one place where data leaves the GPU, and only on request: to
    print a tensor, draw it, or hand it over (``.numpy()``, ``.tolist()``,
    pickling).  Everything else stays on the device of its tensor; values the
    engine needs as Python numbers are read with ``float()``/``.item()``."""
    if _cupy is not None and isinstance(a, _cupy.ndarray):
        return _cupy.asnumpy(a)
    return np.asarray(a)


ARRAY_TYPES = {np.ndarray} | ({_cupy.ndarray} if _cupy is not None else set())


def array_from_bytes(buffer, dt: dtype, shape, strides=None, offset: builtins.int = 0,
                     byteorder: str = "little", order: str = "C"):
    """A new CPU array of our dtype ``dt``, read from the raw bytes of a saved file.

    ``shape``, ``strides`` and ``offset`` count elements, as a PyTorch storage
    does (no ``strides``: the C order); ``byteorder`` ("little" or "big") is the
    order the bytes were written in.  The result owns its memory (a copy in the
    machine's byte order, laid out in numpy's ``order``: "K" keeps the order of
    ``strides``, so a saved transpose stays one) and can be written to.
    ValueError when an element lies outside ``buffer`` (a damaged or hostile file)."""
    shape = tuple(builtins.int(n) for n in shape)
    if strides is None:
        strides, step = [], 1
        for n in reversed(shape):
            strides.insert(0, step)
            step *= builtins.max(n, 1)
    strides = tuple(builtins.int(s) for s in strides)
    if len(strides) != len(shape) or offset < 0 or builtins.any(n < 0 for n in shape) \
            or builtins.any(s < 0 for s in strides):
        raise ValueError(f"shape {list(shape)}, strides {list(strides)} and offset {offset} "
                         "do not describe a tensor")
    want = np_dtype(dt)
    if 0 in shape:
        return np.zeros(shape, dtype=want, order="F" if order == "F" else "C")
    stored = np.dtype(np.uint8) if want.kind == "b" else \
        want.newbyteorder("<" if byteorder == "little" else ">")
    count = builtins.sum((n - 1) * s for n, s in zip(shape, strides)) + 1
    held = memoryview(buffer).nbytes
    if (offset + count) * stored.itemsize > held:
        raise ValueError(f"the tensor needs {offset + count} elements of {stored.itemsize} "
                         f"bytes, but its storage holds {held} bytes")
    flat = np.frombuffer(buffer, dtype=stored, count=count, offset=offset * stored.itemsize)
    view = np.lib.stride_tricks.as_strided(flat, shape, [s * stored.itemsize for s in strides],
                                           writeable=False)
    if want.kind == "b":
        return np.not_equal(view, 0, order=order)  # any nonzero byte is True
    return np.array(view, dtype=want, order=order)


def use_cuda_module(module) -> None:
    """Serve the ``cuda`` device with ``module`` instead of cupy.

    ``module`` must offer what the kit uses of cupy (``ndarray``, ``asarray``,
    ``asnumpy``, ``get_array_module``, ``cuda.Device``, ``cuda.runtime`` and the
    numpy-like functions).  The test suite installs a strict stand-in here when
    cupy cannot allocate, so that the GPU path runs on every machine."""
    global _cupy
    if _cupy is not None:
        ARRAY_TYPES.discard(_cupy.ndarray)
    _cupy = module
    ARRAY_TYPES.add(module.ndarray)


def as_array(x):
    """An ndarray for anything array-like (numpy reductions return numpy scalars)."""
    return _cupy.asarray(x) if (_cupy is not None and isinstance(x, _cupy.ndarray)) \
        else np.asarray(x)


def is_array(x) -> builtins.bool:
    return x.__class__ is np.ndarray or (_cupy is not None and isinstance(x, _cupy.ndarray))


class NotAnOperand(TypeError):
    """Arithmetic met something that is neither a tensor, a number nor an array
    (a str, None, a list): the operators turn it into NotImplemented, so that
    Python raises its own "unsupported operand type(s)" error."""


def is_array_or_scalar(x) -> builtins.bool:
    """An array, or a numpy scalar (what arithmetic on 0-d arrays gives back)."""
    return is_array(x) or isinstance(x, np.generic)


# ---------------------------------------------- gradient helpers on arrays ---
def broadcast_axes(have: tuple, want: tuple):
    """How a gradient of shape ``have`` sums down to an input of shape ``want``:
    ``(lead, axes)``, the number of leading axes broadcasting added and the axes
    (counted in ``have``) to sum with keepdims.  ``lead < 0`` means the input had
    extra leading 1s (an index put drops them, as PyTorch's does): the axes are
    those of the rest, and a reshape follows."""
    lead = len(have) - len(want)
    if lead < 0:
        return lead, tuple(i for i, n in enumerate(want[-lead:]) if n == 1 and have[i] != 1)
    return lead, tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(want) if n == 1 and have[lead + i] != 1)


def sum_to(a, shape):
    """Array ``a`` summed down to ``shape`` (see :func:`broadcast_axes`)."""
    lead, axes = broadcast_axes(a.shape, shape)
    if axes:
        a = reduce_sum(a, axes, keepdims=True)
    return a.reshape(shape) if lead else a


# Reductions through the ufuncs themselves (``np.add.reduce``), not the array
# methods (``a.sum()``): the methods run through numpy's own Python code, so
# their warnings (inf - inf summed, a mean of nothing) would seem to come from
# numpy, not from the kit, and pass the filter above.  (cupy: the methods.)
def reduce_sum(a, axis=None, dtype=None, keepdims: builtins.bool = False):
    if a.__class__ is np.ndarray:
        return np.add.reduce(a, axis, dtype, None, keepdims)
    return a.sum(axis=axis, dtype=dtype, keepdims=keepdims)


def reduce_nansum(a, axis=None, dtype=None, keepdims: builtins.bool = False):
    """The sum with every NaN counted as 0 (``nansum``)."""
    if a.dtype.kind in "fc":
        xp = xp_of(a)
        a = xp.where(xp.isnan(a), a.dtype.type(0), a)
    return reduce_sum(a, axis, dtype, keepdims)


def reduce_prod(a, axis=None, keepdims: builtins.bool = False):
    if a.__class__ is np.ndarray:
        return np.multiply.reduce(a, axis, None, None, keepdims)
    return a.prod(axis=axis, keepdims=keepdims)


def reduce_max(a, axis=None, keepdims: builtins.bool = False, empty=-np.inf):
    """The largest value, and ``empty`` over no elements (numpy's max refuses that)."""
    if a.__class__ is np.ndarray:
        return np.maximum.reduce(a, axis, None, None, keepdims, empty)
    if a.size:
        return a.max(axis=axis, keepdims=keepdims)
    shape = np.empty(a.shape).sum(axis=axis, keepdims=keepdims).shape  # (just the shape)
    return xp_of(a).full(shape, empty, dtype=a.dtype)


def cumprod(a, axis):
    if a.__class__ is np.ndarray:
        return np.multiply.accumulate(a, axis)
    return xp_of(a).cumprod(a, axis=axis)


def reduce_mean(a, axis=None, keepdims: builtins.bool = False):
    """The mean; NaN over no elements (numpy's ``mean`` also warns)."""
    if a.__class__ is not np.ndarray or a.dtype.kind != "f":
        return a.mean(axis=axis, keepdims=keepdims)
    n = a.size if axis is None else builtins.int(np.prod(
        [a.shape[d] for d in ((axis,) if builtins.isinstance(axis, builtins.int) else axis)]))
    wide = np.float32 if a.dtype.itemsize < 4 else None  # (float16: summed in float32)
    total = np.add.reduce(a, axis, wide, None, keepdims)
    if not n:
        return (total / total.dtype.type(0)).astype(a.dtype)
    return np.true_divide(total, n, dtype=total.dtype).astype(a.dtype, copy=False)


def is_broadcast_one(a) -> builtins.bool:
    """Is ``a`` a broadcast view of the number 1 (every stride 0)?

    That is what the backward of ``sum()`` sends on (d sum / dx = 1 for every
    element); multiplying by it would only copy the other factor."""
    return a.ndim > 0 and a.size > 0 and not builtins.any(a.strides) and \
        builtins.bool(a.reshape(-1)[0] == 1)


def overlaps_itself(a) -> builtins.bool:
    """Do two elements of ``a`` share one memory location (a broadcast, or an
    ``expand``: stride 0 along a dimension longer than 1)?  Writing into such
    an array is refused, as PyTorch refuses it."""
    return a.size > 1 and builtins.any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape))


def is_writeable(a) -> builtins.bool:
    """May ``a``'s memory be written?  (numpy marks broadcasts read-only; cupy's
    arrays have no such flag and are all writeable.)"""
    return getattr(a.flags, "writeable", True)


def multiply_into(a, b):
    """``a * b`` written into ``a`` (whose memory the caller owns), or a new
    array when the product does not fit there (b broadcasts a up, or its type
    cannot be cast to a's)."""
    try:
        return xp_of(a).multiply(a, b, out=a)
    except (ValueError, TypeError):
        return a * b


def full_like(a, value):
    """An array like ``a`` filled with ``value``, written as a cast writes it: a
    number too big for a float16 becomes inf without numpy's overflow warning
    (PyTorch's ``fill_`` says nothing either)."""
    xp = xp_of(a)
    if xp is np:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.full_like(a, value)
    return xp.full_like(a, value)


def keep_into(a, mask):
    """``a`` where ``mask``, else 0, written into ``a`` (the caller owns it).

    On the CPU a product is the fast way, but 0 * inf is NaN where 0 is meant:
    one sum tells whether anything is not finite, and only then are the zeros
    written where the mask is False.  On a GPU the zeros are written directly
    (a sum would wait for the device)."""
    xp = xp_of(a)
    if xp is not np:
        xp.copyto(a, 0, where=~mask)
        return a
    try:
        np.multiply(a, mask, out=a)
    except (ValueError, TypeError):  # (the mask broadcasts a up)
        return np.where(mask, a, a.dtype.type(0))
    if a.dtype.kind in "fc" and not np.isfinite(reduce_sum(a)):
        np.copyto(a, 0, where=~mask)
    return a


def fit_array(a, shape, dt, like):
    """A formula's result made into an array of the input's ``shape`` and ``dt``:
    a number becomes a filled array (on ``like``'s device), a broadcast gradient
    is summed down, the dtype is cast back."""
    if a.__class__ is not np.ndarray and not is_array(a):
        if isinstance(a, np.generic):
            a = np.asarray(a)
        else:
            return xp_of(like).full(shape, a, dtype=dt)
    if a.shape != shape:
        a = sum_to(a, shape)
    if a.dtype != dt:
        a = a.astype(dt)
    return a


# ------------------------------------------------------ building arrays ---
def _infer_dtype(data):
    """PyTorch's rule: Python floats -> default float, ints -> int64, bools -> bool;
    numpy arrays keep their dtype."""
    if is_array(data) or isinstance(data, _NUMPY_SCALARS):
        return None  # keep
    flat = data
    while isinstance(flat, (list, tuple)):
        if not flat:
            return _default_float.np
        flat = flat[0]
    if hasattr(flat, "_data"):  # a Tensor inside a list
        return None
    if isinstance(flat, np.generic):  # numpy scalars in a list: each keeps its own dtype
        return _list_dtype(data)
    if isinstance(flat, (builtins.bool, builtins.int)) and isinstance(data, (list, tuple)):
        return None  # numpy looks at every element: [2, -3.4] is float, [True, 2] is int
    return _number_dtype(flat)


def _number_dtype(value):
    """The numpy type PyTorch gives a Python number: bool, int64, the default
    float, or the complex type that goes with it (anything else: the default float)."""
    if isinstance(value, builtins.bool):
        return np.bool_
    if isinstance(value, builtins.int):
        return np.int64
    if isinstance(value, complex):
        return np.complex64 if _default_float is float32 else np.complex128
    return _default_float.np


def _list_dtype(data):
    """PyTorch's dtype for a list that holds numpy scalars: every element counts
    with its own type (a Python float as the default float, an int as int64), and
    a higher category wins over a wider type (``[np.int64(1), 2.5]`` is float32),
    not numpy's rule (float64)."""
    result = None
    for v in _flat(data):
        d = v.dtype if isinstance(v, np.generic) else np.dtype(_number_dtype(v))
        result = d if result is None else _promote_dtypes(result, d)
    return result


def make_array(data, dt=None, dev: device = CPU, copy: builtins.bool = True):
    """An array from nested lists, scalars or arrays, with PyTorch's dtype rules."""
    if dt is None:
        inferred = _infer_dtype(data)
    else:
        inferred = np_dtype(dt)
    if isinstance(data, (list, tuple)) and data and any(hasattr(v, "_data") for v in _flat(data)):
        data = _unwrap_nested(data)
    xp = xp_for(dev)
    if dev.type == "cpu" and not is_array(data):
        arr = np.array(data, dtype=inferred)
    else:
        arr = xp.array(move(data, dev) if is_array(data) else data, dtype=inferred, copy=copy)
    if dt is not None or inferred is not None:  # (the dtype was chosen above)
        return arr
    if arr.dtype == np.float64 and not is_array(data) and not isinstance(data, _NUMPY_SCALARS):
        arr = arr.astype(_default_float.np)
    elif arr.dtype == np.complex128 and _default_float is float32 and \
            isinstance(data, (list, tuple)):
        arr = arr.astype(np.complex64)
    return arr


def _flat(seq):
    for v in seq:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _unwrap_nested(seq):
    return [(_unwrap_nested(v) if isinstance(v, (list, tuple))
             else (to_host(v._data) if hasattr(v, "_data") else v)) for v in seq]


# re-exported helpers the rest of the code uses through ``backend.``
broadcast_shapes = np.broadcast_shapes
random = np.random


# ------------------------------------------------------ type promotion ----
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote(a, b):
    """The result dtype of a binary op on arrays ``a`` and ``b``, by PyTorch's rules.

    A higher category (bool < int < float < complex) wins; within a category the
    wider type wins, except that a zero-dimensional operand cannot widen a
    dimensioned one (``float32 tensor * float64 scalar-tensor`` stays float32)."""
    da, db = a.dtype, b.dtype
    if da == db:
        return da
    ca, cb = _CATEGORY[da.kind], _CATEGORY[db.kind]
    a0, b0 = a.ndim == 0, b.ndim == 0
    if a0 != b0:
        dim_d, zero_d, cd, cz = (db, da, cb, ca) if a0 else (da, db, ca, cb)
        return zero_d if cz > cd else dim_d
    return _promote_dtypes(da, db)


def _promote_dtypes(da, db):
    """Of two dtypes that count alike: the higher category (bool < int < float <
    complex) wins, within a category the wider type."""
    if da == db:
        return da
    ca, cb = _CATEGORY[da.kind], _CATEGORY[db.kind]
    if ca != cb:
        return da if ca > cb else db
    return np.result_type(da, db)


promote_types = _promote_dtypes  # (of two tensors that count alike: cat, stack)


def scalar_array(value, like):
    """A Python number as a 0-d array, typed as PyTorch types a "wrapped number":
    it takes the other operand's dtype unless it is of a higher category."""
    kind = like.dtype.kind
    if builtins.isinstance(value, np.generic):  # np.float32(2), np.int64(3): plain numbers
        value = value.item()
    if builtins.isinstance(value, builtins.bool):
        dt = like.dtype
    elif builtins.isinstance(value, builtins.int):
        dt = like.dtype if kind != "b" else np.int64
    elif builtins.isinstance(value, builtins.float):
        dt = like.dtype if kind in "fc" else _default_float.np
    elif builtins.isinstance(value, builtins.complex):
        dt = like.dtype if kind == "c" else (np.complex64 if _default_float is float32
                                             else np.complex128)
    else:
        raise NotAnOperand(f"expected a Tensor or a number, not {builtins.type(value).__name__}")
    try:
        return xp_of(like).asarray(value, dtype=dt)
    except OverflowError:  # ``uint8 tensor + -1``: PyTorch wraps the number around
        return xp_of(like).asarray(np.asarray(value).astype(dt))


def same_device(a, b) -> builtins.bool:
    """True when arrays ``a`` and ``b`` can meet in one op (0-d CPU scalars go anywhere)."""
    if a.__class__ is b.__class__:
        return _cupy is None or a.__class__ is np.ndarray or a.device == b.device
    return ((a.ndim == 0 and a.__class__ is np.ndarray)
            or (b.ndim == 0 and b.__class__ is np.ndarray))


def cuda_device_count() -> builtins.int:
    return _cupy.cuda.runtime.getDeviceCount() if cuda_is_available() else 0


def cuda_synchronize() -> None:
    if cuda_is_available():
        _cupy.cuda.Device().synchronize()
