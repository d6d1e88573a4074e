"""Pre-0.4 names kept for old tutorials: ``FloatTensor([4])`` and friends.

``FloatTensor(data)`` makes a float32 tensor; ``isinstance(t, FloatTensor)``
checks the dtype, as PyTorch's legacy type objects do.
"""
from __future__ import annotations

from . import backend
from .tensor import Tensor


class _LegacyType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype

    def __call__(cls, *args, requires_grad=False):
        return Tensor(*args, dtype=cls._dtype, requires_grad=requires_grad)


class FloatTensor(metaclass=_LegacyType):
    _dtype = backend.float32


class DoubleTensor(metaclass=_LegacyType):
    _dtype = backend.float64


class LongTensor(metaclass=_LegacyType):
    _dtype = backend.int64


class IntTensor(metaclass=_LegacyType):
    _dtype = backend.int32


class BoolTensor(metaclass=_LegacyType):
    _dtype = backend.bool
