"""Indexing and writing through a key, as PyTorch does it -- checked against
PyTorch over a grid of keys, values and dtypes, and by identities that need no
oracle -- and, at the end, the value edges that a run of the fuzzer per op
family found next to them (fills that overflow, integer atan2, signed zeros of
maximum and minimum, a norm's gradient at zero).

What the grid found, by class: a key mixing ints or Nones with tensor indices
is PyTorch's views first, then the index (``x[0, :, [0, 1]]`` has shape
(n1, 2), numpy's (2, n1)); a short list holding a list, slice or tensor is a
tuple of indices (with PyTorch's deprecation warning), not one nested index; a
slice over a whole dim makes no view inside a longer key; a number or a 0-d
value is written as PyTorch's ``copy_to`` writes it (copy for the same shape,
fill otherwise); an index put refuses a value of another dtype unless it is a
one-value mask fill, and checks the shape first; a value's leading 1s are
dropped; masks of the wrong shape and float indices get PyTorch's words."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.ops.indexing import SEQUENCE_KEY

KEYS = [
    "0, :, [0, 1]", ":, [0, 1]", "1:, [0, 1]", "..., [0, 1]", "None, [0, 1]", "0:2, [0, 1]",
    "::1, [0, 1]", "[0, 1], 0", "[0, 1], :, 0", ":, 0, [0, 1]", "0, [0, 1], [1, 0]",
    "None, 0, :, [1]", "[[0], [1]]", "[True]", "[[True, False, True]]", "[0, [1]]",
    "[[0, 1], [1, 2]]", "[[0, 1]]", "[(0, 1)]", "[[0], slice(None)]", "0, y[0, 0] > 3",
    "y > 3", ":, y[0] > 3", "1, ..., [0, 3]", "y[0] > 3, 0", "[0, None]", "[0, 1]",
    "0:2", "0:2, 0", "::1", ":5", "-2:", "-2:, 0", ":, 0:3", "0:2, [0]", "...", ":", "None",
    "1, 2, 3", "::2", "True", "False", "0, True", "False, :, [0]", "(slice(0, 2),)",
    "y[0]", "[0, 1, -1]", "5", "[5]", "y > 100",
]


def _chain(fn):
    names = []
    while fn is not None:
        names.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return names


def _outcome(thunk):
    try:
        return thunk()
    except Exception as err:  # the class and the words are part of the behaviour
        return type(err).__name__, str(err)


def _read_and_write(lib, key):
    def read():
        y = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
        z = eval(f"y[{key}]", {"y": y})  # noqa: S307 - the key's own text
        return _chain(z.grad_fn), list(z.shape), z.sum().item()

    def write():
        y = lib.arange(24.0).reshape(2, 3, 4).requires_grad_().clone()
        exec(f"y[{key}] = -1.0", {"y": y})  # noqa: S102
        return _chain(y.grad_fn), y.sum().item()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _outcome(read), _outcome(write)


@pytest.mark.parametrize("key", KEYS)
def test_keys_read_and_write_as_in_pytorch(key):
    torch = pytest.importorskip("torch")
    assert _read_and_write(ak, key) == _read_and_write(torch, key)


TARGETS = {"0-d": (), "vector": (3,), "matrix": (2, 3)}
WRITE_KEYS = {(): ["...", "None", "y > 0", "lib.tensor(True)", "lib.tensor(False)"],
              (3,): ["...", ":", "0", "[0, 1]", "y > 0", "None"]}
WRITE_KEYS[(2, 3)] = WRITE_KEYS[(3,)] + ["0, y[0] > 0", "lib.tensor([True, False])",
                                         "[[0], [1]]", "lib.tensor(True)", "lib.tensor(False)"]
VALUES = ["2.0", "True", "-3", "lib.tensor(2.0)", "lib.tensor([2.0])",
          "lib.tensor(2.0, requires_grad=True)", "lib.tensor(True)", "lib.tensor(5)",
          "lib.tensor([1., 2., 3.])", "lib.ones(1, 1, 3)", "lib.ones(2, 1)",
          "lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)",
          "lib.ones(1, 1, requires_grad=True)"]
DTYPES = ["float32", "float64", "int64", "uint8", "bool"]


def _write_value(lib, shape, key, value, dtype):
    def run():
        y = lib.ones(shape, dtype=getattr(lib, dtype))
        if dtype.startswith("float"):
            y = y.requires_grad_().clone()
        env = {"lib": lib, "y": y}
        exec(f"v = {value}; y[{key}] = v", env)  # noqa: S102
        grad = None
        if y.requires_grad:
            y.sum().backward()
            v = env["v"]
            grad = v.grad.tolist() if isinstance(v, lib.Tensor) and v.requires_grad else None
        return (None if y.grad_fn is None else y.grad_fn.name(), y.tolist(), str(y.dtype), grad)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _outcome(run)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("target", TARGETS)
def test_values_written_through_a_key_as_in_pytorch(target, dtype):
    """Every key of the target's list with every value: the node, the values,
    the dtype and the value's gradient, or the same error.  (An integer target
    given a value that requires grad is left out: PyTorch records a node on an
    integer tensor there, which cannot take part in a backward.)"""
    torch = pytest.importorskip("torch")
    shape = TARGETS[target]
    for key in WRITE_KEYS[shape]:
        for value in VALUES:
            if "requires_grad" in value and not dtype.startswith("float"):
                continue
            got = _write_value(ak, shape, key, value, dtype)
            assert got == _write_value(torch, shape, key, value, dtype), (key, value)


# -- identities that hold without an oracle ------------------------------------------
def _x():
    return ak.arange(24.0).reshape(2, 3, 4)


def test_the_basic_part_of_a_mixed_key_is_applied_first():
    x = _x()
    assert ak.equal(x[0, :, [0, 1]], x[0][:, [0, 1]])
    assert x[0, :, [0, 1]].shape == (3, 2)
    assert ak.equal(x[None, 0, :, [1]], x[None][:, 0][:, :, [1]])


def test_a_short_list_holding_a_sequence_is_a_tuple_of_indices():
    x = _x()
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        got = x[[[0], [1]]]
    assert ak.equal(got, x[[0], [1]])
    assert SEQUENCE_KEY.startswith("Using a non-tuple sequence")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a list of numbers is one index: no warning
        assert ak.equal(x[[0, 1]], ak.stack([x[0], x[1]]))


def test_writing_through_a_mixed_key_changes_what_reading_it_gives():
    y = _x().clone()
    y[0, :, [0, 1]] = -1.0
    assert (y[0][:, [0, 1]] == -1).all()
    assert y.sum().item() == _x().sum().item() - _x()[0][:, [0, 1]].sum().item() - 6


def test_a_mask_fill_converts_one_value_and_an_index_put_refuses_another_type():
    y = ak.ones(2, 3, dtype=ak.int64)
    y[y > 0] = ak.tensor(2.5)
    assert y.dtype == ak.int64 and (y == 2).all()
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Long for the destination and "
                                           "Float for the source."):
        y[[0, 1]] = ak.tensor([1.0, 2.0, 3.0]).reshape(1, 3)
    assert (y == 2).all()  # nothing was written


def test_the_value_gradient_sums_over_what_a_one_element_value_filled():
    y = ak.zeros(2, 3, requires_grad=True).clone()
    v = ak.ones(1, 1, requires_grad=True)
    y[y == 0] = v
    y.sum().backward()
    assert v.grad.shape == (1, 1) and v.grad.item() == y.numel()


def test_a_mask_of_the_wrong_shape_is_named_in_pytorchs_words():
    x = _x()
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not "
                                         r"match the shape of the indexed tensor \[2, 3, 4\] "
                                         r"at index 0"):
        x[ak.tensor([True, False, True])]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors"):
        x[ak.tensor([0.0])]


def test_numbers_fill_and_same_shapes_copy():
    whole = ak.ones(3, requires_grad=True).clone()
    whole[...] = 2.0
    assert whole.grad_fn.name() == "FillBackward3"
    scalar = ak.ones((), requires_grad=True).clone()
    scalar[...] = 2.0
    assert scalar.grad_fn.name() == "torch::autograd::CopyBackwards"
    assert np.isclose(scalar.item(), 2.0)


FILLS = ["lib.zeros(4, 3).sum_to_size(3)", "lib.zeros(4, 3).sum_to_size(1, 3)",
         "lib.zeros(4, 3).sum_to_size((1, 3))", "lib.zeros(4, 3).sum_to_size(2)",
         "lib.zeros(4, 3).sum_to_size(4, 3, 1)",
         "lib.zeros(3, dtype=lib.float16).masked_fill(lib.tensor(True), lib.tensor(1e6))",
         "lib.zeros(3, dtype=lib.int64).masked_fill(lib.tensor(True), lib.tensor(7))",
         "lib.zeros(3, dtype=lib.float16).fill_(lib.tensor(1e6))",
         "lib.atan2(lib.tensor([3, 200], dtype=lib.uint8), lib.tensor(-63))",
         "lib.ones(2, 3).index_fill(1, lib.tensor([0, 2, 0]), 5.0)",
         "lib.ones(2, 3).index_fill(-1, lib.tensor(1), lib.tensor(7.0))",
         "lib.ones(2, 3, dtype=lib.int64).index_fill(1, lib.tensor([1]), 2.7)",
         "lib.ones(2, 3).index_fill(1, lib.tensor([0.0]), 5.0)",
         "lib.ones(2, 3).index_fill(1, lib.tensor([[0, 2]]), 5.0)",
         "lib.ones(2, 3).index_fill(1, lib.tensor([5]), 5.0)",
         "lib.ones(2, 3).index_fill(3, lib.tensor([0]), 5.0)",
         "lib.ones(2, 3).index_fill(1, lib.tensor([0]), lib.tensor([1.0, 2.0]))",
         "lib.zeros(2, 3).index_fill_(0, lib.tensor([1]), -2.0)"]


def _fill_outcome(lib, code):
    def run():
        out = eval(code, {"lib": lib})  # noqa: S307 - the case's own text
        return list(out.shape), str(out.dtype), out.tolist()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = _outcome(run)
    return result, [str(w.message) for w in seen]


@pytest.mark.parametrize("code", FILLS)
def test_sizes_fills_and_integer_atan2_as_in_pytorch(code):
    """sum_to_size takes sizes as arguments too; a fill value that overflows is
    refused by masked_fill and written as inf by fill_, with no numpy warning;
    atan2 of integers converts each to a float on its own (a negative int64 beside
    a uint8 stays negative)."""
    torch = pytest.importorskip("torch")
    assert _fill_outcome(ak, code) == _fill_outcome(torch, code)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_equal_zeros_keep_pytorchs_zero(op):
    """Of 0.0 and -0.0, which compare equal, maximum and minimum keep the one
    PyTorch keeps: a sqrt or log after them has an infinite slope of that sign."""
    torch = pytest.importorskip("torch")

    def run(lib):
        a = lib.tensor([0.0, -0.0, 1.0], requires_grad=True)
        b = lib.tensor([-0.0, 0.0, 2.0], requires_grad=True)
        out = getattr(lib, op)(a, b)
        out.sqrt().sum().backward()
        return np.signbit(out.detach().numpy()).tolist(), a.grad.tolist(), b.grad.tolist()
    assert run(ak) == run(torch)


@pytest.mark.parametrize("upstream", [float("nan"), float("inf"), 1.0])
def test_a_norm_at_the_zero_vector_passes_on_a_non_finite_gradient(upstream):
    """PyTorch's 2-norm backward at a zero norm is g * 0: NaN when g is NaN or
    inf (a NaN upstream must not turn into a clean 0), 0 otherwise."""
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
        x.norm(dim=1).backward(lib.tensor([upstream, upstream]))
        return str(x.grad.tolist())
    assert run(ak) == run(torch)
