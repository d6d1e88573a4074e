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
            return _function(_binary(AddBackward0, lambda x, y: x + _times(y, alpha), a, b,
                                     alpha=alpha), "add", b)
        return _function(_binary(AddBackward0, _add, a, b, alpha=1), "add", b)
    except RuntimeError as err:
        raise errors.short(err)  # a shape mismatch shows the learner's line and this call


_SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_SUB_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.")


_BOOLS = (bool, backend.np.bool_)  # (numpy's bool is the Python bool it holds)


def _is_bool(x) -> bool:
    return x.__class__ in _BOOLS or (isinstance(x, Tensor) and x._data.dtype.kind == "b")


def check_sub(a, b) -> None:
    """PyTorch refuses ``-`` with a boolean operand (a bool tensor or True/False)."""
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(_SUB_BOOLS if _is_bool(a) and _is_bool(b) else _SUB_BOOL)


def sub(a, b, alpha=1):
    """a - alpha * b"""
    try:
        check_sub(a, b)
        if alpha != 1:
            return _function(_binary(SubBackward0, lambda x, y: x - _times(y, alpha), a, b,
                                     alpha=alpha), "sub", b)
        return _function(_binary(SubBackward0, _sub, a, b, alpha=1), "sub", b)
    except RuntimeError as err:
        raise errors.short(err)


def _times(y, alpha):
    """alpha * y in y's dtype (a bool tensor stays bool: alpha is then True or False)."""
    return y & bool(alpha) if getattr(y, "dtype", None) is not None and y.dtype.kind == "b" \
        else y * alpha


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
    check_sub(a, b)
    a_, w, da, db = as_tensor_pair(a, b)
    return record(RsubBackward1, db - da, (a_,), alpha=1)


def mul(a, b):
    try:
        return _function(_binary(MulBackward0, _mul, a, b, ("self", "other")), "mul", b)
    except RuntimeError as err:
        raise errors.short(err)


def div(a, b, *, rounding_mode=None):
    """a / b; integers divide to the default float type (float32), as in PyTorch.
    With ``rounding_mode`` ("trunc" or "floor") the quotient is rounded and keeps
    the operands' type; its gradient is zero (``DivBackward2``)."""
    if rounding_mode is not None:
        return _rounded_div(a, b, rounding_mode)
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


def _rounded_div(a, b, mode):
    if mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{mode}'")
    from . import compare
    if mode == "floor":
        out = compare.floor_divide(a, b)
    else:
        out = compare.trunc_divide(a, b)
    if out._data.dtype.kind not in "fc":
        return out
    return record(DivBackward2, out._data, _tensors(a, b), rounding_mode=mode)


def _tensors(*xs):
    return tuple(x for x in xs if isinstance(x, Tensor))


def floor_divide(a, b):
    """a // b (rounded towards -inf).  PyTorch defines no derivative for it: on
    floats it records a node whose backward says so."""
    from . import compare
    out = compare.floor_divide(a, b)
    if out is NotImplemented or out._data.dtype.kind not in "fc":
        return out
    return record(FloorDivideNotImplemented, out._data, _tensors(a, b),
                  op="aten::floor_divide")


def remainder(a, b):
    """a % b, with the sign of b (Python's rule, as in PyTorch).  d/da = 1 and, for
    a tensor b, d/db = -floor(a / b); PyTorch has no derivative for ``number % t``."""
    from . import compare
    out = compare.remainder(a, b)
    if out is NotImplemented or out._data.dtype.kind not in "fc":
        return out
    if not isinstance(a, Tensor):
        return record(FloorDivideNotImplemented, out._data, (b,), op="aten::remainder")
    if not isinstance(b, Tensor):
        return record(RemainderBackward0, out._data, (a,))
    return record(RemainderBackward1, out._data, (a, b), self=a, other=b)


def rfloor_divide(a, b):
    return floor_divide(b, a)


def rremainder(a, b):
    return remainder(b, a)


def atan2(a, other):
    """The angle of the point (other, a): arctan(a / other) in the right quadrant."""
    if not isinstance(other, Tensor):
        raise backend.NotAnOperand(f"atan2(): argument 'other' must be Tensor, not "
                                   f"{type(other).__name__}")
    a_, b_, da, db = as_tensor_pair(a, other)
    if da.dtype.kind not in "fc":  # integers: each becomes a float on its own, as in
        dt = backend.get_default_dtype().np  # PyTorch (not through their common integer
        da, db = as_tensor_pair(Tensor._make(a_._data.astype(dt)),  # type: -63 stays
                                Tensor._make(b_._data.astype(dt)))[2:]  # -63 beside uint8)
    try:
        out = backend.xp_of(da).arctan2(da, db)
    except ValueError:
        check_broadcast(da, db)
        raise
    return record(Atan2Backward0, out, (a_, b_), self=a_, other=b_)


def rdiv(a, b):
    """number / tensor, computed as PyTorch does: reciprocal, then multiply."""
    from .unary import reciprocal
    return mul(reciprocal(a), b)


def pow(a, exponent):  # noqa: A001 - PyTorch's name
    """a ** exponent, for a tensor or number exponent."""
    if isinstance(exponent, Tensor):
        if not isinstance(a, Tensor):
            return rpow(exponent, a)
        return _binary(PowBackward1, _pow_arrays, a, exponent, ("self", "exponent"),
                       result=RESULT)
    a_, e, da, de = as_tensor_pair(a, exponent)
    if da.dtype.kind in "biu" and exponent.__class__ is int and exponent < 0:
        raise RuntimeError(_NEGATIVE_POWER)
    out = da ** de
    if out.dtype != da.dtype:  # bool ** bool: numpy says int8, PyTorch bool
        out = out.astype(da.dtype)
    return record(PowBackward0, out, (a_,), self=a_, exponent=exponent)


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def _pow_arrays(x, y):
    """x ** y for two arrays of one (promoted) dtype, as PyTorch computes it: a
    negative integer power of an integer is 0 (1 and -1 excepted), not numpy's
    error; booleans have no power."""
    if x.dtype.kind == "b":
        check_broadcast(x, y)  # (shapes are refused first)
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if x.dtype.kind in "iu" and (y < 0).any():
        xp = backend.xp_of(x)
        negative = y < 0
        whole = x ** xp.where(negative, 0, y).astype(y.dtype)
        odd = (y % 2) != 0
        part = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0)).astype(x.dtype)
        return xp.where(negative, part, whole)
    return x ** y


def rpow(a, base):
    """number ** tensor (PowBackward2)."""
    a_, b_, da, db = as_tensor_pair(a, base)
    # PyTorch keeps a number base as the number (``_saved_self`` reads 2, not tensor(2.))
    kept = base if base.__class__ in _NUMBERS else b_
    return record(PowBackward2, _pow_arrays(db, da), (a_,), self=kept, exponent=a_, result=RESULT)


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
    try:
        return record(NegBackward0, -a._data, (a,))
    except TypeError:  # numpy's words for a bool array
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.") from None


def matmul(a, b):
    """Matrix product with numpy's rules for 1-D and batched operands, computed
    and recorded as PyTorch does (:mod:`.matmul_plan`): a plain ``MmBackward0``
    for two matrices; for a stack of matrices, the kernel PyTorch picks and the
    reshapes around it."""
    a, b, da, db = as_tensor_pair(a, b)
    na, nb = da.ndim, db.ndim
    if na == 0 or nb == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na == 2 and nb == 2 and a._data.dtype == b._data.dtype and da.dtype.kind != "b" \
            and da.shape[1] == db.shape[0]:   # the common case, checked in one line
        return record(MmBackward0, da @ db, (a, b), self=a, mat2=b)
    from . import matmul_plan
    a, b, p = matmul_plan.settle(a, b)
    da, db = a._data, b._data
    if da.dtype != db.dtype or da.dtype.kind == "b":
        matmul_plan.dtype_refusal(p, da, db)
    refused = matmul_plan.shape_refusal(p, da.shape, db.shape)
    if refused:
        raise RuntimeError(refused)
    return matmul_plan.run(p, a, b)


def dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return matmul(a, b)


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError("self must be a matrix")
    return matmul(a, b)


def addmm(bias, m1, m2, *, beta=1, alpha=1):
    """beta * bias + alpha * (m1 @ m2) in one node, as ``nn.Linear`` does in PyTorch
    (AddmmBackward0).  With beta = 0 the bias is not read (a NaN there does not
    spread), but it must still broadcast."""
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
    if beta != 1 or alpha != 1:
        return _scaled_addmm(bias, m1, m2, out, beta, alpha)
    if bs == out.shape[1:] or backend.broadcast_shapes(bs, out.shape) == out.shape:
        out += bias._data        # into the fresh product: one array, not two
    else:
        out = bias._data + out
    return record(AddmmBackward0, out, (bias, m1, m2), mat1=m1, mat2=m2, beta=1, alpha=1)


def _scaled_addmm(bias, m1, m2, out, beta, alpha):
    b = bias._data
    try:
        shape = backend.broadcast_shapes(b.shape, out.shape)
    except ValueError:
        shape = None
    if shape != out.shape:
        raise RuntimeError(f"The expanded size of the tensor ({out.shape[-1]}) must match the "
                           f"existing size ({b.shape[-1] if b.ndim else 1}) at non-singleton "
                           f"dimension {out.ndim - 1}.  Target sizes: {list(out.shape)}.  "
                           f"Tensor sizes: {list(b.shape)}")
    if alpha == 0:  # the product is not read (a NaN there does not spread)
        out = backend.xp_of(out).zeros_like(out)
    elif alpha != 1:
        out = out * out.dtype.type(alpha) if out.dtype.kind != "b" else out & bool(alpha)
    if beta != 0:
        out = out + (b * b.dtype.type(beta) if b.dtype.kind != "b" else b & bool(beta))
    out = backend.xp_of(out).asarray(out, dtype=b.dtype)
    return record(AddmmBackward0, out, (bias, m1, m2), mat1=m1, mat2=m2, beta=beta, alpha=alpha)



_add, _sub, _mul, _div, _pow = (operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.pow)


# Backward formulas: g is the gradient of the output; one formula per input.
# (a number in a formula -- alpha, 2, n -- is a Scalar in PyTorch's C++: mul_scalar
# and the other words of scalar.py record its overloads, MulBackward1...)
AddBackward0 = rule("AddBackward0", "alpha", self="g",
                    other="g if alpha == 1 else mul_scalar(g, alpha)")
SubBackward0 = rule("SubBackward0", "alpha", self="g",
                    other="-g if alpha == 1 else mul_scalar(-g, alpha)")
RsubBackward1 = rule("RsubBackward1", "alpha", self="-g if alpha == 1 else mul_scalar(-g, alpha)")
MulBackward0 = rule("MulBackward0", "self other", self="g * other", other="g * self")
MulBackward0._frees = ("other",)  # ``x * 2``: the 2 is saved, and freed, as a tensor
DivBackward0 = rule("DivBackward0", "self other",
                    self="g / other", other="-g * ((self / other) / other)")
# (PyTorch's order of operations: x / 0 gives inf, then inf / 0 inf, where
# x / (0 * 0) would too but its second derivative would not match)
DivBackward0._frees = ("other",)
NegBackward0 = rule("NegBackward0", "", self="-g")
PowBackward0 = rule("PowBackward0", "self exponent",
                    self="pow_backward(g, self, exponent)")
PowBackward1 = rule("PowBackward1", "self exponent result",
                    self="pow_backward(g, self, exponent)",
                    exponent="pow_exponent_grad(g, self, exponent, result)")
PowBackward2 = rule("PowBackward2", "self exponent result",
                    exponent="pow_exponent_grad(g, self, exponent, result)")
DotBackward0 = rule("DotBackward0", "self other", self="g * other", other="g * self")
MvBackward0 = rule("MvBackward0", "self vec",
                   self="reshape(g, (-1, 1)) * vec", vec="t(self) @ g")
MmBackward0 = rule("MmBackward0", "self mat2", self="g @ t(mat2)",
                   mat2="mm_mat2_grad(g, self, mat2)")
BmmBackward0 = rule("BmmBackward0", "self mat2", self="bmm(g, transpose(mat2, 1, 2))",
                    mat2="bmm(transpose(self, 1, 2), g)")
AddmmBackward0 = rule("AddmmBackward0", "mat1 mat2 beta alpha",
                      self="g if beta == 1 else mul_scalar(g, beta)",
                      mat1="g @ t(mat2) if alpha == 1 else mul_scalar(g @ t(mat2), alpha)",
                      mat2="mm_mat2_grad(g, mat1, mat2) if alpha == 1 else"
                           " mul_scalar(mm_mat2_grad(g, mat1, mat2), alpha)")
DivBackward1 = rule("DivBackward1", "other", self="div_scalar(g, other)")  # (by a Scalar)
DivBackward2 = rule("DivBackward2", "rounding_mode", self="zeros_like(g)",
                    other="zeros_like(g)")  # a rounded quotient is a step function
RemainderBackward0 = rule("RemainderBackward0", "", self="g")
RemainderBackward1 = rule("RemainderBackward1", "self other",
                          self="g", other="-g * floor_divide(self, other)")
Atan2Backward0 = rule("Atan2Backward0", "self other", common="recip = atan2_recip(self, other)",
                      self="g * other * recip", other="g * -self * recip")
# (at (0, 0) atan2 has no derivative: PyTorch gives 0 there, as atan2_recip does)
# PyTorch defines no derivative for ``//`` (nor for ``number % t``): the node is
# there, and its backward says so.
FloorDivideNotImplemented = rule("NotImplemented", "op", self="not_implemented(op)",
                                 other="not_implemented(op)")
FloorDivideNotImplemented.name = lambda self: "torch::autograd::NotImplemented"

# The operators ``+ - *`` (``x + 2`` and ``2 + x`` make the same node, as in PyTorch).
add_operator = operator_form(AddBackward0, _add, alpha=1)
_sub_operator = operator_form(SubBackward0, _sub, alpha=1)


def sub_operator(a, b):
    try:
        if a._data.dtype.kind == "b" or b.__class__ in _BOOLS or (
                b.__class__ is Tensor and b._data.dtype.kind == "b"):
            check_sub(a, b)
        return _sub_operator(a, b)
    except RuntimeError as err:
        raise errors.short(err)  # the learner's line and this one, as for + and *
mul_operator = operator_form(MulBackward0, _mul, ("self", "other"))
