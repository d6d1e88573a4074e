"""The arithmetic of PyTorch's CPU sampling kernels, rounded exactly as they round.

Two things make a naive numpy port differ from PyTorch in the last bit:

* **Fused multiply-add.**  PyTorch's CPU kernels are compiled with FMA
  instructions and the compiler fuses ``a * b + c`` into one operation with a
  single rounding.  numpy has no fma, so ``fma32``/``fma64`` emulate it:
  for float32 the product of two float32 numbers is exact in float64, so one
  float64 addition and a final rounding give the fused result (with a check
  for the rare case where rounding twice would land on a tie); for float64
  the product is split into two exact halves (Veltkamp/Dekker) and summed
  with "round to odd" (Boldo and Melquiond's proven emulation).

* **The float32 Box–Muller kernel.**  For float32 tensors of 16 or more
  elements PyTorch's x86 CPU kernel (the AVX2 one) transforms blocks of 16
  uniforms u into 16 normals with polynomial approximations of log, sin and
  cos (the Cephes polynomials of Julien Pommier's sse_mathfun, 8 lanes at a
  time)::

      n[j]     = sqrt(-2 log(1 - u[j])) * cos(2 pi u[j + 8])      j = 0..7
      n[j + 8] = sqrt(-2 log(1 - u[j])) * sin(2 pi u[j + 8])

  ``box_muller_float32`` evaluates the same polynomials in the same order,
  each fused step through ``fma32``, so the normals agree bit for bit.
  (On ARM machines, e.g. Apple silicon, PyTorch's kernel calls the C
  library's logf/sinf/cosf instead; there the numbers can differ in the last
  bit, which a printed tensor almost never shows.)

Every function takes and returns host (numpy) arrays.
"""
from __future__ import annotations

import math

from .. import backend

np = backend.np
_f32, _f64 = np.float32, np.float64


# ----------------------------------------------------------------- fused multiply-add --
def fma32(a, b, c):
    """float32 ``a * b + c`` rounded once, as a fused float32 instruction rounds it.

    ``a`` and ``b`` hold float32 values (as float32 or float64 arrays or numbers):
    their product is exact in float64, so only the addition rounds there."""
    s = np.multiply(a, b, dtype=_f64)
    s += c
    return _round32(s, a, b, c)


def _round32(s, a, b, c):
    """Round the float64 sum ``s = a * b + c`` to float32 as if it had not been rounded
    to float64 first.  The two roundings differ only when ``s`` lands exactly halfway
    between two float32 numbers while the exact sum does not: find those (rare)
    places and step ``s`` one float64 unit towards the exact sum first."""
    out = s.astype(_f32)
    tie = (s.view(np.uint64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        at = np.nonzero(tie)
        p = np.multiply(_pick(a, s, at), _pick(b, s, at), dtype=_f64)
        cc = _pick(c, s, at).astype(_f64)
        out[at] = _nudge(s[at], _two_sum_err(p, cc, s[at])).astype(_f32)
    return out


def _pick(v, like, at):
    return np.broadcast_to(np.asarray(v), like.shape)[at]


def _two_sum_err(a, b, s):
    """The exact error ``(a + b) - s`` of the rounded sum ``s = a + b`` (Knuth)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _nudge(s, err):
    """Round to odd: where ``s`` is inexact (err != 0) and its last bit is even,
    step one unit towards the exact value, so a later rounding cannot tie wrongly."""
    even = (s.view(np.uint64) & 1) == 0
    step = (err != 0) & even
    if not step.any():
        return s
    return np.where(step, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _split(a):
    """Veltkamp: a = hi + lo with each half 26 bits, so products of halves are exact."""
    t = a * 134217729.0                        # 2**27 + 1
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 ``a * b + c`` rounded once (Boldo and Melquiond, round to odd)."""
    a, b, c = (np.asarray(v, _f64) for v in (a, b, c))
    ph = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl      # ph + pl == a * b exactly
    th = c + ph
    tl = _two_sum_err(c, ph, th)                             # th + tl == c + ph exactly
    v = tl + pl
    v = _nudge(v, _two_sum_err(tl, pl, v))                   # round(tl + pl) to odd
    return th + v


def affine(x, scale, shift, dtype):
    """``x * scale + shift`` fused, in ``dtype`` (float32 or float64); the trivial
    case (scale 1, shift 0) returns ``x`` unchanged, as the fused operation would."""
    if scale == 1 and shift == 0:
        return x
    return fma64(x, scale, shift) if dtype == _f64 else fma32(x, _f32(scale), _f32(shift))


# ------------------------------------------------------- Cephes log, sin, cos (float32) --
# The constants are single-precision numbers, as the kernel stores them.  Steps the
# compiler fuses go through fma32; a step whose product is exact in float32 (a small
# integer times a short constant) is the same fused or not and stays a float32 op.
_LOG_POLY = tuple(_f32(v) for v in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LN2_LO, _LN2_HI = _f32(-2.12194440e-4), _f32(0.693359375)    # ln 2 in two parts
_SQRT_HALF = _f32(0.707106781186547524)
_ONE, _HALF = _f32(1.0), _f32(0.5)


def log_float32(x):
    """Natural log of float32 ``x`` in [2^-24, 1]: write x = m · 2^e with m in
    [√½, √2), then log x = e · ln 2 + log(m), log(m) = t - t²/2 + t³ P(t) with
    t = m - 1 and P a degree-8 polynomial."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 126).astype(_f32)                   # exponent for m in [0.5, 1)
    m = ((bits & 0x007FFFFF) | 0x3F000000).view(_f32)          # x > 0
    small = m < _SQRT_HALF                                   # then use m' = 2m, e - 1
    e -= small
    t = (m - _ONE) + (m.view(np.int32) & -small.view(np.int8).astype(np.int32)).view(_f32)
    t64 = t.astype(_f64)
    z = t * t
    y = fma32(_LOG_POLY[0], t64, _LOG_POLY[1])
    for coef in _LOG_POLY[2:]:
        y = fma32(y, t64, coef)
    y = fma32(y * t, z, e * _LN2_LO)                        # t³ P(t) + e · ln2_lo
    y -= z * _HALF                                           # - t²/2 (exact product)
    return (t + y) + e * _LN2_HI                             # + e · ln2_hi (exact product)


_PI4_PARTS = (_f32(-0.78515625), _f32(-2.4187564849853515625e-4),
              _f32(-3.77489497744594108e-8))                 # -π/4 in three parts
_SIN_POLY = (_f32(-1.9515295891e-4), _f32(8.3321608736e-3), _f32(-1.6666654611e-1))
_COS_POLY = (_f32(2.443315711809948e-5), _f32(-1.388731625493765e-3),
             _f32(4.166664568298827e-2))
_FOUR_OVER_PI = _f32(1.27323954473516)


def sincos_float32(x):
    """sin and cos of float32 ``x`` >= 0: subtract the nearest even multiple j of π/4
    (π/4 in three parts, so the subtraction loses nothing), then sin and cos of the
    rest r in [-π/4, π/4] by short polynomials; bit 1 of j swaps them, and the sign
    bits come from j as well (the kernel xors them in)."""
    j = (x * _FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_f32)
    r = x + y * _PI4_PARTS[0]                                # exact products: plain ops
    r += y * _PI4_PARTS[1]
    r = fma32(y, _PI4_PARTS[2], r)
    z = r * r
    z64 = z.astype(_f64)
    c = fma32(fma32(_COS_POLY[0], z64, _COS_POLY[1]), z64, _COS_POLY[2]) * z
    c = fma32(c, z64, -(z * _HALF)) + _ONE                   # 1 - r²/2 + r⁴ Q(r²)
    s = fma32(fma32(_SIN_POLY[0], z64, _SIN_POLY[1]), z64, _SIN_POLY[2]) * z
    s = fma32(s, r, r)                                       # r + r³ P(r²)
    swap = -((j & 2) >> 1)                                   # all ones where swapped
    c_bits, s_bits = c.view(np.int32), s.view(np.int32)
    sin_bits = (c_bits & swap) | (s_bits & ~swap)
    cos_bits = (s_bits & swap) | (c_bits & ~swap)
    sin_bits ^= (j & 4) << 29                                # sign bit from the octant
    cos_bits ^= (~(j - 2) & 4) << 29
    return sin_bits.view(_f32), cos_bits.view(_f32)


_TWO_PI32 = _f32(2.0 * math.pi)
_CHUNK = 1 << 15          # numbers per pass: the temporaries stay in the CPU cache


def box_muller_float32(u, mean: float, std: float):
    """Normals from float32 uniforms ``u`` (length a multiple of 16), 16 at a time:
    the first 8 of a block give the radii, the last 8 the angles."""
    out = np.empty_like(u)
    for start in range(0, u.size, _CHUNK):
        blocks = u[start:start + _CHUNK].reshape(-1, 16)
        radius = np.sqrt(_f32(-2.0) * log_float32(_ONE - blocks[:, :8]))
        sin, cos = sincos_float32(_TWO_PI32 * blocks[:, 8:])
        part = out[start:start + _CHUNK].reshape(-1, 16)
        part[:, :8] = affine(radius * cos, std, mean, _f32)
        part[:, 8:] = affine(radius * sin, std, mean, _f32)
    return out
