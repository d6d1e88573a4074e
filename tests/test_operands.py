"""What arithmetic accepts besides a tensor: numbers (Python's and numpy's) and
arrays.  Anything else is refused as PyTorch refuses it -- Python's own
"unsupported operand" error -- instead of being read as a (complex) number."""
import operator

import numpy as np
import pytest

import autograd_kit as torch

OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "**": operator.pow, "@": operator.matmul}
NOT_OPERANDS = {"str": "a", "None": None, "list": [1.0, 2.0], "dict": {}, "object": object()}


TENSOR = object()  # where the tensor stands in ``python_says``


def python_says(symbol, left, right):
    """The TypeError Python raises for ``left symbol right`` when neither side knows
    how: the oracle for the kit's message (built by Python, not typed here)."""
    fake = type("Tensor", (), {f"__{n}__": lambda s, o: NotImplemented for n in
                              ("add", "sub", "mul", "truediv", "pow", "matmul",
                               "radd", "rsub", "rmul", "rtruediv", "rpow", "rmatmul")})()
    with pytest.raises(TypeError) as err:
        OPERATORS[symbol](*((fake, right) if left is TENSOR else (left, fake)))
    return str(err.value)


@pytest.mark.parametrize("symbol", OPERATORS)
@pytest.mark.parametrize("kind", NOT_OPERANDS)
def test_a_tensor_and_a_non_number_are_refused_with_pythons_message(symbol, kind, device):
    x = torch.ones(2, device=device, requires_grad=True)
    other = NOT_OPERANDS[kind]
    expected = [python_says(symbol, TENSOR, other), python_says(symbol, other, TENSOR)]
    if symbol == "*" and isinstance(other, (str, list)):
        # ``"a" * t`` repeats the sequence t times: Python asks t for an index,
        # and the tensor's answer is the error (PyTorch's too)
        with pytest.raises(TypeError) as err:
            operator.index(x)
        expected = [str(err.value)] * 2
    with pytest.raises(TypeError) as err:
        OPERATORS[symbol](x, other)
    assert str(err.value) == expected[0]
    with pytest.raises(TypeError) as err:
        OPERATORS[symbol](other, x)
    assert str(err.value) == expected[1]


@pytest.mark.parametrize("kind", NOT_OPERANDS)
def test_an_in_place_operator_with_a_non_number_changes_nothing(kind, device):
    w = torch.ones(2, device=device)
    before = (w.tolist(), w._version)
    with pytest.raises(TypeError) as err:
        w += NOT_OPERANDS[kind]
    assert "unsupported operand type(s) for +=" in str(err.value)
    assert (w.tolist(), w._version) == before


@pytest.mark.parametrize("kind", ["str", "list"])
def test_the_method_form_refuses_too(kind):
    x = torch.ones(2)
    with pytest.raises(TypeError, match=type(NOT_OPERANDS[kind]).__name__):
        x.add(NOT_OPERANDS[kind])
    with pytest.raises(TypeError, match=type(NOT_OPERANDS[kind]).__name__):
        torch.mul(x, NOT_OPERANDS[kind])


NUMPY_SCALARS = [np.float32(2.5), np.float64(2.5), np.int64(3), np.int32(3), np.bool_(True),
                 np.complex64(1j)]


SCALAR_CASES = [pytest.param(symbol, scalar, dtype, id=f"{dtype}-{type(scalar).__name__}-{symbol}")
                for symbol in ["+", "-", "*", "/", "**"] for scalar in NUMPY_SCALARS
                for dtype in ["float32", "float64", "int64"]
                # (integer and complex powers are outside this check)
                if not (symbol == "**" and (dtype == "int64" or
                                            isinstance(scalar, np.complexfloating)))]


@pytest.mark.parametrize("symbol, scalar, dtype", SCALAR_CASES)
def test_a_numpy_scalar_is_the_python_number_it_holds(symbol, scalar, dtype, device):
    """``x * np.float32(2)`` is ``x * 2.0``: same dtype, same values, same gradient."""
    op = OPERATORS[symbol]
    grads = dtype != "int64"

    def run(other, flip):
        x = torch.tensor([1.0, 2.0, 4.0], dtype=getattr(torch, dtype), device=device)
        x.requires_grad_(grads)
        y = op(other, x) if flip else op(x, other)
        if grads and not y.is_complex():
            y.sum().backward()
        return y.dtype, y.cpu().tolist(), None if x.grad is None else x.grad.cpu().tolist()

    for flip in (False, True):
        if flip and symbol == "**" and isinstance(scalar, np.bool_):
            continue
        if symbol == "-" and isinstance(scalar, np.bool_):  # refused, as for True itself
            for other in (scalar, scalar.item()):
                with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
                    run(other, flip)
            continue
        assert run(scalar, flip) == run(scalar.item(), flip)


@pytest.mark.parametrize("symbol", ["+", "*", "-"])
def test_an_ndarray_operand_is_a_tensor(symbol):
    a = np.array([1.0, 2.0, 3.0])
    x = torch.tensor([1.0, -1.0, 0.5], requires_grad=True)
    y = OPERATORS[symbol](x, a)
    z = OPERATORS[symbol](x.detach(), torch.from_numpy(a))
    assert (y.dtype, y.tolist()) == (z.dtype, z.tolist())
    y.sum().backward()
    assert x.grad.tolist() == [1.0 if symbol != "*" else v for v in a.tolist()]


PYTORCH_CASES = {
    "tensor + str": lambda m: m.ones(2) + "a",
    "str + tensor": lambda m: "a" + m.ones(2),
    "tensor * None": lambda m: m.ones(2) * None,
    "tensor + list": lambda m: m.ones(2) + [1, 2],
    "tensor @ list": lambda m: m.ones(2) @ [1.0, 2.0],
    "tensor ** None": lambda m: m.ones(2) ** None,
    "tensor / dict": lambda m: m.ones(2) / {},
    "tensor * np.float32": lambda m: m.ones(2) * np.float32(2),
    "tensor + np.int64": lambda m: m.ones(2) + np.int64(3),
    "tensor * np.bool_": lambda m: m.ones(2) * np.bool_(True),
    "tensor + ndarray": lambda m: m.ones(2) + np.ones(2),
    "int tensor * np.float32": lambda m: m.ones(2, dtype=m.int64) * np.float32(1.5),
}


@pytest.mark.filterwarnings("ignore:__array_wrap__")  # (numpy 2 warns about PyTorch)
@pytest.mark.parametrize("case", PYTORCH_CASES)
def test_operands_as_pytorch_takes_them(case):
    real = pytest.importorskip("torch")

    def outcome(m):
        try:
            y = PYTORCH_CASES[case](m)
        except TypeError as err:
            return "TypeError", str(err)
        return str(y.dtype).replace("torch.", ""), y.tolist()

    assert outcome(torch) == outcome(real)


# ------------------------------------------- numpy scalars in tensor(...) --
def _torch_rule(values):
    """The dtype PyTorch gives a list, by its rule: each element counts with its own
    type (Python float: the default float, int: int64), a higher category wins over
    a wider type, and within a category the wider type wins."""
    order = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    own = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float32)}
    result = None
    for v in values:
        d = v.dtype if isinstance(v, np.generic) else own[type(v)]
        if result is None or order[d.kind] > order[result.kind]:
            result = d
        elif order[d.kind] == order[result.kind]:
            result = np.promote_types(result, d)
    return result.name


NUMPY_LISTS = {
    "float64s": [np.float64(1.5), np.float64(2)],
    "float32s": [np.float32(1.5), np.float32(2)],
    "int64s": [np.int64(2), np.int64(3)],
    "int32s": [np.int32(2)],
    "bools": [np.bool_(True), np.bool_(False)],
    "int64 then float": [np.int64(1), 2.5],
    "float32 then int": [np.float32(1), 2],
    "int32 then float64": [np.int32(1), np.float64(2)],
}


@pytest.mark.parametrize("case", NUMPY_LISTS)
def test_a_list_of_numpy_scalars_keeps_their_types(case, device):
    values = NUMPY_LISTS[case]
    t = torch.tensor(values, device=device)
    assert str(t.dtype) == "torch." + _torch_rule(values)
    assert t.cpu().tolist() == pytest.approx([float(v) for v in values])
    nested = torch.tensor([values, values])
    assert nested.dtype == t.dtype and nested.shape == (2, len(values))


@pytest.mark.parametrize("case", NUMPY_LISTS)
def test_a_list_of_numpy_scalars_as_pytorch(case):
    real = pytest.importorskip("torch")
    ours, theirs = torch.tensor(NUMPY_LISTS[case]), real.tensor(NUMPY_LISTS[case])
    assert (str(ours.dtype), ours.tolist()) == (str(theirs.dtype), theirs.tolist())
