"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``arange``, ``from_numpy``...

Types follow PyTorch: Python floats give the default float type (float32),
Python ints give int64, a numpy array keeps its dtype.  Random tensors
(``randn``, ``randint``, ``randperm``...) are made one layer up, with the
helpers here: ``random_creation.py``.

Every public function here catches its errors and raises them again through
``errors.short``: ``tensor([1, 2], requires_grad=True)`` shows the learner's line
and the call, not the helpers behind it (PyTorch shows no frame of its own).
"""
from __future__ import annotations

import builtins

from .. import backend, errors
from ..random import manual_seed, seed  # noqa: F401 - re-exported
from ..tensor import Tensor


def _finish(data, requires_grad: bool) -> Tensor:
    t = Tensor._make(data)
    if requires_grad:
        if data.dtype.kind not in "fc":
            raise RuntimeError(errors.INT_REQUIRES_GRAD)
        t._rg = True
    return t


def _size(size, name: str = "") -> tuple:
    """The sizes given as ``f(2, 3)`` or ``f((2, 3))``, as ints, refused in
    PyTorch's words when one is not an integer or is negative."""
    one = len(size) == 1 and isinstance(size[0], (tuple, list))
    if one:
        size = size[0]
    out = []
    for i, n in enumerate(size):
        if isinstance(n, builtins.float) or not hasattr(n, "__index__"):
            raise TypeError(_size_type_error(name, size, i, one))
        out.append(n.__index__())
    for n in out:
        if n < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {out}")
    return tuple(out)


def _size_type_error(name, size, i, one) -> str:
    kind = type(size[i]).__name__
    if len(size) == 1 and not one:
        return f"{name}(): argument 'size' (position 1) must be tuple of ints, not {kind}"
    if isinstance(size, list):
        return (f"{name}(): argument 'size' (position 1) must be tuple of ints, but found "
                f"element of type {kind} at pos {i}")
    return (f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
            f"\"type must be tuple of ints,but got {kind}\"")


_default_device = backend.CPU


def _dev(device):
    return backend.device(device) if device is not None else _default_device


def set_default_device(device) -> None:
    """The device that creation functions use when no ``device=`` is given
    (``None`` or ``"cpu"``: the CPU)."""
    global _default_device
    _default_device = backend.CPU if device is None else backend.device(device)


def get_default_device():
    return _default_device


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data``."""
    try:
        if isinstance(data, Tensor):
            data = data._data
        try:
            arr = backend.make_array(data, dtype, _dev(device))
        except (ValueError, TypeError):
            _check_data(data)
            raise
        if arr.dtype.kind in "OUS" or data is None or (
                arr.dtype.kind == "f" and isinstance(data, (list, tuple)) and
                backend.xp_of(arr).isnan(arr).any()):  # (numpy reads None as NaN)
            _check_data(data)
        return _finish(arr, requires_grad)
    except Exception as err:
        raise errors.short(err)


_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _check_data(data) -> None:
    """PyTorch's words for data that is not numbers: a string where a list of
    numbers should be, None, a dict..."""
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
        if isinstance(first, str):
            raise ValueError("too many dimensions 'str'")
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            raise TypeError("new(): invalid data type 'str'")
        elif not (isinstance(item, _SCALARS) or backend.is_array_or_scalar(item)
                  or isinstance(item, Tensor)):
            raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    try:
        if isinstance(data, Tensor) and dtype is None and device is None:
            return data
        if backend.is_array(data) and dtype is None and device is None:
            return Tensor._make(data)
        return tensor(data, dtype, device)
    except Exception as err:
        raise errors.short(err)


def from_numpy(array) -> Tensor:
    """A tensor that *shares memory* with the numpy array: changing one changes the other."""
    return Tensor._make(array)


def _shape(name, shape, size):
    """The shape given as ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    if size is None:
        return shape
    if shape:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _filled(fill, size, dtype, device, requires_grad, name=""):
    dt = backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np
    xp = backend.xp_for(_dev(device))
    return _finish(xp.full(_size(size, name), fill, dtype=dt), requires_grad)


def zeros(*shape, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _filled(0, _shape("zeros", shape, size), dtype, device,
                       requires_grad, "zeros")
    except Exception as err:
        raise errors.short(err)


def ones(*shape, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _filled(1, _shape("ones", shape, size), dtype, device,
                       requires_grad, "ones")
    except Exception as err:
        raise errors.short(err)


def empty(*shape, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _filled(0, _shape("empty", shape, size), dtype, device,
                       requires_grad, "empty")
    except Exception as err:
        raise errors.short(err)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        if dtype is None:
            if isinstance(fill_value, builtins.bool):
                dtype = backend.bool
            elif isinstance(fill_value, builtins.int):
                dtype = backend.int64
        return _filled(fill_value, (size,) if isinstance(size, int) else (tuple(size),), dtype,
                       device, requires_grad, "full")
    except Exception as err:
        raise errors.short(err)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        dt = backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np
        for name, v in (("n", n), ("m", m)):
            if v is not None and v < 0:
                raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
        return _finish(backend.xp_for(_dev(device)).eye(n, m, dtype=dt), requires_grad)
    except Exception as err:
        raise errors.short(err)


def _like(fn, t, dtype, device, requires_grad, *extra):
    return fn(*extra, *t.shape, dtype=dtype or t.dtype, device=device or t.device,
              requires_grad=requires_grad) if extra == () else fn(
        t.shape, *extra, dtype=dtype or t.dtype, device=device or t.device,
        requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _like(zeros, t, dtype, device, requires_grad)
    except Exception as err:
        raise errors.short(err)


def ones_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _like(ones, t, dtype, device, requires_grad)
    except Exception as err:
        raise errors.short(err)


def empty_like(t, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _like(zeros, t, dtype, device, requires_grad)
    except Exception as err:
        raise errors.short(err)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device,
                    requires_grad=requires_grad)
    except Exception as err:
        raise errors.short(err)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        if end is None:
            start, end = 0, start
        if dtype is None:
            ints = builtins.all(isinstance(v, builtins.int) for v in (start, end, step))
            dtype = backend.int64 if ints else backend.get_default_dtype()
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if (end - start) * step < 0:
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        xp = backend.xp_for(_dev(device))
        data = xp.arange(start, end, step).astype(backend.np_dtype(dtype))
        return _finish(data, requires_grad)
    except Exception as err:
        raise errors.short(err)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        dt = backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np
        if steps < 0:
            raise RuntimeError("number of steps must be non-negative")
        xp = backend.xp_for(_dev(device))
        return _finish(xp.linspace(start, end, steps).astype(dt), requires_grad)
    except Exception as err:
        raise errors.short(err)
