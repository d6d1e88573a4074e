"""Building: from the records a file described to the kit's own objects.

The unpickler returns a tree of plain containers and records (see
``pickle_records.py``).  :class:`_Builder` walks it once, after the whole
file was read: a ``_Tensor`` record becomes a ``Tensor`` or ``Parameter`` on
the device ``map_location`` chooses, a ``_Dtype`` becomes the kit's dtype,
lists and dicts are rebuilt around what they hold.  A record that is no value
of its own (a bare storage, a numpy array outside a tensor) is refused here.

Two objects the file shares (one tensor under two keys) stay one object: the
builder remembers what it built by ``id``.
"""
from __future__ import annotations

from collections import OrderedDict

from .. import backend
from .load_errors import _damaged, _refused, _unsupported
from .pickle_records import _Device, _Dtype, _NumpyArray, _NumpyDtype, _Record, _Size, _Tensor

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
        from ..nn.parameter import _rebuild_parameter
        from ..tensor import Tensor, _rebuild
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


def _build(raw, map_location):
    """The kit's objects for what the unpickler returned."""
    try:
        return _Builder(map_location).build(raw)
    except RecursionError:
        raise _damaged("its containers are nested too deeply to be a checkpoint.") from None
