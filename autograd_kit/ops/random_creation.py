"""Random tensors: ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, the
``*_like`` versions, ``bernoulli`` and ``multinomial``.

The numbers are PyTorch's: after ``manual_seed(s)`` these draw what PyTorch
draws on the CPU, from the same stream and in the same order
(``autograd_kit.random`` explains the stream and the conversions).  Arguments
are read as PyTorch reads them: ``rand(2, 3)``, ``rand((2, 3))``,
``rand(size=(2, 3))``; ``generator=``, ``dtype=``, ``device=`` and
``requires_grad=`` everywhere.  This module only parses arguments and shapes;
``random_fill`` fills the arrays.
"""
from __future__ import annotations

from .. import backend, errors
from ..random import sampling
from ..tensor import Tensor
from . import random_fill
from ._rules import record, rule
from .creation import _dev, _finish, _size, empty_like

_IGNORED = ("layout", "pin_memory", "memory_format")


def _options(name: str, options: dict, size):
    """``size=`` given by keyword, PyTorch's keywords that change nothing here accepted."""
    if "size" in options:
        size = (options.pop("size"),)
    for key in options:
        if key not in _IGNORED:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    return size


def _dtype(dtype):
    return backend.np_dtype(dtype) if dtype is not None else backend.get_default_dtype().np


def _random(kind, size, dt, device, requires_grad, generator, *args, name="") -> Tensor:
    if requires_grad and dt.kind not in "fc" and kind in ("integers", "bits"):
        raise RuntimeError(errors.INT_REQUIRES_GRAD)
    data = random_fill.new(_size(size, name), dt, _dev(device), generator, kind, *args)
    return _finish(data, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False,
         **options) -> Tensor:
    """Numbers uniform on [0, 1): ``rand(2, 3)``, ``rand((2, 3))``, ``rand(size=())``."""
    try:
        size = _options("rand", options, size)
        return _random("uniform", size, _dtype(dtype), device,
                       requires_grad, generator, 0.0, 1.0, name="rand")
    except Exception as err:
        raise errors.short(err)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False,
          **options) -> Tensor:
    """Standard normal numbers (mean 0, variance 1)."""
    try:
        size = _options("randn", options, size)
        return _random("normal", size, _dtype(dtype), device,
                       requires_grad, generator, 0.0, 1.0, name="randn")
    except Exception as err:
        raise errors.short(err)


def randint(*args, generator=None, dtype=None, device=None, requires_grad=False,
            **options) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)``, ``randint(low, high,
    size)`` (``low``, ``high``, ``size`` may be keywords); int64 unless ``dtype``."""
    try:
        low, high, size = _randint_args(args, options)
        size = _options("randint", options, (size,))
        dt = backend.np_dtype(dtype) if dtype is not None else backend.int64.np
        low, high = random_fill.integer_range(dt, low, high)
        return _random("integers", size, dt, device, requires_grad, generator, low, high)
    except Exception as err:
        raise errors.short(err)


def _randint_args(args, options):
    names = [k for k in ("low", "high", "size") if k in options]
    given = dict(zip(names, (options.pop(k) for k in names)))
    free = [k for k in (("high", "size") if len(args) + len(given) == 2 and "low" not in given
                        else ("low", "high", "size")) if k not in given]
    given.update(zip(free, args))
    if "high" not in given or "size" not in given:
        raise TypeError("randint() missing required arguments 'high' and 'size'")
    size = given["size"]
    return given.get("low", 0), given["high"], (size,) if isinstance(size, int) else size


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False,
             **options) -> Tensor:
    """A random permutation of 0, 1, ..., n-1."""
    try:
        _options("randperm", options, ())
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
        dt = backend.np_dtype(dtype) if dtype is not None else backend.int64.np
        if requires_grad and dt.kind not in "fc":
            raise RuntimeError(errors.INT_REQUIRES_GRAD)
        dev = _dev(device)
        gen = random_fill.random.generator_for(generator, dev)
        return _finish(backend.move(sampling.randperm(gen, n).astype(dt), dev), requires_grad)
    except Exception as err:
        raise errors.short(err)


def _random_like(kind, t, dtype, device, requires_grad, generator, *args) -> Tensor:
    """A tensor shaped (and laid out) like ``t``, filled as ``kind``."""
    dt = backend.np_dtype(dtype) if dtype is not None else t._data.dtype
    if requires_grad and dt.kind not in "fc" and kind == "integers":
        raise RuntimeError(errors.INT_REQUIRES_GRAD)
    dev = _dev(device) if device is not None else t.device
    host = backend.np.empty_like(backend.to_host(t._data), dtype=dt)
    gen = random_fill.random.generator_for(generator, dev)
    host[...] = random_fill.values(host, gen, kind, *args)
    return _finish(backend.move(host, dev), requires_grad)


def rand_like(t, *, dtype=None, device=None, requires_grad=False, generator=None,
              **options) -> Tensor:
    try:
        _options("rand_like", options, ())
        return _random_like("uniform", t, dtype, device, requires_grad, generator, 0.0, 1.0)
    except Exception as err:
        raise errors.short(err)


def randn_like(t, *, dtype=None, device=None, requires_grad=False, generator=None,
               **options) -> Tensor:
    try:
        _options("randn_like", options, ())
        return _random_like("normal", t, dtype, device, requires_grad, generator, 0.0, 1.0)
    except Exception as err:
        raise errors.short(err)


def randint_like(t, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 generator=None, **options) -> Tensor:
    """``randint_like(t, high)`` or ``randint_like(t, low, high)``."""
    try:
        _options("randint_like", options, ())
        if high is None:
            low, high = 0, low
        dt = backend.np_dtype(dtype) if dtype is not None else t._data.dtype
        low, high = random_fill.integer_range(dt, low, high)
        return _random_like("integers", t, dtype, device, requires_grad, generator, low, high)
    except Exception as err:
        raise errors.short(err)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False, **options) -> Tensor:
    """Normal numbers: ``normal(mean, std, size)`` with numbers, or elementwise
    ``normal(mean_tensor, std_tensor)`` (either may be a number), drawn as N(0, 1)
    and then scaled: z · std + mean."""
    try:
        size = _options("normal", options, size)
        if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
            if size is None:
                raise TypeError("normal() received an invalid combination of arguments - got "
                                f"({type(mean).__name__}, {type(std).__name__}), but expected"
                                " one of: (float mean, float std, tuple of ints size)")
            random_fill.check_std(std)
            return _random("normal", (size,) if not isinstance(size, tuple) or size == ()
                           else size, _dtype(dtype), device,
                           requires_grad, generator, float(mean), float(std))
        return _normal_elementwise(mean, std, generator)
    except Exception as err:
        raise errors.short(err)


def _normal_elementwise(mean, std, generator) -> Tensor:
    xp = backend.np
    if isinstance(std, Tensor):
        if std.numel() and not bool((std._data >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        like = mean if isinstance(mean, Tensor) else std
        shape = xp.broadcast_shapes(tuple(like.shape), tuple(std.shape)) if isinstance(
            mean, Tensor) else tuple(std.shape)
        dt = like._data.dtype
        z = random_fill.new(shape, dt, like.device, generator, "normal", 0.0, 1.0)
        z = z * std._data.astype(dt, copy=False)
        m = mean._data if isinstance(mean, Tensor) else backend.scalar_array(mean, z)
        out = (z + m).astype(dt, copy=False)
        if isinstance(mean, Tensor):
            return record(NormalBackward3, out, (mean, std), mean_sym_sizes=tuple(mean.shape),
                          std_sym_sizes=tuple(std.shape))
        return record(NormalBackward2, out, (std,), std_sym_sizes=tuple(std.shape))
    random_fill.check_std(std)
    z = random_fill.new(tuple(mean.shape), mean._data.dtype, mean.device, generator, "normal",
                        0.0, float(std))
    return record(NormalBackward1, z + mean._data, (mean,), mean_sym_sizes=tuple(mean.shape))


def bernoulli(input, p=None, *, generator=None, **options) -> Tensor:
    """0/1 draws: ``bernoulli(probs)`` one per element of ``probs``; ``bernoulli(t, p)``
    shaped like ``t``, each 1 with probability ``p``."""
    try:
        _options("bernoulli", options, ())
        out = empty_like(input)
        if p is not None:
            return random_fill.bernoulli_(out, p, generator=generator)
        dt = input._data.dtype
        if dt.kind != "f":
            raise NotImplementedError('"bernoulli_tensor_cpu_p_" not implemented for '
                                      f"'{random_fill.scalar_type_name(dt)}'")
        if not bool(((input._data >= 0) & (input._data <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report"
                               " an enhancement request to PyTorch.)")
        drawn = random_fill.bernoulli_(out, input, generator=generator)
        return record(BernoulliBackward0, drawn._data, (input,))
    except Exception as err:
        raise errors.short(err)


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Category indices drawn with probabilities proportional to the rows of ``input``
    (without replacement unless ``replacement=True``)."""
    try:
        data = backend.to_host(input._data)
        _check_multinomial(data, num_samples, replacement)
        rows = data.reshape(-1, data.shape[-1])
        gen = random_fill.random.generator_for(generator, input.device)
        out = sampling.multinomial(gen, rows, num_samples, replacement)
        return Tensor._make(backend.move(out.reshape(data.shape[:-1] + (num_samples,)),
                                         input.device))
    except Exception as err:
        raise errors.short(err)


def _check_multinomial(data, n, replacement) -> None:
    if data.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{random_fill.scalar_type_name(data.dtype)}")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not replacement and n > data.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not (backend.np.isfinite(data).all() and (data >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not (data.reshape(-1, data.shape[-1]).sum(-1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


# Backward formulas.  A draw is not a differentiable function of its parameters
# here: PyTorch records the node and sends back zeros (``mean * 1`` would be the
# reparameterisation trick, written by hand as ``mean + std * randn_like(std)``).
NormalBackward1 = rule("NormalBackward1", "mean_sym_sizes", mean="zeros_like(g)")
NormalBackward2 = rule("NormalBackward2", "std_sym_sizes", std="zeros_like(g)")
NormalBackward3 = rule("NormalBackward3", "mean_sym_sizes std_sym_sizes",
                       mean="zeros_like(g)", std="zeros_like(g)")
BernoulliBackward0 = rule("BernoulliBackward0", "", self="zeros_like(g)")
