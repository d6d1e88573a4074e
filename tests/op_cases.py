"""One table of op cases: for every backward node, calls that must produce it.

``CASES`` maps a node name (a key of ``NODE_CLASSES``) to a list of ``Case``.
A case says how to draw its inputs (float64 arrays from a seeded generator) and
which function of those inputs to differentiate.  The function's output must
have that node as its ``grad_fn``: that is how the gradient test knows the case
really exercises the rule it is listed under.

How inputs are drawn matters for a central-difference check:

* ``normal``    -- any real values (smooth ops: exp, sin, +, @ ...)
* ``positive``  -- in [0.5, 2]: log, sqrt, rsqrt, x ** 2.5, bases of ``**``
* ``nonzero``   -- normal values pushed at least 0.3 away from 0 (divisors)
* ``distinct``  -- all values different, on a grid 0.25 apart shifted by 0.125,
                   so no two tie and none lies on a kink: 0 (relu, abs,
                   sign), an integer (floor, ceil), a half-integer (round), or
                   the bounds +-0.5 used by clamp.  One pool is shared by all
                   shapes of a case, so ``maximum(a, b)`` has no ties either.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

import autograd_kit as ak
from autograd_kit.ops import indexing as shape_ops
from autograd_kit.ops import loss
from autograd_kit.ops.indexing import index_put


@dataclass(frozen=True)
class Case:
    id: str
    draw: Callable[[np.random.Generator], tuple]
    fn: Callable

    def inputs(self, device="cpu") -> tuple:
        """Fresh leaf tensors (float64, requires_grad) on ``device``; the seed
        depends only on the case id, so every case is reproducible alone."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return tuple(ak.tensor(a, dtype=ak.float64, device=device, requires_grad=True)
                     for a in self.draw(rng))


# ------------------------------------------------------------ input draws --
def normal(*shapes):
    return lambda rng: tuple(rng.standard_normal(s) for s in shapes)


def uniform(lo, hi, *shapes):
    return lambda rng: tuple(rng.uniform(lo, hi, s) for s in shapes)


def positive(*shapes):
    return uniform(0.5, 2.0, *shapes)


def nonzero(*shapes):
    def draw(rng):
        out = []
        for s in shapes:
            a = rng.standard_normal(s)
            out.append(np.where(a < 0, -1.0, 1.0) * (0.3 + np.abs(a)))
        return tuple(out)
    return draw


def distinct(*shapes):
    def draw(rng):
        sizes = [int(np.prod(s, dtype=int)) for s in shapes]
        pool = (rng.permutation(sum(sizes)) - sum(sizes) // 2) * 0.25 + 0.125
        out, start = [], 0
        for s, n in zip(shapes, sizes, strict=True):
            out.append(pool[start:start + n].reshape(s))
            start += n
        return tuple(out)
    return draw


def const(like, array, dtype=None):
    """A constant (no gradient) on the same device as ``like``."""
    return ak.tensor(array, dtype=dtype, device=like.device)


MASK = np.array([[True, False, True, False],
                 [False, False, True, True],
                 [True, True, False, False]])          # 6 of 12 elements
ROW_MASK = np.array([True, False, False, True])       # broadcasts against (3, 4)
TARGET = np.array([1, 0, 4])                          # class indices for 3 rows, 5 classes


def cloned(x):
    """A non-leaf copy, so in-place ops are allowed and the leaf's gradient
    flows through them."""
    return x.clone()


def first_grad(f):
    """x -> d(sum f(x))/dx, made with create_graph so the result has a grad_fn.
    (Grad mode is switched on inside: a numerical check calls this under no_grad.)"""
    def g(x):
        with ak.enable_grad():
            (gx,) = ak.autograd.grad(f(x).sum(), x, create_graph=True)
        return gx
    return g


def _set(y, key, value):
    y[key] = value
    return y


C = Case

CASES: dict[str, list[Case]] = {
    # ---------------------------------------------------------- arith.py --
    "AddBackward0": [
        C("add-broadcast", normal((3, 1), (4,)), lambda a, b: a + b),
        C("add-alpha", normal((2, 3), (3,)), lambda a, b: ak.add(a, b, alpha=2.5)),
        C("add-scalar", normal((3,)), lambda a: a + 2.0),
        C("radd-scalar", normal((3,)), lambda a: 2.0 + a),
        C("add_-inplace", normal((3, 4), (4,)), lambda a, b: cloned(a).add_(b)),
    ],
    "SubBackward0": [
        C("sub-broadcast", normal((3, 1), (4,)), lambda a, b: a - b),
        C("sub-alpha", normal((2, 3), (2, 1)), lambda a, b: ak.sub(a, b, alpha=-1.5)),
        C("sub-scalar", normal((3,)), lambda a: a - 3.0),
        C("sub_-inplace", normal((3, 4), (3, 1)), lambda a, b: cloned(a).sub_(b)),
    ],
    "RsubBackward1": [
        C("rsub-scalar", normal((2, 3)), lambda a: 2.0 - a),
    ],
    "MulBackward0": [
        C("mul-broadcast", normal((3, 1), (4,)), lambda a, b: a * b),
        C("mul-scalar", normal((2, 3)), lambda a: a * 2.5),
        C("rmul-scalar", normal((2, 3)), lambda a: -1.5 * a),
        C("rdiv-scalar", nonzero((2, 3)), lambda a: 2.0 / a),  # reciprocal, then mul
        C("mul_-inplace", normal((3, 4), (4,)), lambda a, b: cloned(a).mul_(b)),
    ],
    "DivBackward0": [
        C("div-broadcast", lambda rng: normal((3, 1))(rng) + nonzero((4,))(rng),
          lambda a, b: a / b),
        C("nanmean-dim", normal((3, 4)), lambda x: x.nanmean(0)),  # nansum / count
        C("div-scalar", normal((2, 3)), lambda a: a / 4.0),
        C("div_-inplace", lambda rng: normal((3, 4))(rng) + nonzero((4,))(rng),
          lambda a, b: cloned(a).div_(b)),
    ],
    "NegBackward0": [
        C("neg-operator", normal((2, 3)), lambda a: -a),
        C("neg-method", normal((4,)), lambda a: a.neg()),
    ],
    "PowBackward0": [
        C("pow-float-exponent", positive((2, 3)), lambda a: a ** 2.5),
        C("pow-int-exponent", normal((2, 3)), lambda a: a ** 3),
        C("pow-negative-exponent", positive((4,)), lambda a: a ** -1.5),
        C("pow-zero-exponent", normal((4,)), lambda a: a ** 0),
        C("square", normal((2, 3)), lambda a: a.square()),
        C("pow_-inplace", positive((2, 3)), lambda a: cloned(a).pow_(1.5)),
    ],
    "PowBackward1": [
        C("pow-tensor-broadcast", lambda rng: positive((3, 1))(rng) + normal((4,))(rng),
          lambda a, b: a ** b),
        C("pow-function", lambda rng: positive((2, 3))(rng) + normal((2, 3))(rng),
          lambda a, b: ak.pow(a, b)),
    ],
    "PowBackward2": [
        C("rpow-scalar-base", normal((2, 3)), lambda a: 2.0 ** a),
        C("rpow-small-base", normal((4,)), lambda a: 0.5 ** a),
    ],
    "DotBackward0": [
        C("dot", normal((5,), (5,)), lambda a, b: ak.dot(a, b)),
        C("matmul-1d-1d", normal((4,), (4,)), lambda a, b: a @ b),
    ],
    "MvBackward0": [
        C("matmul-2d-1d", normal((3, 4), (4,)), lambda m, v: m @ v),
    ],
    "MmBackward0": [
        C("matmul-2d-2d", normal((3, 4), (4, 2)), lambda a, b: a @ b),
        C("mm", normal((2, 3), (3, 3)), lambda a, b: ak.mm(a, b)),
    ],
    "BmmBackward0": [
        C("bmm", normal((2, 3, 4), (2, 4, 5)), lambda a, b: ak.bmm(a, b)),
        C("bmm-one-batch", normal((1, 2, 3), (1, 3, 1)), lambda a, b: ak.bmm(a, b)),
    ],
    "AddmmBackward0": [
        C("addmm-bias-row", normal((2,), (3, 4), (4, 2)), lambda b, m1, m2: ak.addmm(b, m1, m2)),
        C("addmm-bias-full", normal((3, 2), (3, 4), (4, 2)),
          lambda b, m1, m2: ak.addmm(b, m1, m2)),
    ],
    # -------------------------------------------------------- convert.py --
    "ToCopyBackward0": [
        # a copy on the CPU: from the GPU a device move, on the CPU a plain copy
        C("to-cpu-copy", normal((2, 3)), lambda a: a.to("cpu", copy=True)),
        C("to-same-dtype-copy", normal((4,)), lambda a: a.to(ak.float64, copy=True)),
    ],
    # -------------------------------------------------------- inplace.py --
    "CopyBackwards": [
        C("copy_-same-shape", normal((3, 4), (3, 4)), lambda a, v: cloned(a).copy_(v)),
        C("copy_-broadcast", normal((3, 4), (4,)), lambda a, v: cloned(a).copy_(v * 2)),
    ],
    "FillBackward2": [
        C("fill_", normal((3, 4)), lambda a: (cloned(a) * 2).fill_(1.5)),
    ],
    "ZeroBackward0": [
        C("zero_", normal((2, 3)), lambda a: cloned(a).zero_()),
    ],
    "FillBackward3": [
        # fill_ with a 0-d tensor: the value receives the sum of the gradient
        C("fill_-tensor", normal((3, 4), ()), lambda a, v: (cloned(a) * 2).fill_(v)),
    ],
    "GatherViewBackward0": [
        C("gather-view-slice", normal((4, 3)),
          lambda a: shape_ops.gather_view(a, lambda arr: arr[1:3, ::2])),
    ],
    "ScatterViewBackward0": [
        C("scatter-view-slice", normal((2, 2)),
          lambda a: shape_ops.scatter_view(a, (4, 3), lambda arr: arr[1:3, ::2])),
    ],
    # ----------------------------------------------------------- loss.py --
    "MseLossBackward0": [
        C("mse-mean", normal((3, 4), (3, 4)), lambda x, y: loss.mse_loss(x, y)),
        C("mse-sum", normal((3, 4), (3, 4)), lambda x, y: loss.mse_loss(x, y, "sum")),
        C("mse-none", normal((3, 4), (3, 4)), lambda x, y: loss.mse_loss(x, y, "none")),
        C("mse-target-broadcast", normal((3, 4), (4,)), lambda x, y: loss.mse_loss(x, y)),
        # the input broadcasts against the target: the mean is over all 3 x 3 differences
        C("mse-input-broadcast", normal((3,), (3, 1)), lambda x, y: loss.mse_loss(x, y)),
    ],
    "NllLossBackward0": [
        C("nll-mean", normal((3, 5)), lambda x: loss.nll_loss(x, const(x, TARGET))),
        C("nll-sum", normal((3, 5)), lambda x: loss.nll_loss(x, const(x, TARGET), "sum")),
        C("nll-none", normal((3, 5)), lambda x: loss.nll_loss(x, const(x, TARGET), "none")),
        C("cross-entropy", normal((3, 5)), lambda x: loss.cross_entropy(x, const(x, TARGET))),
        C("nll-ignore-index", normal((3, 5)),
          lambda x: loss.nll_loss(x, const(x, [4, -100, 0]))),
    ],
    "NllLossBackwardBackward0": [  # nll_loss's gradient, recorded: a function of g
        C("nll-grad-none", normal((3,), (3, 5)), lambda g, x: ak.autograd.grad(
            loss.nll_loss(x, const(x, TARGET), "none"), x, g, create_graph=True)[0]),
        C("nll-grad-mean-ignore", normal((), (3, 5)), lambda g, x: ak.autograd.grad(
            loss.nll_loss(x, const(x, [4, -100, 0])), x, g, create_graph=True)[0]),
    ],
    "BinaryCrossEntropyBackward0": [
        C("bce-mean", uniform(0.1, 0.9, (3, 4), (3, 4)),
          lambda p, y: loss.binary_cross_entropy(p, y)),
        C("bce-sum", uniform(0.1, 0.9, (3, 4), (3, 4)),
          lambda p, y: loss.binary_cross_entropy(p, y, "sum")),
        C("bce-none", uniform(0.1, 0.9, (5,), (5,)),
          lambda p, y: loss.binary_cross_entropy(p, y, "none")),
    ],
    "BinaryCrossEntropyBackwardBackward0": [  # its gradient, recorded: of g, p and y
        C("bce-grad-none", lambda rng: (rng.standard_normal(5), rng.uniform(0.1, 0.9, 5),
                                        rng.uniform(0.1, 0.9, 5)),
          lambda g, p, y: ak.autograd.grad(loss.binary_cross_entropy(p, y, "none"), p, g,
                                           create_graph=True)[0]),
        C("bce-grad-mean-weighted", lambda rng: (rng.standard_normal(()),
                                                 rng.uniform(0.1, 0.9, (2, 3)),
                                                 rng.uniform(0.1, 0.9, (2, 3))),
          lambda g, p, y: ak.autograd.grad(
              loss.binary_cross_entropy(p, y, weight=const(p, [[0.5, 2.0, 1.0]] * 2)), p, g,
              create_graph=True)[0]),
    ],
    # --------------------------------------------------------- reduce.py --
    "SumBackward0": [
        C("sum-all", normal((3, 4)), lambda x: x.sum()),
        C("sum-all-3d", normal((2, 3, 2)), lambda x: ak.sum(x)),
    ],
    "SumBackward1": [
        C("sum-dim", normal((3, 4)), lambda x: x.sum(1)),
        C("sum-dims-keepdim", normal((2, 3, 4)), lambda x: x.sum((0, 2), keepdim=True)),
        C("sum-negative-dim", normal((2, 3, 4)), lambda x: x.sum(-1)),
    ],
    "NansumBackward0": [
        # (no NaN here: central differences need finite values; test_fidelity_nan_reductions
        # checks the zeros at NaNs against PyTorch)
        C("nansum-all", normal((3, 4)), lambda x: x.nansum()),
        C("nansum-dim", normal((3, 4)), lambda x: x.nansum(1)),
        C("nansum-dims-keepdim", normal((2, 3, 4)), lambda x: ak.nansum(x, (0, 2), keepdim=True)),
    ],
    "MeanBackward0": [
        C("mean-all", normal((3, 4)), lambda x: x.mean()),
    ],
    "MeanBackward1": [
        C("mean-dim", normal((3, 4)), lambda x: x.mean(0)),
        C("mean-dims-keepdim", normal((2, 3, 4)), lambda x: x.mean((1, 2), keepdim=True)),
        C("mean-negative-dim", normal((2, 3, 4)), lambda x: x.mean(-2)),
    ],
    "MaxBackward1": [
        C("max-all", distinct((3, 4)), lambda x: x.max()),
    ],
    "MinBackward1": [
        C("min-all", distinct((3, 4)), lambda x: x.min()),
    ],
    "MaxBackward0": [
        C("max-dim", distinct((3, 4)), lambda x: x.max(1).values),
        C("max-dim-keepdim", distinct((3, 4)), lambda x: x.max(0, keepdim=True)[0]),
        C("max-negative-dim-3d", distinct((2, 3, 4)), lambda x: ak.max(x, -2).values),
    ],
    "MinBackward0": [
        C("min-dim", distinct((3, 4)), lambda x: x.min(1).values),
        C("min-dim-keepdim", distinct((2, 3, 4)), lambda x: x.min(2, keepdim=True)[0]),
    ],
    "MaximumBackward0": [
        C("maximum-broadcast", distinct((3, 1), (4,)), lambda a, b: ak.maximum(a, b)),
        C("max-of-two-tensors", distinct((2, 3), (2, 3)), lambda a, b: ak.max(a, b)),
    ],
    "MinimumBackward0": [
        C("minimum-broadcast", distinct((3, 1), (4,)), lambda a, b: ak.minimum(a, b)),
        C("min-of-two-tensors", distinct((2, 3), (2, 3)), lambda a, b: a.min(b)),
    ],
    "AmaxBackward0": [
        C("amax-dim", distinct((3, 4)), lambda x: x.amax(1)),
        C("amax-dims-keepdim", distinct((2, 3, 4)), lambda x: x.amax((0, 2), keepdim=True)),
        C("amax-all", distinct((3, 4)), lambda x: ak.amax(x)),
    ],
    "AminBackward0": [
        C("amin-dim", distinct((3, 4)), lambda x: x.amin(0)),
        C("amin-dims-keepdim", distinct((2, 3, 4)), lambda x: x.amin((1, 2), keepdim=True)),
    ],
    "VarBackward0": [
        C("var-all", normal((3, 4)), lambda x: x.var()),
        C("var-dim", normal((3, 4)), lambda x: x.var(1)),
        C("var-dims-keepdim", normal((2, 3, 4)), lambda x: x.var((0, 2), keepdim=True)),
        C("var-biased", normal((3, 4)), lambda x: x.var(0, unbiased=False)),
        C("var-correction-2", normal((3, 5)), lambda x: x.var(1, correction=2)),
    ],
    "StdBackward0": [
        C("std-all", normal((3, 4)), lambda x: x.std()),
        C("std-dim", normal((3, 4)), lambda x: x.std(1)),
        C("std-dims-keepdim", normal((2, 3, 4)), lambda x: x.std((1, 2), keepdim=True)),
        C("std-biased", normal((3, 4)), lambda x: x.std(0, unbiased=False)),
    ],
    "SoftmaxBackward0": [
        C("softmax-dim1", normal((3, 4)), lambda x: ak.softmax(x, 1)),
        C("softmax-dim0", normal((3, 4)), lambda x: x.softmax(0)),
        C("softmax-last-3d", normal((2, 3, 4)), lambda x: x.softmax(-1)),
    ],
    "LogSoftmaxBackward0": [
        C("log-softmax-dim1", normal((3, 4)), lambda x: ak.log_softmax(x, 1)),
        C("log-softmax-dim0", normal((3, 4)), lambda x: x.log_softmax(0)),
        C("log-softmax-last-3d", normal((2, 3, 4)), lambda x: x.log_softmax(-1)),
    ],
    "LogsumexpBackward0": [
        C("logsumexp-dim", normal((3, 4)), lambda x: ak.logsumexp(x, 1)),
        C("logsumexp-dims-keepdim", normal((2, 3, 4)),
          lambda x: x.logsumexp((0, 2), keepdim=True)),
        C("logsumexp-negative-dim", normal((2, 3, 4)), lambda x: x.logsumexp(-1)),
    ],
    "LinalgVectorNormBackward0": [
        C("norm-all", normal((3, 4)), lambda x: x.norm()),
        C("norm-dim", normal((3, 4)), lambda x: ak.norm(x, dim=1)),
        C("norm-dim-keepdim", normal((2, 3, 4)), lambda x: x.norm(dim=(0, 2), keepdim=True)),
        C("norm-p3", nonzero((2, 3)), lambda a: a.norm(p=3)),
        C("norm-p1-dim", nonzero((3, 4)), lambda a: a.norm(p=1, dim=1)),
        C("norm-p1.5", nonzero((2, 3)), lambda a: a.norm(p=1.5)),
        C("norm-p0.5-dim", nonzero((3, 4)), lambda a: ak.norm(a, p=0.5, dim=0)),
        C("norm-inf-dim", distinct((3, 4)), lambda a: a.norm(p=float("inf"), dim=1)),
        C("norm-minus-inf", distinct((3, 4)), lambda a: a.norm(p=float("-inf"))),
    ],
    "ProdBackward0": [
        C("prod-all", nonzero((2, 3)), lambda x: x.prod()),
        # the gradient at a zero entry is the product of the others: no kink there
        C("prod-all-with-a-zero", lambda rng: (np.array([1.5, 0.0, -2.0, 0.7]),),
          lambda x: x.prod()),
    ],
    "ProdBackward1": [
        C("prod-dim", nonzero((3, 4)), lambda x: x.prod(1)),
        C("prod-dim-keepdim", nonzero((2, 3, 2)), lambda x: ak.prod(x, 0, keepdim=True)),
        C("prod-dim-with-a-zero", lambda rng: (np.array([[1.5, 0.0, -2.0], [0.5, 1.2, 2.0]]),),
          lambda x: x.prod(1)),
        C("prod-dim-two-zeros", lambda rng: (np.array([[0.0, 1.5, 0.0], [0.5, 0.0, -1.0]]),),
          lambda x: x.prod(1, keepdim=True)),
    ],
    # ---------------------------------------------------------- shape.py --
    "ViewBackward0": [
        C("reshape", normal((3, 4)), lambda x: x.reshape(4, 3)),
        C("view-minus-one", normal((3, 4)), lambda x: x.view(-1)),
        C("flatten", normal((2, 3, 2)), lambda x: x.flatten()),
        C("view-as", normal((2, 6)), lambda x: x.view_as(const(x, np.zeros((3, 4))))),
    ],
    "UnsafeViewBackward0": [
        # a reshape that cannot be a view: a clone, then an unsafe view of it
        C("reshape-non-contiguous", normal((3, 4)), lambda x: x.t().reshape(12)),
        C("flatten-transposed", normal((2, 3, 2)), lambda x: x.transpose(0, 1).flatten()),
        # a product of stacks, as PyTorch computes it: folded into mm or mv, or
        # broadcast into bmm, then viewed back (ops/matmul_plan.py)
        C("matmul-3d-3d", normal((2, 3, 4), (2, 4, 5)), lambda a, b: a @ b),
        C("matmul-3d-2d", normal((2, 3, 4), (4, 5)), lambda a, b: a @ b),
        C("matmul-batch-broadcast", normal((2, 1, 3, 4), (3, 4, 2)), lambda a, b: a @ b),
        C("matmul-3d-1d", normal((2, 3, 4), (4,)), lambda a, b: a @ b),
        C("matmul-1d-3d", normal((4,), (2, 4, 3)), lambda a, b: a @ b),
    ],
    "ReshapeAliasBackward0": [
        # a reshape that is a view of a tensor that is not contiguous
        C("reshape-strided-view", normal((2, 3, 4)), lambda x: x.transpose(0, 1).reshape(3, 2, 4)),
        C("reshape-every-other", normal((3, 4)), lambda x: x[:, ::2].reshape(6)),
    ],

    "AliasBackward0": [
        C("getitem-ellipsis", normal((3, 4)), lambda x: x[...]),
        C("getitem-full-slices", normal((3, 4)), lambda x: x[:, :]),  # (x[:] is a slice)
    ],
    "TransposeBackward0": [
        C("transpose", normal((2, 3, 4)), lambda x: x.transpose(0, 2)),
        C("transpose-negative", normal((2, 3, 4)), lambda x: ak.transpose(x, -1, 0)),
        C("mT", normal((2, 3, 4)), lambda x: x.mT),
    ],
    "TBackward0": [
        C("t-2d", normal((3, 4)), lambda x: x.t()),
        C("t-1d", normal((4,)), lambda x: x.t()),
    ],
    "PermuteBackward0": [
        C("permute", normal((2, 3, 4)), lambda x: x.permute(2, 0, 1)),
        C("permute-tuple", normal((2, 3, 4)), lambda x: ak.permute(x, (1, 2, 0))),
        C("T-3d", normal((2, 3, 4)), lambda x: x.T),
    ],
    "FlipBackward0": [
        C("flip-last", normal((2, 3, 4)), lambda x: x.flip(-1)),
        C("flip-two", normal((2, 3, 4)), lambda x: ak.flip(x, (0, 2))),
        C("flip-list", normal((3, 4)), lambda x: x.flip([1, 0])),
        C("flip-0d", normal(()), lambda x: x.flip(0)),
    ],
    "SqueezeBackward0": [
        C("squeeze-all", normal((3, 1, 4, 1)), lambda x: x.squeeze()),
    ],
    "SqueezeBackward1": [
        C("squeeze-dim", normal((3, 1, 4)), lambda x: x.squeeze(1)),
        C("squeeze-negative-dim", normal((3, 4, 1)), lambda x: x.squeeze(-1)),
        C("squeeze-non-singleton", normal((3, 4)), lambda x: x.squeeze(0)),
    ],
    "UnsqueezeBackward0": [
        C("unsqueeze", normal((3, 4)), lambda x: x.unsqueeze(1)),
        C("unsqueeze-negative", normal((3, 4)), lambda x: x.unsqueeze(-1)),
        C("getitem-none", normal((3, 4)), lambda x: x[None]),
    ],
    "ExpandBackward0": [
        C("expand-singleton", normal((3, 1)), lambda x: x.expand(3, 4)),
        C("expand-new-dims", normal((4,)), lambda x: x.expand(2, 3, 4)),
        C("expand-minus-one", normal((3, 1)), lambda x: x.expand(2, -1, 4)),
        C("expand-as", normal((1, 4)), lambda x: x.expand_as(const(x, np.zeros((3, 4))))),
    ],
    "CloneBackward0": [
        C("clone", normal((3, 4)), lambda x: x.clone()),
        C("contiguous-of-transpose", normal((3, 4)), lambda x: x.t().contiguous()),
        # a stack on the right: both sides transposed, folded into mm, the result
        # transposed back and made contiguous
        C("matmul-2d-3d", normal((3, 4), (2, 4, 2)), lambda a, b: a @ b),
        # ... and the same after a batch of one that requires grad is squeezed away
        C("matmul-one-batch-squeezed", normal((1, 3, 4), (2, 4, 2)), lambda a, b: a @ b),
    ],
    "RepeatBackward0": [
        C("repeat", normal((2, 3)), lambda x: x.repeat(2, 1)),
        C("repeat-new-dims", normal((3,)), lambda x: x.repeat(2, 2)),
        C("repeat-3d", normal((2, 3)), lambda x: x.repeat(2, 1, 3)),
    ],
    "SelectBackward0": [
        C("getitem-int", normal((3, 4)), lambda x: x[1]),
        C("getitem-negative-int", normal((3, 4)), lambda x: x[:, -1]),
        C("select", normal((2, 3, 4)), lambda x: x.select(1, 2)),
        C("getitem-two-ints", normal((3, 4)), lambda x: x[1, 2]),
        C("getitem-ellipsis-int", normal((2, 3, 4)), lambda x: x[..., 0]),
    ],
    "SliceBackward0": [
        C("getitem-slice", normal((4, 3)), lambda x: x[1:3]),
        C("getitem-step", normal((3, 5)), lambda x: x[:, ::2]),
        C("getitem-negative-start", normal((4, 3)), lambda x: x[-2:]),
        C("narrow", normal((3, 4)), lambda x: x.narrow(1, 1, 2)),
    ],
    # several views at once: one node, the pieces no gradient reached get zeros
    "UnbindBackward0": [
        C("unbind", normal((3, 4)), lambda x: x.unbind(0)[1]),
        C("unbind-negative-dim", normal((2, 3)), lambda x: (x * x).unbind(-1)[2]),
    ],
    "UnsafeSplitBackward0": [
        C("unsafe_chunk", normal((3, 4)), lambda x: x.unsafe_chunk(2, dim=1)[1]),
        C("unsafe_split", normal((5, 2)), lambda x: ak.unsafe_split(x, 2)[2]),
    ],
    "SplitBackward0": [
        C("split", normal((5, 2)), lambda x: x.split(2)[2]),
        C("chunk", normal((3, 4)), lambda x: x.chunk(2, dim=1)[1]),
        C("split-last-dim", normal((4, 3)), lambda x: x.split(2, dim=-1)[1]),
    ],
    # var_mean / std_mean: two outputs of one node (both together: test_creation_parity.py)
    "VarMeanBackward0": [
        C("var_mean-var", normal((3, 4)), lambda x: ak.var_mean(x, 1)[0]),
        C("var_mean-var-all", normal((3, 4)), lambda x: ak.var_mean(x)[0]),
        C("var_mean-mean", normal((3, 4)), lambda x: ak.var_mean(x, 0, keepdim=True)[1]),
        C("var_mean-correction-0", normal((2, 3, 2)),
          lambda x: ak.var_mean(x, (0, 2), correction=0)[0]),
    ],
    "StdMeanBackward0": [
        C("std_mean-std", normal((4, 3)), lambda x: ak.std_mean(x, dim=-1)[0]),
        C("std_mean-mean", normal((3, 4)), lambda x: ak.std_mean(x, 1)[1]),
        C("std_mean-keepdim", normal((3, 4)),
          lambda x: ak.std_mean(x, 0, keepdim=True, unbiased=False)[0]),
    ],
    "SplitWithSizesBackward0": [
        C("split-sizes", normal((5, 2)), lambda x: x.split([1, 4])[1]),
    ],
    "IndexBackward0": [
        C("index-list-repeated", normal((3, 4)), lambda x: x[[0, 2, 0]]),
        C("index-mask", normal((3, 4)), lambda x: x[const(x, MASK)]),
        C("index-slice-then-list", normal((3, 4)), lambda x: x[:, [1, 3, 1]]),
        C("index-tensor", normal((3, 4)), lambda x: x[const(x, [2, 0])]),
        C("index-two-lists", normal((3, 4)), lambda x: x[[0, 1, 2], [3, 1, 3]]),
    ],
    "IndexPutBackward0": [
        C("setitem-mask", normal((3, 4), (6,)), lambda x, v: _set(cloned(x), const(x, MASK), v)),
        C("setitem-mask-scalar-value", normal((3, 4), ()),
          lambda x, v: _set(cloned(x), const(x, MASK), v)),
        C("setitem-list-rows", normal((3, 4), (2, 4)), lambda x, v: _set(cloned(x), [0, 2], v)),
        C("setitem-list-broadcast-row", normal((3, 4), (4,)),
          lambda x, v: _set(cloned(x), [2, 1], v)),
        # ops.shape.index_put(accumulate=True) is x.index_put_(..., accumulate=True):
        # the old values stay and get the new ones added, so x's gradient is g everywhere
        C("index-put-accumulate", normal((3, 4), (3, 4)),
          lambda x, v: index_put(x, ([0, 2, 0],), v, accumulate=True)),
    ],
    "CatBackward0": [
        C("cat-dim0", normal((2, 3), (4, 3)), lambda a, b: ak.cat([a, b])),
        C("cat-dim1-three", normal((2, 1), (2, 3), (2, 2)), lambda a, b, c: ak.cat((a, b, c), 1)),
        C("cat-with-constant", normal((2, 3)),
          lambda a: ak.cat([a, const(a, np.ones((1, 3)))], 0)),
        C("hstack-1d", normal((2,), (3,)), lambda a, b: ak.hstack([a, b])),
        C("vstack-1d", normal((3,), (3,)), lambda a, b: ak.vstack([a, b])),
    ],
    "MaskedFillBackward0": [
        C("masked-fill-number", normal((3, 4)), lambda x: x.masked_fill(const(x, MASK), 2.0)),
    ],
    "MaskedFillBackward1": [
        C("masked-fill-tensor-value", normal((3, 4), ()),
          lambda x, v: x.masked_fill(const(x, ROW_MASK), v)),
    ],
    "StackBackward0": [
        C("stack-dim0", normal((2, 3), (2, 3)), lambda a, b: ak.stack([a, b])),
        C("stack-dim1", normal((2, 3), (2, 3)), lambda a, b: ak.stack([a, b], 1)),
        C("stack-last-three", normal((4,), (4,), (4,)), lambda a, b, c: ak.stack((a, b, c), -1)),
    ],
    "WhereBackward0": [
        C("where-broadcast", normal((3, 1), (4,)), lambda a, b: ak.where(const(a, MASK), a, b)),
        C("where-scalar-other", normal((3, 4)), lambda a: ak.where(const(a, MASK), a, 0.0)),
        C("where-method", normal((3, 4), (3, 4)), lambda a, b: a.where(const(a, ROW_MASK), b)),
    ],
    # The backward of indexing (PyTorch's kernels select_backward, slice_backward
    # and index's _index_put_impl_) is itself recorded; it appears in the graph
    # of a first derivative made with create_graph=True.
    "SliceBackwardBackward0": [
        C("grad-of-slice", normal((4, 3)), first_grad(lambda x: x[1:3] ** 3)),
        C("grad-of-narrow-step", normal((3, 5)), first_grad(lambda x: x[:, 1::2].exp())),
    ],
    "SelectBackwardBackward0": [
        C("grad-of-select", normal((3, 4)), first_grad(lambda x: x[:, 2].sin())),
        C("grad-of-two-ints", normal((3, 4)), first_grad(lambda x: x[1, 2] ** 3)),
    ],
    "IndexPutImplBackward0": [
        C("grad-of-index-repeated", normal((4,)), first_grad(lambda x: x[[0, 2, 0]] ** 2)),
        C("grad-of-index-mask", normal((3, 4)), first_grad(lambda x: x[const(x, MASK)] ** 3)),
    ],
    # ---------------------------------------------------------- unary.py --
    "ExpBackward0": [
        C("exp", normal((2, 3)), lambda x: x.exp()),
        C("exp_-inplace", normal((2, 3)), lambda x: cloned(x).exp_()),
    ],
    "LogBackward0": [
        C("log", positive((2, 3)), lambda x: ak.log(x)),
        C("log_-inplace", positive((2, 3)), lambda x: cloned(x).log_()),
    ],
    "IndexFillBackward0": [
        C("index_fill", normal((3, 4)), lambda x: x.index_fill(1, ak.tensor([0, 2, 0]), -1.5)),
        C("index_fill_-inplace", normal((3, 4)),
          lambda x: cloned(x).index_fill_(0, ak.tensor(1), 2.0)),
    ],
    "IndexFillBackward1": [
        C("index_fill-tensor", normal((3, 4), ()),
          lambda x, v: x.index_fill(1, ak.tensor([3, 1, 3]), v)),
    ],
    "CumprodBackward0": [
        C("cumprod", nonzero((3, 4)), lambda x: x.cumprod(1)),
        C("cumprod-dim0", nonzero((3, 2)), lambda x: ak.cumprod(x, 0)),
        # a zero factor: the first zero's gradient, and 0 for the inputs after it
        C("cumprod-a-zero", lambda rng: (np.array([1.5, -0.5, 0.0, 2.0, 0.7]),),
          lambda x: x.cumprod(0)),
        C("cumprod-zeros-per-row", lambda rng: (np.array([[0.0, 1.5, 0.0, 2.0],
                                                          [0.5, 2.0, -1.0, 0.0]]),),
          lambda x: x.cumprod(-1)),
        C("cumprod-0d", normal(()), lambda x: x.cumprod(0)),
    ],
    "IndexSelectBackward0": [
        C("index_select", normal((3, 4)), lambda x: x.index_select(1, ak.tensor([3, 0, 3]))),
        C("index_select-dim0", normal((3, 2)), lambda x: ak.index_select(x, 0, ak.tensor([2]))),
    ],
    "IndexAddBackward0": [
        C("index_add", normal((3, 4), (3, 2)),
          lambda x, s: x.index_add(1, ak.tensor([2, 2]), s, alpha=1.5)),
        C("index_add_-inplace", normal((3, 2), (2, 2)),
          lambda x, s: cloned(x).index_add_(0, ak.tensor([1, 0]), s)),
    ],
    "MaskedSelectBackward0": [
        C("masked_select", normal((3, 4)),
          lambda x: x.masked_select(ak.tensor(np.eye(3, 4, dtype=bool)))),
        C("masked_select-broadcast", normal((1, 4)),
          lambda x: ak.masked_select(x, ak.tensor([[True, False, False, True]] * 2))),
    ],
    "MaskedScatterBackward0": [
        C("masked_scatter", normal((3, 4), (5,)),
          lambda x, s: x.masked_scatter(ak.tensor(np.eye(3, 4, dtype=bool)), s)),
        C("masked_scatter_-inplace", normal((2, 3), (2, 2)),
          lambda x, s: cloned(x).masked_scatter_(ak.tensor([[True, False, True]] * 2), s)),
    ],
    "MaskedScatterBackwardBackward0": [
        C("masked_scatter-kernel", normal((3, 4), (5,), (3, 4)), lambda x, s, g: ak.autograd.grad(
            x.masked_scatter(ak.tensor(np.eye(3, 4, dtype=bool)), s), s, g,
            create_graph=True)[0]),
    ],
    "GatherBackward0": [
        C("gather", normal((3, 4)), lambda x: x.gather(1, ak.tensor([[0, 3, 0], [2, 2, 1]]))),
        C("gather-dim0-repeats", normal((3, 2)),
          lambda x: ak.gather(x, 0, ak.tensor([[2, 0], [2, 2], [1, 0], [0, 1]]))),
        C("gather-0d", normal(()), lambda x: x.gather(0, ak.tensor(0))),
    ],
    "ScatterBackward0": [
        C("scatter", normal((3, 4), (2, 3)),
          lambda x, s: x.scatter(1, ak.tensor([[0, 3], [2, 1]]), s[:, :2].contiguous())),
        C("scatter-dim0", normal((3, 2), (2, 2)),
          lambda x, s: ak.scatter(x, 0, ak.tensor([[2, 0], [1, 2]]), s)),
        C("scatter_-inplace", normal((2, 4), (2, 2)),
          lambda x, s: cloned(x).scatter_(1, ak.tensor([[1, 3], [0, 2]]), s)),
    ],
    "ScatterBackward1": [
        C("scatter-value", normal((3, 4)),
          lambda x: x.scatter(0, ak.tensor([[1, 0, 2, 1]]), -0.5)),
        C("scatter_-value-inplace", normal((3, 4)),
          lambda x: cloned(x).scatter_(1, ak.tensor([[2], [0], [3]]), value=2.0)),
    ],
    "ScatterAddBackward0": [
        C("scatter_add-repeats", normal((3, 4), (2, 3)),
          lambda x, s: x.scatter_add(1, ak.tensor([[0, 0, 3], [2, 2, 2]]), s)),
        C("scatter_add-dim0", normal((2, 3), (3, 3)),
          lambda x, s: ak.scatter_add(x, 0, ak.tensor([[1, 0, 1], [1, 1, 0], [0, 0, 0]]), s)),
        C("scatter_add_-inplace", normal((2, 3), (2, 3)),
          lambda x, s: cloned(x).scatter_add_(1, ak.tensor([[2, 2, 0], [1, 0, 1]]), s)),
    ],
    "LogitBackward0": [
        C("logit", uniform(0.05, 0.95, (2, 3)), lambda x: ak.logit(x)),
        C("logit-eps", uniform(0.2, 0.8, (2, 3)), lambda x: x.logit(0.1)),
    ],
    "SinBackward0": [
        C("sin", normal((2, 3)), lambda x: x.sin()),
        C("sin_-inplace", normal((2, 3)), lambda x: cloned(x).sin_()),
    ],
    "CosBackward0": [
        C("cos", normal((2, 3)), lambda x: ak.cos(x)),
        C("cos_-inplace", normal((2, 3)), lambda x: cloned(x).cos_()),
    ],
    "TanhBackward0": [
        C("tanh", normal((2, 3)), lambda x: x.tanh()),
        C("tanh_-inplace", normal((2, 3)), lambda x: cloned(x).tanh_()),
    ],
    "SigmoidBackward0": [
        C("sigmoid", normal((2, 3)), lambda x: ak.sigmoid(x)),
        C("sigmoid_-inplace", normal((2, 3)), lambda x: cloned(x).sigmoid_()),
    ],
    "ReluBackward0": [
        C("relu", distinct((3, 4)), lambda x: x.relu()),
        C("relu_-inplace", distinct((3, 4)), lambda x: cloned(x).relu_()),
    ],
    "SqrtBackward0": [
        C("sqrt", positive((2, 3)), lambda x: x.sqrt()),
        C("sqrt_-inplace", positive((2, 3)), lambda x: cloned(x).sqrt_()),
    ],
    "RsqrtBackward0": [
        C("rsqrt", positive((2, 3)), lambda x: x.rsqrt()),
    ],
    "AbsBackward0": [
        C("abs", distinct((3, 4)), lambda x: x.abs()),
        C("abs-builtin", distinct((4,)), lambda x: abs(x)),
        C("abs_-inplace", distinct((3, 4)), lambda x: cloned(x).abs_()),
    ],
    "ReciprocalBackward0": [
        C("reciprocal", nonzero((2, 3)), lambda x: x.reciprocal()),
    ],
    "ClampBackward1": [
        C("clamp-both", distinct((3, 4)), lambda x: x.clamp(-0.5, 0.5)),
        C("clamp-min", distinct((3, 4)), lambda x: ak.clamp(x, min=-0.5)),
        C("clamp-max", distinct((3, 4)), lambda x: x.clamp(max=0.5)),
        C("clip", distinct((3, 4)), lambda x: x.clip(-0.5, 0.5)),
        C("clamp_-inplace", distinct((3, 4)), lambda x: cloned(x).clamp_(-0.5, 0.5)),
    ],
    "SignBackward0": [
        C("sign", distinct((3, 4)), lambda x: x.sign()),
    ],
    "FloorBackward0": [
        C("floor", distinct((3, 4)), lambda x: x.floor()),
    ],
    "CeilBackward0": [
        C("ceil", distinct((3, 4)), lambda x: ak.ceil(x)),
    ],
    "RoundBackward0": [
        C("round", distinct((3, 4)), lambda x: x.round()),
    ],
    "LeakyReluBackward0": [
        C("leaky-relu", distinct((3, 4)), lambda x: ak.leaky_relu(x, 0.1)),
        C("leaky-relu-default-slope", distinct((3, 4)), lambda x: ak.leaky_relu(x)),
    ],
}

# Nodes that need no case of their own here, each with the reason.  (Even the
# nodes only double backward reaches, the kernels' TanhBackwardBackward0 and the
# like, have cases above, built from a first derivative.)
_DRAW = ("a random draw: PyTorch defines its gradient as zero, which central differences "
         "of a re-drawn sample cannot check (tests/test_random_nodes.py checks the zeros)")
EXEMPT: dict[str, str] = {name: _DRAW for name in (
    "NormalBackward1", "NormalBackward2", "NormalBackward3", "BernoulliBackward0")}
EXEMPT["NotImplemented"] = ("``//`` and ``number % t``: PyTorch defines no derivative, the "
                            "node's backward raises (tests/test_fuzz_torch.py compares it)")

# Cases of the image ops, the extra losses, ordering and diagonals live in
# their own file, merged here.
from op_cases_more import MORE_CASES  # noqa: E402

CASES.update(MORE_CASES)
