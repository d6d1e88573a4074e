"""PyTorch's names for dtypes, as its messages spell them: ``Float``,
``torch.FloatTensor``, ``[torch.FloatTensor [2, 3]]``."""
from __future__ import annotations

from . import backend

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
               "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def scalar_type_name(np_dtype) -> str:
    """PyTorch's scalar-type name, as its messages spell it: Float, Double, Long..."""
    return _TYPE_NAMES[str(np_dtype)].removesuffix("Tensor")


def type_name(data) -> str:
    """``torch.FloatTensor`` (``torch.cuda.FloatTensor`` on the GPU): the legacy
    type name PyTorch's messages use for an array's dtype and device."""
    prefix = "torch.cuda." if backend.device_of(data).type == "cuda" else "torch."
    return prefix + _TYPE_NAMES[backend.to_dtype(data.dtype).name]


def type_description(data) -> str:
    """``[torch.FloatTensor [2, 3]]`` as in PyTorch's version error message."""
    return f"[{type_name(data)} [{', '.join(str(s) for s in data.shape)}]]"
