"""A strict stand-in for cupy: a "cuda" device for machines without a GPU.

The kit's GPU path is numpy code run through cupy.  Where cupy behaves like
numpy, numpy can compute the numbers; the bugs hide where cupy *differs*, and
this module reproduces exactly those differences, as strictly as cupy or more:

* its arrays refuse to become numpy arrays behind the kit's back --
  ``np.asarray(a)``, ``a.__array__()``, a numpy function or ufunc applied to
  one -- with cupy's ``TypeError``; only ``.get()`` / ``asnumpy`` move data to
  the host, and the kit may call them in one module only (``autograd_kit.backend``);
* ``float()``, ``int()``, ``bool()``, ``.item()`` are the explicit syncs cupy allows;
* reductions and indexing give 0-d device arrays, never numpy scalars;
* a host array in an operation with a device array is refused, as cupy refuses it
  (``Unsupported type <class 'numpy.ndarray'>``); Python and numpy scalars are fine;
* only the names cupy has exist (``cupy.<fn>`` and ``cupy.ndarray.<attr>``), and each
  call is checked against cupy's signature (read from the installed wheel,
  see ``cupy_api.py``) before numpy computes it.

Every refusal is also written to :data:`VIOLATIONS`, so one that the kit
catches and hides still fails the test (see ``conftest.py``).
"""
from __future__ import annotations

import sys
import types

import numpy as np

import cupy_api

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")
TRANSFER_MODULE = "autograd_kit.backend"  # the one place the kit moves data to the host

VIOLATIONS: list[str] = []
STATS = {"transfers": 0, "arrays": 0}


def _refuse(exc_type, message):
    VIOLATIONS.append(f"{exc_type.__name__}: {message} ({_where()})")
    return exc_type(message)


def _where() -> str:
    """The innermost line of the kit (or, failing that, of a test) that led here."""
    frame, fallback = sys._getframe(2), None
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith("autograd_kit"):
            return f"{name}:{frame.f_lineno}"
        if fallback is None and name != __name__ and not name.startswith("numpy"):
            fallback = f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return fallback or "?"


def _check_transfer(what: str, depth: int = 2) -> None:
    """A copy to the host: fine from the backend or from a test, a bug anywhere else in the kit."""
    STATS["transfers"] += 1
    caller = sys._getframe(depth).f_globals.get("__name__", "")
    if caller.startswith("autograd_kit") and caller != TRANSFER_MODULE:
        VIOLATIONS.append(f"{what} called in {caller} ({_where()}): the kit moves data to "
                          f"the host only in {TRANSFER_MODULE}")


def _check_call(cupy_obj, label, args, kwargs):
    if cupy_obj is None:
        return
    why = cupy_api.accepts(cupy_obj, len(args), tuple(kwargs))
    if why is not None:
        raise _refuse(TypeError, f"{label} does not accept this call in cupy: {why}")


# ------------------------------------------------------------- converting --
def _wrap(x):
    """numpy results as device arrays (numpy scalars become 0-d arrays, as in cupy)."""
    if isinstance(x, np.ndarray):
        return ndarray(x)
    if isinstance(x, np.generic):
        return ndarray(np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    return x


def _unwrap(x):
    """Device arrays to the numpy arrays inside; a host array is refused."""
    cls = x.__class__
    if cls is ndarray:
        return x._a
    if cls is np.ndarray:
        raise _refuse(TypeError, f"Unsupported type {np.ndarray}")
    if cls is tuple or cls is list:
        return cls(_unwrap(v) for v in x)
    return x


def _unwrap_key(key):
    """An index: device arrays unwrapped; host index arrays allowed (cupy copies them over)."""
    cls = key.__class__
    if cls is ndarray:
        return key._a
    if cls is tuple:
        return tuple(_unwrap_key(k) for k in key)
    return key


class _Flags:
    """cupy's flags: only these three."""
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, a):
        f = a.flags
        self.c_contiguous, self.f_contiguous, self.owndata = f.c_contiguous, f.f_contiguous, \
            f.owndata


class Device:
    """``cupy.cuda.Device``: one stand-in GPU, number 0."""

    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)

    def __enter__(self):
        if self.id != 0:
            raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        return None

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


_DEVICE0 = Device(0)


# ------------------------------------------------------------------ arrays --
def _method_ok(name: str) -> bool:
    ok = _HAS.get(name)
    if ok is None:
        ok = _HAS[name] = cupy_api.cupy is None or cupy_api.ndarray_has(name)
    return ok


_HAS: dict = {}


class ndarray:  # noqa: N801 - cupy's name
    """A device array: a numpy array that only the stand-in module may touch."""

    __slots__ = ("_a",)
    __hash__ = None

    def __init__(self, a):
        self._a = a
        STATS["arrays"] += 1

    # what cupy refuses
    def __array__(self, *args, **kwargs):
        raise _refuse(TypeError, IMPLICIT)

    def __array_function__(self, func, types, args, kwargs):
        raise _refuse(TypeError, IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # ``np.float32(2) * a`` reaches here through numpy's scalar; cupy computes it
        if (method == "__call__" and not kwargs and ufunc.nin == 2
                and any(isinstance(i, np.generic) for i in inputs)
                and all(isinstance(i, (ndarray, np.generic, int, float, complex))
                        for i in inputs)):
            return getattr(module, ufunc.__name__)(*inputs)
        raise _refuse(TypeError, IMPLICIT)

    def __repr__(self):  # no values: printing them is the kit's job, through the backend
        return f"<stand-in device array shape={self._a.shape} dtype={self._a.dtype}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        raise _refuse(TypeError, IMPLICIT)

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    # explicit transfers and syncs
    def get(self, stream=None, order="C", out=None, blocking=True):
        _check_transfer("ndarray.get()")
        return np.array(self._a, order=order)

    def tolist(self):
        _check_transfer("ndarray.tolist()")
        return self._a.tolist()

    def item(self):
        return self._a.item()

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __bool__(self):
        return bool(self._a)

    # plain attributes
    @property
    def device(self):
        return _DEVICE0

    @property
    def data(self):  # cupy's MemoryPointer: only the address is of use here
        return types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0])

    @property
    def flags(self):
        return _Flags(self._a)

    @property
    def shape(self):
        return self._a.shape

    @property
    def ndim(self):
        return self._a.ndim

    @property
    def dtype(self):
        return self._a.dtype

    @property
    def size(self):
        return self._a.size

    @property
    def strides(self):
        return self._a.strides

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield ndarray(np.asarray(self._a[i]))

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap_key(key)])

    def __setitem__(self, key, value):
        self._a[_unwrap_key(key)] = _unwrap(value)

    def __getattr__(self, name):
        if name.startswith("__"):  # numpy's probes (__array_interface__...): not there
            raise AttributeError(name)
        if not _method_ok(name):
            message = f"'cupy.ndarray' object has no attribute '{name}'"
            # numpy has it, cupy not: a difference to report even if the kit catches it
            raise _refuse(AttributeError, message) if hasattr(self._a, name) \
                else AttributeError(message)
        value = getattr(self._a, name)
        if not callable(value):
            return _wrap(value)
        cupy_method = getattr(cupy_api.cupy.ndarray, name) if cupy_api.cupy else None

        def method(*args, **kwargs):
            _check_call(cupy_method, f"cupy.ndarray.{name}", args, kwargs)
            out = value(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
            if name == "diagonal" and self._a.flags.writeable:
                out.flags.writeable = True  # cupy's diagonal is a writable view; numpy's not
            return _wrap(out)
        return method


_SCALARS = (int, float, complex, np.generic)


def _binary(np_op, reflected=False):
    def op(self, other):
        if other.__class__ is np.ndarray:
            raise _refuse(TypeError, f"Unsupported type {np.ndarray}")
        if other.__class__ is ndarray:
            o = other._a
        elif isinstance(other, _SCALARS):
            o = other
        else:
            return NotImplemented
        return _wrap(np_op(o, self._a) if reflected else np_op(self._a, o))
    return op


def _inplace(name):
    def op(self, other):
        if other.__class__ is np.ndarray:
            raise _refuse(TypeError, f"Unsupported type {np.ndarray}")
        o = other._a if other.__class__ is ndarray else other
        getattr(self._a, name)(o)
        return self
    return op


def _unary(np_op):
    def op(self):
        return _wrap(np_op(self._a))
    return op


_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
        "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power,
        "matmul": np.matmul, "and": np.bitwise_and, "or": np.bitwise_or,
        "xor": np.bitwise_xor}
for _n, _f in _OPS.items():
    setattr(ndarray, f"__{_n}__", _binary(_f))
    setattr(ndarray, f"__r{_n}__", _binary(_f, reflected=True))
    setattr(ndarray, f"__i{_n}__", _inplace(f"__i{_n}__"))
for _n, _f in {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}.items():
    setattr(ndarray, f"__{_n}__", _binary(_f))
for _n, _f in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
               "invert": np.invert}.items():
    setattr(ndarray, f"__{_n}__", _unary(_f))


# ------------------------------------------------------------------ module --
class _Ufunc:
    """A numpy ufunc that takes and gives device arrays (``cupy.add``, ``cupy.add.at``)."""

    def __init__(self, np_ufunc, cupy_ufunc):
        self._np, self._cp = np_ufunc, cupy_ufunc
        self.__name__ = np_ufunc.__name__
        self.nin, self.nout = np_ufunc.nin, np_ufunc.nout

    def __call__(self, *args, **kwargs):
        _check_call(self._cp, f"cupy.{self.__name__}", args, kwargs)
        out = kwargs.get("out")
        result = self._np(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return out if out.__class__ is ndarray else _wrap(result)

    def at(self, a, indices, b=None):
        _check_call(getattr(self._cp, "at", None), f"cupy.{self.__name__}.at",
                    (a, indices) + ((b,) if b is not None else ()), {})
        if a.__class__ is not ndarray:
            raise _refuse(TypeError, f"Unsupported type {type(a)}")
        self._np.at(a._a, _unwrap_key(indices), _unwrap(b))

    def __getattr__(self, name):
        if cupy_api.cupy is not None and not hasattr(self._cp, name):
            raise _refuse(AttributeError, f"'ufunc' object has no attribute '{name}'")
        fn = getattr(self._np, name)

        def call(*args, **kwargs):
            return _wrap(fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
        return call


def _function(name, np_fn, cupy_fn):
    def call(*args, **kwargs):
        _check_call(cupy_fn, f"cupy.{name}", args, kwargs)
        out = kwargs.get("out")
        result = np_fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return out if out.__class__ is ndarray else _wrap(result)
    call.__name__ = name
    return call


def _from_host(name):
    """``asarray`` / ``array``: host data (lists, numbers, numpy arrays) copied to the device."""
    np_fn = getattr(np, name)
    cupy_fn = getattr(cupy_api.cupy, name, None) if cupy_api.cupy else None

    def call(obj, *args, **kwargs):
        _check_call(cupy_fn, f"cupy.{name}", (obj,) + args, kwargs)
        kwargs.pop("blocking", None)
        if obj.__class__ is ndarray:
            return _wrap(np_fn(obj._a, *args, **kwargs))
        if isinstance(obj, (list, tuple)) and any(v.__class__ is ndarray for v in _flat(obj)):
            raise _refuse(TypeError, IMPLICIT)  # cupy cannot build from a list of device arrays
        return ndarray(np.array(np_fn(obj, *args, **kwargs), copy=True, ndmin=0))
    call.__name__ = name
    return call


def _flat(seq):
    for v in seq:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    if a.__class__ is ndarray:
        _check_transfer("cupy.asnumpy()")
        return np.array(a._a, order=order)
    return np.asarray(a, order=order)


def get_array_module(*args):
    return module if any(a.__class__ is ndarray for a in args) else np


_runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
_cuda = types.SimpleNamespace(Device=Device, runtime=_runtime, is_available=lambda: True)

_SPECIAL = {"ndarray": ndarray, "asnumpy": asnumpy, "get_array_module": get_array_module,
            "cuda": _cuda, "asarray": _from_host("asarray"), "array": _from_host("array")}


def _module_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if cupy_api.cupy is not None and not hasattr(cupy_api.cupy, name):
        message = f"module 'cupy' has no attribute '{name}'"
        raise _refuse(AttributeError, message) if hasattr(np, name) else AttributeError(message)
    cupy_obj = getattr(cupy_api.cupy, name, None) if cupy_api.cupy else None
    target = getattr(np, name)
    if isinstance(target, np.ufunc):
        value = _Ufunc(target, cupy_obj)
    elif callable(target) and not isinstance(target, type):
        value = _function(name, target, cupy_obj)
    else:
        value = target  # dtypes and constants
    setattr(module, name, value)  # cached: later lookups do not come here
    return value


#: the module the backend is given as "cupy"
module = types.ModuleType("cupy_standin", "A strict stand-in for cupy (tests only).")
module.__dict__.update(_SPECIAL)
module.__getattr__ = _module_getattr
