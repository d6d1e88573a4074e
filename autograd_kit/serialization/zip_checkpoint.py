"""Reading the files ``torch.save`` writes, with the kit's own code.

Such a file is a zip archive whose entries sit in one folder (its name
varies: ``archive``, or the file's stem)::

    archive/data.pkl        the pickle: dicts, tensors' shapes and strides...
    archive/data/0          the raw bytes of storage "0"
    archive/data/1          ...
    archive/byteorder       "little" or "big", how those bytes are written
    archive/version, archive/.format_version, ...

In ``data.pkl`` a tensor is a call to ``torch._utils._rebuild_tensor_v2``
with (storage, storage offset, size, stride, requires_grad, hooks).  The
storage is not in the pickle: it is a *persistent id*, a tuple
``("storage", torch.FloatStorage, "0", "cpu", 6)`` -- the storage class (its
dtype), the entry's key, the device it was saved from and its length in
elements -- that the unpickler's ``persistent_load`` resolves.  Several
tensors may view one storage, at different offsets and strides; each is read
here with :func:`backend.array_from_bytes` into memory of its own.

Nothing of PyTorch is imported: every ``torch.*`` name the pickle uses is
answered from the table below, with the same allow-list and stand-ins as the
kit's own files (see ``safe_unpickle.py`` and ``pickle_records.py``).
"""
from __future__ import annotations

import io
import zipfile

from .. import backend
from .load_errors import _broken_archive, _damaged, _unpickle, _unsupported
from .pickle_records import _Device, _Dtype, _Maker, _Record, _Size, _sizes, _Tensor, _Token
from .rebuild import _build
from .safe_unpickle import _PLAIN, _python3_name, _Unpickler

# PyTorch's storage classes, by the dtype of their elements
_STORAGES = {"DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
             "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
             "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
             "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128"}
# ... and the dtypes PyTorch has and the kit does not
_TORCH_ONLY_STORAGES = {"BFloat16Storage": "bfloat16", "QInt8Storage": "qint8",
                        "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
                        "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4"}
_TORCH_ONLY_DTYPES = ("bfloat16", "complex32", "uint16", "uint32", "uint64", "float8_e4m3fn",
                      "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
                      "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2", "quint2x4")


def _missing_dtype(name: str) -> str:
    return f"it holds {name} tensors, a dtype the kit does not have."


class _Storage(_Record):
    """One ``data/<key>`` entry of the archive: bytes, with the dtype they hold."""

    __slots__ = ("data", "dtype", "location", "byteorder")
    global_name = "torch.storage.UntypedStorage"
    missing = ("it holds a storage on its own; the kit has no storages, only tensors "
               "(save the tensor instead).")

    def __init__(self, data: bytes, dt, location: str, byteorder: str) -> None:
        self.data, self.dtype, self.location, self.byteorder = data, dt, location, byteorder


def _rebuild(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None,
             dtype=None):
    """What ``_rebuild_tensor``/``_v2``/``_v3`` describe: a strided view of a storage."""
    if not isinstance(storage, _Storage):
        raise _damaged("a tensor's storage is not one of the archive's storages.")
    if dtype is None:
        dt = storage.dtype
    elif isinstance(dtype, _Dtype):
        dt = dtype.dtype
    elif isinstance(dtype, _Token) and dtype.missing:
        raise _unsupported(dtype.missing)
    else:
        raise _damaged(f"a tensor's dtype is {dtype!r}.")
    if hooks:
        raise _unsupported("a tensor was saved with backward hooks, which are not restored.")
    if metadata:
        raise _unsupported("a tensor was saved with PyTorch's conjugate or negative bit, which "
                           "the kit does not have.")
    if type(offset) is not int or offset < 0:
        raise _damaged(f"a tensor's storage offset is {offset!r}.")
    size, stride = _sizes(size, "size"), _sizes(stride, "stride")
    try:
        array = backend.array_from_bytes(storage.data, dt, size, stride, offset,
                                         storage.byteorder, "K")
    except ValueError as error:
        raise _damaged(f"a tensor does not fit in its storage ({error}).") from None
    return _Tensor(array, requires_grad, storage.location)


def _rebuild_v1(storage, offset, size, stride):
    return _rebuild(storage, offset, size, stride)


def _rebuild_v3(storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
    return _rebuild(storage, offset, size, stride, requires_grad, hooks, metadata, dtype)


def _no_state(state) -> bool:
    return not state or (isinstance(state, tuple) and not any(state))


def _parameter(data, requires_grad, hooks=None, state=None):
    if not isinstance(data, _Tensor):
        raise _damaged("a Parameter is made of something that is not a tensor.")
    if hooks:
        raise _unsupported("a Parameter was saved with backward hooks, which are not restored.")
    if not _no_state(state):
        raise _unsupported("a Parameter was saved with Python attributes of its own, which "
                           "the kit does not restore.")
    return _Tensor(data.array, requires_grad, data.location, parameter=True)


def _from_type(func, new_type, args, state):
    """``_rebuild_from_type_v2``: a tensor of a subclass, or with attributes."""
    if func not in _TENSOR_MAKERS or new_type not in (_TENSOR, _PARAMETER) \
            or not isinstance(args, tuple):
        raise _unsupported("it holds a tensor of a subclass of torch.Tensor, which the kit "
                           "does not have.")
    if not _no_state(state):
        raise _unsupported("a tensor was saved with Python attributes of its own, which the "
                           "kit does not restore.")
    made = func(*args)
    if not isinstance(made, _Tensor):
        raise _damaged("a tensor's rebuild gives no tensor.")
    if new_type is _PARAMETER:
        return _Tensor(made.array, made.requires_grad, made.location, parameter=True)
    return made


_TENSOR = _Token("torch.Tensor")
_PARAMETER = _Token("torch.nn.parameter.Parameter")
_TENSOR_MAKERS = [_Maker("torch._utils._rebuild_tensor", _rebuild_v1),
                  _Maker("torch._utils._rebuild_tensor_v2", _rebuild),
                  _Maker("torch._utils._rebuild_tensor_v3", _rebuild_v3),
                  _Maker("torch._utils._rebuild_parameter", _parameter),
                  _Maker("torch._utils._rebuild_parameter_with_state", _parameter)]
_TABLE = dict(_PLAIN)
_TABLE.update((maker.global_name, maker) for maker in _TENSOR_MAKERS)
_TABLE.update({
    "torch._tensor._rebuild_from_type_v2": _Maker("torch._tensor._rebuild_from_type_v2",
                                                  _from_type),
    "torch.Tensor": _TENSOR,
    "torch.nn.parameter.Parameter": _PARAMETER,
    "torch.Size": _Size,
    "torch.device": _Device,
    "torch.storage.UntypedStorage": _Token("torch.storage.UntypedStorage", backend.uint8),
})
for _name, _dtype_name in _STORAGES.items():
    _TABLE[f"torch.{_name}"] = _Token(f"torch.{_name}", backend._BY_NAME[_dtype_name])
for _name, _dtype_name in _TORCH_ONLY_STORAGES.items():
    _TABLE[f"torch.{_name}"] = _Token(f"torch.{_name}", None,
                                      _missing_dtype(f"torch.{_dtype_name}"))
for _name in backend._BY_NAME:
    _TABLE[f"torch.{_name}"] = _Dtype(backend._BY_NAME[_name])
for _name in _TORCH_ONLY_DTYPES:
    _TABLE[f"torch.{_name}"] = _Token(f"torch.{_name}", None, _missing_dtype(f"torch.{_name}"))


class _TorchUnpickler(_Unpickler):
    """Reads ``data.pkl``; storages come from the archive's ``data/`` entries."""

    def __init__(self, file, archive, prefix: str, byteorder: str, admitted: dict,
                 strict: bool) -> None:
        super().__init__(file, _TABLE, admitted, strict)
        self.archive, self.prefix, self.byteorder = archive, prefix, byteorder
        self.storages: dict = {}

    def find_class(self, module, name):
        full = ".".join(_python3_name(module, name))
        if not self.strict and module.split(".")[0] == "torch" and full not in self.table:
            raise _unsupported(f"it holds a {full}; from PyTorch's files the kit rebuilds "
                               "tensors, Parameters, dtypes, devices and sizes only.")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise _damaged(f"it refers to outside data as {pid!r}, which is not a storage.")
        kind, key, location, numel = pid[1:]
        if not isinstance(kind, _Token) or (kind.value is None and not kind.missing):
            raise _damaged("a storage is of no storage class.")
        if kind.missing:
            raise _unsupported(kind.missing)
        if type(key) is not str or type(location) is not str or type(numel) is not int \
                or numel < 0:
            raise _damaged(f"a storage is described as {pid[1:]!r}.")
        if key not in self.storages:
            try:
                data = self.archive.read(f"{self.prefix}/data/{key}")
            except KeyError:
                raise _broken_archive(f"it lacks the bytes of storage {key!r} "
                                      f"({self.prefix}/data/{key}).") from None
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
                raise _broken_archive(f"the bytes of storage {key!r} cannot be read "
                                      f"({error}).") from None
            if len(data) < numel * kind.value.itemsize:
                raise _broken_archive(f"storage {key!r} holds {len(data)} bytes, fewer than "
                                      f"its {numel} elements need.")
            self.storages[key] = _Storage(data, kind.value, location, self.byteorder)
        return self.storages[key]


def load_zip(fh, map_location, weights_only: bool, admitted: dict):
    """The object a ``torch.save`` archive holds, with the kit's tensors in it;
    ``admitted``: what the user admitted with ``add_safe_globals``."""
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise _broken_archive("it starts like a zip archive (as torch.save writes), but the "
                              "archive cannot be read: it is damaged or incomplete (cut "
                              "short while being saved, copied or downloaded?).") from None
    with archive:
        names = archive.namelist()
        prefix = names[0].split("/", 1)[0] if names and "/" in names[0] else None
        if prefix is not None and f"{prefix}/constants.pkl" in names:
            raise _unsupported("it is a TorchScript archive (torch.jit.save): a compiled "
                               "program, which the kit cannot run; open it with "
                               "torch.jit.load in PyTorch.")
        if prefix is None or f"{prefix}/data.pkl" not in names:
            raise _broken_archive("it is a zip archive, but not one written by torch.save "
                                  "(there is no data.pkl in its folder).")
        try:
            byteorder = archive.read(f"{prefix}/byteorder").decode("ascii") \
                if f"{prefix}/byteorder" in names else "little"
            pickled = archive.read(f"{prefix}/data.pkl")
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, UnicodeDecodeError):
            raise _broken_archive("its entries cannot be read: the archive is "
                                  "damaged.") from None
        if byteorder not in ("little", "big"):
            raise _broken_archive(f"its byte order is {byteorder!r}.")
        unpickler = _TorchUnpickler(io.BytesIO(pickled), archive, prefix, byteorder, admitted,
                                    strict=weights_only)
        found = _unpickle(pickled[:64], unpickler)
        return _build(found, map_location)
