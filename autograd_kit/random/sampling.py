"""From 32-bit words to distributions, exactly as PyTorch's CPU kernels convert them.

Each function draws from a ``Generator`` and returns a flat host array, one
number per element in the order PyTorch fills a tensor (memory order).

* **uniform** on [a, b): float32 keeps the low 24 bits of one word,
  x = (w mod 2^24) / 2^24; float64 the low 53 bits of a 64-bit draw,
  x = (w mod 2^53) / 2^53; then x·(b - a) + a, fused (float16: computed in
  float32, rounded to half, and b itself replaced by a).  ``rand`` is uniform
  on [0, 1).
* **normal** has two paths, as in PyTorch:

  - fewer than 16 elements (or a non-contiguous tensor): one pair of float64
    uniforms (u1, u2) per *two* normals, r = √(-2 log(1 - u2)), θ = 2π u1,
    giving r cos θ now and r sin θ cached in the generator for the next normal;
  - 16 or more: first one uniform per element (per whole block for half),
    then Box–Muller on blocks of 16 (``kernels.box_muller_float32`` for float32
    and half); if the size is not a multiple of 16, 16 fresh uniforms redo the
    last 16 elements.

* **integers** in [a, b): w mod (b - a) + a, with w one word, or a 64-bit draw
  when b - a >= 2^32.  ``randperm(n)`` swaps element i with element
  i + (w mod (n - i)) for i = 0..n-2 (one word each).
* **bernoulli(p)**: 1 where a uniform is below p (float64 uniforms for a number
  p or a float64 tensor of p, float32 ones for a float32 tensor).
* **exponential(λ)**: -log(1 - u)/λ from float64 uniforms; ``log_normal_``,
  ``cauchy_`` and ``geometric_`` transform float64 uniforms (or normals) too.
* **multinomial**: without replacement (or for one sample), the indices of the
  largest p / q with q ~ Exp(1), one q per category; with replacement, for
  each sample the first category whose cumulative probability reaches a
  float64 uniform.

log, sin and cos of float64 values are taken from the C library one by one
(Python's ``math``, the functions PyTorch calls): numpy's vectorised log differs
from it in the last bit for about one number in 300.

Caveat: PyTorch builds that use Intel's MKL may draw ``bernoulli_(p)`` (and so
dropout) and ``exponential_`` from a separate MKL stream on Intel CPUs; these
functions follow PyTorch's own kernels, which it uses everywhere else.
"""
from __future__ import annotations

import math

from .. import backend
from . import kernels

np = backend.np
_f16, _f32, _f64 = np.float16, np.float32, np.float64


def _libm(fn, x):
    """``fn`` from the C library (through ``math``) on each element of float64 ``x``."""
    return np.fromiter(map(fn, x.ravel().tolist()), dtype=_f64, count=x.size).reshape(x.shape)


def _from_double(x, dt):
    """A float64 result stored as ``dt`` (a half goes through float, as in C++)."""
    return x.astype(_f32).astype(dt) if dt == _f16 else x.astype(dt)


# ---------------------------------------------------------------------------- uniform --
def unit_uniform(gen, n: int, dt):
    """``n`` numbers x = k / 2^digits in [0, 1): float64 (53 bits) for float64, else
    float32 (24 bits; a half is made from the float32 number)."""
    if np.dtype(dt) == _f64:
        return (gen.random64(n) & np.uint64((1 << 53) - 1)).astype(_f64) * 2.0 ** -53
    return (gen.random32(n) & np.uint64((1 << 24) - 1)).astype(_f32) * _f32(2.0 ** -24)


def uniform(gen, n: int, dt, low: float = 0.0, high: float = 1.0):
    """``n`` numbers uniform on [low, high) of float dtype ``dt``."""
    dt = np.dtype(dt)
    x = unit_uniform(gen, n, dt)
    if dt == _f64:
        return kernels.affine(x, high - low, low, _f64)
    lo, hi = _f32(low), _f32(high)
    out = kernels.affine(x, hi - lo, lo, _f32).astype(dt)
    if dt == _f16:                      # rounding up to ``high`` would leave [low, high)
        out[out == dt.type(high)] = dt.type(low)
    return out


# ----------------------------------------------------------------------------- normal --
def standard_normal_pairs(gen, n: int):
    """``n`` standard normals from the small-tensor path, the cached one first."""
    out = np.empty(n, _f64)
    start = 0
    if n and gen._normal_cache is not None:
        out[0], gen._normal_cache, start = gen._normal_cache, None, 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = unit_uniform(gen, 2 * pairs, _f64)
        radius = np.sqrt(-2.0 * _libm(math.log1p, -u[1::2]))
        theta = (2.0 * math.pi) * u[0::2]
        both = np.stack([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], 1)
        both = both.reshape(-1)
        out[start:] = both[:n - start]
        if n - start < both.size:                            # r sin θ waits for next time
            gen._normal_cache = float(both[-1])
    return out


def normal(gen, n: int, dt, mean: float = 0.0, std: float = 1.0, contiguous: bool = True):
    """``n`` normals N(mean, std²) of float dtype ``dt``."""
    if n < 16 or not contiguous:
        return _from_double(kernels.affine(standard_normal_pairs(gen, n), std, mean, _f64), dt)
    dt = np.dtype(dt)
    full = n - n % 16
    u = unit_uniform(gen, full if dt == _f16 else n, dt)  # half: whole blocks only
    tail = unit_uniform(gen, 16, dt) if n % 16 else None
    out = np.empty(n, dt)
    blocks = _BLOCKS[dt.name]
    out[:full] = blocks(u[:full], mean, std, dt)
    if tail is not None:                                     # redo the last 16 elements
        out[n - 16:] = blocks(tail, mean, std, dt)
    return out


def _blocks_float32(u, mean, std, dt):
    return kernels.box_muller_float32(u, _f32(mean), _f32(std))


def _blocks_float64(u, mean, std, dt):
    b = u.reshape(-1, 16)
    radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - b[:, :8]))
    theta = (2.0 * math.pi) * b[:, 8:]
    out = np.empty_like(b)
    out[:, :8] = kernels.affine(radius * _libm(math.cos, theta), std, mean, _f64)
    out[:, 8:] = kernels.affine(radius * _libm(math.sin, theta), std, mean, _f64)
    return out.reshape(-1)


def _blocks_float16(u, mean, std, dt):
    """Half precision: PyTorch runs the float32 kernel and rounds its results."""
    return kernels.box_muller_float32(u, _f32(mean), _f32(std)).astype(_f16)


_BLOCKS = {"float32": _blocks_float32, "float64": _blocks_float64, "float16": _blocks_float16}


# --------------------------------------------------------------------------- integers --
def integers(gen, n: int, dt, low: int, high: int):
    """``n`` integers uniform on [low, high), stored as ``dt`` (``random_(low, high)``)."""
    span = high - low
    wide = span >= 1 << 32 and dt in (np.dtype(np.int64), np.dtype(_f64), np.dtype(_f32))
    words = gen.random64(n) if wide else gen.random32(n)
    values = (words % np.uint64(span) + np.uint64(low & 0xFFFFFFFFFFFFFFFF)).view(np.int64)
    return values.astype(dt)


_FULL_RANGE = {"int64": 1 << 63, "float64": (1 << 53) + 1, "float32": (1 << 24) + 1,
               "float16": (1 << 11) + 1, "int32": 1 << 31, "int16": 1 << 15, "int8": 1 << 7,
               "uint8": 1 << 8, "bool": 2}


def random_bits(gen, n: int, dt):
    """``random_()`` without bounds: [0, 2^digits] for floats, [0, max] for integers."""
    dt = np.dtype(dt)
    words = gen.random64(n) if dt in (np.int64, _f64) else gen.random32(n)
    return (words % np.uint64(_FULL_RANGE[dt.name])).astype(dt)


def randperm(gen, n: int):
    """A permutation of 0..n-1: swap element i with one of i..n-1, left to right.
    (PyTorch draws 64-bit numbers instead beyond 214,748,364 elements.)"""
    perm = list(range(n))
    for i, word in enumerate(gen.random32(max(n - 1, 0)).tolist()):
        j = i + word % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, dtype=np.int64)


# ------------------------------------------------------------ bernoulli, exponential --
def bernoulli(gen, n: int, p):
    """``n`` booleans, True with probability ``p`` (a number)."""
    return unit_uniform(gen, n, _f64) < p


def bernoulli_each(gen, probs):
    """One boolean per element of ``probs`` (a float array), True with that probability."""
    dt = _f64 if probs.dtype == _f64 else _f32
    return unit_uniform(gen, probs.size, dt) < probs.reshape(-1).astype(dt)


def exponential(gen, n: int, dt, lambd: float = 1.0):
    """``n`` draws of Exp(λ): -log(1 - u) / λ."""
    u = unit_uniform(gen, n, _f64)
    return _from_double((-1.0 / lambd) * _libm(math.log1p, -u), dt)


def log_normal(gen, n: int, dt, mean: float = 1.0, std: float = 2.0):
    """``n`` draws of exp(N(mean, std²)), normals from the one-by-one path."""
    z = kernels.affine(standard_normal_pairs(gen, n), std, mean, _f64)
    return _from_double(_libm(math.exp, z), dt)


def cauchy(gen, n: int, dt, median: float = 0.0, sigma: float = 1.0):
    """``n`` draws of the Cauchy distribution: median + σ · tan(π (u - ½))."""
    t = _libm(math.tan, math.pi * (unit_uniform(gen, n, _f64) - 0.5))
    return _from_double(kernels.fma64(sigma, t, median) if sigma != 1 or median != 0 else t,
                        dt)


def geometric(gen, n: int, dt, p: float):
    """``n`` draws of the geometric distribution: ⌈log u / log(1 - p)⌉."""
    u = unit_uniform(gen, n, _f64)
    logs = _libm(_log_or_minus_inf, u)
    return _from_double(np.ceil(logs / math.log(1.0 - p)), dt)


def _log_or_minus_inf(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def multinomial(gen, probs, n: int, replacement: bool):
    """Category indices, ``n`` per row of the 2-D float array ``probs``."""
    if not replacement or n == 1:
        # Without replacement: the n largest p / q with q ~ Exp(1) (an exponential race).
        q = exponential(gen, probs.size, probs.dtype).reshape(probs.shape)
        keys = probs / q
        if n == 1:
            return np.argmax(keys, axis=-1)[:, None]
        return np.argsort(-keys, axis=-1, kind="stable")[:, :n]
    out = np.empty((probs.shape[0], n), np.int64)
    for row, p in enumerate(probs.astype(_f32) if probs.dtype == _f16 else probs):
        cum = np.cumsum(p)
        cum /= cum[-1]
        cum[-1] = 1
        out[row] = np.searchsorted(cum.astype(_f64), unit_uniform(gen, n, _f64), "left")
    return out
