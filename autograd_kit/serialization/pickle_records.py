"""Records: what a file described, checked, and not built yet.

A ``weights_only`` load never hands a file the kit's real classes and
functions.  Each name on the allow-list (see ``safe_unpickle.py``) resolves
to a stand-in that checks its arguments and returns one of the records
below: a :class:`_Tensor` whose bytes were seen to fill its shape, a
:class:`_Dtype`, a :class:`_Size`, a :class:`_Device`...

Why not build the real objects straight away?  A pickle can do more than
call: ``BUILD`` sets attributes on whatever is on its stack.  If the stack
held a real ``Tensor`` (or the ``Tensor`` class itself), a file could change
it, or every tensor made afterwards.  Records refuse ``BUILD`` unless they
expect a state, and their classes are sealed (:class:`_Sealed`).  Only after
the whole file was read does ``rebuild.py`` turn the records into the kit's
objects.
"""
from __future__ import annotations

import sys

from .. import backend
from .load_errors import _damaged, _unsupported


class _Sealed(type):
    """Metaclass of the stand-ins: a file cannot change their classes
    (``BUILD`` sets attributes, and may be aimed at a class)."""

    def __setattr__(cls, name, value):
        raise TypeError(f"{cls.__name__} cannot be changed")

    def __delattr__(cls, name):
        raise TypeError(f"{cls.__name__} cannot be changed")


class _Record(metaclass=_Sealed):
    """Something the file described, checked, and not built yet.

    The unpickler hands these out instead of the kit's real classes and
    functions; :class:`_Builder` turns them into tensors, dtypes, devices and
    sizes once the whole file is read.  A file may aim ``BUILD`` at a record:
    records refuse it unless they expect a state."""

    __slots__ = ()
    global_name = "?"
    missing = None  # what the kit lacks, for a record of something it cannot have

    def __setstate__(self, state):
        raise _damaged(f"it tries to set the state of {self.global_name}, which has none.")


class _Token(_Record):
    """A name that is admitted only as an argument (``numpy.ndarray``, a storage
    class), or one the kit knows it does not have (``missing``: a bfloat16)."""

    __slots__ = ("global_name", "value", "missing")

    def __init__(self, global_name: str, value=None, missing=None) -> None:
        self.global_name, self.value, self.missing = global_name, value, missing


class _Maker(_Record):
    """An admitted function: a callable stand-in that checks the arguments."""

    __slots__ = ("global_name", "_fn")

    def __init__(self, global_name: str, fn) -> None:
        self.global_name, self._fn = global_name, fn

    def __call__(self, *args):
        return self._fn(*args)


class _Dtype(_Record):
    """One of the kit's dtypes, as the file named it."""

    __slots__ = ("dtype",)
    global_name = "autograd_kit.backend.dtype"

    def __init__(self, dt) -> None:
        self.dtype = dt


class _Size(tuple, metaclass=_Sealed):
    """A ``Size`` described by the file (made with ``NEWOBJ``, so a class)."""

    __slots__ = ()
    global_name = "autograd_kit.tensor.Size"

    def __setstate__(self, state):
        if state:
            raise _damaged("it tries to set attributes on a Size.")

    def build(self):
        from ..tensor import Size
        if not all(type(n) is int and n >= 0 for n in self):
            raise _damaged(f"a Size holds {tuple(self)!r}, which are not sizes.")
        return Size(self)


class _Device(_Record):
    """A ``device`` described by the file: ``NEWOBJ`` then a state, or a call."""

    __slots__ = ("spec",)
    global_name = "autograd_kit.backend.device"

    def __new__(cls, *args):
        self = object.__new__(cls)
        self.spec = args or None
        return self

    def __init__(self, *args) -> None:
        pass

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and state[0] is None:
            state = state[1]
        if self.spec is not None or not isinstance(state, dict) or set(state) != {"type", "index"}:
            raise _damaged("a device is described with a state it cannot have.")
        self.spec = (state["type"], state["index"])

    def build(self):
        spec = self.spec or ()
        if not (1 <= len(spec) <= 2 and type(spec[0]) is str
                and (len(spec) == 1 or spec[1] is None or (type(spec[1]) is int and spec[1] >= 0))):
            raise _damaged(f"a device is described as {spec!r}.")
        kind = spec[0].split(":", 1)[0]
        if kind not in ("cpu", "cuda"):
            raise _unsupported(f"it holds the device {spec[0]!r}; the kit has only 'cpu' "
                               "and 'cuda'.")
        try:
            return backend.device(*spec)
        except (RuntimeError, ValueError, TypeError):
            raise _damaged(f"a device is described as {spec!r}.") from None


_BYTE_ORDERS = {"<": "little", ">": "big", "=": sys.byteorder, "|": sys.byteorder}


class _NumpyDtype(_Record):
    """``numpy.dtype('f4')`` then its state (the byte order), from a tensor's pickle."""

    __slots__ = ("dtype", "byteorder")
    global_name = "numpy.dtype"

    def __init__(self, dt) -> None:
        self.dtype, self.byteorder = dt, None

    def __setstate__(self, state):
        if self.byteorder is not None or not isinstance(state, tuple) or len(state) < 5 \
                or state[1] not in _BYTE_ORDERS or state[2:5] != (None, None, None):
            raise _damaged("a numpy dtype is described with a state it cannot have.")
        self.byteorder = _BYTE_ORDERS[state[1]]


class _NumpyArray(_Record):
    """A tensor's values, as numpy pickles an array; read into a real array at once."""

    __slots__ = ("array",)
    global_name = "numpy._core.multiarray._reconstruct"

    def __init__(self) -> None:
        self.array = None

    def __setstate__(self, state):
        # (version 1,) shape, dtype, Fortran order?, bytes
        if self.array is not None or not isinstance(state, tuple) or len(state) not in (4, 5) \
                or (len(state) == 5 and state[0] != 1) or type(state[-2]) is not bool:
            raise _damaged("a numpy array is described with a state it cannot have.")
        shape, dt, fortran, raw = state[-4:]
        self.array = _read_array(raw, dt, shape, "F" if fortran else "C")


def _read_array(raw, dt, shape, order: str):
    """A numpy array from a pickled tensor's bytes, after checking every piece."""
    if not isinstance(dt, _NumpyDtype):
        raise _damaged("a tensor's values name no dtype the kit knows.")
    if isinstance(raw, str):  # protocols 0-2 carry the bytes as a latin-1 string
        raw = raw.encode("latin-1")
    if not isinstance(raw, (bytes, bytearray)):
        raise _damaged("a tensor's values are not bytes.")
    shape = _sizes(shape, "shape")
    numel = 1
    for n in shape:
        numel *= n
    if len(raw) != numel * dt.dtype.itemsize or order not in ("C", "F"):
        raise _damaged(f"a tensor of shape {list(shape)} comes with {len(raw)} bytes of values.")
    strides, step = [], 1
    for n in (shape if order == "F" else reversed(shape)):
        strides.append(step)
        step *= max(n, 1)
    if order == "C":
        strides.reverse()
    return backend.array_from_bytes(raw, dt.dtype, shape, strides, 0,
                                    dt.byteorder or sys.byteorder, order)


def _sizes(values, what: str) -> tuple:
    if not isinstance(values, (tuple, list)) or \
            not all(type(n) is int and n >= 0 for n in values):
        raise _damaged(f"a tensor's {what} is {values!r}, not a list of sizes.")
    return tuple(values)


class _Tensor(_Record):
    """A tensor (or Parameter) described by the file, its values already read."""

    __slots__ = ("array", "requires_grad", "location", "parameter")
    global_name = "autograd_kit.tensor._rebuild"

    def __init__(self, array, requires_grad, location, parameter: bool = False) -> None:
        if type(requires_grad) is not bool:
            raise _damaged(f"a tensor's requires_grad is {requires_grad!r}, not True or False.")
        if type(location) is not str:
            raise _damaged(f"a tensor's device is {location!r}, not a device name.")
        dt = backend.to_dtype(array.dtype)
        if requires_grad and not (dt.is_floating_point or dt.is_complex):
            raise _damaged("an integer or bool tensor is marked as requiring gradients.")
        self.array, self.requires_grad = array, requires_grad
        self.location, self.parameter = location, parameter
