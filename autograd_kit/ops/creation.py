"""Making tensors: ``tensor``, ``zeros``, ``randn``, ``arange``, ``from_numpy``...

Types follow PyTorch: Python floats give the default float type (float32),
Python ints give int64, a numpy array keeps its dtype.  Random numbers are
PyTorch's own: after ``manual_seed(s)``, ``randn``, ``randint``, ``randperm``...
draw what PyTorch draws on the CPU (``autograd_kit.random`` explains how).

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


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _dev(device):
    return backend.device(device) if device is not None else backend.CPU


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data``."""
    try:
        if isinstance(data, Tensor):
            data = data._data
        arr = backend.make_array(data, dtype, _dev(device))
        return _finish(arr, requires_grad)
    except Exception as err:
        raise errors.short(err)


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


def _filled(fill, size, dtype, device, requires_grad):
    dt = backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np
    xp = backend.xp_for(_dev(device))
    return _finish(xp.full(_size(size), fill, dtype=dt), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _filled(0, size, dtype, device, requires_grad)
    except Exception as err:
        raise errors.short(err)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _filled(1, size, dtype, device, requires_grad)
    except Exception as err:
        raise errors.short(err)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        return _filled(0, size, dtype, device, requires_grad)
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
                       device, requires_grad)
    except Exception as err:
        raise errors.short(err)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        dt = backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np
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
        xp = backend.xp_for(_dev(device))
        data = xp.arange(start, end, step).astype(backend.np_dtype(dtype))
        return _finish(data, requires_grad)
    except Exception as err:
        raise errors.short(err)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    try:
        dt = backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np
        xp = backend.xp_for(_dev(device))
        return _finish(xp.linspace(start, end, steps).astype(dt), requires_grad)
    except Exception as err:
        raise errors.short(err)


# The random tensors live next door; imported last, since they use the helpers above.
from .random_creation import (bernoulli, multinomial, normal, rand, rand_like,  # noqa: E402,F401
                              randint, randint_like, randn, randn_like, randperm)
