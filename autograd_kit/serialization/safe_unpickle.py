"""The allow-list unpickler: the only names a ``weights_only`` load resolves.

A pickle names what it needs with ``GLOBAL module name`` and the unpickler's
``find_class`` turns that name into an object, normally by importing it.
:class:`_Unpickler` imports nothing: it looks the name up in a table of
stand-ins (built here) and in what the user admitted with
``add_safe_globals``, and refuses every other name before anything is
called.  The stand-ins check their arguments and return records (see
``pickle_records.py``), so even an admitted name does only what a
checkpoint needs.

The tables hold, by the name a pickle uses:

* ``_PLAIN``: Python's own containers and the helpers pickle itself writes
  for bytes, sets and (in old protocols) a tuple subclass;
* ``_NUMPY``: numpy's array-rebuilding functions, which carry a tensor's
  values (admitted only as those values);
* ``_KIT``: the functions and classes the kit's own tensors pickle through.

``zip_checkpoint.py`` adds the ``torch.*`` names of PyTorch's files.
"""
from __future__ import annotations

import _compat_pickle
import pickle
from collections import OrderedDict

from .. import backend
from .load_errors import _BLOCKED_MODULES, _damaged, _refused
from .pickle_records import (_Device, _Dtype, _Maker, _NumpyArray, _NumpyDtype,
                              _read_array, _Size, _Tensor, _Token)

# numpy's short names for the kit's dtypes, as a pickled numpy dtype spells them
_NUMPY_CODES = {"f2": "float16", "f4": "float32", "f8": "float64", "c8": "complex64",
                "c16": "complex128", "i1": "int8", "u1": "uint8", "i2": "int16",
                "i4": "int32", "i8": "int64", "b1": "bool"}


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


def _checked_bytes(kind: type, what: str) -> _Maker:
    """A stand-in for ``bytes`` or ``bytearray``: made only from bytes or text."""
    def make(*args):
        if args and not isinstance(args[0], (bytes, bytearray, str)):
            raise _damaged(f"it asks for {what} in a way pickle never does.")
        return kind(*args)
    return _Maker(f"builtins.{kind.__name__}", make)


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
    "builtins.bytes": _checked_bytes(bytes, "bytes"),
    "builtins.bytearray": _checked_bytes(bytearray, "a bytearray"),
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
_KIT_FILES = {**_PLAIN, **_NUMPY, **_KIT}  # every name a file written by ``save`` may use


def _python3_name(module: str, name: str):
    """Pickles of protocols 0-2 spell names as Python 2 did (``__builtin__.set``,
    ``commands.check_call``); the same renaming as pickle's own."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class _Unpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that resolves a file's globals from ``table`` and
    ``admitted`` (what the user admitted, which wins) only; nothing else is
    ever imported.  With ``strict=False`` (``weights_only=False`` for a
    PyTorch archive) other names are imported as plain pickle would."""

    def __init__(self, file, table: dict, admitted: dict, strict: bool = True) -> None:
        super().__init__(file)
        self.table, self.strict = {**table, **admitted}, strict

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES and self.strict:
            raise _refused(full)
        if full in self.table:
            return self.table[full]
        if not self.strict:
            return super().find_class(module, name)
        raise _refused(full)

    def persistent_load(self, pid):
        raise _damaged("it refers to data stored outside its pickle (a persistent id), which "
                       "only a PyTorch zip archive has, and this file is not one.")
