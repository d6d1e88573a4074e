"""How ``a @ b`` is computed, and recorded, when it is not a plain matrix product.

PyTorch's ``matmul`` is not one node: it turns every product into one of four
kernels (``dot``, ``mv``, ``mm``, ``bmm``) and records the reshapes around it, so
the graph a learner draws shows those steps.  The plan follows PyTorch's rules:

* vector · vector: ``dot``; matrix · vector: ``mv``; matrix · matrix: ``mm``;
  vector · matrix: ``mm`` of the vector as a one-row matrix, then that row is
  dropped in place (``SqueezeBackward4``).
* **fold**: a stack of matrices times a matrix or a vector becomes one tall
  matrix (``reshape``, ``ViewBackward0``), one ``mm`` or ``mv``, and a reshape
  back (``_unsafe_view``, ``UnsafeViewBackward0``).  PyTorch folds when the
  small operand requires grad (its gradient is then one product instead of a
  sum over the batch), or when folding needs no copy.  A matrix or vector times
  a stack is folded the same way after transposing both sides
  (``A @ B = (Bᵀ @ Aᵀ)ᵀ``), and the result is made contiguous again.
* **batched**: otherwise both sides are broadcast to a common batch
  (``expand``), flattened to three dimensions (``reshape``), multiplied by
  ``bmm`` and viewed back.  Two stacks of three dimensions whose batch sizes
  differ and one of which is 1 (and requires grad) drop that batch dimension
  first (``squeeze(0)``), and are planned again.

The refusals (shapes that cannot be multiplied, mixed dtypes, booleans) are
worded by the kernel the plan reaches, with its operands in its order, since
that kernel is where PyTorch notices.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import shape
from ._rules import record
from .. import backend
from ..tensor import scalar_type_name


@dataclass(frozen=True)
class Plan:
    """``kind``: dot, mv, vm (vector times matrix), mm, fold, batched, or
    squeeze (drop operand ``side``'s batch of 1, then plan again).  For a fold,
    ``transpose`` says whether the sides are swapped (a stack on the right) and
    ``kernel`` is mm or mv; for the others, ``kernel`` is the kernel that runs."""

    kind: str
    kernel: str
    transpose: bool = False
    side: int = 0


def _mT_layout(t):
    """Shape and element strides of ``t.mT`` without making it."""
    sizes, strides = list(t.shape), list(t.stride())
    sizes[-2], sizes[-1] = sizes[-1], sizes[-2]
    strides[-2], strides[-1] = strides[-1], strides[-2]
    return sizes, strides


def _should_fold(a, b) -> bool:
    """PyTorch's test: fold the operand with three or more dimensions into one
    matrix (and call mm or mv) instead of broadcasting both into a bmm."""
    larger = a.ndim >= b.ndim
    sizes, strides = (list(a.shape), list(a.stride())) if larger else _mT_layout(b)
    small = b if larger else a
    if not (len(sizes) >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:
        return True   # its gradient is then one product, not a sum over the batch
    if a.ndim == 2:
        return False  # folding would need a transposed copy of the result
    if math.prod(sizes) == 0:
        return True
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(len(sizes) - 2))


def plan(a, b) -> Plan:
    na, nb = a.ndim, b.ndim
    if na == 1 and nb == 1:
        return Plan("dot", "dot")
    if na == 2 and nb == 1:
        return Plan("mv", "mv")
    if na == 1 and nb == 2:
        return Plan("vm", "mm")
    if na == 2 and nb == 2:
        return Plan("mm", "mm")
    if _should_fold(a, b):
        transpose = nb > na
        matrix = (na == 2) if transpose else (nb == 2)
        return Plan("fold", "mm" if matrix else "mv", transpose)
    if na == 3 and nb == 3 and a.shape[0] != b.shape[0]:
        if a.shape[0] == 1 and a.requires_grad:
            return Plan("squeeze", "", side=0)
        if b.shape[0] == 1 and b.requires_grad:
            return Plan("squeeze", "", side=1)
    return Plan("batched", "bmm")


def settle(a, b):
    """``(a, b, plan)`` once no batch of 1 is left to squeeze (a squeezed operand
    is recorded: ``SqueezeBackward1``)."""
    p = plan(a, b)
    while p.kind == "squeeze":
        a, b = (shape.squeeze(a, 0), b) if p.side == 0 else (a, shape.squeeze(b, 0))
        p = plan(a, b)
    return a, b, p


# -- what the kernel refuses ----------------------------------------------------------------
def kernel_operands(p: Plan, sa, sb):
    """The shapes the plan's kernel sees, in its order: (first, second)."""
    if p.kind == "vm":
        return (1, *sa), tuple(sb)
    if p.kind != "fold":
        return tuple(sa), tuple(sb)
    if p.transpose:   # Bᵀ folded, times Aᵀ (or the vector A)
        big, small = (*sb[:-2], sb[-1], sb[-2]), (tuple(reversed(sa)) if len(sa) == 2
                                                   else tuple(sa))
    else:
        big, small = tuple(sa), tuple(sb)
    return (math.prod(big[:-1]), big[-1]), small


def shape_refusal(p: Plan, sa, sb) -> str | None:
    """PyTorch's words for two shapes that cannot be multiplied, or None."""
    first, second = kernel_operands(p, sa, sb)
    if p.kernel == "dot":
        return None if sa[0] == sb[0] else (
            f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to "
            f"have the same number of elements, but got {sa[0]} and {sb[0]} elements "
            f"respectively")
    if p.kernel == "mv":
        rows = first[0]
        return None if first[1] == second[0] else (
            f"size mismatch, got input ({rows}), mat ({rows}x{first[1]}), vec ({second[0]})")
    if p.kernel == "mm":
        return None if first[1] == second[0] else (
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({'x'.join(map(str, first))} and {'x'.join(map(str, second))})")
    for i in range(1, min(len(sa), len(sb)) - 1):
        x, y = sa[-2 - i], sb[-2 - i]
        if x != y and x != 1 and y != 1:
            return (f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                    f"at non-singleton dimension {max(len(sa), len(sb)) - 2 - i}")
    batch = math.prod(backend.broadcast_shapes(sa[:-2], sb[:-2]))
    m1, m2 = sa[-1], (sb[-2] if len(sb) > 1 else sb[0])
    return None if m1 == m2 else (
        f"Expected size for first two dimensions of batch2 tensor to be: "
        f"[{batch}, {m1}] but got: [{batch}, {m2}].")


_C = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
      "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
      "bool": "bool"}


def dtype_refusal(p: Plan, da, db) -> None:
    """Raise PyTorch's refusal of a product of two dtypes (or of booleans), in the
    words of the kernel the plan reaches.  Shapes that cannot be multiplied are
    refused first, except for two vectors."""
    if shape_refusal(p, da.shape, db.shape) and not (p.kernel == "dot" and da.dtype != db.dtype):
        return
    if p.kind == "fold" and p.transpose:
        da, db = db, da   # the kernel multiplies Bᵀ by Aᵀ
    kernel = {"dot": "dot", "mv": "addmv_impl_cpu", "mm": "addmm_impl_cpu_", "bmm": "bmm"}
    if da.dtype == db.dtype:
        if da.size == 0 or db.size == 0:
            return  # (no kernel runs for empty operands)
        raise NotImplementedError(f'"{kernel[p.kernel]}" not implemented for '
                                  f"'{scalar_type_name(da.dtype)}'")
    name = lambda d: scalar_type_name(d.dtype)  # noqa: E731
    if p.kernel == "bmm" and da.dtype.kind == "b":
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if p.kernel == "dot":
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{name(da)} and {name(db)}")
    if p.kernel == "mv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{name(db)}, {name(da)}, and {name(db)}")
    if p.kernel == "mm":
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C[da.dtype.name]} != {_C[db.dtype.name]}")
    raise RuntimeError(f"expected scalar type {name(da)} but found {name(db)}")


# -- the recorded steps --------------------------------------------------------------------
def kernel(kind: str, a, b):
    """One product kernel, recorded as PyTorch's node."""
    from .arith import BmmBackward0, DotBackward0, MmBackward0, MvBackward0
    out = a._data @ b._data
    if kind == "mm":
        return record(MmBackward0, out, (a, b), self=a, mat2=b)
    if kind == "mv":
        return record(MvBackward0, out, (a, b), self=a, vec=b)
    if kind == "dot":
        return record(DotBackward0, out, (a, b), self=a, other=b)
    return record(BmmBackward0, out, (a, b), self=a, mat2=b)


def unsafe_view(t, sizes):
    """``_unsafe_view``: a reshape of a fresh result, recorded as
    ``UnsafeViewBackward0`` (not a view for autograd: nothing else holds it)."""
    from .shape import UnsafeViewBackward0
    return record(UnsafeViewBackward0, t._data.reshape(tuple(sizes)), (t,),
                  self_sym_sizes=t._data.shape)


def run(p: Plan, a, b):
    """``a @ b`` by the plan, each step recorded."""
    if p.kind in ("dot", "mv", "mm"):
        return kernel(p.kind, a, b)
    if p.kind == "vm":
        return kernel("mm", shape.unsqueeze(a, 0), b).squeeze_(0)
    if p.kind == "fold":
        return _fold(p, a, b)
    return _batched(a, b)


def _fold(p: Plan, a, b):
    big = shape.mT(b) if p.transpose else a
    small = (shape.t(a) if a.ndim == 2 else a) if p.transpose else b
    sizes = list(big.shape[:-1])
    rows = math.prod(sizes)
    if small.ndim == 2:
        sizes.append(small.shape[1])
    folded = shape.reshape(big, rows, big.shape[-1])
    out = unsafe_view(kernel(p.kernel, folded, small), sizes)
    return shape.contiguous(shape.mT(out)) if p.transpose and small.ndim == 2 else out


def _batched(a, b):
    n = a.shape[-2] if a.ndim > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if b.ndim > 1 else b.shape[0]
    p = b.shape[-1] if b.ndim > 1 else 1
    batch = list(backend.broadcast_shapes(a.shape[:max(a.ndim - 2, 0)],
                                          b.shape[:max(b.ndim - 2, 0)]))
    count = math.prod(batch)
    left = shape.reshape(shape.expand(a, *batch, n, m1), count, n, m1)
    if b.ndim == 1:
        right = shape.unsqueeze(shape.reshape(shape.expand(b, *batch, m2), count, m2), 2)
    else:
        right = shape.reshape(shape.expand(b, *batch, m2, p), count, m2, p)
    sizes = batch + ([n] if a.ndim > 1 else []) + ([p] if b.ndim > 1 else [])
    out = kernel("bmm", left, right)
    if b.ndim == 1:
        out = shape.squeeze(out, -1)
    return unsafe_view(out, sizes)
