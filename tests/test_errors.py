"""Every error, with PyTorch's exact words, and nothing changed by a failure.

The expected messages below were copied from PyTorch (2.13) running the same
code, so a learner who pastes one into a search engine finds the PyTorch
discussions about it.  Each test also checks that the failed operation left the
tensors as they were: data, version counter, ``grad_fn``, ``requires_grad``,
``grad``.
"""
import warnings

import numpy as np
import pytest

import autograd_kit as torch
from autograd_kit import errors

# ----------------------------------------------------------- the messages --
NON_SCALAR = "grad can be implicitly created only for scalar outputs"
FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_INPLACE = ("a view of a leaf Variable that requires grad is being used in an in-place "
                "operation.")
HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
NO_GRAD_FN = "element {i} of tensors does not require grad and does not have a grad_fn"
GRAD_SHAPE = ("Mismatch in shape: grad_output[0] has a shape of {got} and output[0] has a "
              "shape of {want}.")
NON_LEAF_RG_FALSE = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach().")
NON_LEAF_RG_TRUE = "you can only change requires_grad flags of leaf variables."
INT_RG_FACTORY = "Only Tensors of floating point and complex dtype can require gradients"
INT_RG_SETTER = "only Tensors of floating point and complex dtype can require gradients"
INT_RG_METHOD = "only Tensors of floating point dtype can require gradients"
NUMPY_RG = ("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
            "instead.")
NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")
CAST = "result type {src} can't be cast to the desired output type {dst}"
INPLACE_SHAPE = "output with shape {out} doesn't match the broadcast shape {b}"
BROADCAST = ("The size of tensor a ({a}) must match the size of tensor b ({b}) at "
             "non-singleton dimension {d}")
RETAIN_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
UNUSED = ("The differentiated Tensor at index 1 appears to not have been used in the graph. "
          "Set allow_unused=True if this is the desired behavior.")
INPUT_NO_GRAD = "One of the differentiated Tensors does not require grad"
ITEM = "a Tensor with 3 elements cannot be converted to Scalar"
GRAD_ASSIGN = ("attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. "
               "Please ensure that the gradient and the tensor are the same size")
DEVICES = ("Expected all tensors to be on the same device, but found at least two devices, "
           "{a} and {b}!")


def modified(desc, found, expected, producer=None):
    """PyTorch's "modified by an inplace operation" message."""
    which = f", which is output 0 of {producer}," if producer else ""
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {desc}{which} is at version {found}; expected version "
            f"{expected} instead. " + HINT)


def float_desc(device, shape):
    prefix = "torch.cuda." if device == "cuda" else "torch."
    return f"[{prefix}FloatTensor [{', '.join(str(s) for s in shape)}]]"


# ------------------------------------------------------- state snapshots --
def state(t):
    """Everything a failed operation must leave alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # .grad of a non-leaf warns
        g = t.grad
    return (np.array(t.tolist()).tolist(), t._version, t.grad_fn, t.requires_grad,
            None if g is None else g.tolist(), t.dtype, tuple(t.shape))


def raises(fn, message, exc=RuntimeError):
    """Call ``fn`` and check it raises ``exc`` with exactly ``message``."""
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message
    return info.value


# ----------------------------------------------------- backward failures --
def test_non_scalar_backward_without_gradient(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = x * 2
    before_x, before_y = state(x), state(y)
    err = raises(y.backward, NON_SCALAR)
    assert isinstance(err, errors.NonScalarBackwardError)
    assert state(x) == before_x and state(y) == before_y
    assert x.grad is None
    # nothing was freed: the same graph still runs with an explicit gradient
    y.backward(torch.ones(3, device=device))
    assert x.grad.tolist() == [2., 2., 2.]


def test_non_scalar_autograd_grad_without_gradient(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    raises(lambda: torch.autograd.grad(x * 2, x), NON_SCALAR)
    assert x.grad is None


def test_second_backward_through_freed_graph(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2., 4.]
    before_x, before_y = state(x), state(y)
    err = raises(y.backward, FREED)
    assert isinstance(err, errors.GraphFreedError)
    assert state(x) == before_x and state(y) == before_y


def test_autograd_grad_twice_through_freed_graph(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = (x * x).sum()
    (g,) = torch.autograd.grad(y, x)
    assert g.tolist() == [2., 4.]
    raises(lambda: torch.autograd.grad(y, x), FREED)
    assert x.grad is None


def test_saved_tensors_unreadable_after_free(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * x
    e = x.exp()
    assert y.grad_fn._saved_self is x            # readable before backward
    assert e.grad_fn._saved_result.tolist() == pytest.approx(np.exp([1., 2.]).tolist())
    (y.sum() + e.sum()).backward()
    raises(lambda: y.grad_fn._saved_self, FREED)
    raises(lambda: y.grad_fn._saved_other, FREED)
    raises(lambda: e.grad_fn._saved_result, FREED)


NUMBER_SAVES = {"x * 2": lambda x: x * 2, "x / 4": lambda x: x / 4, "x * 2.5": lambda x: x * 2.5}


@pytest.mark.parametrize("case", NUMBER_SAVES)
@pytest.mark.parametrize("how", ["backward", "stepper"])
def test_a_saved_number_reads_as_a_tensor_and_is_freed_like_one(case, how, device):
    """``x * 2`` saves the 2 as a 0-d CPU tensor (PyTorch's wrapped number, 64-bit):
    readable before backward and after ``retain_graph=True``, freed by a plain
    backward -- by ``backward()`` and by the step-by-step walk alike."""
    from autograd_kit.engine import backward_steps
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = NUMBER_SAVES[case](x)
    number = float(case.split()[-1])
    kept = y.grad_fn._saved_other
    assert (kept.shape, kept.device.type, kept.item()) == ((), "cpu", number)
    assert kept.dtype == (torch.int64 if number.is_integer() else torch.float64)
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_other.item() == number
    if how == "backward":
        y.sum().backward()
    else:
        for _ in backward_steps(y.sum()):
            pass
    raises(lambda: y.grad_fn._saved_other, FREED)
    raises(lambda: y.sum().backward(), FREED)


@pytest.mark.parametrize("base", [2, 2.5, 0])
def test_a_number_base_is_kept_as_the_number(base, device):
    """``2 ** x``: PyTorch keeps the base as a number (``_saved_self`` reads 2, never
    freed); the gradient is 2**x * log 2, and 0 where the base is 0 and x >= 0."""
    x = torch.tensor([1.0, 2.0, 0.0], requires_grad=True, device=device)
    y = base ** x
    assert y.grad_fn._saved_self == base and type(y.grad_fn._saved_self) is type(base)
    y.sum().backward()
    expected = [0.0, 0.0, 0.0] if base == 0 else \
        [base ** v * np.log(base) for v in (1.0, 2.0, 0.0)]
    assert x.grad.cpu().tolist() == pytest.approx(expected, rel=1e-6)
    assert y.grad_fn._saved_self == base
    raises(lambda: y.grad_fn._saved_result, FREED)


@pytest.mark.parametrize("base", [2, 2.5])
def test_a_number_base_matches_pytorch(base):
    real = pytest.importorskip("torch")

    def read(m):
        x = m.tensor([1.0, -2.0], requires_grad=True)
        y = base ** x
        kept = y.grad_fn._saved_self
        y.sum().backward()
        return repr(kept), repr(y.grad_fn._saved_self), [round(v, 5) for v in x.grad.tolist()]

    assert read(torch) == read(real)


@pytest.mark.parametrize("case", NUMBER_SAVES)
def test_a_saved_number_matches_pytorch(case):
    real = pytest.importorskip("torch")

    def read(m):
        x = m.tensor([1., 2.], requires_grad=True)
        y = NUMBER_SAVES[case](x)
        before = repr(y.grad_fn._saved_other)
        y.sum().backward()
        try:
            y.grad_fn._saved_other
        except RuntimeError as err:
            return before, str(err)
        return before, "readable"

    assert read(torch) == read(real)


def test_saved_tensors_readable_after_retain_graph(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * x
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_self is x


# ------------------------------------------------------- leaf in-place --
def _iadd(w):
    w += 1


LEAF_OPS = {
    "add_": lambda w: w.add_(1),
    "+=": _iadd,
    "mul_": lambda w: w.mul_(2),
    "zero_": lambda w: w.zero_(),
    "fill_": lambda w: w.fill_(5.),
    "copy_": lambda w: w.copy_(torch.zeros(3, device=w.device)),
    "clamp_": lambda w: w.clamp_(0., 1.5),
    "exp_": lambda w: w.exp_(),
}


@pytest.mark.parametrize("op", list(LEAF_OPS))
def test_inplace_on_leaf_requiring_grad(device, op):
    w = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    (w * 2).sum().backward()          # give it a .grad, which must survive too
    before = state(w)
    err = raises(lambda: LEAF_OPS[op](w), LEAF_INPLACE)
    assert isinstance(err, errors.LeafInplaceError)
    assert state(w) == before
    assert w.is_leaf and w.grad.tolist() == [2., 2., 2.]


def _setitem(w):
    w[0] = 1.


VIEW_OPS = {
    "w[0] = 1.": _setitem,
    "w[0].add_(1)": lambda w: w[0].add_(1),
    "w[1:].mul_(2)": lambda w: w[1:].mul_(2),
    "w.view(3)[2].zero_()": lambda w: w.view(3)[2].zero_(),
}


@pytest.mark.parametrize("op", list(VIEW_OPS))
def test_inplace_on_view_of_leaf_requiring_grad(device, op):
    w = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    before = state(w)
    err = raises(lambda: VIEW_OPS[op](w), VIEW_INPLACE)
    assert isinstance(err, errors.LeafInplaceError)
    assert state(w) == before


def test_leaf_inplace_allowed_under_no_grad(device):
    w = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    with torch.no_grad():
        w.add_(1)
        w[0] = 10.
    assert w.tolist() == [10., 3., 4.]
    assert w.is_leaf and w.requires_grad and w._version == 2


# ------------------------------------------- saved tensor modified in place --
def test_saved_result_modified_in_place(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = x.exp()
    exp_node = y.grad_fn
    y.add_(1)
    before_x, before_y = state(x), state(y)
    err = raises(y.sum().backward,
                 modified(float_desc(device, [3]), 1, 0, "Exp"))
    assert isinstance(err, errors.ModifiedSavedTensorError)
    assert err.node is exp_node and err.node.name() == "ExpBackward0"
    assert (err.found, err.expected) == (1, 0)
    assert state(x) == before_x and state(y) == before_y
    assert x.grad is None


def test_saved_input_of_mul_modified_in_place(device):
    a = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    b = a + 1
    c = b * a
    b.mul_(2)
    err = raises(c.sum().backward, modified(float_desc(device, [3]), 1, 0, "Mul"))
    assert err.node is c.grad_fn and err.node.name() == "MulBackward0"
    assert err.saved_name == "self"
    assert a.grad is None and b._version == 1


def test_saved_plain_tensor_modified_in_place(device):
    a = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    b = torch.ones(3, device=device)
    c = b * a
    b.add_(1)
    err = raises(c.sum().backward, modified(float_desc(device, [3]), 1, 0))
    assert err.node is c.grad_fn and err.saved_name == "self"   # b is mul's first input


def test_saved_tensor_modified_through_detach(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * x
    x.detach().zero_()                 # detach shares the version counter
    err = raises(y.sum().backward, modified(float_desc(device, [2]), 1, 0))
    assert err.node is y.grad_fn
    assert x.grad is None


def test_classic_slice_assignment(device):
    x = torch.tensor(2., requires_grad=True, device=device)
    s = torch.ones(2, device=device)
    s[1] = s[0] * x
    mul_node = s.grad_fn.next_functions[1][0]
    assert mul_node.name() == "MulBackward0"
    before_s = state(s)
    err = raises(s.sum().backward, modified(float_desc(device, []), 1, 0, "AsStrided"))
    assert err.node is mul_node
    assert (err.found, err.expected) == (1, 0)
    assert state(s) == before_s and x.grad is None


def test_classic_slice_assignment_twice(device):
    x = torch.tensor(2., requires_grad=True, device=device)
    s = torch.ones(2, device=device)
    s[1] = s[0] * x
    s[0] = s[1] * x
    second_mul = s.grad_fn.next_functions[1][0]
    err = raises(s.sum().backward, modified(float_desc(device, []), 2, 1, "AsStrided"))
    assert err.node is second_mul
    assert x.grad is None


def test_modified_error_is_a_runtime_error_with_details(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert info.value.kind == "saved_modified"
    assert info.value.node.name() == "SigmoidBackward0"


# ----------------------------------------------- what cannot be backwarded --
def test_backward_of_tensor_without_grad_fn(device):
    t = torch.ones(3, device=device)
    s = t.sum()
    before = state(t)
    err = raises(s.backward, NO_GRAD_FN.format(i=0))
    assert isinstance(err, errors.NoGradFnError)
    assert state(t) == before


def test_backward_second_root_without_grad_fn(device):
    x = torch.ones(3, requires_grad=True, device=device)
    raises(lambda: torch.autograd.backward([(x * 2).sum(), torch.ones(1, device=device).sum()]),
           NO_GRAD_FN.format(i=1))
    assert x.grad is None


def test_autograd_grad_of_output_without_grad_fn(device):
    x = torch.ones(3, requires_grad=True, device=device)
    raises(lambda: torch.autograd.grad(torch.ones(2, device=device).sum(), x),
           NO_GRAD_FN.format(i=0))


@pytest.mark.parametrize("shape", [(2,), (2, 3)])
def test_gradient_of_wrong_shape(device, shape):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = x * 2
    before = state(x)
    err = raises(lambda: y.backward(torch.ones(*shape, device=device)),
                 GRAD_SHAPE.format(got=torch.Size(shape), want=torch.Size([3])))
    assert isinstance(err, errors.GradShapeError)
    assert state(x) == before
    y.backward(torch.ones(3, device=device))      # graph still intact
    assert x.grad.tolist() == [2., 2., 2.]


def test_autograd_grad_outputs_of_wrong_shape(device):
    x = torch.ones(3, requires_grad=True, device=device)
    raises(lambda: torch.autograd.grad(x * 2, x, torch.ones(2, device=device)),
           GRAD_SHAPE.format(got="torch.Size([2])", want="torch.Size([3])"))


# ------------------------------------------------------ requires_grad rules --
def test_setting_requires_grad_false_on_non_leaf(device):
    x = torch.ones(2, requires_grad=True, device=device)
    y = x * 2

    def set_false():
        y.requires_grad = False
    before = state(y)
    raises(set_false, NON_LEAF_RG_FALSE)
    raises(lambda: y.requires_grad_(False), NON_LEAF_RG_FALSE)
    assert state(y) == before and y.requires_grad


def test_setting_requires_grad_true_on_non_leaf(device):
    x = torch.ones(2, requires_grad=True, device=device)
    y = x * 2

    def set_true():
        y.requires_grad = True
    raises(set_true, NON_LEAF_RG_TRUE)
    assert y.requires_grad and not y.is_leaf


def test_requires_grad_true_method_on_non_leaf_is_a_no_op(device):
    x = torch.ones(2, requires_grad=True, device=device)
    y = x * 2
    fn = y.grad_fn
    assert y.requires_grad_(True) is y           # PyTorch allows it: nothing changes
    assert y.grad_fn is fn and y.requires_grad


@pytest.mark.parametrize("make", [
    lambda d: torch.tensor([1, 2], requires_grad=True, device=d),
    lambda d: torch.ones(2, dtype=torch.int64, requires_grad=True, device=d),
    lambda d: torch.zeros(2, dtype=torch.int64, requires_grad=True, device=d),
    lambda d: torch.arange(3, requires_grad=True, device=d),
], ids=["tensor", "ones", "zeros", "arange"])
def test_integer_tensor_requiring_grad_at_creation(device, make):
    raises(lambda: make(device), INT_RG_FACTORY)


def test_integer_tensor_requires_grad_setter(device):
    t = torch.tensor([1, 2], device=device)

    def set_true():
        t.requires_grad = True
    before = state(t)
    raises(set_true, INT_RG_SETTER)
    assert state(t) == before and not t.requires_grad


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_integer_tensor_requires_grad_method(device, dtype):
    t = torch.tensor([1, 0], dtype=getattr(torch, dtype), device=device)
    raises(t.requires_grad_, INT_RG_METHOD)
    assert not t.requires_grad


def test_requires_grad_false_on_integer_tensor_is_fine(device):
    t = torch.tensor([1, 2], device=device)
    t.requires_grad = False
    assert not t.requires_grad


# ----------------------------------------------------- leaving the graph --
def test_numpy_on_tensor_requiring_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    raises(x.numpy, NUMPY_RG)
    raises((x * 2).numpy, NUMPY_RG)
    assert x.detach().numpy().tolist() == [1., 2.]


@pytest.mark.gpu
def test_numpy_on_cuda_tensor():
    t = torch.ones(2, device="cuda")
    with pytest.raises(TypeError) as info:
        t.numpy()
    assert str(info.value) == ("can't convert cuda:0 device type tensor to numpy. Use "
                               "Tensor.cpu() to copy the tensor to host memory first.")
    assert t.cpu().numpy().tolist() == [1., 1.]


def test_item_of_many_elements(device):
    raises(torch.ones(3, device=device).item, ITEM)


def test_reading_grad_of_non_leaf_warns(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning) as record:
        g = y.grad
    assert g is None
    assert len(record) == 1
    # PyTorch appends "(Triggered internally at <C++ file>)"; the words before are these.
    assert str(record[0].message).startswith(NON_LEAF_GRAD)


def test_no_warning_for_leaves_and_retained_tensors(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * 2
    y.retain_grad()
    with torch.no_grad():
        z = x * 2                      # made under no_grad: a leaf
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad.tolist() == [2., 2.]
        assert y.grad.tolist() == [1., 1.]
        assert z.grad is None and torch.ones(2).grad is None


def test_assigning_grad_of_wrong_size():
    x = torch.ones(2, requires_grad=True)

    def assign():
        x.grad = torch.ones(3)
    raises(assign, GRAD_ASSIGN)
    assert x.grad is None


# ------------------------------------------------------ dtypes and shapes --
INT_CASTS = {
    "add_(1.5)": (lambda t: t.add_(1.5), "Float", "Long"),
    "+= 1.5": (lambda t: t.__iadd__(1.5), "Float", "Long"),
    "mul_(1.5)": (lambda t: t.mul_(1.5), "Float", "Long"),
    "add_(float tensor)": (lambda t: t.add_(torch.tensor([1.5, 1.], device=t.device)),
                           "Float", "Long"),
    "div_(2)": (lambda t: t.div_(2), "Float", "Long"),
}


@pytest.mark.parametrize("op", list(INT_CASTS))
def test_int_tensor_inplace_float_cast_error(device, op):
    fn, src, dst = INT_CASTS[op]
    t = torch.tensor([1, 2], device=device)
    before = state(t)
    raises(lambda: fn(t), CAST.format(src=src, dst=dst))
    assert state(t) == before


def test_bool_tensor_inplace_int_cast_error(device):
    t = torch.tensor([True, False], device=device)
    before = state(t)
    raises(lambda: t.add_(1), CAST.format(src="Long", dst="Bool"))
    assert state(t) == before


def test_float_tensor_inplace_complex_cast_error(device):
    t = torch.ones(2, device=device)
    raises(lambda: t.add_(1j), CAST.format(src="ComplexFloat", dst="Float"))
    assert t.tolist() == [1., 1.] and t._version == 0


@pytest.mark.parametrize("out, other, bshape", [
    ((3,), (2, 3), [2, 3]),
    ((3, 1), (1, 4), [3, 4]),
])
def test_inplace_broadcast_shape_error(device, out, other, bshape):
    t = torch.ones(*out, device=device)
    before = state(t)
    raises(lambda: t.add_(torch.ones(*other, device=device)),
           INPLACE_SHAPE.format(out=list(out), b=bshape))
    assert state(t) == before


def test_inplace_broadcast_shape_error_on_non_leaf(device):
    x = torch.ones(3, requires_grad=True, device=device)
    y = x * 2
    before = state(y)
    raises(lambda: y.mul_(torch.ones(2, 3, device=device)),
           INPLACE_SHAPE.format(out=[3], b=[2, 3]))
    assert state(y) == before
    y.sum().backward()                 # the graph is untouched
    assert x.grad.tolist() == [2., 2., 2.]


@pytest.mark.parametrize("a, b, msg", [
    ((3,), (4,), BROADCAST.format(a=3, b=4, d=0)),
    ((2, 3), (3, 2), BROADCAST.format(a=3, b=2, d=1)),
    ((2, 3), (4, 1, 5), BROADCAST.format(a=3, b=5, d=2)),
    ((2, 3), (2,), BROADCAST.format(a=3, b=2, d=1)),
])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_op_shape_mismatch(device, a, b, msg, op):
    x = torch.ones(*a, requires_grad=True, device=device)
    y = torch.ones(*b, device=device)
    raises(lambda: getattr(x, op)(y), msg)


def test_inplace_shape_mismatch_message(device):
    t = torch.ones(3, device=device)
    raises(lambda: t.mul_(torch.ones(4, device=device)), BROADCAST.format(a=3, b=4, d=0))
    assert t._version == 0


def test_copy_shape_mismatch(device):
    t = torch.ones(2, 3, device=device)
    before = state(t)
    raises(lambda: t.copy_(torch.ones(2, device=device)), BROADCAST.format(a=3, b=2, d=1))
    assert state(t) == before


def test_setitem_shape_mismatch(device):
    t = torch.ones(3, device=device)

    def assign():
        t[0:2] = torch.ones(3, device=device)
    before = state(t)
    raises(assign, "The expanded size of the tensor (2) must match the existing size (3) at "
                   "non-singleton dimension 0.  Target sizes: [2].  Tensor sizes: [3]")
    assert state(t) == before


def test_mask_setitem_shape_mismatch(device):
    t = torch.ones(3, device=device)

    def assign():
        t[torch.tensor([True, False, True], device=device)] = torch.ones(3, device=device)
    before = state(t)
    raises(assign, "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing "
                   "result of shape [2]")
    assert state(t) == before


# ------------------------------------------------------------- devices --
@pytest.mark.gpu
@pytest.mark.parametrize("order", ["cuda+cpu", "cpu+cuda"])
def test_mixing_devices(order):
    g = torch.ones(2, device="cuda", requires_grad=True)
    c = torch.ones(2)
    a, b = (g, c) if order == "cuda+cpu" else (c, g)
    before = state(g)
    err = raises(lambda: a + b, DEVICES.format(a="cuda:0", b="cpu"))
    assert isinstance(err, errors.DeviceMismatchError)
    assert state(g) == before


@pytest.mark.gpu
def test_cpu_scalar_tensor_mixes_with_cuda():
    g = torch.ones(2, device="cuda")
    assert (g * torch.tensor(3.)).tolist() == [3., 3.]


# ------------------------------------------------- hooks and retain_grad --
def test_retain_grad_on_tensor_not_requiring_grad(device):
    t = torch.ones(2, device=device)
    raises(t.retain_grad, RETAIN_NO_GRAD)
    assert not t.retains_grad and not t.requires_grad


def test_register_hook_on_tensor_not_requiring_grad(device):
    t = torch.ones(2, device=device)
    calls = []
    raises(lambda: t.register_hook(calls.append), HOOK_NO_GRAD)
    raises(lambda: (t * 2).register_hook(calls.append), HOOK_NO_GRAD)
    t.requires_grad_()
    (t * 2).sum().backward()
    assert calls == [] and t.grad.tolist() == [2., 2.]   # the refused hook was not kept


# ------------------------------------------------------ autograd.grad --
def test_autograd_grad_unused_input(device):
    x = torch.ones(3, requires_grad=True, device=device)
    unused = torch.ones(2, requires_grad=True, device=device)
    raises(lambda: torch.autograd.grad((x * 2).sum(), [x, unused]), UNUSED)
    assert x.grad is None and unused.grad is None


def test_autograd_grad_input_not_requiring_grad(device):
    x = torch.ones(3, requires_grad=True, device=device)
    raises(lambda: torch.autograd.grad((x * 2).sum(), [torch.ones(2, device=device)]),
           INPUT_NO_GRAD)
    assert x.grad is None


DIM_CASES = {
    "transpose": lambda m, x: x.transpose(0, 5),
    "transpose of a 0-d tensor": lambda m, x: m.ones(()).transpose(0, 1),
    "unsqueeze": lambda m, x: x.unsqueeze(5),
    "unsqueeze of a 0-d tensor": lambda m, x: m.ones(()).unsqueeze(-2),
    "permute dim": lambda m, x: x.permute(0, 5),
    "permute length": lambda m, x: x.permute(0, 1, 2),
    "squeeze": lambda m, x: x.squeeze(4),
    "flatten": lambda m, x: x.flatten(0, 4),
    "sum": lambda m, x: x.sum(dim=-3),
}


@pytest.mark.parametrize("case", DIM_CASES)
def test_dimension_out_of_range_as_pytorch_says_it(case):
    """A dimension outside the tensor is refused with PyTorch's exception and words
    (numpy would wrap it around or accept it silently)."""
    real = pytest.importorskip("torch")
    make = DIM_CASES[case]
    with pytest.raises(Exception) as theirs:
        make(real, real.ones(2, 3))
    with pytest.raises(Exception) as ours:
        make(torch, torch.ones(2, 3))
    assert type(theirs.value).__name__ == type(ours.value).__name__
    assert str(ours.value) == str(theirs.value)


HOOK_CASES = {
    "size, on a computed tensor": (False, lambda m, g: m.ones(4)),
    "size, on a leaf": (True, lambda m, g: m.ones(2)),
    "type, on a leaf": (True, lambda m, g: g.double()),
    "type, on a computed tensor": (False, lambda m, g: g.double()),
}


@pytest.mark.parametrize("case", HOOK_CASES)
def test_a_hook_may_not_change_the_gradients_size_or_type(case):
    """A tensor hook may return other numbers, never another shape or dtype:
    PyTorch's error names the hook, and the leaf's .grad stays untouched."""
    real = pytest.importorskip("torch")
    on_leaf, replace = HOOK_CASES[case]

    def attempt(m):
        x = m.ones(3, requires_grad=True)
        y = x * 2

        def swap(g):
            return replace(m, g)

        (x if on_leaf else y).register_hook(swap)
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        assert x.grad is None
        return str(err.value)

    assert attempt(torch) == attempt(real)


JOIN_CASES = {
    "cat along 0": lambda m: m.cat([m.ones(2, 3), m.ones(3, 2)]),
    "cat along 1": lambda m: m.cat([m.ones(2, 3), m.ones(3, 2)], 1),
    "cat, third tensor": lambda m: m.cat([m.ones(2, 3), m.ones(2, 3), m.ones(3, 2)]),
    "cat of different ranks": lambda m: m.cat([m.ones(2, 3), m.ones(3)]),
    "cat of 0-d tensors": lambda m: m.cat([m.ones(()), m.ones(())]),
    "cat of nothing": lambda m: m.cat([]),
    "cat, dim out of range": lambda m: m.cat([m.ones(2, 3), m.ones(2, 3)], 5),
    "stack": lambda m: m.stack([m.ones(2), m.ones(3)]),
    "stack, third tensor": lambda m: m.stack([m.ones(2, 3), m.ones(2, 3), m.ones(3, 2)], 1),
    "stack of nothing": lambda m: m.stack([]),
    "mse_loss": lambda m: m.nn.functional.mse_loss(m.ones(2), m.ones(3)),
}


@pytest.mark.parametrize("case", JOIN_CASES)
def test_joining_and_losses_refuse_shapes_as_pytorch_does(case):
    real = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mse_loss warns about the sizes first
        with pytest.raises(Exception) as theirs:
            JOIN_CASES[case](real)
        with pytest.raises(Exception) as ours:
            JOIN_CASES[case](torch)
    assert (type(ours.value).__name__, str(ours.value)) == \
        (type(theirs.value).__name__, str(theirs.value))
