"""The ``out=`` keyword of the module-level functions: ``torch.add(a, b, out=c)``.

The result is written into ``c``'s memory and ``c`` itself is returned.  Such a
write is not an operation the graph can record, so PyTorch refuses it while
grad mode is on and any argument -- an input, or ``out`` itself -- requires
grad.  Under ``no_grad()`` it is allowed, and ``c`` stays what it was (a leaf
stays a leaf).  An ``out`` of another shape is resized (with PyTorch's warning
when it held elements); a result that its dtype cannot hold is refused.

Only the functions ``torch.add``, ``torch.exp``... take ``out=``; the methods
and operators (``a.add(b)``, ``a + b``) are the ops themselves, untouched.
"""
from __future__ import annotations

import functools
import warnings

from .. import backend, errors
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor, scalar_type_name
from . import arith, reduce, unary
from .inplace import _castable, _check_writeable

RESIZED = ("An output with one or more elements was resized since it had shape {had}, which "
           "does not match the required output shape {need}. This behavior is deprecated, and "
           "in a future PyTorch release outputs will not be resized unless they have zero "
           "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
           "elements with t.resize_(0).")


def with_out(fn, name=None):
    """``fn`` taking PyTorch's ``out=`` keyword as well."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        try:
            if out is None:
                return fn(*args, **kwargs)
            return write_out(name, fn, out, args, kwargs)
        except Exception as err:
            raise errors.short(err)  # the learner's line and this call, as before
    return function


def write_out(name, fn, out, args, kwargs):
    """Compute ``fn(*args, **kwargs)`` and write the result into ``out``."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad
                                 for t in (*args, *kwargs.values(), out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    with no_grad():
        result = fn(*args, **kwargs)._data
    have = out._data
    if not _castable(result.dtype, have.dtype):
        raise RuntimeError(errors.INPLACE_CAST.format(src=scalar_type_name(result.dtype),
                                                      dst=scalar_type_name(have.dtype)))
    if have.shape == result.shape:
        _check_writeable(out)  # (an expanded ``out``: PyTorch's overlap error)
    # -- commit: nothing below can fail ----------------------------------------
    if have.shape != result.shape:
        if have.size:
            warnings.warn(RESIZED.format(had=list(have.shape), need=list(result.shape)),
                          UserWarning, stacklevel=4)
        out._data = backend.xp_of(have).empty(result.shape, dtype=have.dtype)
    out._data[...] = result
    out._vc.value += 1
    return out


_FUNCTIONS = (arith.add, arith.sub, arith.mul, arith.div, arith.pow, arith.neg, arith.matmul,
              arith.mm, arith.dot, reduce.maximum, reduce.minimum, reduce.sum, reduce.mean,
              reduce.prod, unary.exp, unary.log, unary.sin, unary.cos, unary.tanh,
              unary.sigmoid, unary.sqrt, unary.rsqrt, unary.abs, unary.reciprocal,
              unary.square, unary.clamp, unary.sign, unary.floor, unary.ceil, unary.round)
(add, sub, mul, div, pow, neg, matmul, mm, dot, maximum, minimum, sum, mean, prod,  # noqa: A001
 exp, log, sin, cos, tanh, sigmoid, sqrt, rsqrt, abs, reciprocal, square, clamp,
 sign, floor, ceil, round) = (with_out(f) for f in _FUNCTIONS)
