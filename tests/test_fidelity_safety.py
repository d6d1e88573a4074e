"""Misuse PyTorch refuses (and use it allows), refused and allowed the same way.

Each snippet runs with the kit and, when installed, with PyTorch: the outcome
(values, or the built-in exception class and the message) must agree.  The
tests at the end check the same facts without PyTorch.
"""
import numpy as np
import pytest

import autograd_kit as ak
from fidelity import outcome, same_as_pytorch


def _x(lib, n=3):
    return lib.arange(1.0, n + 1, dtype=lib.float64).requires_grad_()


# -- in-place changes of views -------------------------------------------------------
def _view_then_requires_grad(lib, change):
    t = lib.ones(3)
    v = t[:2]
    t.requires_grad_()
    change(lib, v)
    return v


VIEW_CHANGES = {
    "mul_": lambda lib, v: v.mul_(2),
    "add_ tensor": lambda lib, v: v.add_(lib.ones(2)),
    "setitem": lambda lib, v: v.__setitem__(0, 5.0),
    "zero_": lambda lib, v: v.zero_(),
    "augmented": lambda lib, v: v.__imul__(3),
}


@pytest.mark.parametrize("change", list(VIEW_CHANGES))
def test_view_taken_before_requires_grad(change):
    same_as_pytorch(lambda lib: _view_then_requires_grad(lib, VIEW_CHANGES[change]))


def _view_then_requires_grad_no_grad(lib):
    t = lib.ones(3)
    v = t[:2]
    t.requires_grad_()
    with lib.no_grad():
        v.mul_(2)
    return t


PIECES = {
    "unbind": lambda x: x.unbind(),
    "unbind(1)": lambda x: x.unbind(1),
    "split(1)": lambda x: x.split(1),
    "split([1, 2])": lambda x: x.split([1, 2]),
    "chunk(2)": lambda x: x.chunk(2),
    "chunk(2, 1)": lambda x: x.chunk(2, 1),
}


def _pieces_of(lib, how, leaf):
    x = lib.arange(9.0).reshape(3, 3).requires_grad_()
    return x, PIECES[how](x if leaf else x * 1)


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("how", list(PIECES))
def test_a_piece_of_several_views_is_not_changed_in_place(how, leaf):
    def case(lib):
        _, pieces = _pieces_of(lib, how, leaf)
        pieces[-1].mul_(2)
    same_as_pytorch(case)


@pytest.mark.parametrize("how", list(PIECES))
def test_pieces_share_one_node_and_their_gradients(how):
    def case(lib):
        x, pieces = _pieces_of(lib, how, leaf=False)
        (pieces[0] * 2).sum().backward()
        node = pieces[0].grad_fn
        return (node.name(), all(p.grad_fn is node for p in pieces),
                [p.output_nr for p in pieces], x.grad)
    same_as_pytorch(case)


def test_a_hook_on_a_piece_without_gradient_is_called_with_none():
    def case(lib):
        x = lib.arange(4.0).reshape(2, 2).requires_grad_()
        a, b = x.unbind()
        calls = []
        b.register_hook(lambda g: calls.append(g))
        a.sum().backward()
        return calls, x.grad
    same_as_pytorch(case)


def test_pieces_under_no_grad_may_be_changed():
    def case(lib):
        x = lib.arange(4.0).reshape(2, 2).requires_grad_()
        with lib.no_grad():
            a, b = x.unbind()
            a.mul_(10)
        return x
    same_as_pytorch(case)


def test_double_backward_through_pieces():
    def case(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        a, b = x.unbind()
        (g,) = lib.autograd.grad((a * a * b).sum(), x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    same_as_pytorch(case)


# -- a second backward ---------------------------------------------------------------
INDEXING = {
    "list": lambda x: x[[0, 2]],
    "mask": lambda x: x[x > 1],
    "tensor": lambda x: x[ak_or_torch_index(x)],
    "slice then list": lambda x: x.reshape(3, 1)[:, [0, 0]],
    "select": lambda x: x[0],
    "slice": lambda x: x[1:],
}


def ak_or_torch_index(x):
    return (type(x).__module__.startswith("torch") and __import__("torch") or ak).tensor([0, 1])


@pytest.mark.parametrize("how", list(INDEXING))
def test_a_second_backward_through_indexing(how):
    def case(lib):
        x = _x(lib)
        y = INDEXING[how](x).sum()
        y.backward()
        y.backward()
    same_as_pytorch(case)


SETITEMS = {
    "list": lambda y, v: y.__setitem__([0, 2], v * 2),
    "mask": lambda y, v: y.__setitem__(y > 1, v.sum() * 1),
    "slice": lambda y, v: y.__setitem__(slice(0, 2), v * 2),
}


@pytest.mark.parametrize("retain", [False, True])
@pytest.mark.parametrize("how", list(SETITEMS))
def test_a_second_backward_through_setitem(how, retain):
    def case(lib):
        x, v = _x(lib), _x(lib, 2)
        y = x * 1
        SETITEMS[how](y, v)
        s = y.sum()
        s.backward(retain_graph=retain)
        s.backward()
        return x.grad, v.grad
    same_as_pytorch(case)


@pytest.mark.parametrize("how", list(INDEXING))
def test_a_second_backward_through_indexing_with_retain_graph(how):
    def case(lib):
        x = _x(lib)
        y = INDEXING[how](x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    same_as_pytorch(case)


# PyTorch keeps the number of ``x * 2`` as a saved 0-d tensor, so a second backward
# through it fails like any other; through ``x + 2`` (nothing saved) it does not
WITH_A_NUMBER = {
    "x * 2": (lambda x: x * 2, True), "2 * x": (lambda x: 2 * x, True),
    "x / 2": (lambda x: x / 2, True), "x.mul(2.5)": (lambda x: x.mul(2.5), True),
    "x.sum() * 3": (lambda x: x.sum() * 3, True), "x + 2": (lambda x: x + 2, False),
    "x - 2": (lambda x: x - 2, False), "2 - x": (lambda x: 2 - x, False),
}


@pytest.mark.parametrize("how", list(WITH_A_NUMBER))
def test_a_second_backward_through_an_op_with_a_number(how):
    op, saves = WITH_A_NUMBER[how]

    def case(lib):
        x = _x(lib)
        y = op(x).sum()
        y.backward()
        y.backward()
        return x.grad
    result = outcome(case, ak)
    assert (result[0] == "error") == saves
    if saves:
        assert "backward through the graph a second time" in result[2]
    try:
        same_as_pytorch(case)
    except pytest.skip.Exception:
        pass  # without PyTorch, the facts above are the check


def test_retain_graph_keeps_the_number_of_a_product():
    x = _x(ak)
    y = (x * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0] * len(x.grad.tolist())


def _no_grad_view_changed(lib, base_kind, other_rg):
    x = lib.ones(3, requires_grad=base_kind in ("leaf", "non-leaf"))
    base = x * 1 if base_kind == "non-leaf" else x
    with lib.no_grad():
        v = base[:2]
    v.mul_(lib.ones(2, requires_grad=other_rg) if other_rg else 2)
    return base


@pytest.mark.parametrize("base_kind, other_rg", [("leaf", False), ("non-leaf", False),
                                                 ("plain", True), ("plain", False)])
def test_a_view_made_under_no_grad_is_not_changed_with_grad_on(base_kind, other_rg):
    result = outcome(lambda lib: _no_grad_view_changed(lib, base_kind, other_rg), ak)
    refused = base_kind != "plain" or other_rg
    assert (result[0] == "error") == refused
    if refused:
        assert result[2].startswith("A view was created in no_grad mode")
    try:
        same_as_pytorch(lambda lib: _no_grad_view_changed(lib, base_kind, other_rg))
    except pytest.skip.Exception:
        pass  # without PyTorch, the facts above are the check


def test_a_view_made_and_changed_under_no_grad_is_allowed():
    x = ak.ones(3, requires_grad=True)
    with ak.no_grad():
        x[:2].mul_(2)
    assert x.tolist() == [2.0, 2.0, 1.0] and x.is_leaf


# -- numpy(), .grad, detach --------------------------------------------------------
def numpy_under_no_grad(lib):
    x = _x(lib)
    with lib.no_grad():
        return x.numpy().tolist()


def numpy_with_grad_mode_on(lib):
    return _x(lib).numpy()


def delete_grad(lib):
    x = _x(lib)
    (x * 2).sum().backward()
    del x.grad
    return x.grad


def detach_function(lib):
    x = _x(lib)
    d = lib.detach(x * 2)
    return d, d.requires_grad, d.is_leaf


def _set_grad(value):
    def case(lib):
        x = lib.ones(3, requires_grad=True)
        x.grad = value(lib, x)
        return x.grad
    return case


GRAD_VALUES = {
    "int": lambda lib, x: lib.ones(3, dtype=lib.int64),
    "double": lambda lib, x: lib.ones(3, dtype=lib.float64),
    "half": lambda lib, x: lib.ones(3, dtype=lib.float16),
    "bool": lambda lib, x: lib.ones(3, dtype=lib.bool),
    "itself": lambda lib, x: x,
    "a detached copy": lambda lib, x: x.detach() * 1,
    "ndarray": lambda lib, x: np.ones(3, dtype=np.float32),
    "list": lambda lib, x: [1.0, 1.0, 1.0],
    "number": lambda lib, x: 1.0,
    "wrong size": lambda lib, x: lib.ones(4),
    "wrong size and dtype": lambda lib, x: lib.ones(4, dtype=lib.int64),
    "None": lambda lib, x: None,
}


@pytest.mark.parametrize("value", list(GRAD_VALUES))
def test_assigning_grad(value):
    same_as_pytorch(_set_grad(GRAD_VALUES[value]))


def int_grad_on_int_tensor(lib):
    x = lib.tensor([1, 2])
    x.grad = lib.tensor([3, 4])
    return x.grad


def int_grad_is_not_broken_later(lib):
    x = lib.ones(3, requires_grad=True)
    try:
        x.grad = lib.ones(3, dtype=lib.int64)
    except RuntimeError:
        pass
    (x * 2).sum().backward()
    return x.grad


@pytest.mark.parametrize("snippet", [numpy_under_no_grad, numpy_with_grad_mode_on, delete_grad,
                                     detach_function, int_grad_on_int_tensor,
                                     int_grad_is_not_broken_later],
                         ids=lambda s: s.__name__)
def test_tensor_state(snippet):
    same_as_pytorch(snippet)


# -- gradients given to backward and grad ---------------------------------------------
GRADIENTS = {
    "str": lambda lib: "abc",
    "ndarray": lambda lib: np.ones(3),
    "number": lambda lib: 2.0,
    "list of numbers": lambda lib: [1.0, 1.0, 1.0],
    "list with a tensor": lambda lib: [lib.ones(3, dtype=lib.float64)],
    "two tensors for one output": lambda lib: [lib.ones(3, dtype=lib.float64)] * 2,
    "None": lambda lib: None,
}


@pytest.mark.parametrize("gradient", list(GRADIENTS))
def test_gradient_argument_of_backward(gradient):
    def case(lib):
        x = _x(lib)
        (x * 2).backward(gradient=GRADIENTS[gradient](lib))
        return x.grad
    same_as_pytorch(case)


@pytest.mark.parametrize("gradient", list(GRADIENTS))
def test_grad_outputs_of_grad(gradient):
    def case(lib):
        x = _x(lib)
        return lib.autograd.grad(x * 2, x, GRADIENTS[gradient](lib))
    same_as_pytorch(case)


INPUTS = {
    "a number in a list": lambda lib, x: [3.0],
    "a number": lambda lib, x: 3.0,
    "a tensor and a number": lambda lib, x: (x, 3.0),
    "a tensor without grad": lambda lib, x: [lib.ones(3)],
}


@pytest.mark.parametrize("inputs", list(INPUTS))
def test_inputs_of_grad(inputs):
    def case(lib):
        x = _x(lib)
        return lib.autograd.grad((x * 2).sum(), INPUTS[inputs](lib, x))
    same_as_pytorch(case)


def test_outputs_of_grad_must_be_tensors():
    same_as_pytorch(lambda lib: lib.autograd.grad([3.0], _x(lib)))


# -- gradcheck -----------------------------------------------------------------------
def _noisy(lib):
    """A Function whose backward adds a little noise: not reentrant."""
    def forward(ctx, x):
        return x * 2

    def backward(ctx, g):
        return g * (2 + lib.rand(g.shape, dtype=g.dtype) * 1e-7)
    return type("Noisy", (lib.autograd.Function,), {"forward": staticmethod(forward),
                                                    "backward": staticmethod(backward)})


def not_reentrant(lib):
    from_lib = lib.autograd.gradcheck
    return from_lib(_noisy(lib).apply, (_x(lib),))


def not_multiplied_by_grad_output(lib):
    def backward(ctx, g):
        return g * 2 + 1e-3  # a constant that a zero gradient does not remove
    Shifted = type("Shifted", (lib.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: x * 2 + 1e-3 * x.sum()),
        "backward": staticmethod(backward)})
    return lib.autograd.gradcheck(Shifted.apply, (_x(lib),), atol=1e-2)


def not_reentrant_within_tolerance(lib):
    return lib.autograd.gradcheck(_noisy(lib).apply, (_x(lib),), nondet_tol=1e-5)


def gradgradcheck_with_grad_outputs(lib):
    x = _x(lib)
    go = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    return lib.autograd.gradgradcheck(lambda t: t ** 3 * t.sin(), (x,), (go,))


def gradgradcheck_of_a_wrong_second_derivative(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach() ** 2  # right once, but its own derivative is lost
    Cube = type("Cube", (lib.autograd.Function,), {"forward": staticmethod(forward),
                                                   "backward": staticmethod(backward)})
    return lib.autograd.gradgradcheck(Cube.apply, (_x(lib),), raise_exception=False)


def test_gradcheck_finds_a_backward_that_is_not_reentrant():
    ours = outcome(not_reentrant, ak)
    assert ours[:2] == ("error", "RuntimeError")
    assert ours[2].startswith("Backward is not reentrant, i.e., running backward with same "
                              "input and grad_output multiple times gives different values")
    assert outcome(not_reentrant_within_tolerance, ak) == ("ok", True)
    assert outcome(not_multiplied_by_grad_output, ak) == (
        "error", "RuntimeError", "backward not multiplied by grad_output")


def test_gradcheck_messages_as_pytorch():
    from fidelity import oracle
    torch = oracle()
    theirs, ours = outcome(not_reentrant, torch), outcome(not_reentrant, ak)
    assert ours[:2] == theirs[:2]
    assert theirs[2].startswith(ours[2])  # (PyTorch adds a note for its own developers)
    assert outcome(not_reentrant_within_tolerance, torch) == ("ok", True)
    assert outcome(not_multiplied_by_grad_output, ak) == \
        outcome(not_multiplied_by_grad_output, torch)


def test_gradgradcheck():
    assert outcome(gradgradcheck_with_grad_outputs, ak) == ("ok", True)
    assert outcome(gradgradcheck_of_a_wrong_second_derivative, ak) == ("ok", False)


@pytest.mark.parametrize("snippet", [gradgradcheck_with_grad_outputs,
                                     gradgradcheck_of_a_wrong_second_derivative],
                         ids=lambda s: s.__name__)
def test_gradgradcheck_as_pytorch(snippet, capsys):
    same_as_pytorch(snippet)


# -- grad-mode decorators on generators ---------------------------------------------
DECORATORS = {
    "no_grad": lambda lib: lib.no_grad(),
    "enable_grad": lambda lib: lib.enable_grad(),
    "set_grad_enabled(False)": lambda lib: lib.set_grad_enabled(False),
    "inference_mode": lambda lib: lib.inference_mode(),
}


@pytest.mark.parametrize("outside", [True, False])
@pytest.mark.parametrize("decorator", list(DECORATORS))
def test_grad_mode_decorators_apply_inside_generators(decorator, outside):
    def case(lib):
        with lib.set_grad_enabled(outside):
            @DECORATORS[decorator](lib)
            def gen():
                for _ in range(2):
                    got = yield lib.is_grad_enabled()
                    seen.append(got)
            seen = []
            g = gen()
            first = next(g)
            between = lib.is_grad_enabled()
            second = g.send("sent")
            g.close()
            return first, between, second, seen, lib.is_grad_enabled()
    same_as_pytorch(case)


# -- the same facts without PyTorch ------------------------------------------------
def test_without_pytorch():
    leaf_view = "a view of a leaf Variable that requires grad is being used in an in-place " \
                "operation."
    for change in VIEW_CHANGES.values():
        assert outcome(lambda lib: _view_then_requires_grad(lib, change), ak) == (
            "error", "RuntimeError", leaf_view)
    assert outcome(_view_then_requires_grad_no_grad, ak)[1][0] == [2.0, 2.0, 1.0]
    _, kind, text = outcome(lambda lib: _pieces_of(lib, "unbind", True)[1][2].add_(1), ak)
    assert text.startswith("Output 2 of Unbind is a view and is being modified inplace.")
    x, (a, b, c) = _pieces_of(ak, "unbind", False)
    assert a.grad_fn is c.grad_fn and [a.output_nr, c.output_nr] == [0, 2]
    for how in ("list", "mask", "tensor", "slice then list"):
        y = INDEXING[how](_x(ak)).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
    y = INDEXING["select"](_x(ak)).sum()  # (nothing saved: a second pass is fine)
    y.backward()
    y.backward()
    assert outcome(numpy_under_no_grad, ak) == ("ok", [1.0, 2.0, 3.0])
    assert outcome(numpy_with_grad_mode_on, ak)[1] == "RuntimeError"
    assert outcome(delete_grad, ak) == ("ok", None)
    assert outcome(_set_grad(GRAD_VALUES["itself"]), ak)[2] == \
        "can't assign Variable as its own grad"
    assert outcome(_set_grad(GRAD_VALUES["ndarray"]), ak)[1:] == (
        "TypeError", "assigned grad expected to be a Tensor or None but got grad of type "
        "numpy.ndarray")
    assert outcome(_set_grad(GRAD_VALUES["int"]), ak)[2].startswith(
        "attempting to assign a gradient with dtype 'long int' to a tensor with grad_dtype "
        "'Float'.")
    assert outcome(int_grad_is_not_broken_later, ak)[1][0] == [2.0] * 3


def test_gradient_arguments_without_pytorch():
    def backward_with(g):
        return outcome(lambda lib: (_x(lib) * 2).backward(g), ak)
    assert backward_with("abc")[1:] == ("TypeError",
                                        "gradients can be either Tensors or None, but got str")
    assert backward_with(np.ones(3))[2].endswith("but got float64")
    assert backward_with(2.0)[1:] == ("TypeError", "'float' object is not iterable")
    assert outcome(lambda lib: lib.autograd.grad((_x(lib) * 2).sum(), [3.0]), ak)[1:] == (
        "RuntimeError", "all inputs have to be Tensors or GradientEdges, but got float")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pieces_under_anomaly_detection():
    def case(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        with lib.autograd.detect_anomaly():
            a, b = x.unbind()
            (a * b).sum().backward()
            a, b = x.unbind()
            (a * b * float("nan")).sum().backward()
    same_as_pytorch(case)
