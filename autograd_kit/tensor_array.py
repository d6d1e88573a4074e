"""What a tensor is as an array: its sizes, dtype and device, and the ways out
of the tensor world (``item()``, ``tolist()``, ``numpy()``, ``float(x)``...).

:class:`~autograd_kit.tensor.Tensor` inherits these from :class:`TensorArray`;
none of them touches autograd's state, only the array in ``_data``.
"""
from __future__ import annotations

from . import backend, errors
from .grad_mode import is_grad_enabled


class TensorArray:
    """The array side of a Tensor (the base of :class:`~autograd_kit.tensor.Tensor`)."""

    __slots__ = ()

    def _check_dim(self, dim) -> None:
        """PyTorch's IndexError for a dimension the tensor does not have."""
        n = self._data.ndim
        if isinstance(dim, int) and not -n <= dim < n:
            if not n:
                raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {dim})")

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    @property
    def dtype(self) -> backend.dtype:
        return backend.to_dtype(self._data.dtype)

    @property
    def device(self) -> backend.device:
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    def stride(self, dim=None):
        """Steps in memory, counted in elements, from one entry to the next along
        each dimension (``stride(dim)``: along one).  A fresh tensor of shape
        ``(2, 3)`` has ``(3, 1)``; its transpose ``(1, 3)``; an ``expand``-ed
        dimension ``0``: all its entries are one element in memory."""
        size = self._data.dtype.itemsize
        steps = tuple(s // size for s in self._data.strides)
        if dim is None:
            return steps
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"stride(): argument 'dim' (position 1) must be int, "
                            f"not {type(dim).__name__}")
        self._check_dim(dim)
        return steps[dim]

    def data_ptr(self) -> int:
        return int(backend.xp_of(self._data).asarray(self._data).__array_interface__["data"][0]) \
            if self.device.type == "cpu" else int(self._data.data.ptr)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # -- leaving the tensor world ---------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(errors.ONE_ELEMENT_ITEM.format(n=self._data.size))
        return self._data.reshape(()).item()

    def tolist(self):
        return backend.to_host(self._data).tolist()

    def numpy(self, force: bool = False):
        """The array itself (shared memory).  Refused for a tensor that requires
        grad while grad mode is on, as in PyTorch: the array would escape the graph."""
        if self._rg and not force and is_grad_enabled():
            raise RuntimeError(errors.NUMPY_REQUIRES_GRAD)
        if self.device.type != "cpu":
            if not force:
                raise TypeError(errors.NUMPY_ON_CUDA.format(dev=self.device))
            return backend.to_host(self._data)
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self.device.type != "cpu":  # numpy cannot read GPU memory: as PyTorch, say so
            raise TypeError(errors.NUMPY_ON_CUDA.format(dev=self.device))
        a = backend.to_host(self._data)
        return a if dtype is None else a.astype(dtype)

    def __float__(self) -> float:
        if self._data.size != 1:  # (raised here, not in item(): one frame, as in PyTorch)
            raise ValueError(errors.ONE_ELEMENT_SCALAR)
        return float(self.item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError(errors.ONE_ELEMENT_SCALAR)
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return repr(self).__format__(spec)
