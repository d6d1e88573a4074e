"""Misuse fails as in PyTorch: the same exception class and message, never
numpy's words (``operands could not be broadcast``, ``axis 3 is out of bounds``,
``zero-size array to reduction operation``...).

Each case is a snippet and the error PyTorch 2 raises for it.  The kit is
checked against that everywhere; where PyTorch is installed, PyTorch is
checked against it too, so the expectations here cannot drift from the truth.
The ``out=`` keyword of the module-level functions is checked at the end.
"""
from __future__ import annotations

import warnings

import pytest

import autograd_kit as ak
from fidelity_support import assert_same, kit, quiet_as_after_import, reference, torch

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@pytest.fixture(autouse=True)
def _kit_filters():
    quiet_as_after_import()


BROADCAST = "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton " \
            "dimension {}"
EMPTY = "{}(): Expected reduction dim to be specified for input.numel() == 0."
HINT = " Specify the reduction dim with the 'dim' argument."
EMPTY_DIM = "{}(): Expected reduction dim {} to have non-zero size."
RANGE = "Dimension out of range (expected to be in range of [{}, {}], but got {})"

ERRORS = [
    # broadcasting: comparisons, logic, where, isclose
    ("torch.ones(2, 3) < torch.ones(4)", "RuntimeError", BROADCAST.format(3, 4, 1)),
    ("torch.ones(2, 3) == torch.ones(4)", "RuntimeError", BROADCAST.format(3, 4, 1)),
    ("torch.ones(3) != torch.ones(2, 1, 4)", "RuntimeError", BROADCAST.format(3, 4, 2)),
    ("torch.ones(2, 3).bool() & torch.ones(4).bool()", "RuntimeError",
     BROADCAST.format(3, 4, 1)),
    ("torch.where(torch.ones(2, 3) > 0, torch.ones(4), torch.zeros(1))", "RuntimeError",
     BROADCAST.format(3, 4, 1)),
    ("torch.where(torch.ones(4) > 0, torch.ones(2, 3), torch.zeros(1))", "RuntimeError",
     BROADCAST.format(4, 3, 1)),
    ("torch.where(torch.ones(3) > 0, torch.ones(3), torch.zeros(2))", "RuntimeError",
     BROADCAST.format(3, 2, 0)),
    ("torch.isclose(torch.ones(2, 3), torch.ones(4))", "RuntimeError",
     BROADCAST.format(3, 4, 1)),
    ("torch.allclose(torch.ones(2, 3), torch.ones(4))", "RuntimeError",
     BROADCAST.format(3, 4, 1)),
    ("torch.ones(2) & torch.ones(2)", "NotImplementedError",
     "\"bitwise_and_cpu\" not implemented for 'Float'"),
    # reductions of nothing
    ("torch.zeros(0).max()", "RuntimeError", EMPTY.format("max") + HINT),
    ("torch.zeros(0).min()", "RuntimeError", EMPTY.format("min") + HINT),
    ("torch.zeros(2, 0).amax()", "RuntimeError", EMPTY.format("amax") + HINT),
    ("torch.zeros(0).amin()", "RuntimeError", EMPTY.format("amin") + HINT),
    ("torch.zeros(0).argmax()", "IndexError", EMPTY.format("argmax")),
    ("torch.zeros(0).argmin()", "IndexError", EMPTY.format("argmin")),
    ("torch.zeros(0, 3).max(0)", "IndexError", EMPTY_DIM.format("max", 0)),
    ("torch.zeros(0).min(-1)", "IndexError", EMPTY_DIM.format("min", 0)),
    ("torch.zeros(2, 0).argmin(-1)", "IndexError", EMPTY_DIM.format("argmin", 1)),
    ("torch.zeros(0, 3).amax(0)", "IndexError", EMPTY_DIM.format("amax", 0)),
    ("torch.zeros(0).amax(-1)", "IndexError", EMPTY_DIM.format("amax", -1)),
    ("torch.zeros(0).norm(p=float('inf'))", "RuntimeError",
     "linalg.vector_norm cannot compute the inf norm on an empty tensor because the "
     "operation does not have an identity"),
    # dimensions out of range, 0-d tensors
    ("torch.zeros(2, 3).softmax(dim=3)", "IndexError", RANGE.format(-2, 1, 3)),
    ("torch.zeros(2, 3).log_softmax(dim=-3)", "IndexError", RANGE.format(-2, 1, -3)),
    ("F.softmax(torch.zeros(2, 3), dim=3)", "IndexError", RANGE.format(-2, 1, 3)),
    ("torch.zeros(2, 3).argmax(2)", "IndexError", RANGE.format(-2, 1, 2)),
    ("torch.zeros(2, 3).unbind(2)", "IndexError", RANGE.format(-2, 1, 2)),
    ("torch.zeros(2, 3).split(1, 2)", "IndexError", RANGE.format(-2, 1, 2)),
    ("torch.zeros(2, 3).chunk(2, -3)", "IndexError", RANGE.format(-2, 1, -3)),
    ("torch.zeros(2, 3).select(2, 0)", "IndexError", RANGE.format(-2, 1, 2)),
    ("torch.zeros(2, 3).narrow(2, 0, 1)", "IndexError", RANGE.format(-2, 1, 2)),
    ("torch.zeros(2, 3).permute(0, 5)", "IndexError", RANGE.format(-2, 1, 5)),
    ("torch.tensor(3.).unbind()", "IndexError",
     "Dimension specified as 0 but tensor has no dimensions"),
    ("torch.tensor(3.).split(1)", "RuntimeError", "split expects at least a 1-dimensional tensor"),
    ("torch.tensor(3.).chunk(2)", "RuntimeError", "chunk expects at least a 1-dimensional tensor"),
    ("torch.tensor(3.).select(0, 0)", "IndexError",
     "select() cannot be applied to a 0-dim tensor."),
    ("torch.tensor(3.).narrow(0, 0, 1)", "RuntimeError",
     "narrow() cannot be applied to a 0-dim tensor."),
    ("torch.zeros(2, 3).select(0, 5)", "IndexError",
     "select(): index 5 out of range for tensor of size [2, 3] at dimension 0"),
    # sizes and counts PyTorch refuses
    ("torch.zeros(4).chunk(0)", "RuntimeError",
     "chunk expects `chunks` to be greater than 0, got: 0"),
    ("torch.zeros(4).split(0)", "RuntimeError",
     "split_size can only be 0 if dimension size is 0, but got dimension size of 4"),
    ("torch.zeros(2).split(-1)", "RuntimeError",
     "split expects split_size be non-negative, but got split_size=-1"),
    ("torch.zeros(2).split([1, 2])", "RuntimeError",
     "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at "
     "dimension 0), but got split_sizes=[1, 2]"),
    ("torch.zeros(2, 3).permute(0, 0)", "RuntimeError",
     "permute(): duplicate dims are not allowed."),
    ("torch.zeros(2, 3).permute(-1, 1)", "RuntimeError",
     "permute(): duplicate dims are not allowed."),
    ("torch.zeros(4).narrow(0, 2, 3)", "RuntimeError",
     "start (2) + length (3) exceeds dimension size (4)."),
    ("torch.zeros(4).narrow(0, 5, 0)", "IndexError",
     "start out of range (expected to be in range of [-4, 4], but got 5)"),
    ("torch.zeros(4).narrow(0, 1, -1)", "RuntimeError", "narrow(): length must be non-negative."),
    ("torch.zeros(2).copy_(torch.ones(3))", "RuntimeError", BROADCAST.format(2, 3, 0)),
    ("torch.zeros(2).copy_(torch.ones(2, 2))", "RuntimeError",
     "output with shape [2] doesn't match the broadcast shape [2, 2]"),
    ("torch.zeros(2, 2).copy_(torch.zeros(1, 2, 2))", "RuntimeError",
     "output with shape [2, 2] doesn't match the broadcast shape [1, 2, 2]"),
    ("torch.zeros(2, 3).repeat(2)", "RuntimeError",
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    ("torch.zeros(2, 3).repeat(2, 2, -1)", "RuntimeError",
     "Trying to create tensor with negative dimension -3: [2, 4, -3]"),
    ("torch.zeros(2, 3).view(-1, -1)", "RuntimeError", "only one dimension can be inferred"),
    ("torch.zeros(2, 3).reshape(-2, 3)", "RuntimeError",
     "invalid shape dimension -2 at index 0 of shape [-2, 3]"),
    ("torch.tensor([1, 2]) // 0", "RuntimeError", "ZeroDivisionError"),
    ("torch.tensor([1, 2]) % torch.tensor([0, 1])", "RuntimeError", "ZeroDivisionError"),
    ("torch.tensor([True]) // torch.tensor([False])", "NotImplementedError",
     "\"div_floor_cpu\" not implemented for 'Bool'"),
    ("torch.zeros(2, 3).sum(dim=(0, -2))", "RuntimeError",
     "dim 0 appears multiple times in the list of dims"),
    ("torch.zeros(2, 3).mean(dim=(1, 1))", "RuntimeError",
     "dim 1 appears multiple times in the list of dims"),
    ("torch.zeros(2, 3).flatten(1, 0)", "RuntimeError",
     "flatten() has invalid args: start_dim cannot come after end_dim"),
    ("torch.zeros(2, 3).expand(3)", "RuntimeError", "expand(torch.FloatTensor{[2, 3]}, size=[3]): "
     "the number of sizes provided (1) must be greater or equal to the number of dimensions in "
     "the tensor (2)"),
    ("torch.zeros(2, 3).expand(-1, -1, 3)", "RuntimeError", "The expanded size of the tensor (-1) "
     "isn't allowed in a leading, non-existing dimension 0"),
    ("torch.zeros(2, 3) @ torch.zeros(4)", "RuntimeError",
     "size mismatch, got input (2), mat (2x3), vec (4)"),
    ("torch.zeros(3) @ torch.zeros(4)", "RuntimeError", "inconsistent tensor size, expected "
     "tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements "
     "respectively"),
    ("torch.zeros(2, 3)[torch.tensor([5])]", "IndexError",
     "index 5 is out of bounds for dimension 0 with size 2"),
    ("torch.zeros(2, 3)[1.5]", "IndexError", "only integers, slices (`:`), ellipsis (`...`), None "
     "and long or byte Variables are valid indices (got float)"),
    ("torch.zeros(2, 3).masked_fill(torch.zeros(4, dtype=torch.bool), 1.)", "RuntimeError",
     BROADCAST.format(4, 3, 1)),
    ("torch.zeros(2, 3).masked_fill(torch.zeros(2, 3), 1.)", "RuntimeError",
     "masked_fill_ only supports boolean masks, but got mask with dtype float"),
    ("torch.zeros(2).masked_fill(torch.zeros(2, dtype=torch.long), 1.)", "RuntimeError",
     "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
    ("torch.where(torch.zeros(3), torch.ones(3), torch.zeros(3))", "RuntimeError",
     "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    ("torch.ones(2).split([1, -1, 2])", "RuntimeError", "split_with_sizes expects split_sizes "
     "have only non-negative entries, but got split_sizes=[1, -1, 2]"),
    ("torch.zeros(2, 3).softmax(dim=None)", "TypeError",
     "softmax(): argument 'dim' must be int, not NoneType"),
    ("torch.eye(-1)", "RuntimeError", "n must be greater or equal to 0, got -1"),
    ("torch.arange(0, 5, 0)", "RuntimeError", "step must be nonzero"),
    ("torch.arange(5, 0)", "RuntimeError",
     "upper bound and lower bound inconsistent with step sign"),
    ("torch.linspace(0, 1, -1)", "RuntimeError", "number of steps must be non-negative"),
    # making tensors
    ("torch.tensor('abc')", "TypeError", "new(): invalid data type 'str'"),
    ("torch.tensor(['a', 'b'])", "ValueError", "too many dimensions 'str'"),
    ("torch.tensor([1, 'a'])", "TypeError", "new(): invalid data type 'str'"),
    ("torch.tensor(None)", "RuntimeError", "Could not infer dtype of NoneType"),
    ("torch.tensor([1., None])", "RuntimeError", "Could not infer dtype of NoneType"),
    ("torch.tensor({})", "RuntimeError", "Could not infer dtype of dict"),
    ("torch.zeros(-1)", "RuntimeError", "zeros: Dimension size must be non-negative."),
    ("torch.ones(2, -1)", "RuntimeError",
     "Trying to create tensor with negative dimension -1: [2, -1]"),
    ("torch.empty(-2)", "RuntimeError", "Trying to create tensor with negative dimension -2: [-2]"),
    ("torch.full((-1,), 2.)", "RuntimeError",
     "Trying to create tensor with negative dimension -1: [-1]"),
    ("torch.randn(-1)", "RuntimeError", "Trying to create tensor with negative dimension -1: [-1]"),
    ("torch.randn(2.5)", "TypeError",
     "randn(): argument 'size' (position 1) must be tuple of ints, not float"),
    ("torch.rand(2.0)", "TypeError",
     "rand(): argument 'size' (position 1) must be tuple of ints, not float"),
    ("torch.zeros([2.5])", "TypeError", "zeros(): argument 'size' (position 1) must be tuple of "
     "ints, but found element of type float at pos 0"),
    ("torch.randn(2, 2.5)", "TypeError", "randn(): argument 'size' failed to unpack the object "
     "at pos 2 with error \"type must be tuple of ints,but got float\""),
    # dtypes PyTorch refuses
    ("torch.tensor([1, 2]).softmax(0)", "NotImplementedError",
     "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
    ("torch.tensor([[1, 2]]).log_softmax(0)", "NotImplementedError",
     "\"log_softmax_kernel_impl\" not implemented for 'Long'"),
    ("torch.tensor([1, 2]).norm()", "RuntimeError",
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("torch.tensor([1, 2]).std()", "RuntimeError",
     "std and var only support floating point and complex dtypes"),
    ("torch.tensor([1, 2]).var()", "RuntimeError",
     "std and var only support floating point and complex dtypes"),
    ("torch.zeros(2).mean(dtype=torch.long)", "RuntimeError", "mean(): could not infer output "
     "dtype. Optional dtype must be either a floating point or complex dtype. Got: Long"),
    # losses
    ("F.cross_entropy(torch.randn(3, 4), torch.tensor([0, -1, 2]))", "IndexError",
     "Target -1 is out of bounds."),
    ("F.cross_entropy(torch.randn(3, 4), torch.tensor([0, 4, 2]))", "IndexError",
     "Target 4 is out of bounds."),
    ("F.nll_loss(torch.randn(4), torch.tensor(5))", "IndexError", "Target 5 is out of bounds."),
    ("F.nll_loss(torch.randn(3, 0), torch.zeros(3, dtype=torch.long))", "IndexError",
     "Target 0 is out of bounds."),
    ("F.cross_entropy(torch.randn(3, 4), torch.tensor([0, 1]))", "ValueError",
     "Expected input batch_size (3) to match target batch_size (2)."),
    ("F.nll_loss(torch.randn(3, 4), torch.tensor(1))", "ValueError",
     "Expected input batch_size (3) to match target batch_size (0)."),
    ("F.cross_entropy(torch.randn(3, 4), torch.randn(2, 4))", "ValueError",
     "Expected input batch_size (3) to match target batch_size (2)."),
    ("F.nll_loss(torch.randn(3, 4), torch.tensor([[0], [1], [2]]))", "RuntimeError",
     "0D or 1D target tensor expected, multi-target not supported"),
    ("F.nll_loss(torch.randn(3, 4, 5), torch.tensor([0, 1, 2]))", "RuntimeError",
     "Expected target size [3, 5], got [3]"),
    ("F.nll_loss(torch.randn(3, 4), torch.tensor([0., 1., 2.]))", "RuntimeError",
     "expected target dtype to be Long or Byte, but got Float"),
    ("F.cross_entropy(torch.randn(3, 4), torch.rand(3, 4), ignore_index=1)", "RuntimeError",
     "ignore_index is not supported for floating point target"),
    ("F.binary_cross_entropy(torch.tensor([1.5, 0.5]), torch.tensor([1., 0.]))", "RuntimeError",
     "all elements of input should be between 0 and 1"),
    ("F.binary_cross_entropy(torch.tensor([0.5, nan]), torch.tensor([1., 0.]))", "RuntimeError",
     "all elements of input should be between 0 and 1"),
    ("F.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([2., 0.]))", "RuntimeError",
     "all elements of target should be between 0 and 1"),
    ("F.binary_cross_entropy(torch.tensor([0.2, 0.4]), torch.tensor([1., 0.], "
     "dtype=torch.float64))", "RuntimeError", "Found dtype Double but expected Float"),
    ("F.mse_loss(torch.ones(3, dtype=torch.long), torch.ones(3, dtype=torch.long))",
     "NotImplementedError", "\"mse_cpu\" not implemented for 'Long'"),
    ("F.mse_loss(torch.ones(3), torch.ones(4))", "RuntimeError", BROADCAST.format(3, 4, 0)),
    ("F.mse_loss(torch.ones(3), torch.ones(3), reduction='bad')", "ValueError",
     "bad is not a valid value for reduction"),
    ("F.nll_loss(torch.randn(3, 4), torch.tensor([0, 1, 2]), reduction='bad')", "ValueError",
     "bad is not a valid value for reduction"),
]
IDS = [src for src, _, _ in ERRORS]


@pytest.mark.parametrize("source, kind, message", ERRORS, ids=IDS)
def test_the_kit_refuses_as_pytorch_does(source, kind, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (mse_loss's size warning)
        got = kit(f"out = {source}")
    assert got[:3] == ("error", kind, message), got


@needs_torch
@pytest.mark.parametrize("source, kind, message", ERRORS, ids=IDS)
def test_pytorch_says_so_too(source, kind, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = reference(f"out = {source}")
    assert got[:3] == ("error", kind, message), got


# Not errors in PyTorch, although numpy refuses them.
ALLOWED = [
    "torch.tensor(3.).max(0)", "torch.tensor(3.).argmax(0)", "torch.tensor(3.).softmax(0)",
    "torch.tensor(3.).logsumexp(0)", "torch.tensor(3.).amax(0)",
    "torch.zeros(0).chunk(2)", "torch.zeros(0, 3).chunk(2)", "torch.zeros(0).split(0)",
    "torch.zeros(0).split(2)", "torch.zeros(0).softmax(0)", "torch.zeros(0, 3).softmax(0)",
    "torch.zeros(0).logsumexp(0)", "torch.zeros(0, 2).logsumexp(0)", "torch.zeros(0).mean()",
    "torch.zeros(4).narrow(0, -1, 1)", "torch.zeros(3, 4).narrow(0, 3, 0)",
    "torch.zeros(2, 3).repeat(2, 0)", "torch.tensor([1., 2.]) // 0",
    "torch.tensor([1., -2., 0.]) % 0", "torch.tensor([1, 2]) / 0",
    "torch.zeros(2) == 'a'", "torch.zeros(0).norm(p=3)",
    "torch.stack([torch.ones(2), torch.ones(2, dtype=torch.long)])",
    "torch.stack([torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.float64)])",
    "torch.tensor([1, 2]).logsumexp(0)", "F.nll_loss(torch.randn(4), torch.tensor(-100))",
    "F.binary_cross_entropy(torch.tensor([0., 1.]), torch.tensor([1., 0.]))",
]


@pytest.mark.parametrize("source", ALLOWED)
def test_the_kit_allows_what_pytorch_allows(source):
    got = kit(f"out = {source}")
    assert got[0] == "value", got
    assert "RuntimeWarning" not in got[-1]


@needs_torch
@pytest.mark.parametrize("source", ALLOWED)
def test_allowed_results_as_in_pytorch(source):
    assert_same(kit(f"out = {source}"), reference(f"out = {source}"), source)


# ----------------------------------------------------------- out= ---
REFUSED = "{}(): functions with out=... arguments don't support automatic differentiation, " \
          "but one of the arguments requires grad."


@pytest.mark.parametrize("call", ["add(a, 1, out=c)", "sub(a, b, out=c)", "mul(a, b, out=c)",
                                  "div(a, 2, out=c)", "pow(a, 2, out=c)", "exp(a, out=c)",
                                  "neg(a, out=c)", "maximum(a, b, out=c)", "sum(a, 0, out=c)"])
@pytest.mark.parametrize("who", ["input", "out", "non-leaf out"])
def test_out_refused_when_something_requires_grad(call, who):
    a, b = ak.ones(2, requires_grad=who == "input"), ak.ones(2)
    c = ak.zeros(2, requires_grad=who == "out")
    if who == "non-leaf out":
        c = ak.zeros(2, requires_grad=True) * 1
    before = c.tolist()
    with pytest.raises(RuntimeError) as info:
        eval(f"ak.{call}", {"ak": ak, "a": a, "b": b, "c": c})  # noqa: S307 - our own calls
    assert str(info.value) == REFUSED.format(call.split("(")[0])
    assert c.tolist() == before  # a failed operation changes nothing


def test_out_writes_into_the_tensor_and_returns_it():
    a, c = ak.tensor([1., 2.]), ak.zeros(2)
    version = c._version
    out = ak.add(a, a, alpha=2, out=c)
    assert out is c and c.tolist() == [3., 6.] and c._version == version + 1
    base = ak.zeros(3)
    ak.mul(a, 2, out=base[:2])  # into a view: the base sees it
    assert base.tolist() == [2., 4., 0.]


def test_out_under_no_grad_keeps_a_leaf_a_leaf():
    a, c = ak.ones(2, requires_grad=True), ak.zeros(2, requires_grad=True)
    with ak.no_grad():
        ak.mul(a, 3, out=c)
    assert c.is_leaf and c.requires_grad and c.grad_fn is None and c.tolist() == [3., 3.]


def test_out_of_another_shape_is_resized_with_pytorch_warning():
    c = ak.zeros(3)
    with pytest.warns(UserWarning, match=r"had shape \[3\], which does not match the required "
                                         r"output shape \[2\]"):
        ak.add(ak.ones(2), 1, out=c)
    assert c.shape == (2,) and c.tolist() == [2., 2.]
    empty = ak.zeros(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        ak.add(ak.ones(2), 1, out=empty)
    assert empty.tolist() == [2., 2.]


def test_out_dtype_must_hold_the_result():
    c = ak.zeros(2, dtype=ak.long)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ak.add(ak.ones(2), 1, out=c)
    c = ak.zeros(2, dtype=ak.float64)
    ak.add(ak.ones(2), 1, out=c)
    assert c.dtype == ak.float64 and c.tolist() == [2., 2.]


OUT_CASES = [
    "a = torch.ones(2, requires_grad=True); c = torch.zeros(2)\nout = torch.add(a, 1, out=c)",
    "a = torch.ones(2); c = torch.zeros(2, requires_grad=True)\nout = torch.mul(a, 1, out=c)",
    "a = torch.ones(2); c = torch.zeros(2)\nr = torch.add(a, a, alpha=2, out=c)\n"
    "out = [r is c, c]",
    "a = torch.ones(2); c = torch.zeros(3)\nr = torch.exp(a, out=c)\nout = [r is c, c]",
    "a = torch.ones(2, 2); c = torch.zeros(2, 2)\nout = [torch.matmul(a, a, out=c), c]",
    "a = torch.ones(2); c = torch.zeros(2, dtype=torch.long)\nout = torch.add(a, 1, out=c)",
    "a = torch.ones(2, dtype=torch.long); c = torch.zeros(2)\nout = torch.add(a, 1, out=c)",
    "a = torch.ones(2, requires_grad=True); c = torch.zeros(2)\nwith torch.no_grad():\n"
    "    torch.sub(a, 3, out=c)\nout = [c, c.requires_grad]",
]


@needs_torch
@pytest.mark.parametrize("source", OUT_CASES)
def test_out_as_in_pytorch(source):
    assert_same(kit(source), reference(source), source)
