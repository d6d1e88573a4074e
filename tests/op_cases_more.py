"""Op cases for the image ops, the extra losses, ordering, diagonals and the
extra elementwise functions (merged into ``op_cases.CASES``).

Same rules as ``op_cases.py``: each case's output must have the named node as
its ``grad_fn``; inputs are float64 leaves drawn from a seed of the case id.
Max pooling and ordering draw ``distinct`` values, so no window and no
median has a tie that central differences would straddle; the losses with a
kink (smooth L1, Huber) draw values whose differences stay off the kink.
"""
from __future__ import annotations

import numpy as np

import autograd_kit as ak
from autograd_kit.nn import functional as F

from op_cases import Case as C
from autograd_kit.ops import scalar as scalar_ops

from op_cases import const, distinct, first_grad, normal, positive, uniform


def off_kink(limit, *shapes):
    """Pairs (x, y) whose differences x - y keep 0.1 away from ±limit."""
    def draw(rng):
        x = rng.standard_normal(shapes[0])
        d = rng.uniform(0.1, 1.0, shapes[0]) * np.where(rng.random(shapes[0]) < 0.5, -1, 1)
        d = np.where(rng.random(shapes[0]) < 0.5, d * limit * 0.8, d + np.sign(d) * limit)
        return x, x - d
    return draw


def _conv(x, w, b=None, **kw):
    return F.conv2d(x, w, b, **kw)


def _away_from_integers(rng):
    """(a, b) whose quotients a / b keep away from whole numbers (no step of a
    rounded division between two central-difference points)."""
    b = np.where(rng.random((3, 4)) < 0.5, -1.0, 1.0) * rng.uniform(0.5, 2.0, (3, 4))
    q = rng.integers(-4, 5, (3, 4)) + rng.uniform(0.2, 0.8, (3, 4))
    return q * b, b


def _first(f):
    return first_grad(f)


def _grad_with_upstream(f, reduction_none=True):
    """(g, x, ...) -> the gradient of f(x, ...) for x with upstream g, made with
    create_graph=True: the kernel's node with both of its edges (g and x)."""
    def fn(g, x, *rest):
        with ak.enable_grad():
            return ak.autograd.grad(f(x, *rest), x, g, create_graph=True)[0]
    return fn


def _conv_grads(x, w, b, g, **kw):
    """The gradients of conv2d(x, w, b) for x, w (and b) with upstream g, made
    with create_graph=True: outputs of one ConvolutionBackwardBackward0 node."""
    inputs = (x, w) if b is None else (x, w, b)
    with ak.enable_grad():
        return ak.autograd.grad(F.conv2d(*inputs, **kw), inputs, g, create_graph=True)


def first_grad_of_loss(loss, x, y):
    """d loss(x, y) / dx, made with create_graph=True (a function of x and y)."""
    with ak.enable_grad():
        return ak.autograd.grad(loss(x, y), x, create_graph=True)[0]


def first_grad_alpha(g):
    """The gradient of add(c, b, alpha=2.5) for b with upstream g: g * 2.5, where
    the 2.5 is a Scalar (MulBackward1), a function of g alone."""
    with ak.enable_grad():
        b = ak.zeros(g.shape, dtype=g.dtype, device=g.device, requires_grad=True)
        return ak.autograd.grad(ak.add(b.detach(), b, alpha=2.5), b, g, create_graph=True)[0]


MORE_CASES = {
    # -- arith: rounded division, remainder, atan2 ------------------------------
    "DivBackward1": [
        C("cross-entropy-probabilities-mean", normal((3, 4)),
          lambda x: F.cross_entropy(x, const(x, np.full((3, 4), 0.25)))),
    ],
    "DivBackward2": [
        C("div-floor", _away_from_integers, lambda a, b: ak.div(a, b, rounding_mode="floor")),
        C("div-trunc", _away_from_integers, lambda a, b: a.div(b, rounding_mode="trunc")),
    ],
    "RemainderBackward0": [
        C("remainder-number", lambda rng: (_away_from_integers(rng)[0],), lambda a: a % 1.5),
    ],
    "RemainderBackward1": [
        C("remainder-tensor", _away_from_integers, lambda a, b: ak.remainder(a, b)),
    ],
    "Atan2Backward0": [
        C("atan2", normal((3, 4), (3, 4)), lambda a, b: ak.atan2(a, b)),
        C("atan2-broadcast", normal((3, 1), (4,)), lambda a, b: a.atan2(b)),
    ],
    # -- in-place view changes ------------------------------------------------------
    "TBackward1": [C("t_", normal((3, 4)), lambda x: (x * 1).t_())],
    "TransposeBackward1": [
        C("transpose_", normal((2, 3, 4)), lambda x: (x * 1).transpose_(0, 2)),
        C("swapdims_", normal((2, 3)), lambda x: (x * 1).swapdims_(0, 1)),
    ],
    "SqueezeBackward3": [C("squeeze_", normal((3, 1, 4)), lambda x: (x * 1).squeeze_())],
    "SqueezeBackward4": [C("squeeze_-dim", normal((3, 1)), lambda x: (x * 1).squeeze_(-1)),
                         # a vector times a matrix: a one-row mm, the row dropped in place
                         C("matmul-1d-2d", normal((4,), (4, 3)), lambda v, m: v @ m)],
    "UnsqueezeBackward1": [C("unsqueeze_", normal((3, 4)), lambda x: (x * 1).unsqueeze_(1))],
    # -- a tensor and a number, as backward formulas record them (scalar.py) -----
    "MulBackward1": [
        C("mul-scalar-word", normal((2, 3)), lambda x: scalar_ops.mul_scalar(x, 2.5)),
        C("grad-of-add-alpha", normal((2, 3)), lambda g: first_grad_alpha(g)),
    ],
    "AddBackward1": [C("add-scalar-word", normal((2, 3)), lambda x: scalar_ops.add_scalar(x, 1.5))],
    "SubBackward1": [C("sub-scalar-word", normal((3,)), lambda x: scalar_ops.sub_scalar(x, 0.5))],
    "SgnBackward0": [C("sgn", distinct((3, 4)), lambda x: x.sgn())],
    # -- backward kernels, recorded under create_graph=True (kernels.py) --------
    "TanhBackwardBackward0": [
        C("grad-of-tanh", normal((2, 3)), _first(lambda x: x.tanh())),
        C("grad-of-tanh-upstream", normal((2, 3), (2, 3)),
          _grad_with_upstream(lambda x: x.tanh())),
    ],
    "SigmoidBackwardBackward0": [
        C("grad-of-sigmoid", normal((2, 3)), _first(lambda x: x.sigmoid())),
        C("grad-of-sigmoid-upstream", normal((3,), (3,)),
          _grad_with_upstream(lambda x: ak.sigmoid(x))),
    ],
    "SoftplusBackwardBackward0": [
        C("grad-of-softplus", normal((3, 4)), _first(lambda x: F.softplus(x, beta=2.0))),
        C("grad-of-softplus-upstream", normal((2, 3), (2, 3)),
          _grad_with_upstream(lambda x: F.softplus(x))),
    ],
    "EluBackwardBackward0": [
        C("grad-of-elu", distinct((3, 4)), _first(lambda x: F.elu(x, alpha=0.5))),
        C("grad-of-elu-upstream", distinct((2, 3), (2, 3)),
          _grad_with_upstream(lambda x: F.elu(x))),
    ],
    "GeluBackwardBackward0": [
        C("grad-of-gelu", normal((3, 4)), _first(lambda x: F.gelu(x))),
        C("grad-of-gelu-tanh-upstream", normal((2, 3), (2, 3)),
          _grad_with_upstream(lambda x: F.gelu(x, approximate="tanh"))),
    ],
    "SoftmaxBackwardDataBackward0": [
        C("grad-of-softmax-upstream", normal((2, 4), (2, 4)),
          _grad_with_upstream(lambda x: x.softmax(1))),
    ],
    "LogSoftmaxBackwardDataBackward0": [
        C("grad-of-log-softmax", normal((2, 4)), _first(lambda x: x.log_softmax(-1))),
        C("grad-of-log-softmax-upstream", normal((3, 2), (3, 2)),
          _grad_with_upstream(lambda x: x.log_softmax(0))),
    ],
    "MseLossBackwardBackward0": [
        C("grad-of-mse", normal((3, 4), (3, 4)), lambda x, y: first_grad_of_loss(
            F.mse_loss, x, y)),
        C("grad-of-mse-none-upstream", normal((2, 3), (2, 3), (2, 3)),
          _grad_with_upstream(lambda x, y: F.mse_loss(x, y, reduction="none"))),
    ],
    "SmoothL1LossBackwardBackward0": [
        C("grad-of-smooth-l1", off_kink(1.0, (3, 4)), lambda x, y: first_grad_of_loss(
            F.smooth_l1_loss, x, y)),
    ],
    "HuberLossBackwardBackward0": [
        C("grad-of-huber", off_kink(1.0, (3, 4)), lambda x, y: first_grad_of_loss(
            F.huber_loss, x, y)),
        C("grad-of-huber-none-upstream", lambda rng: (rng.standard_normal(4),)
          + off_kink(0.5, (4,))(rng), _grad_with_upstream(
              lambda x, y: F.huber_loss(x, y, reduction="none", delta=0.5))),
    ],
    # -- activations and their recorded backward steps --------------------------
    "ClampMinBackward0": [C("clamp_min", distinct((3, 4)), lambda x: x.clamp_min(0.5))],
    "ClampMaxBackward0": [C("clamp_max", distinct((3, 4)), lambda x: ak.clamp_max(x, -0.5))],
    "ThresholdBackwardBackward0": [
        C("grad-of-relu", distinct((3, 4)), _first(lambda x: x.relu())),
    ],
    "LeakyReluBackward1": [
        C("leaky_relu_", distinct((3, 4)), lambda x: F.leaky_relu_(x * 1, 0.2)),
    ],
    "LeakyReluBackwardBackward0": [
        C("grad-of-leaky-relu", distinct((3, 4)), _first(lambda x: F.leaky_relu(x, 0.1))),
    ],
    "SoftplusBackward0": [
        C("softplus", normal((3, 4)), lambda x: F.softplus(x)),
        C("softplus-beta", normal((3, 4)), lambda x: F.softplus(x, beta=2.0)),
    ],
    "EluBackward0": [
        C("elu", distinct((3, 4)), lambda x: F.elu(x)),
        C("elu-alpha", distinct((3, 4)), lambda x: F.elu(x, alpha=0.5)),
    ],
    "ErfBackward0": [C("erf", normal((3, 4)), lambda x: ak.erf(x))],
    "GeluBackward0": [
        C("gelu", normal((3, 4)), lambda x: F.gelu(x)),
        C("gelu-tanh", normal((3, 4)), lambda x: F.gelu(x, approximate="tanh")),
    ],
    "RoundBackward1": [C("round-decimals", distinct((3, 4)), lambda x: x.round(decimals=1))],
    # ----------------------------------------------------------- conv.py --
    "ConvolutionBackward0": [
        C("conv2d-bias", normal((2, 2, 5, 5), (3, 2, 3, 3), (3,)), _conv),
        C("conv2d-no-bias", normal((1, 2, 4, 5), (2, 2, 2, 3)), _conv),
        C("conv2d-stride-padding", normal((1, 1, 6, 5), (2, 1, 3, 3), (2,)),
          lambda x, w, b: _conv(x, w, b, stride=2, padding=1)),
        C("conv2d-dilation-rect", normal((2, 1, 7, 6), (1, 1, 2, 3), (1,)),
          lambda x, w, b: _conv(x, w, b, stride=(1, 2), padding=(2, 0), dilation=(2, 1))),
        C("conv2d-same-even-kernel", normal((1, 2, 5, 4), (2, 2, 2, 2)),
          lambda x, w: _conv(x, w, padding="same")),
        C("conv2d-layer", normal((1, 3, 5, 5)),
          lambda x: _conv(x, const(x, np.linspace(-1, 1, 54).reshape(2, 3, 3, 3)),
                          const(x, np.array([0.5, -0.5])), padding=1)),
    ],
    "MaxPool2DWithIndicesBackward0": [
        C("max-pool2d", distinct((2, 2, 4, 4)), lambda x: F.max_pool2d(x, 2)),
        C("max-pool2d-overlap-padding", distinct((1, 2, 5, 5)),
          lambda x: F.max_pool2d(x, 3, stride=2, padding=1)),
        C("max-pool2d-dilation-ceil", distinct((1, 1, 7, 6)),
          lambda x: F.max_pool2d(x, (2, 3), stride=2, dilation=(2, 1), ceil_mode=True)),
        C("max-pool2d-layer", distinct((1, 2, 4, 4)), lambda x: ak.nn.MaxPool2d(2, 1)(x)),
    ],
    "Im2ColBackward0": [
        C("unfold", normal((2, 2, 4, 5)), lambda x: F.unfold(x, (2, 3), padding=1, stride=2)),
    ],
    "Col2ImBackward0": [
        C("fold", normal((2, 12, 9)), lambda c: F.fold(c, (4, 5), (2, 3), padding=1,
                                                     stride=2)),
    ],
    # -------------------------------------------------------- pooling.py --
    "AvgPool2DBackward0": [
        C("avg-pool2d", normal((2, 2, 4, 4)), lambda x: F.avg_pool2d(x, 2)),
        C("avg-pool2d-padding-ceil", normal((1, 2, 5, 6)),
          lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=False)),
        C("avg-pool2d-layer", normal((1, 1, 5, 5)), lambda x: ak.nn.AvgPool2d((2, 3), 1)(x)),
    ],
    "ConvolutionBackwardBackward0": [
        C("conv2d-input-double-backward", normal((1, 2, 4, 4)),
          lambda x: first_grad(lambda v: _conv(
              v, const(v, np.linspace(-1, 1, 16).reshape(2, 2, 2, 2))) ** 2)(x)),
        # the kernel's three outputs, each with the node on top: for x, W and b
        C("conv2d-kernel-input", normal((1, 2, 4, 4), (3, 2, 3, 3), (1, 3, 4, 4)),
          lambda x, w, g: _conv_grads(x, w, None, g, padding=1)[0]),
        C("conv2d-kernel-weight", normal((2, 1, 5, 4), (2, 1, 2, 3), (2, 2, 2, 1)),
          lambda x, w, g: _conv_grads(x, w, None, g, stride=2)[1]),
        C("conv2d-kernel-weight-with-bias", normal((1, 2, 5, 5), (2, 2, 3, 2), (2,), (1, 2, 2, 2)),
          lambda x, w, b, g: _conv_grads(x, w, b, g, stride=(2, 2), dilation=(1, 2))[1]),
        C("conv2d-kernel-bias", normal((1, 2, 4, 4), (2, 2, 3, 3), (2,), (1, 2, 2, 2)),
          lambda x, w, b, g: _conv_grads(x, w, b, g)[2]),
    ],
    "MaxPool2DWithIndicesBackwardBackward0": [
        C("max-pool2d-double-backward", distinct((1, 1, 4, 4)),
          lambda x: first_grad(lambda v: F.max_pool2d(v, 2) ** 3)(x)),
        C("max-pool2d-kernel", normal((1, 2, 4, 4), (1, 2, 2, 2)),
          lambda x, g: _grad_with_upstream(lambda v: F.max_pool2d(v, 2))(
              g, x + const(x, np.arange(32.0).reshape(1, 2, 4, 4)))),
        C("max-pool2d-kernel-overlap", normal((1, 1, 5, 5), (1, 1, 3, 3)),
          lambda x, g: _grad_with_upstream(lambda v: F.max_pool2d(v, 3, 2, padding=1))(
              g, x + const(x, np.arange(25.0).reshape(1, 1, 5, 5)))),
    ],
    "AvgPool2DBackwardBackward0": [
        C("avg-pool2d-kernel", normal((1, 2, 4, 4), (1, 2, 2, 2)),
          lambda x, g: _grad_with_upstream(lambda v: F.avg_pool2d(v, 2))(g, x)),
        C("avg-pool2d-kernel-padding-ceil", normal((1, 1, 5, 6), (1, 1, 3, 4)),
          lambda x, g: _grad_with_upstream(lambda v: F.avg_pool2d(
              v, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False))(g, x)),
    ],
    "AdaptiveAvgPool2DBackward0": [
        C("adaptive-avg-pool2d", normal((2, 2, 5, 7)), lambda x: F.adaptive_avg_pool2d(x, 3)),
        C("adaptive-avg-pool2d-layer", normal((1, 2, 4, 6)),
          lambda x: ak.nn.AdaptiveAvgPool2d((2, None))(x)),
    ],
    "AdaptiveAvgPool2DBackwardBackward0": [
        C("adaptive-avg-pool2d-double-backward", normal((1, 1, 5, 4)),
          lambda x: first_grad(lambda v: F.adaptive_avg_pool2d(v, (2, 3)) ** 2)(x)),
    ],
    # ------------------------------------------------------ loss_more.py --
    "BinaryCrossEntropyWithLogitsBackward0": [
        C("bce-logits", uniform(-3, 3, (3, 4)),
          lambda x: F.binary_cross_entropy_with_logits(
              x, const(x, np.linspace(0, 1, 12).reshape(3, 4)))),
        C("bce-logits-both", normal((3, 2), (3, 2)),
          lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction="sum")),
        C("bce-logits-weights", normal((4, 3), (4, 3)),
          lambda x, y: F.binary_cross_entropy_with_logits(
              x, y, const(x, [0.5, 1.0, 2.0]), pos_weight=const(x, [3.0, 0.5, 1.0]))),
        C("bce-logits-none", normal((2, 3), (2, 3)),
          lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none",
                                                          pos_weight=const(x, [2.0, 1, 1]))),
    ],
    "SmoothL1LossBackward0": [
        C("smooth-l1", off_kink(1.0, (3, 4)), lambda x, y: F.smooth_l1_loss(x, y)),
        C("smooth-l1-beta-sum", off_kink(0.5, (4,)),
          lambda x, y: F.smooth_l1_loss(x, y, reduction="sum", beta=0.5)),
        C("smooth-l1-none", off_kink(2.0, (2, 3)),
          lambda x, y: ak.nn.SmoothL1Loss(reduction="none", beta=2.0)(x, y)),
    ],
    "HuberLossBackward0": [
        C("huber", off_kink(1.0, (3, 4)), lambda x, y: F.huber_loss(x, y)),
        C("huber-delta-sum", off_kink(0.5, (5,)),
          lambda x, y: ak.nn.HuberLoss(reduction="sum", delta=0.5)(x, y)),
        C("huber-none", off_kink(1.5, (2, 2)),
          lambda x, y: F.huber_loss(x, y, reduction="none", delta=1.5)),
    ],
    # ------------------------------------------------------- ordering.py --
    "SortBackward0": [
        C("sort", distinct((3, 4)), lambda x: x.sort().values),
        C("sort-dim0-descending", distinct((3, 4)),
          lambda x: ak.sort(x, 0, descending=True)[0]),
    ],
    "MedianBackward0": [
        C("median", distinct((3, 4)), lambda x: ak.median(x)),
        C("median-odd", distinct((5,)), lambda x: x.median()),
    ],
    "MedianBackward1": [
        C("median-dim", distinct((3, 4)), lambda x: x.median(1).values),
        C("median-dim-keepdim", distinct((5, 2)), lambda x: ak.median(x, 0, keepdim=True)[0]),
    ],
    # ------------------------------------------------------- diagonal.py --
    "DiagonalBackward0": [
        C("diagonal", normal((3, 4)), lambda x: x.diagonal()),
        C("diagonal-offset-dims", normal((2, 3, 4)),
          lambda x: ak.diagonal(x, offset=-1, dim1=2, dim2=1)),
    ],
    "TraceBackward0": [
        C("trace", normal((3, 3)), lambda x: ak.trace(x)),
        C("trace-rectangular", normal((2, 4)), lambda x: x.trace()),
        C("trace-tall", normal((4, 2)), lambda x: x.trace()),
    ],
    "DiagonalBackwardBackward0": [
        C("diagonal-double-backward", normal((3, 3)),
          lambda x: first_grad(lambda v: v.diagonal(1) ** 3)(x)),
    ],
    "DiagEmbedBackward0": [
        C("diag-of-vector", normal((3,)), lambda x: ak.diag(x)),
        C("diag-of-vector-offset", normal((2,)), lambda x: x.diag(-1)),
    ],
    "TrilBackward0": [
        C("tril", normal((3, 4)), lambda x: x.tril()),
        C("tril-offset", normal((2, 3, 3)), lambda x: ak.tril(x, -1)),
        C("tril_-inplace", normal((3, 3)), lambda x: x.clone().tril_(1)),
    ],
    "TriuBackward0": [
        C("triu", normal((4, 3)), lambda x: ak.triu(x)),
        C("triu-offset", normal((3, 3)), lambda x: x.triu(1)),
    ],
    # ------------------------------------------------------ unary_more.py --
    "Log1PBackward0": [C("log1p", positive((2, 3)), lambda x: ak.log1p(x)),
                       C("log1p_-inplace", positive((3,)), lambda x: x.clone().log1p_())],
    "Expm1Backward0": [C("expm1", normal((2, 3)), lambda x: x.expm1())],
    "Log2Backward0": [C("log2", positive((2, 3)), lambda x: x.log2())],
    "Log10Backward0": [C("log10", positive((2, 3)), lambda x: ak.log10(x))],
    "TanBackward0": [C("tan", uniform(-1.2, 1.2, (2, 3)), lambda x: x.tan())],
    "SinhBackward0": [C("sinh", normal((2, 3)), lambda x: ak.sinh(x))],
    "CoshBackward0": [C("cosh", normal((2, 3)), lambda x: x.cosh())],
    "CumsumBackward0": [C("cumsum", normal((3, 4)), lambda x: x.cumsum(1)),
                        C("cumsum-dim0", normal((3, 2)), lambda x: ak.cumsum(x, 0))],
}
