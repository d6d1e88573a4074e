"""Arithmetic: ``+ - * / **``, negation and the matrix products.

Each forward function computes with arrays and records its node; the table at
the bottom gives every input's gradient, ``g`` being the gradient arriving from
the output.  For ``z = x * y``: dz/dx = y, so x receives ``g * y``.
"""
from __future__ import annotations

import operator

from ..graph import HOLDS_NUMBER
from ._rules import (_FIRST_ONLY, RESULT, as_tensor_pair, check_broadcast, record,
                     record_one, rule)
from .. import backend, errors
from ..grad_mode import _state
from ..tensor import Tensor, scalar_type_name

_NUMBERS = (int, float)


def _binary(node, fn, a, b, names=(), **attrs):
    """Forward of a broadcasting binary op; ``names`` says under which names the two
    inputs are saved for backward (e.g. ``("self", "other")``)."""
    if b.__class__ in _NUMBERS and a._data.dtype.kind == "f":
        # fast path, ``float tensor op number``: numpy keeps the tensor's dtype, as
        # PyTorch does, and the number is a constant input without an edge
        out = fn(a._data, b)
        if not (a._rg and _state.enabled) and a._base is None:  # (a view may be stale)
            return Tensor._make(out)
        if names:  # the tensor only if its formula needs it (a dict holding no
            # tensor is one object fewer for the cycle collector to follow)
            keep = node._keep.get(_FIRST_ONLY) or node.keep_for(_FIRST_ONLY)
            attrs[names[0]] = a if names[0] in keep else None
            attrs[names[1]] = b
            out = record_one(node, out, a, attrs, True)
            if out._grad_fn is not None:  # PyTorch saves the number as a 0-d tensor,
                out._grad_fn._holds_tensors = HOLDS_NUMBER  # which backward frees
            return out
        return record_one(node, out, a, attrs, True)
    try:
        a, b, da, db = as_tensor_pair(a, b)
    except backend.NotAnOperand:
        return NotImplemented  # (the operators pass it on; the functions raise)
    try:
        out = fn(da, db)
    except ValueError:
        check_broadcast(da, db)
        raise
    if names:
        attrs[names[0]], attrs[names[1]] = a, b
    return record(node, out, (a, b), **attrs)


def add(a, b, alpha=1):
    """a + alpha * b"""
    try:
        if alpha != 1:
            return _function(_binary(AddBackward0, lambda x, y: x + alpha * y, a, b,
                                     alpha=alpha), "add", b)
        return _function(_binary(AddBackward0, _add, a, b, alpha=1), "add", b)
    except RuntimeError as err:
        raise errors.short(err)  # a shape mismatch shows the learner's line and this call


def sub(a, b, alpha=1):
    """a - alpha * b"""
    try:
        if alpha != 1:
            return _function(_binary(SubBackward0, lambda x, y: x - alpha * y, a, b,
                                     alpha=alpha), "sub", b)
        return _function(_binary(SubBackward0, _sub, a, b, alpha=1), "sub", b)
    except RuntimeError as err:
        raise errors.short(err)


def _function(out, name, other):
    """The result of ``add(x, other)``... called as a function or method: an
    operand that is no tensor, number or array is PyTorch's TypeError there."""
    if out is NotImplemented:
        raise backend.NotAnOperand(f"{name}(): argument 'other' must be Tensor, not "
                                   f"{type(other).__name__}")
    return out


def rsub(a, b):
    """b - a, for ``number - tensor`` (PyTorch's RsubBackward1: one tensor input)."""
    if isinstance(b, Tensor):
        return sub(b, a)
    a_, w, da, db = as_tensor_pair(a, b)
    return record(RsubBackward1, db - da, (a_,), alpha=1)


def mul(a, b):
    try:
        return _function(_binary(MulBackward0, _mul, a, b, ("self", "other")), "mul", b)
    except RuntimeError as err:
        raise errors.short(err)


def div(a, b):
    """a / b; integers divide to the default float type (float32), as in PyTorch."""
    if isinstance(a, Tensor) and a._data.dtype.kind in "biu" and (
            not isinstance(b, Tensor) or b._data.dtype.kind in "biu") and \
            not isinstance(b, float):
        a = a.to(backend.get_default_dtype())
    elif isinstance(b, Tensor) and b._data.dtype.kind in "biu" and \
            not isinstance(a, (Tensor, float)):
        b = b.to(backend.get_default_dtype())
    try:
        return _function(_binary(DivBackward0, _div, a, b, ("self", "other")), "div", b)
    except RuntimeError as err:
        raise errors.short(err)


def rdiv(a, b):
    """number / tensor, computed as PyTorch does: reciprocal, then multiply."""
    from .unary import reciprocal
    return mul(reciprocal(a), b)


def pow(a, exponent):  # noqa: A001 - PyTorch's name
    """a ** exponent, for a tensor or number exponent."""
    if isinstance(exponent, Tensor):
        if not isinstance(a, Tensor):
            return rpow(exponent, a)
        return _binary(PowBackward1, _pow, a, exponent, ("self", "exponent"),
                       result=RESULT)
    a_, e, da, de = as_tensor_pair(a, exponent)
    return record(PowBackward0, da ** de, (a_,), self=a_, exponent=exponent)


def rpow(a, base):
    """number ** tensor (PowBackward2)."""
    a_, b_, da, db = as_tensor_pair(a, base)
    # PyTorch keeps a number base as the number (``_saved_self`` reads 2, not tensor(2.))
    kept = base if base.__class__ in _NUMBERS else b_
    return record(PowBackward2, db ** da, (a_,), self=kept, exponent=a_, result=RESULT)


def operator_form(node, kernel, names=(), alpha=None):
    """``a + b``, ``a * b``...: the op of ``node`` as a Python operator.

    Anything but a tensor, a number or an array on the right gives NotImplemented
    (``_binary`` finds it out where it turns the operand into an array, so the
    usual operands pay nothing for the check), and Python raises its own
    "unsupported operand type(s)" error, as it does for PyTorch: a str or None is
    not read as a number.  (Two spellings of the call, because a ``**attrs`` call
    costs a tenth of a small op.)"""
    if alpha is None:
        def op(a, b):
            try:
                return _binary(node, kernel, a, b, names)
            except RuntimeError as err:
                raise errors.short(err)  # a shape mismatch: the learner's line and this one
    else:
        def op(a, b):
            try:
                return _binary(node, kernel, a, b, alpha=alpha)
            except RuntimeError as err:
                raise errors.short(err)
    return op


def neg(a):
    return record(NegBackward0, -a._data, (a,))


def matmul(a, b):
    """Matrix product with numpy's rules for 1-D and batched operands."""
    a, b, da, db = as_tensor_pair(a, b)
    na, nb = da.ndim, db.ndim
    if na == 0 or nb == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    try:
        out = da @ db
    except ValueError:
        if na == 1 and nb == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{da.shape[0]}] and "
                               f"src [{db.shape[0]}] to have the same number of elements, but "
                               f"got {da.shape[0]} and {db.shape[0]} elements respectively"
                               ) from None
        if na == 2 and nb == 1:
            raise RuntimeError(f"size mismatch, got input ({da.shape[0]}), mat "
                               f"({da.shape[0]}x{da.shape[1]}), vec ({db.shape[0]})") from None
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({'x'.join(map(str, da.shape))} and "
                           f"{'x'.join(map(str, db.shape))})") from None
    if na == 1 and nb == 1:
        return record(DotBackward0, out, (a, b), self=a, other=b)
    if na == 2 and nb == 1:
        return record(MvBackward0, out, (a, b), self=a, vec=b)
    if na == 1:  # PyTorch: treat the vector as a 1-row matrix, then drop that row
        return matmul(a.unsqueeze(0), b).squeeze(-2)
    if nb == 1 and na > 2:  # ... or as a 1-column matrix
        return matmul(a, b.unsqueeze(-1)).squeeze(-1)
    if na == 2 and nb == 2:
        return record(MmBackward0, out, (a, b), self=a, mat2=b)
    return record(BmmBackward0, out, (a, b), self=a, mat2=b)


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return matmul(a, b)


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(a, b)


def addmm(bias, m1, m2):
    """bias + m1 @ m2 in one node, as ``nn.Linear`` does in PyTorch (AddmmBackward0)."""
    if not isinstance(bias, Tensor):
        bias = Tensor._make(backend.scalar_array(bias, m1._data))
    for t in (m1, m2):
        if not backend.same_device(bias._data, t._data):
            raise errors.DeviceMismatchError(bias.device, t.device)
    for a, b in ((bias, m2), (m1, m2)):
        if a._data.dtype != b._data.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{scalar_type_name(a._data.dtype)} and "
                               f"{scalar_type_name(b._data.dtype)}")
    if m1.ndim != 2 or m2.ndim != 2 or m1.shape[1] != m2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({'x'.join(map(str, m1.shape))} and "
                           f"{'x'.join(map(str, m2.shape))})")
    out = m1._data @ m2._data
    bs = bias._data.shape
    if bs == out.shape[1:] or backend.broadcast_shapes(bs, out.shape) == out.shape:
        out += bias._data        # into the fresh product: one array, not two
    else:
        out = bias._data + out
    return record(AddmmBackward0, out, (bias, m1, m2), mat1=m1, mat2=m2)



_add, _sub, _mul, _div, _pow = (operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.pow)


# Backward formulas: g is the gradient of the output; one formula per input.
AddBackward0 = rule("AddBackward0", "alpha", self="g", other="g if alpha == 1 else g * alpha")
SubBackward0 = rule("SubBackward0", "alpha", self="g", other="-g if alpha == 1 else -g * alpha")
RsubBackward1 = rule("RsubBackward1", "alpha", self="-g * alpha")
MulBackward0 = rule("MulBackward0", "self other", self="g * other", other="g * self")
MulBackward0._frees = ("other",)  # ``x * 2``: the 2 is saved, and freed, as a tensor
DivBackward0 = rule("DivBackward0", "self other",
                    self="g / other", other="-g * self / (other * other)")
DivBackward0._frees = ("other",)
NegBackward0 = rule("NegBackward0", "", self="-g")
PowBackward0 = rule("PowBackward0", "self exponent",
                    self="pow_backward(g, self, exponent)")
PowBackward1 = rule("PowBackward1", "self exponent result",
                    self="pow_backward(g, self, exponent)",
                    exponent="g * result * log_or_zero(self, exponent)")
PowBackward2 = rule("PowBackward2", "self exponent result",
                    exponent="g * result * log_or_zero(self, exponent)")
DotBackward0 = rule("DotBackward0", "self other", self="g * other", other="g * self")
MvBackward0 = rule("MvBackward0", "self vec",
                   self="unsqueeze(g, -1) * vec", vec="mT(self) @ g")
MmBackward0 = rule("MmBackward0", "self mat2", self="g @ mT(mat2)", mat2="mT(self) @ g")
BmmBackward0 = rule("BmmBackward0", "self mat2", self="g @ mT(mat2)", mat2="mT(self) @ g")
AddmmBackward0 = rule("AddmmBackward0", "mat1 mat2",
                      self="g", mat1="g @ mT(mat2)", mat2="mm_mat2_grad(g, mat1, mat2)")

# The operators ``+ - *`` (``x + 2`` and ``2 + x`` make the same node, as in PyTorch).
add_operator = operator_form(AddBackward0, _add, alpha=1)
sub_operator = operator_form(SubBackward0, _sub, alpha=1)
mul_operator = operator_form(MulBackward0, _mul, ("self", "other"))
