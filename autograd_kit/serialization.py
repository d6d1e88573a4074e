"""``save`` and ``load``: write tensors (a ``state_dict``, a dict or list of
tensors) to a file, and read them back safely.

Why loading needs care
----------------------
``save`` writes with Python's :mod:`pickle`.  A pickle is not plain data: it is
a small program for a stack machine.  Most of its instructions push numbers,
strings and lists, but two of them are powerful: ``GLOBAL`` imports *any*
function or class by its name (``os.system``, ``builtins.eval``), and
``REDUCE`` calls what was imported with arguments from the file.  An object
decides how it is pickled through ``__reduce__``, so a file made by someone
else can say "import ``os.system`` and call it with ``'rm -rf ~'``", and a
plain ``pickle.load`` does exactly that, before you see any result.  Renaming a
file ``model.pt`` changes nothing.

So, as PyTorch does since 2.6, ``load`` reads with ``weights_only=True`` by
default: an unpickler whose ``find_class`` (the step that resolves ``GLOBAL``)
answers only from a short allow-list, and refuses everything else with
``pickle.UnpicklingError("Weights only load failed. ...")``, naming the global
it refused.  Nothing named by the file is ever imported.  The list admits:

* the kit's tensors and ``nn.Parameter`` (the functions their pickles call to
  rebuild them), ``dtype`` objects (``torch.float32``), ``device`` and ``Size``;
* the numpy pieces a tensor's values travel in (``numpy.ndarray``,
  ``numpy.dtype`` and numpy's two array-rebuilding functions), and only as the
  values of a tensor: a numpy array or dtype on its own is refused;
* ``collections.OrderedDict`` (what ``state_dict()`` returns) and Python's
  plain values: numbers, ``str``, ``bytes``, ``bool``, ``None``, and lists,
  tuples, dicts and sets of them.

Even the admitted names are not the real functions: each is a stand-in that
checks its arguments (a tensor's bytes must fill its shape, its dtype must be
one of the kit's) and only records what the file described.  The real tensors
are built after the whole file was read, so an instruction cannot reach into
one of the kit's objects (``BUILD`` sets attributes) and change it.

To load something else -- a whole pickled model (``save(model)``), an object
of your own class -- either admit just the classes you trust, for every load
(:func:`add_safe_globals`) or for one block (:class:`safe_globals`), or pass
``weights_only=False``, which is plain pickle again: only for files from a
source you trust.  Saving ``model.state_dict()`` instead of the model avoids
the question altogether.

PyTorch's own files
-------------------
``torch.save`` writes a zip archive: ``<name>/data.pkl`` is the pickle, whose
tensors point (through "persistent ids") at raw storages ``<name>/data/0``,
``<name>/data/1``...  ``load`` reads those too, for tensors, Parameters,
dtypes, devices and containers (a ``state_dict`` saved by PyTorch loads into
the kit's model), with the same allow-list; see ``_zip_checkpoint.py``.

``map_location`` (a device, a string, a dict from saved to new location, or a
function ``(tensor, location)``) says where the loaded tensors go.
"""
from __future__ import annotations

import _compat_pickle
import io
import os
import pickle
import sys
import warnings
from collections import OrderedDict

from . import backend

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]


def save(obj, f, pickle_module=pickle, pickle_protocol: int = 2, **ignored) -> None:
    """``save(model.state_dict(), "model.pt")``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            pickle_module.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


# ------------------------------------------------------------- safe globals --
_user_globals: set = set()


def _entry(item):
    """(the dotted name a pickle uses for ``item``, the object)."""
    if isinstance(item, tuple):
        if len(item) != 2:
            raise ValueError("a safe global given as a tuple must be (object, 'module.name'), "
                             f"not a tuple of length {len(item)}")
        if type(item[1]) is not str:
            raise TypeError("the second item of a (object, name) safe global must be a str, "
                            f"not {type(item[1]).__name__}")
        return item[1], item[0]
    return f"{item.__module__}.{item.__qualname__}", item


def add_safe_globals(safe_globals: list) -> None:
    """Admit these classes or functions in every ``weights_only`` load from now on.

    Each item is the object itself (found in the file under its
    ``__module__.__qualname__``) or a pair ``(object, "module.name")``.  A file
    may then call it and set attributes on what it returns, so admit only code
    you have read."""
    for item in safe_globals:
        _entry(item)
    _user_globals.update(safe_globals)


def get_safe_globals() -> list:
    """What :func:`add_safe_globals` admitted so far."""
    return list(_user_globals)


def clear_safe_globals() -> None:
    """Forget everything :func:`add_safe_globals` admitted."""
    _user_globals.clear()


class safe_globals:
    """``with safe_globals([MyClass]): load(path)``: admit for the block only.

    On leaving, the list is as it was before (what the block itself added with
    :func:`add_safe_globals` stays)."""

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = list(safe_globals)
        self._added: list = []

    def __enter__(self) -> None:
        self._added = [g for g in self.safe_globals if g not in _user_globals]
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        _user_globals.difference_update(self._added)


def _user_table() -> dict:
    return dict(_entry(item) for item in _user_globals)


# ----------------------------------------------------------------- messages --
_ADMITTED = ("tensors, Parameters, dtypes, devices, Size, OrderedDict, and Python's numbers, "
             "strings, bytes, lists, tuples, dicts and sets")
# Modules whose functions can never be admitted, even on request (as in PyTorch).
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def _refused_message(name: str, note: str = "") -> str:
    module = name.rsplit(".", 1)[0]
    if module in _BLOCKED_MODULES:
        return (f"Weights only load failed. Unsupported global: GLOBAL {name} belongs to the "
                f"module `{module}`, which is never admitted: its functions run programs, "
                "touch files or change Python itself. Loading stopped before anything it "
                "names was called.\n"
                "Only if you trust the source of this file, load it with "
                "`weights_only=False`; that lets the file run any code it contains.")
    if not note and name.startswith(("autograd_kit.nn.", "torch.nn.")):
        note = ("It looks like a whole model object was saved, not its `state_dict()`; "
                "save `model.state_dict()` and restore it with "
                "`model.load_state_dict(load(path))`. ")
    return (f"Weights only load failed. Unsupported global: GLOBAL {name} is not among what "
            f"`load` rebuilds by default ({_ADMITTED}). {note}Loading stopped before "
            "anything it names was called.\n"
            "If you trust the source of this file, you can either\n"
            "  (1) load it with `weights_only=False`, which lets the file run any code it "
            "contains (do it only for a file from a source you trust), or\n"
            "  (2) admit just this global and keep every other check: "
            f"`autograd_kit.serialization.add_safe_globals([{name}])`, or for one load, "
            f"`with autograd_kit.serialization.safe_globals([{name}]): ...`.")


class _LoadError(Exception):
    """Raised while reading; ``load`` turns it into the exception the user sees.

    ``kind`` is "refused" (a global off the list), "damaged" (the pickle is
    not what it claims), "archive" (a zip archive that is not a readable
    checkpoint) or "unsupported" (a valid file with something the kit does
    not have, such as a bfloat16 tensor)."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind, self.text = kind, text

    def public(self, what: str) -> Exception:
        if self.kind == "refused":
            return pickle.UnpicklingError(self.text)
        if self.kind == "damaged":
            return pickle.UnpicklingError(f"{what} cannot be loaded: {self.text}")
        if self.kind == "archive":  # (PyTorch raises RuntimeError for these too)
            return RuntimeError(f"{what} cannot be loaded: {self.text}")
        return RuntimeError(f"{what} cannot be loaded by autograd_kit: {self.text}")


def _refused(name: str, note: str = "") -> _LoadError:
    return _LoadError("refused", _refused_message(name, note))


def _damaged(text: str) -> _LoadError:
    return _LoadError("damaged", text)


def _unsupported(text: str) -> _LoadError:
    return _LoadError("unsupported", text)


def _broken_archive(text: str) -> _LoadError:
    return _LoadError("archive", text)


def _describe(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, (str, bytes)) else f"the {type(f).__name__} object"


def _as_text(head: bytes):
    """The first bytes as text, or None when they are not text."""
    for cut in range(4):  # (the last character may be cut in the middle)
        try:
            text = head[:len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text and all(c.isprintable() or c in "\t\r\n" for c in text):
            return text
        return None
    return None


def _what_it_is(head: bytes) -> str:
    """Why a file that pickle could not read is not a checkpoint, from its first bytes."""
    if head.startswith(b"\x93NUMPY"):
        return ("it is a numpy `.npy` file, not a checkpoint; read it with `numpy.load` "
                "(then `autograd_kit.from_numpy`).")
    text = _as_text(head)
    if text is not None:
        first = next((line for line in text.splitlines() if line.strip()), "")[:40]
        return (f"it is a text file (it starts with {first!r}), not a checkpoint written by "
                "`save` or `torch.save`.")
    if head[:1] == b"\x80":
        return "it starts like a pickle, but what follows is damaged: it is not a checkpoint."
    return (f"it is not a checkpoint: it starts with the bytes {head[:8]!r}, where a file "
            "written by `save` starts with a pickle header (b'\\x80') and one written by "
            "`torch.save` is a zip archive (b'PK').")


_TRUNCATED = ("the file ends in the middle of its data: it is incomplete (cut short while "
              "being saved, copied or downloaded?).")


# -------------------------------------------------- what the file described --
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
        from .tensor import Size
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


# numpy's short names for the kit's dtypes, as a pickled numpy dtype spells them
_NUMPY_CODES = {"f2": "float16", "f4": "float32", "f8": "float64", "c8": "complex64",
                "c16": "complex128", "i1": "int8", "u1": "uint8", "i2": "int16",
                "i4": "int32", "i8": "int64", "b1": "bool"}
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
        if self.array is not None or not isinstance(state, tuple) or len(state) not in (4, 5):
            raise _damaged("a numpy array is described with a state it cannot have.")
        shape, dt, fortran, raw = state[-4:]
        if len(state) == 5 and state[0] != 1:
            raise _damaged("a numpy array is described with a state it cannot have.")
        if type(fortran) is not bool:
            raise _damaged("a numpy array is described with a state it cannot have.")
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


def _array_of(data):
    """The checked numpy array inside a tensor's pickle."""
    if isinstance(data, _NumpyArray) and data.array is not None:
        return data.array
    if backend.is_array(data):  # numpy's own functions, admitted by the user
        try:
            backend.to_dtype(data.dtype)
            return data
        except (KeyError, TypeError):
            pass
    raise _damaged("a tensor's values are not an array of a dtype the kit knows.")


# the stand-ins for the names a file written by the kit uses
def _kit_tensor(data, requires_grad, device="cpu"):
    return _Tensor(_array_of(data), requires_grad, device)


def _kit_parameter(data, requires_grad, device="cpu"):
    return _Tensor(_array_of(data), requires_grad, device, parameter=True)


def _kit_dtype(name):
    if type(name) is not str or name not in backend._BY_NAME:
        raise _damaged(f"it names the dtype {name!r}, which the kit does not have.")
    return _Dtype(backend._BY_NAME[name])


def _numpy_dtype(code, align=False, copy=False):
    if type(code) is not str or code not in _NUMPY_CODES:
        raise _refused("numpy.dtype", f"(The dtype {code!r} is not one a tensor can have.) ")
    return _NumpyDtype(backend._BY_NAME[_NUMPY_CODES[code]])


def _numpy_reconstruct(cls, shape=(0,), typecode=b"b"):
    if cls is not _NDARRAY:
        raise _refused("numpy._core.multiarray._reconstruct",
                       "(It is admitted only to rebuild a numpy.ndarray.) ")
    return _NumpyArray()


def _numpy_frombuffer(buffer, dt, shape, order):
    record = _NumpyArray()
    record.array = _read_array(buffer, dt, shape, order)
    return record


def _encode(text, encoding="latin1"):
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise _damaged("it encodes bytes in a way pickle never does.")
    return text.encode("latin-1")


def _bytes(*args):
    if args and not isinstance(args[0], (bytes, bytearray, str)):
        raise _damaged("it asks for bytes in a way pickle never does.")
    return bytes(*args)


def _bytearray(*args):
    if args and not isinstance(args[0], (bytes, bytearray, str)):
        raise _damaged("it asks for a bytearray in a way pickle never does.")
    return bytearray(*args)


def _reconstructor(cls, base, state):  # how protocols 0 and 1 write a Size
    if cls is not _Size or base is not tuple:
        raise _refused("copyreg._reconstructor", "(It is admitted only to rebuild a Size.) ")
    return _Size(state)


_NDARRAY = _Token("numpy.ndarray")

# what is admitted in any file, by the name a pickle uses for it
_PLAIN = {
    "collections.OrderedDict": OrderedDict,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.complex": complex,
    "builtins.tuple": tuple,
    "builtins.bytes": _Maker("builtins.bytes", _bytes),
    "builtins.bytearray": _Maker("builtins.bytearray", _bytearray),
    "_codecs.encode": _Maker("_codecs.encode", _encode),
    "copyreg._reconstructor": _Maker("copyreg._reconstructor", _reconstructor),
}
_NUMPY = {
    "numpy.ndarray": _NDARRAY,
    "numpy.dtype": _Maker("numpy.dtype", _numpy_dtype),
}
for _module in ("numpy._core", "numpy.core"):  # numpy 2 and numpy 1
    _NUMPY[f"{_module}.multiarray._reconstruct"] = _Maker(f"{_module}.multiarray._reconstruct",
                                                          _numpy_reconstruct)
    _NUMPY[f"{_module}.numeric._frombuffer"] = _Maker(f"{_module}.numeric._frombuffer",
                                                      _numpy_frombuffer)
_KIT = {
    "autograd_kit.tensor._rebuild": _Maker("autograd_kit.tensor._rebuild", _kit_tensor),
    "autograd_kit.nn.parameter._rebuild_parameter":
        _Maker("autograd_kit.nn.parameter._rebuild_parameter", _kit_parameter),
    "autograd_kit.backend._dtype_by_name": _Maker("autograd_kit.backend._dtype_by_name",
                                                  _kit_dtype),
    "autograd_kit.backend.device": _Device,
    "autograd_kit.tensor.Size": _Size,
}


def _python3_name(module: str, name: str):
    """Pickles of protocols 0-2 spell names as Python 2 did (``__builtin__.set``,
    ``commands.check_call``); the same renaming as pickle's own."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _Unpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that resolves a file's globals from ``table`` only
    (and from what the user admitted); nothing else is ever imported."""

    def __init__(self, file, table: dict, strict: bool = True) -> None:
        super().__init__(file)
        self.table, self.strict, self.user = table, strict, _user_table()

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES and self.strict:
            raise _refused(full)
        if full in self.user:
            return self.user[full]
        if full in self.table:
            return self.table[full]
        if not self.strict:
            return super().find_class(module, name)
        raise _refused(full)

    def persistent_load(self, pid):
        raise _damaged("it refers to data stored outside its pickle (a persistent id), which "
                       "only a PyTorch zip archive has, and this file is not one.")


# ------------------------------------------------------------ building --
_ATOMS = (type(None), bool, int, float, complex, str, bytes, bytearray)


class _Builder:
    """Turns what the unpickler returned into the kit's objects: records become
    tensors, dtypes, devices and sizes; containers are rebuilt around them;
    anything else left over is refused.  Shared objects stay shared."""

    def __init__(self, map_location=None) -> None:
        self.map_location = map_location
        self.memo: dict = {}
        self.busy: set = set()

    def build(self, obj):
        key = id(obj)
        if key in self.memo:
            return self.memo[key]
        if key in self.busy:
            raise _unsupported("a tuple contains itself, which the kit does not rebuild.")
        kind = type(obj)
        if kind in _ATOMS:
            return obj
        self.busy.add(key)
        out = self.memo[key] = self._build(obj, kind)
        self.busy.discard(key)
        return out

    def _build(self, obj, kind):
        memo, build = self.memo, self.build
        if kind is _Tensor:
            return self.tensor(obj)
        if kind is _Dtype:
            return obj.dtype
        if kind in (_Size, _Device):
            return obj.build()
        if kind is list:
            out = memo[id(obj)] = []
            out.extend(build(v) for v in obj)
            return out
        if kind in (dict, OrderedDict):
            out = memo[id(obj)] = kind()
            for k, v in obj.items():
                out[build(k)] = build(v)
            for k, v in getattr(obj, "__dict__", {}).items():  # e.g. a state_dict's _metadata
                out.__dict__[k] = build(v)
            return out
        if kind is set:
            out = memo[id(obj)] = set()
            out.update(build(v) for v in obj)
            return out
        if kind in (tuple, frozenset):
            return kind(build(v) for v in obj)
        if kind is _NumpyArray or kind is _NumpyDtype:
            raise _refused(obj.global_name, "(A numpy array or dtype is admitted only as the "
                           "values of a tensor; to load numpy arrays, admit "
                           "numpy._core.multiarray._reconstruct, numpy.ndarray and "
                           "numpy.dtype.) ")
        if isinstance(obj, _Record):
            return self.leftover(obj)
        # an object made by something the user admitted (or any object, with
        # weights_only=False): kept, with the records inside it built
        memo[id(obj)] = obj
        if isinstance(obj, list):
            obj[:] = [build(v) for v in obj]
        elif isinstance(obj, dict):
            for k in list(obj):
                obj[k] = build(obj[k])
        attrs = getattr(obj, "__dict__", None)
        if type(attrs) is dict and not isinstance(obj, type):
            for k in list(attrs):
                attrs[k] = build(attrs[k])
        return obj

    def leftover(self, record):
        """A record that is no value: a bare storage, a class or function itself."""
        if record.missing:
            raise _unsupported(record.missing)
        raise _refused(record.global_name, "(It is admitted only as part of a tensor, "
                       "not as a value of its own.) ")

    # -- tensors and where they go
    def tensor(self, record: _Tensor):
        from .nn.parameter import _rebuild_parameter
        from .tensor import Tensor, _rebuild
        make = _rebuild_parameter if record.parameter else _rebuild
        where = self.map_location
        if callable(where) and not isinstance(where, (str, dict, backend.device)):
            moved = where(make(record.array, False, "cpu"), record.location)
            if moved is not None:
                if not isinstance(moved, Tensor):
                    raise TypeError("a map_location function must return a tensor or None, "
                                    f"not {type(moved).__name__}")
                return make(moved._data, record.requires_grad, str(moved.device))
            where = None
        place = self.place(record.location, where)
        return make(record.array, record.requires_grad, place)

    @staticmethod
    def place(location: str, where) -> str:
        """The device a tensor saved on ``location`` goes to, per map_location."""
        if isinstance(where, dict):
            target = str(where.get(location, location))
        else:
            target = location if where is None else str(where)
        try:
            dev = backend.device(target)
        except (RuntimeError, ValueError):
            raise RuntimeError(
                f"a tensor in the file was saved on {location!r}, and the kit has no device "
                f"{target!r}; pass map_location='cpu' (or 'cuda') to load it there.") from None
        if dev.type == "cuda" and not backend.cuda_is_available():
            saved = "" if target == location else f" (it was saved on {location!r})"
            raise RuntimeError(
                f"a tensor in the file is to go to {target!r}{saved}, but there is no GPU "
                "here (autograd_kit runs 'cuda' through cupy); pass map_location='cpu' to "
                "load it onto the CPU.")
        return str(dev)


# ---------------------------------------------------------------- loading --
_ZIP_MAGIC = b"PK\x03\x04"
_TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """``model.load_state_dict(load("model.pt"))``.

    ``weights_only=True`` (the default, as in PyTorch) rebuilds only tensors,
    dtypes, devices, sizes and plain containers, and refuses any other global
    the file names (see the module's docstring).  ``weights_only=False`` is
    plain pickle, for files you trust.  ``f`` is a path or a binary file
    object; files written by ``torch.save`` are read too.  ``mmap`` is
    accepted for PyTorch's signature; the whole file is read into memory."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("load cannot read safely with a pickle_module of your own; pass "
                           "weights_only=False to use it (only for a file you trust).")
    if weights_only and pickle_load_args:
        warnings.warn("load: the extra pickle arguments "
                      f"({', '.join(sorted(pickle_load_args))}) are used only with "
                      "weights_only=False; they are ignored here.", stacklevel=2)
    what = _describe(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_from(fh, what, map_location, pickle_module, weights_only,
                              pickle_load_args)
    return _load_from(f, what, map_location, pickle_module, weights_only, pickle_load_args)


def _peek(fh, n: int = 64):
    """The first ``n`` bytes, left unread; a stream that cannot seek is read whole."""
    try:
        start = fh.tell()
    except (AttributeError, OSError, ValueError):
        data = fh.read()
        return data[:n], io.BytesIO(data)
    head = fh.read(n)
    try:
        fh.seek(start)
    except (AttributeError, OSError, ValueError):
        data = head + fh.read()
        return data[:n], io.BytesIO(data)
    return head, fh


def _load_from(fh, what, map_location, pickle_module, weights_only, pickle_load_args):
    head, fh = _peek(fh)
    if isinstance(head, str):
        raise TypeError(f"load needs a file opened in binary mode ('rb'); {what} gives str")
    if not head:
        raise EOFError(f"{what} is empty: there is nothing to load (was the saving cut short, "
                       "or is the file position already at its end?).")
    try:
        if head.startswith(_ZIP_MAGIC):
            from ._zip_checkpoint import load_zip
            return load_zip(fh, map_location, weights_only)
        if weights_only:
            raw = _unpickle(head, _Unpickler(fh, {**_PLAIN, **_NUMPY, **_KIT}))
            if type(raw) is int and raw == _TORCH_LEGACY_MAGIC:
                raise _unsupported("it is in PyTorch's old format (saved with "
                                   "_use_new_zipfile_serialization=False), which the kit does "
                                   "not read; save it again with torch.save's default.")
            return _build(raw, map_location)
        trusting = _trusting_unpickler(fh, map_location, pickle_module or pickle,
                                       pickle_load_args)
        return _unpickle(head, trusting)
    except _LoadError as error:
        raise error.public(what) from None


def _build(raw, map_location):
    try:
        return _Builder(map_location).build(raw)
    except RecursionError:
        raise _damaged("its containers are nested too deeply to be a checkpoint.") from None


def _unpickle(head: bytes, unpickler):
    """``unpickler.load()``, with pickle's own complaints about a file that is
    not a pickle (or not a whole one) told as what the file is."""
    try:
        return unpickler.load()
    except _LoadError:
        raise
    except MemoryError:
        raise
    except Exception as error:
        if not getattr(unpickler, "strict", True) and \
                not isinstance(error, (EOFError, pickle.UnpicklingError)):
            raise  # (weights_only=False: the file's own code failed)
        cut_short = isinstance(error, EOFError) or "truncated" in str(error)
        if cut_short and head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04",
                                                               b"\x05"):
            raise _damaged(_TRUNCATED) from None
        raise _damaged(_what_it_is(head)) from None


def _trusting_unpickler(fh, map_location, pickle_module, pickle_load_args):
    """Plain pickle (``weights_only=False``), with the kit's tensors put where
    ``map_location`` says as they are rebuilt."""

    class Trusting(pickle_module.Unpickler):
        strict = False

        def find_class(self, module, name):
            found = super().find_class(module, name)
            if map_location is None:
                return found
            from .nn.parameter import _rebuild_parameter
            from .tensor import _rebuild
            if found is _rebuild or found is _rebuild_parameter:
                parameter = found is _rebuild_parameter

                def placed(data, requires_grad, device="cpu"):
                    record = _Tensor(data, requires_grad, device, parameter)
                    return _Builder(map_location).tensor(record)
                return placed
            return found

    return Trusting(fh, **pickle_load_args)
