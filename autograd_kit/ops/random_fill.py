"""Random values into tensors: ``uniform_``, ``normal_``, ``random_``,
``bernoulli_``, ``exponential_`` (also ``log_normal_``, ``cauchy_``,
``geometric_``) and the fill behind ``rand``/``randn``/``randint``.

The numbers come from ``autograd_kit.random`` (PyTorch's CPU stream, converted
as PyTorch converts it); this module checks the arguments with PyTorch's
messages, picks the generator, and writes the numbers in the order PyTorch
writes them: memory order, so ``w.t().uniform_()`` fills ``w`` row by row.
A complex tensor is filled as its real and imaginary parts side by side (a
normal one with variance ½ each).  None of these records a gradient.
"""
from __future__ import annotations

import math

from .. import backend, random
from ..random import sampling
from ..tensor import Tensor, scalar_type_name
from . import inplace

np = backend.np
_FLOATS = ("float16", "float32", "float64")
_CPP_NAMES = {"uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "int32": "int", "int64": "long int", "bool": "bool", "float16": "c10::Half",
              "float32": "float", "float64": "double"}


def _g(x) -> str:
    """A number as C++ streams print it (``2``, ``0.5``, ``1e+10``)."""
    return f"{x:g}"


def _real_dtype(dt, kernel: str):
    """The float dtype that holds the numbers; other types raise PyTorch's error."""
    if dt.kind == "c":
        return np.dtype(np.float32 if dt == np.complex64 else np.float64)
    if dt.name not in _FLOATS:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(dt)}'")
    return dt


def _arrange(flat, arr):
    """Put numbers drawn in memory order into an array shaped like ``arr``."""
    if arr.ndim <= 1 or arr.flags.c_contiguous:
        return flat.reshape(arr.shape)
    axes = sorted(range(arr.ndim), key=lambda d: -abs(arr.strides[d]))
    return flat.reshape([arr.shape[d] for d in axes]).transpose(np.argsort(axes))


def values(arr, gen, kind: str, *args):
    """Random numbers for every element of ``arr`` (its shape, dtype and order)."""
    dt, n = arr.dtype, arr.size
    if kind in ("uniform", "normal"):
        real = _real_dtype(dt, "check_uniform_bounds" if kind == "uniform"
                           else "normal_kernel_cpu")
        if real != dt:                                       # complex: real and imaginary
            n *= 2
            if kind == "normal":
                args = (args[0], args[1] / math.sqrt(2))
        if kind == "uniform":
            flat = sampling.uniform(gen, n, real, *args)
        else:
            flat = sampling.normal(gen, n, real, *args, contiguous=arr.flags.c_contiguous)
        flat = flat.view(dt) if real != dt else flat
    elif kind == "integers":
        flat = sampling.integers(gen, n, dt, *args)
    elif kind == "bits":
        flat = sampling.random_bits(gen, n, dt)
    elif kind == "bernoulli":
        p = args[0]
        flat = (sampling.bernoulli_each(gen, p) if isinstance(p, np.ndarray)
                else sampling.bernoulli(gen, n, p)).astype(dt)
    else:  # exponential, log_normal, cauchy, geometric
        flat = getattr(sampling, kind)(gen, n, dt, *args)
    return _arrange(flat, arr)


def new(shape, dt, device, generator, kind: str, *args):
    """A new array of ``shape`` and numpy dtype ``dt`` on ``device``, filled."""
    host = np.empty(shape, dt)
    host[...] = values(host, random.generator_for(generator, device), kind, *args)
    return backend.move(host, device)


def _fill(t: Tensor, generator, kind: str, *args) -> Tensor:
    gen = random.generator_for(generator, t.device)
    return inplace.random_fill(t, lambda shape: backend.move(
        values(backend.to_host(t._data), gen, kind, *args), t.device))


# -------------------------------------------------------------------- argument checks --
def check_uniform(dt, low: float, high: float) -> None:
    if dt.kind == "f":
        info = np.finfo(dt)
        for name, v in (("from", low), ("to", high)):
            if not info.min <= v <= info.max:
                raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[dt.name]}")
    if low > high:
        raise RuntimeError("uniform_ expects to return a [from, to) range, but found "
                           f"from={_g(low)} > to={_g(high)}")


def check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")


def integer_range(dt, low: int, high: int | None) -> tuple[int, int]:
    """``random_(low, high)``'s checked range [low, high) (``high=None``: up to the
    type's largest value)."""
    if high is None:
        high = (1 << np.finfo(dt).nmant + 1 if dt.kind == "f" else
                1 if dt == np.bool_ else int(np.iinfo(dt).max)) + 1
    elif low >= high:
        raise RuntimeError("random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    if dt.kind in "iub":
        lo, hi = (0, 1) if dt == np.bool_ else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        for name, v in (("from", low), ("to - 1", high - 1)):
            if not lo <= v <= hi:
                raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[dt.name]}")
    return low, high


# --------------------------------------------------------------------------- methods --
def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill with numbers uniform on [a, b)."""
    check_uniform(self._data.dtype, a, b)
    return _fill(self, generator, "uniform", float(a), float(b))


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with normal numbers of mean ``mean`` and standard deviation ``std``."""
    check_std(std)
    return _fill(self, generator, "normal", float(mean), float(std))


def random_(self, *bounds, generator=None, **names) -> Tensor:
    """``random_()``: integers over the type's range; ``random_(to)``: [0, to);
    ``random_(from, to)``: [from, to)."""
    bounds = bounds + tuple(names[k] for k in ("from", "to") if k in names)
    if not bounds:
        return _fill(self, generator, "bits")
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    for v in (low, high):
        if v is not None and not isinstance(v, int):
            raise TypeError("random_() received an invalid combination of arguments - "
                            f"got ({type(v).__name__}), but expected one of: "
                            "(*, torch.Generator generator = None)")
    return _fill(self, generator, "integers", *integer_range(self._data.dtype, low, high))


def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 (probability ``p``, a number or a tensor of probabilities) or 0."""
    if isinstance(p, Tensor):
        probs = backend.to_host(p._data)
        return _fill(self, generator, "bernoulli", np.broadcast_to(probs, self.shape))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
    return _fill(self, generator, "bernoulli", float(p))


def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with draws of the exponential distribution of rate ``lambd``."""
    if self._data.dtype.name not in _FLOATS:
        raise RuntimeError("Exponential distribution is a continuous probability distribution."
                           " dtype must be a floating point but you specified "
                           f"{scalar_type_name(self._data.dtype)}")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    return _fill(self, generator, "exponential", float(lambd))


def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with exp(z), z normal with mean ``mean`` and standard deviation ``std``."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    _real_dtype(self._data.dtype, "log_normal_cpu")
    return _fill(self, generator, "log_normal", float(mean), float(std))


def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with draws of the Cauchy distribution."""
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    if self._data.dtype.name not in _FLOATS:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           "dtype must be a floating point but you specified "
                           f"{_CPP_NAMES.get(self._data.dtype.name, self._data.dtype.name)}")
    return _fill(self, generator, "cauchy", float(median), float(sigma))


def geometric_(self, p: float, *, generator=None) -> Tensor:
    """Fill with the number of trials up to the first success (probability ``p``)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    return _fill(self, generator, "geometric", float(p))


METHODS = {"uniform_": uniform_, "normal_": normal_, "random_": random_,
           "bernoulli_": bernoulli_, "exponential_": exponential_, "log_normal_": log_normal_,
           "cauchy_": cauchy_, "geometric_": geometric_}
