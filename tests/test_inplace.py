"""In-place operations: version counters, views, CopySlices, index_put.

Expected values and node names are those PyTorch gives for the same code.
"""
import numpy as np
import pytest

import autograd_kit as torch


def grads(t):
    return None if t.grad is None else t.grad.tolist()


# ------------------------------------------------------- version counter --
def test_each_inplace_op_bumps_the_version(device):
    x = torch.ones(3, device=device)
    assert x._version == 0
    x.add_(1)
    assert x._version == 1
    x += 1
    assert x._version == 2
    x[0] = 3.
    assert x._version == 3
    x.mul_(2)
    x.zero_()
    x.fill_(1.)
    x.copy_(torch.ones(3, device=device))
    x.clamp_(0., 1.)
    assert x._version == 8
    assert x.tolist() == [1., 1., 1.]


def test_out_of_place_ops_do_not_bump_the_version(device):
    x = torch.ones(3, device=device)
    _ = x + 1, x * 2, x.exp(), x[1:], x.clone(), x.sum()
    assert x._version == 0


def test_version_shared_with_views_and_detach_not_with_data(device):
    x = torch.ones(3, device=device)
    v, d, dd = x[1:], x.detach(), x.data
    x.add_(1)
    assert (x._version, v._version, d._version, dd._version) == (1, 1, 1, 0)
    v.mul_(2)
    assert (x._version, v._version, d._version, dd._version) == (2, 2, 2, 0)
    d.sub_(1)
    assert (x._version, v._version, d._version, dd._version) == (3, 3, 3, 0)
    dd.mul_(2)                      # .data has its own counter
    assert (x._version, v._version, d._version, dd._version) == (3, 3, 3, 1)
    assert x.tolist() == [2., 6., 6.]   # ... but the same memory


def test_version_shared_by_view_of_view(device):
    x = torch.ones(2, 3, device=device)
    row = x[1]
    cell = row[2]
    cell.add_(1)
    assert x._version == row._version == cell._version == 1
    assert x.tolist() == [[1., 1., 1.], [1., 1., 2.]]


def test_failed_inplace_ops_leave_everything_unchanged(device):
    x = torch.tensor([1., 2., 3.], device=device)
    i = torch.tensor([1, 2, 3], device=device)
    with pytest.raises(RuntimeError):
        x.add_(torch.ones(2, 3, device=device))
    with pytest.raises(RuntimeError):
        i.add_(1.5)
    assert x.tolist() == [1., 2., 3.] and x._version == 0
    assert i.tolist() == [1, 2, 3] and i._version == 0


def test_failed_inplace_on_non_leaf_keeps_graph(device):
    w = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = w * 2
    fn = y.grad_fn
    with pytest.raises(RuntimeError):
        y.add_(torch.ones(4, device=device))
    with pytest.raises(RuntimeError):
        y += torch.ones(2, 3, device=device)
    assert y.grad_fn is fn and y._version == 0 and y.tolist() == [2., 4., 6.]
    y.sum().backward()
    assert w.grad.tolist() == [2., 2., 2.]


def test_failed_leaf_inplace_keeps_leaf(device):
    w = torch.tensor([1., 2.], requires_grad=True, device=device)
    with pytest.raises(RuntimeError):
        w.add_(1)
    with pytest.raises(RuntimeError):
        w[0] = 5.
    assert w.is_leaf and w.grad_fn is None and w._version == 0 and w.tolist() == [1., 2.]


# ------------------------------------------------------ identity and data --
def test_id_kept_by_inplace_changed_by_rebinding(device):
    x = torch.ones(3, device=device)
    first = id(x)
    x += 1
    assert id(x) == first
    x.add_(1)
    assert id(x) == first
    x = x + 1
    assert id(x) != first
    assert x.tolist() == [4., 4., 4.]


def test_iadd_on_non_leaf_returns_same_object(device):
    w = torch.ones(2, requires_grad=True, device=device)
    y = w * 2
    before = id(y)
    y += 1
    assert id(y) == before and y.grad_fn.name() == "AddBackward0"


def test_data_fill_is_not_tracked(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x * x
    x.data.fill_(3.)
    assert x._version == 0 and x.is_leaf
    y.sum().backward()              # no error: autograd never saw the change
    assert x.grad.tolist() == [6., 6.]   # computed from the new values


def test_data_assignment_swaps_values(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    x.data = torch.tensor([5., 6.], device=device)
    assert x.tolist() == [5., 6.] and x.requires_grad and x.is_leaf


def test_detach_shares_memory(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d[0] = 5.
    assert x.tolist() == [5., 2.]
    assert x._version == d._version == 1
    assert x.requires_grad and x.is_leaf


def test_detach_of_non_leaf(device):
    w = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = w * 3
    d = y.detach()
    d.add_(1)
    assert y.tolist() == [4., 7.]
    assert y._version == 1 and not d.requires_grad


def test_inplace_allowed_under_no_grad_on_leaf(device):
    w = torch.tensor([1., 2.], requires_grad=True, device=device)
    with torch.no_grad():
        w -= 0.5 * torch.ones(2, device=device)
    assert w.is_leaf and w.requires_grad and w.tolist() == [0.5, 1.5]


def test_inplace_under_no_grad_still_bumps_the_version(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    y = x.exp()
    with torch.no_grad():
        y.add_(1)
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ------------------------------------------- in-place on non-leaf tensors --
def test_inplace_on_non_leaf_gradients(device):
    x = torch.tensor([1., 2., 4.], requires_grad=True, device=device)
    y = 2 * x
    y += 2
    y.log_()
    assert y.grad_fn.name() == "LogBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AddBackward0"
    assert y.grad_fn.next_functions[0][0].next_functions[0][0].name() == "MulBackward0"
    y.sum().backward()
    # d/dx log(2x + 2) = 1 / (x + 1)
    assert np.allclose(x.grad.tolist(), [1 / 2, 1 / 3, 1 / 5])


@pytest.mark.parametrize("op, name, dydx", [
    (lambda y: y.mul_(3), "MulBackward0", lambda x: 6 * x),
    (lambda y: y.sub_(1), "SubBackward0", lambda x: 2 * x),
    (lambda y: y.div_(2), "DivBackward0", lambda x: x),
    (lambda y: y.pow_(2), "PowBackward0", lambda x: 4 * x ** 3),
    (lambda y: y.exp_(), "ExpBackward0", lambda x: 2 * x * np.exp(x ** 2)),
    (lambda y: y.neg_(), "NegBackward0", lambda x: -2 * x),
    (lambda y: y.tanh_(), "TanhBackward0", lambda x: 2 * x * (1 - np.tanh(x ** 2) ** 2)),
    (lambda y: y.sigmoid_(), "SigmoidBackward0",
     lambda x: 2 * x * np.exp(-x ** 2) / (1 + np.exp(-x ** 2)) ** 2),
])
def test_inplace_unary_and_binary_gradients(device, op, name, dydx):
    x = torch.tensor([0.5, 1.0, 1.5], dtype=torch.float64, requires_grad=True, device=device)
    y = x * x
    op(y)
    assert y.grad_fn.name() == name
    assert y._version == 1
    y.sum().backward()
    assert np.allclose(x.grad.tolist(), dydx(np.array([0.5, 1.0, 1.5])))


def test_inplace_with_tensor_argument_requiring_grad(device):
    a = torch.tensor([1., 2.], requires_grad=True, device=device)
    b = torch.tensor([3., 4.], requires_grad=True, device=device)
    c = torch.zeros(2, device=device)       # does not require grad ...
    c.add_(a * b)                           # ... until an in-place op brings one in
    assert c.requires_grad and not c.is_leaf and c.grad_fn.name() == "AddBackward0"
    c.sum().backward()
    assert a.grad.tolist() == [3., 4.] and b.grad.tolist() == [1., 2.]


def test_zero_fill_copy_on_non_leaf_cut_gradient(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    src = torch.tensor([5., 7.], requires_grad=True, device=device)
    y = x * 3
    y.copy_(src * 2)
    (y * torch.tensor([1., 10.], device=device)).sum().backward()
    assert x.grad.tolist() == [0., 0.]
    assert src.grad.tolist() == [2., 20.]

    x.grad = None
    z = x * 3
    z.zero_()
    z.sum().backward()
    assert x.grad.tolist() == [0., 0.]


# ------------------------------------------------------------ CopySlices --
def test_slice_assignment_gradients(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    s = torch.zeros(3, device=device)
    s[1:] = x
    assert s.grad_fn.name() == "torch::autograd::CopySlices"
    assert s.requires_grad and not s.is_leaf
    nf = s.grad_fn.next_functions
    assert nf[0] == (None, 0)
    assert nf[1][0].name() == "torch::autograd::AccumulateGrad" and nf[1][0].variable is x
    assert s.tolist() == [0., 1., 2.]
    (s * torch.tensor([1., 2., 3.], device=device)).sum().backward()
    assert x.grad.tolist() == [2., 3.]


def test_row_assignment_gradients(device):
    x = torch.tensor([1., 2.], requires_grad=True, device=device)
    s = torch.zeros(2, 2, device=device)
    s[0] = x
    s[1] = x * x
    assert s.grad_fn.name() == "torch::autograd::CopySlices"
    (s * torch.tensor([[1., 2.], [3., 4.]], device=device)).sum().backward()
    assert x.grad.tolist() == [7., 18.]


def test_scalar_assignment_into_non_leaf(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    a = x * 2
    a[1] = 0.
    assert a.grad_fn.name() == "torch::autograd::CopySlices"
    a.sum().backward()
    assert x.grad.tolist() == [2., 0., 2.]


def test_inplace_on_view_of_non_leaf(device):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=device)
    v = x * 1
    w = v[0]
    w.mul_(3)
    assert v.grad_fn.name() == "torch::autograd::CopySlices"
    assert w.grad_fn.name() == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert v.grad_fn.next_functions[1] == (None, 0)
    assert v.tolist() == [[3., 6.], [3., 4.]]
    (v * torch.tensor([[1., 2.], [3., 4.]], device=device)).sum().backward()
    assert x.grad.tolist() == [[3., 6.], [3., 4.]]


def test_gradient_through_the_modified_view_itself(device):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=device)
    v = x * 1
    w = v[0]
    w.mul_(3)
    (w * torch.tensor([5., 7.], device=device)).sum().backward()
    assert x.grad.tolist() == [[15., 21.], [0., 0.]]


def test_inplace_binary_on_view_with_grad_argument(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = x * 2
    y[1:].mul_(x[:2])
    assert y.tolist() == [2., 4., 12.]
    y.sum().backward()
    assert x.grad.tolist() == [6., 8., 4.]


def test_inplace_on_view_of_view(device):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=device)
    a = x * 1
    row = a[1]
    cell = row[0]
    cell.mul_(5)
    assert a.grad_fn.name() == "torch::autograd::CopySlices"
    assert cell.grad_fn.name() == "AsStridedBackward0"
    a.sum().backward()
    assert x.grad.tolist() == [[1., 1.], [5., 1.]]
    assert a.tolist() == [[1., 2.], [15., 4.]]


def test_inplace_through_transpose_and_reshape_views(device):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=device)
    a = x * 1
    a.t()[0].mul_(10)
    (a * torch.tensor([[1., 2.], [3., 4.]], device=device)).sum().backward()
    assert x.grad.tolist() == [[10., 2.], [30., 4.]]

    y = torch.tensor([1., 2., 3., 4.], requires_grad=True, device=device)
    b = y * 1
    b.view(2, 2)[1].add_(y[:2])
    assert b.tolist() == [1., 2., 4., 6.]
    b.sum().backward()
    assert y.grad.tolist() == [2., 2., 1., 1.]


def test_view_created_before_base_modified_gets_new_grad_fn(device):
    """A view taken before its base changed in place must see the change in its
    gradient too: PyTorch regenerates its grad_fn as AsStridedBackward0."""
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    a = x * 1
    v = a[0:2]
    a.mul_(2)
    assert v.tolist() == [2., 4.]
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    assert x.grad.tolist() == [2., 2., 0.]


def test_sibling_view_sees_inplace_change(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    a = x * 1
    v = a[0:2]
    a[1:].mul_(2)
    assert v.tolist() == [1., 4.]
    v.sum().backward()
    assert x.grad.tolist() == [1., 2., 0.]


def test_view_of_no_grad_base_requires_grad_after_copy_in(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    a = torch.zeros(3, device=device)
    v = a[0:2]
    a[1] = x[0] * 2
    assert v.tolist() == [0., 2.]
    assert v.requires_grad
    v.sum().backward()
    assert x.grad.tolist() == [2., 0., 0.]


@pytest.mark.parametrize("op", [lambda v: v * 2.0, lambda v: v + 1, lambda v: 3.0 - v,
                                lambda v: v.sin(), lambda v: v * torch.ones(2, device=v.device)],
                         ids=["times-number", "plus-number", "rsub", "sin", "times-tensor"])
def test_ops_on_a_stale_view_of_a_no_grad_base_record(device, op):
    """The base gained a history after the view was taken: every op on the view,
    ``view * number`` included, must see that and record a node."""
    w = torch.ones(3, requires_grad=True, device=device)
    a = torch.zeros(3, device=device)
    v = a[:2]
    a.add_(w)
    out = op(v)
    assert out.grad_fn is not None
    out.sum().backward()
    assert w.grad is not None and w.grad.tolist()[2] == 0.


def test_setitem_value_with_leading_one_dims(device):
    """PyTorch drops leading size-1 dims of the value: s[1] = tensor of shape [1]."""
    x = torch.tensor([2.], requires_grad=True, device=device)
    s = torch.ones(3, device=device)
    s[1] = x * 3
    assert s.tolist() == [1., 6., 1.]
    s.sum().backward()
    assert x.grad.tolist() == [3.]


def test_whole_tensor_setitem_is_a_plain_copy(device):
    for key in (Ellipsis, slice(None)):
        x = torch.tensor([1., 2.], requires_grad=True, device=device)
        s = torch.zeros(2, device=device)
        s[key] = x * 3
        assert s.grad_fn.name() == "torch::autograd::CopyBackwards"
        s.sum().backward()
        assert x.grad.tolist() == [3., 3.]


# ----------------------------------------------- the classic slice trap --
def test_slice_case_fails_and_clone_fixes_it(device):
    x = torch.tensor(2., requires_grad=True, device=device)
    s = torch.ones(2, device=device)
    s[1] = s[0] * x          # mul saves s[0], a view of s ... which s[1] = bumps
    with pytest.raises(RuntimeError, match="output 0 of AsStrided, is at version 1"):
        s.sum().backward()

    x = torch.tensor(2., requires_grad=True, device=device)
    s = torch.ones(2, device=device)
    s[1] = s[0].clone() * x  # clone saves its own copy
    assert s.grad_fn.name() == "torch::autograd::CopySlices"
    s.sum().backward()
    assert x.grad.item() == 1.


def test_clone_fixes_a_chain_of_slice_assignments(device):
    x = torch.tensor(2., requires_grad=True, device=device)
    s = torch.ones(2, device=device)
    s[1] = s[0].clone() * x
    s[0] = s[1].clone() * x
    assert s.tolist() == [4., 2.]
    s.sum().backward()
    assert x.grad.item() == 5.       # d/dx (x^2 + x) at x = 2


# ------------------------------------------------------------- index_put --
def test_mask_assignment_gradients(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = torch.tensor([10., 20., 30.], requires_grad=True, device=device)
    s = x * 1
    s[s > 1.5] = y[:2] * 2
    assert s.grad_fn.name() == "IndexPutBackward0"
    assert s.tolist() == [1., 20., 40.]
    (s * torch.tensor([1., 2., 3.], device=device)).sum().backward()
    assert x.grad.tolist() == [1., 0., 0.]
    assert y.grad.tolist() == [4., 6., 0.]


def test_int_array_assignment_gradients(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = torch.tensor([10., 20.], requires_grad=True, device=device)
    s = x * 1
    s[torch.tensor([0, 2], device=device)] = y
    assert s.grad_fn.name() == "IndexPutBackward0"
    nf = s.grad_fn.next_functions
    assert nf[0][0].name() == "MulBackward0" and nf[1][0].variable is y
    assert s.tolist() == [10., 2., 20.]
    (s * torch.tensor([1., 2., 3.], device=device)).sum().backward()
    assert x.grad.tolist() == [0., 2., 0.]
    assert y.grad.tolist() == [1., 3.]


def test_list_index_and_scalar_value(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    s = x * 1
    s[[0, 2]] = 0.
    assert s.grad_fn.name() == "IndexPutBackward0"
    s.sum().backward()
    assert x.grad.tolist() == [0., 1., 0.]


def test_mask_assignment_into_no_grad_tensor(device):
    x = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    s = torch.zeros(3, device=device)
    s[torch.tensor([True, False, True], device=device)] = x[:2] * 2
    assert s.grad_fn.name() == "IndexPutBackward0" and s.tolist() == [2., 0., 4.]
    s.sum().backward()
    assert x.grad.tolist() == [2., 2., 0.]


def test_mask_assignment_on_leaf_requiring_grad_is_refused(device):
    w = torch.tensor([1., 2., 3.], requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w[torch.tensor([True, False, True], device=device)] = 0.
    assert w.tolist() == [1., 2., 3.] and w._version == 0 and w.grad_fn is None
