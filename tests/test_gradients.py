"""Every backward formula against central differences.

The parametrised test below is built from ``NODE_CLASSES``, the registry every
``rule(...)`` row adds itself to, and from the case table in ``op_cases.py``.
So a new rule is picked up automatically, and a rule without a case makes
``test_every_node_has_a_case`` fail.

The nodes that are not rules (``CopySlices`` and ``AsStridedBackward0`` from
in-place changes of views, and the node of a custom ``Function``) have their
own gradient checks at the end.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.autograd import Function, gradcheck
from autograd_kit.ops._rules import NODE_CLASSES
from autograd_kit.ops.inplace import AsStridedBackward0, CopySlices

from op_cases import CASES, EXEMPT


def _params():
    params = []
    for name in sorted(NODE_CLASSES):
        if name in EXEMPT:
            continue
        cases = CASES.get(name)
        if not cases:  # shows up as a failing test with the node's name
            params.append(pytest.param(name, None, id=f"{name}-NO-CASE"))
        for case in cases or ():
            params.append(pytest.param(name, case, id=f"{name}-{case.id}"))
    return params


@pytest.mark.parametrize("node_name, case", _params())
def test_gradient_matches_central_differences(node_name, case, device):
    if case is None:
        pytest.fail(f"no case in op_cases.CASES for {node_name}")
    inputs = case.inputs(device)
    out = case.fn(*inputs)
    assert isinstance(out.grad_fn, NODE_CLASSES[node_name]), (
        f"case {case.id!r} made {type(out.grad_fn).__name__}, not {node_name}")
    assert gradcheck(case.fn, inputs)


@pytest.mark.parametrize("node_name, case", _params())
def test_array_and_tensor_passes_agree(node_name, case, device):
    """A plain backward runs the formulas on arrays; ``create_graph=True`` runs
    them on Tensors.  Both must give the same gradients for every rule."""
    if case is None:
        pytest.fail(f"no case in op_cases.CASES for {node_name}")
    inputs = case.inputs(device)
    wanted = [t for t in inputs if isinstance(t, ak.Tensor) and t.requires_grad]
    out = case.fn(*inputs)
    seed = ak.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape),
                     dtype=out.dtype, device=device)
    on_arrays = ak.autograd.grad(out, wanted, seed, retain_graph=True, allow_unused=True)
    on_tensors = ak.autograd.grad(out, wanted, seed, create_graph=True, allow_unused=True)
    assert len(on_arrays) == len(on_tensors) == len(wanted)
    for a, t in zip(on_arrays, on_tensors):
        assert (a is None) == (t is None)
        if a is not None:
            assert not a.requires_grad
            np.testing.assert_allclose(a.cpu().numpy(), t.detach().cpu().numpy(),
                                       rtol=1e-12, atol=1e-14)


def test_formulas_use_only_shared_words():
    """Formulas call functions (``cos(self)``, ``expand(g, sizes)``), never
    methods: a method exists on Tensors but not on arrays."""
    import ast
    for name, cls in NODE_CLASSES.items():
        for text in cls.formula_text.values():
            tree = ast.parse(text, mode="eval")
            attrs = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
            assert not attrs, f"{name}: {text!r} uses .{attrs[0]}"


def test_every_node_has_a_case():
    missing = sorted(set(NODE_CLASSES) - set(CASES) - set(EXEMPT))
    assert not missing, f"rules without a gradient case: {missing}"


def test_case_table_names_only_real_nodes():
    assert not sorted(set(CASES) - set(NODE_CLASSES))
    assert not sorted(set(EXEMPT) - set(NODE_CLASSES))
    assert not set(EXEMPT) & set(CASES)


def test_case_ids_are_unique():
    ids = [c.id for cases in CASES.values() for c in cases]
    assert len(ids) == len(set(ids))


def test_gradcheck_catches_a_wrong_formula():
    """The check itself can fail: a node whose backward is off by a factor of 2."""
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

    x = ak.tensor([0.5, -1.0, 2.0], dtype=ak.float64, requires_grad=True)
    with pytest.raises(ak.autograd.GradcheckError):
        gradcheck(Wrong.apply, (x,))


# ------------------------------------------------ nodes outside the tables --
def _leaf(rng, *shape, device="cpu"):
    return ak.tensor(rng.standard_normal(shape), dtype=ak.float64, device=device,
                     requires_grad=True)


def test_copyslices_setitem_on_non_leaf(device, rng):
    """``y[1] = v`` on a non-leaf: the base's grad_fn becomes CopySlices; x gets g
    outside row 1 only, v gets the gradient of row 1."""
    def f(x, v):
        y = x * 1.5
        y[1] = v
        return y

    x, v = _leaf(rng, 3, 4, device=device), _leaf(rng, 4, device=device)
    assert isinstance(f(x, v).grad_fn, CopySlices)
    assert gradcheck(f, (x, v))


def test_copyslices_setitem_slice_with_broadcast_value(device, rng):
    def f(x, v):
        y = x.clone()
        y[:, 1:3] = v * v  # v: (2,) broadcast into a (3, 2) window
        return y.sin()

    x, v = _leaf(rng, 3, 4, device=device), _leaf(rng, 2, device=device)
    assert gradcheck(f, (x, v))


def test_copyslices_inplace_op_on_view(device, rng):
    """``y[0].mul_(w)``: inside the view the gradient goes through MulBackward0,
    whose first input is the view's old value."""
    def f(x, w):
        y = x.sin()          # sin saves x, not y: y may change in place
        y[0].mul_(w)
        return y

    x, w = _leaf(rng, 2, 3, device=device), _leaf(rng, 3, device=device)
    out = f(x, w)
    assert isinstance(out.grad_fn, CopySlices)
    assert out.grad_fn.fn.__class__ is NODE_CLASSES["MulBackward0"]
    assert gradcheck(f, (x, w))


def test_copyslices_fill_on_view(device, rng):
    def f(x):
        y = x.clone()
        y[:, 0].fill_(2.0)
        return y * x

    x = _leaf(rng, 3, 3, device=device)
    assert isinstance(f(x).grad_fn, NODE_CLASSES["MulBackward0"])
    assert gradcheck(f, (x,))


def test_asstrided_view_after_inplace(device, rng):
    """After an in-place change through a view, the view's own grad_fn is
    AsStridedBackward0 (a window onto the rebased base)."""
    def f(x, w):
        y = x.clone()
        row = y[1]
        row.add_(w)
        return row

    x, w = _leaf(rng, 3, 4, device=device), _leaf(rng, 4, device=device)
    assert isinstance(f(x, w).grad_fn, AsStridedBackward0)
    assert gradcheck(f, (x, w))


def test_asstrided_view_used_after_change(device, rng):
    def f(x):
        y = x * 2
        col = y[:, 1]
        col.pow_(2)            # written back into y
        return y.sum(0) * col.sum()

    x = _leaf(rng, 3, 3, device=device)
    assert gradcheck(f, (x,))


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class ScaledProduct(Function):
    """(x, number, y) -> number * x * y; the number gets no gradient (None)."""

    @staticmethod
    def forward(ctx, x, scale, y):
        ctx.save_for_backward(x, y)
        ctx.scale = scale
        return x * y * scale

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * ctx.scale, None, g * x * ctx.scale


def test_custom_function_single_input(device, rng):
    x = _leaf(rng, 2, 3, device=device)
    out = Cube.apply(x)
    assert out.grad_fn.name() == "CubeBackward"
    assert gradcheck(Cube.apply, (x,))


def test_custom_function_in_a_larger_graph(device, rng):
    x = _leaf(rng, 4, device=device)
    assert gradcheck(lambda t: Cube.apply(t.sin()).sum() * t, (x,))


def test_custom_function_with_non_tensor_argument(device, rng):
    x, y = _leaf(rng, 3, device=device), _leaf(rng, 3, device=device)
    assert gradcheck(lambda a, b: ScaledProduct.apply(a, 2.5, b), (x, y))


# ------------------------------------------------------- against PyTorch --
def test_to_float32_sends_float64_gradient_back():
    """ToCopyBackward0 casts the gradient back to the input's dtype."""
    x = ak.tensor([1.0, 2.0, 3.0], dtype=ak.float64, requires_grad=True)
    (x.to(ak.float32) * ak.tensor([1.0, 2.0, 4.0])).sum().backward()
    assert x.grad.dtype == ak.float64
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0, 4.0])


def test_fill_with_tensor_value_passes_gradient_to_value():
    """PyTorch differentiates ``y.fill_(v)`` w.r.t. a 0-d tensor ``v``: each
    filled element contributes g, so v.grad = g.sum()."""
    torch = pytest.importorskip("torch")
    w = np.array([1.0, 2.0, 3.0])

    x = ak.tensor(w, requires_grad=True)
    v = ak.tensor(0.5, dtype=ak.float64, requires_grad=True)
    y = x * 1
    y.fill_(v)
    (y * ak.tensor(w)).sum().backward()

    tx = torch.tensor(w, requires_grad=True)
    tv = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    ty = tx * 1
    ty.fill_(tv)
    (ty * torch.tensor(w)).sum().backward()

    assert v.grad is not None, "fill_ dropped the gradient of its tensor value"
    assert v.grad.item() == pytest.approx(tv.grad.item())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
