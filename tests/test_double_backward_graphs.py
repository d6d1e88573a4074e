"""The graph of a gradient made with ``create_graph=True``, against PyTorch's.

With ``create_graph=True`` a backward records the ops it computes with, so the
gradient has a graph of its own.  PyTorch's graph says how PyTorch computed it:

* an op with a backward kernel records that kernel as one node
  (``TanhBackwardBackward0`` for ``tanh_backward(g, y)``), not the arithmetic
  inside it;
* its C++ formulas multiply by numbers with the Scalar overloads
  (``2 * result`` is ``MulBackward1``, ``g / n`` is ``DivBackward1``), where
  Python code ``t * 2`` records ``MulBackward0`` with an empty second edge;
* a matrix is transposed with ``t()`` (``TBackward0``), a removed dimension is
  put back with ``unsqueeze`` (``UnsqueezeBackward0``).

Every op is run in both libraries from the same inputs; the gradients for all
inputs are taken with a random upstream gradient that itself requires grad (so
its edges show too), and the graphs behind them are compared as plain data:
the nodes in depth-first order, each with its class name and the numbers of
its next functions.  The cases are those of ``op_cases.py`` that PyTorch can
run as they are (methods and operators), and the table ``OPS`` below, written
for either library (``lambda lib, x: lib.tanh(x)``).  What still differs is
listed in ``STILL_DIFFERENT``, one strict xfail per case with its reason: a
fix makes its entry fail, and the entry is then removed.

The nodes this work added -- the kernels' ``...BackwardBackward0`` and the
Scalar overloads -- are also checked to save what PyTorch's save, under the
same names, and (on the kit alone) to have third derivatives that match
central differences.
"""
from __future__ import annotations

import functools
import warnings
import zlib

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.autograd import gradgradcheck

from op_cases import CASES, distinct, nonzero, normal, positive, uniform

torch = pytest.importorskip("torch")


def graph_nodes(grads) -> list:
    """The nodes behind ``grads`` in depth-first order (an explicit stack,
    children in ``next_functions`` order), each once."""
    order, seen = [], set()
    stack = [g.grad_fn for g in reversed(grads) if g is not None]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        order.append(fn)
        stack.extend(f for f, _ in reversed(fn.next_functions))
    return order


def structure(grads) -> list:
    """The graph behind ``grads`` as plain data: the nodes numbered in
    depth-first order, each as (class name, ((number of the next node or None,
    input_nr), ...))."""
    order = graph_nodes(grads)
    number = {id(fn): i for i, fn in enumerate(order)}
    return [(type(fn).__name__, tuple((None if f is None else number[id(f)], k)
                                      for f, k in fn.next_functions)) for fn in order]


def gradients(lib, fn, arrays, seed):
    """(output, its gradients for all inputs with a random upstream gradient
    that requires grad, made with create_graph=True)."""
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(*xs)
    upstream = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    g = lib.tensor(upstream, dtype=lib.float64, requires_grad=True)
    return out, lib.autograd.grad(out, xs, g, create_graph=True, allow_unused=True)


def graph_of_gradients(lib, fn, arrays, seed):
    """(grad_fn name of the output, structure of its gradients' graph)."""
    out, grads = gradients(lib, fn, arrays, seed)
    return type(out.grad_fn).__name__, structure(grads)


def saved_names(node) -> list:
    return sorted(a for a in dir(node) if a.startswith("_saved_"))


# The nodes this comparison also checks the saved names of (``_saved_grad_output``...):
# the recorded kernels and the Scalar overloads of the formulas.
def _checks_saved(name: str) -> bool:
    return name.endswith("BackwardBackward0") or name in (
        "MulBackward1", "DivBackward1", "AddBackward1", "SubBackward1", "SgnBackward0")


# ----------------------------------------------------- cases of op_cases.py --
def _seed(case_id: str) -> int:
    return zlib.crc32(case_id.encode())


def _runs_on_torch(node_name, case) -> bool:
    """Can PyTorch run this case's function as it is (no ``ak.`` call inside),
    making the same node?  (Where PyTorch's forward graph is another one --
    ``x[:]`` is a slice there -- the difference is the forward's, not the
    subject here.)"""
    arrays = case.draw(np.random.default_rng(_seed(case.id)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
            out = case.fn(*xs)
        return isinstance(out, torch.Tensor) and type(out.grad_fn).__name__ == node_name
    except Exception:  # noqa: BLE001 - an ak call, a kit-only helper...
        return False


@functools.cache
def _op_case_params():
    return tuple((c.id, c.draw, lambda lib, *xs, f=c.fn: f(*xs))
                 for name, cases in CASES.items() for c in cases if _runs_on_torch(name, c))


# ------------------------------------------- ops written for either library --
def F(lib):
    return lib.nn.functional


TARGET = [1, 0, 4]

OPS = {
    # activations with a backward kernel of their own
    "op-tanh": (normal((2, 3)), lambda lib, x: lib.tanh(x)),
    "op-sigmoid": (normal((2, 3)), lambda lib, x: lib.sigmoid(x)),
    "op-relu": (distinct((3, 4)), lambda lib, x: F(lib).relu(x)),
    "op-leaky-relu": (distinct((3, 4)), lambda lib, x: F(lib).leaky_relu(x, 0.1)),
    "op-softplus": (normal((3, 4)), lambda lib, x: F(lib).softplus(x)),
    "op-softplus-beta": (normal((3, 4)), lambda lib, x: F(lib).softplus(x, beta=2.0)),
    "op-elu": (distinct((3, 4)), lambda lib, x: F(lib).elu(x)),
    "op-elu-alpha": (distinct((3, 4)), lambda lib, x: F(lib).elu(x, alpha=0.5)),
    "op-gelu": (normal((3, 4)), lambda lib, x: F(lib).gelu(x)),
    "op-gelu-tanh": (normal((3, 4)), lambda lib, x: F(lib).gelu(x, approximate="tanh")),
    "op-softmax": (normal((3, 4)), lambda lib, x: lib.softmax(x, 1)),
    "op-log-softmax": (normal((3, 4)), lambda lib, x: F(lib).log_softmax(x, 1)),
    # matrix products and nn.Linear
    "op-mm": (normal((2, 3), (3, 3)), lambda lib, a, b: lib.mm(a, b)),
    "op-addmm": (normal((2,), (3, 4), (4, 2)), lambda lib, b, m1, m2: lib.addmm(b, m1, m2)),
    "op-addmm-scaled": (normal((3, 2), (3, 4), (4, 2)),
                        lambda lib, b, m1, m2: lib.addmm(b, m1, m2, beta=0.5, alpha=2.0)),
    "op-linear": (normal((2, 3), (4, 3), (4,)), lambda lib, x, w, b: F(lib).linear(x, w, b)),
    "op-linear-no-bias": (normal((2, 3), (4, 3)), lambda lib, x, w: F(lib).linear(x, w)),
    "op-bmm": (normal((2, 3, 4), (2, 4, 2)), lambda lib, a, b: lib.bmm(a, b)),
    "op-dot": (normal((5,), (5,)), lambda lib, a, b: lib.dot(a, b)),
    # losses
    "op-mse-loss": (normal((3, 4), (3, 4)), lambda lib, x, y: F(lib).mse_loss(x, y)),
    "op-mse-loss-sum": (normal((3, 4), (3, 4)),
                        lambda lib, x, y: F(lib).mse_loss(x, y, reduction="sum")),
    "op-mse-loss-none": (normal((2, 3), (2, 3)),
                         lambda lib, x, y: F(lib).mse_loss(x, y, reduction="none")),
    "op-nll-loss": (normal((3, 5)), lambda lib, x: F(lib).nll_loss(x, lib.tensor(TARGET))),
    "op-cross-entropy": (normal((3, 5)),
                         lambda lib, x: F(lib).cross_entropy(x, lib.tensor(TARGET))),
    "op-binary-cross-entropy": (uniform(0.1, 0.9, (2, 3), (2, 3)),
                                lambda lib, p, y: F(lib).binary_cross_entropy(p, y)),
    # arithmetic with numbers and alpha
    "op-add-alpha": (normal((2, 3), (3,)), lambda lib, a, b: lib.add(a, b, alpha=2.5)),
    "op-sub-alpha": (normal((2, 3), (2, 1)), lambda lib, a, b: lib.sub(a, b, alpha=-1.5)),
    "op-exp": (normal((2, 3)), lambda lib, x: lib.exp(x)),
    "op-log": (positive((2, 3)), lambda lib, x: lib.log(x)),
    "op-pow": (positive((2, 3)), lambda lib, x: lib.pow(x, 2.5)),
    "op-mul": (normal((3, 1), (4,)), lambda lib, a, b: lib.mul(a, b)),
    "op-div": (lambda rng: normal((3, 1))(rng) + nonzero((4,))(rng),
               lambda lib, a, b: lib.div(a, b)),
    "op-sqrt": (positive((2, 3)), lambda lib, x: lib.sqrt(x)),
    "op-abs": (distinct((3, 4)), lambda lib, x: lib.abs(x)),
    "op-clamp": (distinct((3, 4)), lambda lib, x: lib.clamp(x, -0.5, 0.5)),
    "op-clamp-min": (distinct((3, 4)), lambda lib, x: lib.clamp_min(x, 0.5)),
    "op-maximum": (distinct((3, 1), (4,)), lambda lib, a, b: lib.maximum(a, b)),
    "op-ceil": (normal((3, 4)), lambda lib, x: lib.ceil(x)),
    "op-clamp-max": (distinct((3, 4)), lambda lib, x: lib.clamp(x, max=0.25)),
    "op-remainder": (normal((3, 4)), lambda lib, x: lib.remainder(x, 0.75)),
    "op-remainder-tensor": (lambda rng: (rng.uniform(0.1, 0.4, (3, 4))
                                         + rng.integers(-3, 3, (3, 4)),
                                         rng.uniform(1.0, 2.0, (3, 4))),
                            lambda lib, a, b: lib.remainder(a, b)),
    "op-clamp_max": (distinct((3, 4)), lambda lib, x: lib.clamp_max(x, -0.5)),
    "op-leaky-relu_-inplace": (distinct((3, 4)),
                               lambda lib, x: F(lib).leaky_relu_(x * 1, 0.2)),
    "op-var-mean": (normal((3, 4)), lambda lib, x: sum(lib.var_mean(x, 1))),
    "op-std-mean": (normal((3, 4)), lambda lib, x: sum(lib.std_mean(x, 0, keepdim=True))),
    "op-erf": (normal((3, 4)), lambda lib, x: lib.erf(x)),
    "op-log10": (positive((2, 3)), lambda lib, x: lib.log10(x)),
    "op-log1p": (positive((2, 3)), lambda lib, x: lib.log1p(x)),
    "op-sinh": (normal((2, 3)), lambda lib, x: lib.sinh(x)),
    "op-atan2": (normal((3, 4), (3, 4)), lambda lib, a, b: lib.atan2(a, b)),
    # reductions
    "op-sum-dim": (normal((3, 4)), lambda lib, x: lib.sum(x, 1)),
    "op-mean": (normal((3, 4)), lambda lib, x: lib.mean(x)),
    "op-mean-dim": (normal((2, 3, 4)), lambda lib, x: lib.mean(x, (0, 2))),
    "op-logsumexp": (normal((3, 4)), lambda lib, x: lib.logsumexp(x, 1)),
    "op-cumsum": (normal((3, 4)), lambda lib, x: lib.cumsum(x, 0)),
    "op-cumprod": (normal((3, 4)), lambda lib, x: lib.cumprod(x, 1)),
    "op-cumprod-a-zero": (lambda rng: (np.array([[1.5, 0.0, -2.0, 0.5], [0.7, 1.2, 0.0, 0.0]]),),
                          lambda lib, x: x.cumprod(1)),
    "op-prod-dim-two-zeros": (lambda rng: (np.array([[0.0, 1.5, 0.0], [0.5, 2.0, -1.0]]),),
                              lambda lib, x: x.prod(1, keepdim=True)),
    # choosing and moving numbers
    "op-where": (normal((3, 1), (4,)),
                 lambda lib, a, b: lib.where(lib.tensor(np.eye(3, 4, dtype=bool)), a, b)),
    "op-masked-fill": (normal((3, 4)), lambda lib, x: x.masked_fill(
        lib.tensor(np.eye(3, 4, dtype=bool)), 2.0)),
    "op-cat": (normal((2, 3), (4, 3)), lambda lib, a, b: lib.cat([a, b])),
    "op-cat-dim1": (normal((2, 1), (2, 3)), lambda lib, a, b: lib.cat((a, b), 1)),
    "op-stack": (normal((2, 3), (2, 3)), lambda lib, a, b: lib.stack([a, b], 1)),
    "op-index-mask": (normal((3, 4)), lambda lib, x: x[lib.tensor(np.eye(3, 4, dtype=bool))]),
    "op-index-tensor": (normal((3, 4)), lambda lib, x: x[lib.tensor([2, 0])]),
    "op-select": (normal((2, 3, 4)), lambda lib, x: x.select(1, 2)),
    "op-narrow": (normal((3, 4)), lambda lib, x: lib.narrow(x, 1, 1, 2)),
    "op-reshape": (normal((3, 4)), lambda lib, x: lib.reshape(x, (4, 3))),
    "op-view-as": (normal((2, 6)), lambda lib, x: x.view_as(lib.zeros(3, 4))),
    "op-permute": (normal((2, 3, 4)), lambda lib, x: lib.permute(x, (1, 2, 0))),
    "op-transpose": (normal((2, 3, 4)), lambda lib, x: lib.transpose(x, -1, 0)),
    "op-expand-as": (normal((1, 4)), lambda lib, x: x.expand_as(lib.zeros(3, 4))),
    "op-squeeze": (normal((3, 1, 4)), lambda lib, x: lib.squeeze(x, 1)),
    "op-unsqueeze": (normal((3, 4)), lambda lib, x: lib.unsqueeze(x, 1)),
    "op-flip": (normal((2, 3, 4)), lambda lib, x: lib.flip(x, (0, 2))),
    "op-diagonal": (normal((2, 3, 4)), lambda lib, x: lib.diagonal(x, -1, 2, 1)),
    "op-diag": (normal((3,)), lambda lib, x: lib.diag(x)),
    "op-trace": (normal((3, 3)), lambda lib, x: lib.trace(x)),
    "op-tril": (normal((2, 3, 3)), lambda lib, x: lib.tril(x, -1)),
    "op-triu": (normal((4, 3)), lambda lib, x: lib.triu(x)),
    "op-index-fill": (normal((3, 4)),
                      lambda lib, x: x.index_fill(1, lib.tensor([0, 2, 0]), -1.5)),
    "op-index-fill-tensor": (normal((3, 4), ()),
                             lambda lib, x, v: x.index_fill(1, lib.tensor([3, 1]), v)),
    "op-masked-fill-tensor": (normal((3, 4), ()), lambda lib, x, v: x.masked_fill(
        lib.tensor(np.eye(3, 4, dtype=bool)), v)),
    "op-index-select": (normal((3, 4)),
                        lambda lib, x: x.index_select(1, lib.tensor([3, 0, 3]))),
    "op-index-add": (normal((3, 4), (3, 2)),
                     lambda lib, x, s: x.index_add(1, lib.tensor([2, 2]), s, alpha=1.5)),
    "op-masked-select": (normal((3, 4)),
                         lambda lib, x: x.masked_select(lib.tensor(np.eye(3, 4, dtype=bool)))),
    "op-masked-scatter": (normal((3, 4), (5,)), lambda lib, x, s: x.masked_scatter(
        lib.tensor(np.eye(3, 4, dtype=bool)), s)),
    "op-gather": (normal((3, 4)), lambda lib, x: x.gather(1, lib.tensor([[0, 3, 0], [2, 2, 1]]))),
    "op-scatter": (normal((3, 4), (2, 2)),
                   lambda lib, x, s: x.scatter(1, lib.tensor([[0, 3], [2, 1]]), s)),
    "op-scatter-value": (normal((3, 4)),
                         lambda lib, x: lib.scatter(x, 0, lib.tensor([[1, 0, 2, 1]]), -0.5)),
    "op-scatter-add": (normal((3, 4), (2, 3)),
                       lambda lib, x, s: x.scatter_add(1, lib.tensor([[0, 0, 3], [2, 2, 2]]), s)),
    "op-scatter_-inplace": (normal((2, 4), (2, 2)), lambda lib, x, s: (x * 1).scatter_(
        1, lib.tensor([[1, 3], [0, 2]]), s)),
    "op-max-dim": (distinct((2, 3, 4)), lambda lib, x: lib.max(x, -2).values),
    "op-amax": (distinct((3, 4)), lambda lib, x: lib.amax(x)),
    "op-median": (distinct((3, 4)), lambda lib, x: lib.median(x)),
    "op-sort": (distinct((3, 4)), lambda lib, x: lib.sort(x, 0, descending=True)[0]),
    # image ops
    "op-conv2d": (normal((1, 2, 4, 4), (3, 2, 3, 3), (3,)),
                  lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding=1)),
    "op-max-pool2d": (distinct((1, 2, 4, 4)), lambda lib, x: F(lib).max_pool2d(x, 2)),
    "op-avg-pool2d": (normal((1, 2, 4, 4)), lambda lib, x: F(lib).avg_pool2d(x, 2)),
    "op-adaptive-avg-pool2d": (normal((1, 2, 5, 7)),
                               lambda lib, x: F(lib).adaptive_avg_pool2d(x, 3)),
    "op-unfold": (normal((1, 2, 4, 5)), lambda lib, x: F(lib).unfold(x, (2, 3), padding=1)),
    "op-fold": (normal((1, 12, 9)),
                lambda lib, c: F(lib).fold(c, (4, 5), (2, 3), padding=1, stride=2)),
    # losses of loss_more.py
    "op-bce-with-logits": (normal((3, 2), (3, 2)),
                           lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(x, y)),
    "op-smooth-l1": (normal((3, 4), (3, 4)), lambda lib, x, y: F(lib).smooth_l1_loss(x, y)),
    "op-huber": (normal((3, 4), (3, 4)), lambda lib, x, y: F(lib).huber_loss(x, y)),
}


def _ops_params():
    return [(name, draw, fn) for name, (draw, fn) in OPS.items()]


# What still differs, with the reason.  Each entry is a strict xfail: when a fix
# makes the graphs equal, the entry fails and is removed.
STILL_DIFFERENT: dict[str, str] = {}  # (none left: every case's graph is PyTorch's)


def _params(marked=True):
    """All cases; with ``marked``, those of ``STILL_DIFFERENT`` as strict xfails."""
    params = []
    for case_id, draw, fn in list(_op_case_params()) + _ops_params():
        marks = ()
        if marked and case_id in STILL_DIFFERENT:
            marks = pytest.mark.xfail(strict=True, reason=STILL_DIFFERENT[case_id])
        params.append(pytest.param(draw, fn, id=case_id, marks=marks))
    return params


@pytest.mark.parametrize("draw, fn", _params())
def test_gradient_graph_is_pytorchs(request, draw, fn):
    """Same forward node, then the same graph behind the gradients."""
    case_id = request.node.callspec.id
    arrays = draw(np.random.default_rng(_seed(case_id)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = graph_of_gradients(torch, lambda *xs: fn(torch, *xs), arrays, _seed(case_id))
    ours = graph_of_gradients(ak, lambda *xs: fn(ak, *xs), arrays, _seed(case_id))
    assert ours[0] == theirs[0], "the forward op is another node"
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("draw, fn", _params(marked=False))
def test_kernel_nodes_save_pytorchs_names(request, draw, fn):
    """The recorded kernels and Scalar overloads keep what PyTorch's keep, under
    PyTorch's names (``_saved_grad_output``, ``_saved_output``, ``_saved_beta``...)."""
    case_id = request.node.callspec.id
    arrays = draw(np.random.default_rng(_seed(case_id)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, theirs = gradients(torch, lambda *xs: fn(torch, *xs), arrays, _seed(case_id))
    _, ours = gradients(ak, lambda *xs: fn(ak, *xs), arrays, _seed(case_id))
    pairs = list(zip(graph_nodes(theirs), graph_nodes(ours)))
    for t, k in pairs:
        if type(t).__name__ == type(k).__name__ and _checks_saved(type(k).__name__):
            assert saved_names(k) == saved_names(t), type(k).__name__


KERNEL_NODES = sorted(name for name in CASES if _checks_saved(name))


@pytest.mark.parametrize("node_name, case", [
    pytest.param(name, case, id=case.id) for name in KERNEL_NODES for case in CASES[name]])
def test_kernel_nodes_have_third_derivatives(node_name, case):
    """A kernel's case is a first derivative with the kernel's node on top:
    its gradient and that gradient's gradient -- the op's second and third
    derivatives -- against central differences.  (A Scalar overload's case is
    the op itself: its second derivative, zero, is checked.)"""
    inputs = case.inputs()
    assert type(case.fn(*inputs).grad_fn).__name__ == node_name
    assert gradgradcheck(case.fn, inputs)


def test_every_xfail_names_a_case():
    ids = {p[0] for p in list(_op_case_params()) + _ops_params()}
    assert not sorted(set(STILL_DIFFERENT) - ids)


def test_tables_do_not_share_ids():
    ids = [c.id for cases in CASES.values() for c in cases]
    assert not set(ids) & set(OPS)


@pytest.mark.parametrize("op", ["mul_", "div_", "pow_", "sin_", "add_", "exp_"])
def test_inplace_op_saves_a_clone_of_the_old_value(op):
    """An in-place op whose backward reads the old value saves a clone of it
    (its history: CloneBackward0 over the tensor's old grad_fn), made once and
    packed once by saved-tensor hooks; one that reads only its result (exp_)
    or nothing (add_) saves no clone -- as PyTorch does."""
    def run(lib):
        a = lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.25, 0.75, 3.0], dtype=lib.float64, requires_grad=True)
        packed = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                    lambda t: t):
            c = a * 1.0
            getattr(c, op)(*((b,) if op in ("mul_", "div_", "pow_", "add_") else ()))
        saved = getattr(c.grad_fn, "_saved_self", None)
        chain = []
        fn = None if saved is None else saved.grad_fn
        while fn is not None and fn.next_functions:
            chain.append(type(fn).__name__)
            fn = fn.next_functions[0][0]
        return (type(c.grad_fn).__name__, chain, len(packed),
                None if saved is None else saved.detach().tolist())
    assert run(ak) == run(torch)
