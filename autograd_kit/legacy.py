"""Pre-0.4 names kept for old tutorials: ``FloatTensor([4])``, ``LongTensor(2, 3)``...

Each legacy type makes a tensor of its dtype, from data (``LongTensor([1, 2])``)
or from a shape (``FloatTensor(2, 3)``, ``FloatTensor(x.size())``; PyTorch leaves
those uninitialised, here they hold zeros).  ``isinstance(t, FloatTensor)``
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

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _legacy(name: str, dtype) -> type:
    return _LegacyType(name, (), {"_dtype": dtype, "__doc__": f"Makes {dtype.name} tensors."})


FloatTensor = _legacy("FloatTensor", backend.float32)
DoubleTensor = _legacy("DoubleTensor", backend.float64)
HalfTensor = _legacy("HalfTensor", backend.float16)
LongTensor = _legacy("LongTensor", backend.int64)
IntTensor = _legacy("IntTensor", backend.int32)
ShortTensor = _legacy("ShortTensor", backend.int16)
CharTensor = _legacy("CharTensor", backend.int8)
ByteTensor = _legacy("ByteTensor", backend.uint8)
BoolTensor = _legacy("BoolTensor", backend.bool)
