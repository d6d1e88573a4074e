"""Creation and keyword parity: ``zeros(size=...)``, default dtype and device, the
legacy constructors, ``Variable``, module-level in-place functions, and the
ordering / diagonal / statistics functions tutorials call.

Each is checked by its definition (numpy) without PyTorch, and printed values,
dtypes, gradients, node names and messages are compared with PyTorch when it
is installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.autograd import Variable, gradcheck

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ------------------------------------------------------ creation keywords --
@pytest.mark.parametrize("fn, fill", [(ak.zeros, 0.0), (ak.ones, 1.0), (ak.empty, None)])
def test_size_keyword(fn, fill):
    for t in (fn(size=(2, 3)), fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3) and t.dtype == ak.float32
        if fill is not None:
            assert (t == fill).all()
    assert fn(size=(2,), dtype=ak.int64).dtype == ak.int64
    with pytest.raises(TypeError, match="got multiple values for argument 'size'"):
        fn(2, size=(2,))


def test_default_dtype_reaches_every_creation_path():
    assert ak.get_default_dtype() == ak.float32
    ak.set_default_dtype(ak.float64)
    try:
        made = [ak.tensor(1.5), ak.zeros(2), ak.ones(1), ak.rand(1), ak.arange(0.0, 2),
                ak.linspace(0, 1, 3), ak.full((2,), 1.5), ak.Tensor(2), ak.eye(2),
                ak.tensor([1, 2]).exp(), ak.nn.Linear(2, 2).weight]
        assert {t.dtype for t in made} == {ak.float64}
        assert ak.tensor([1, 2]).dtype == ak.int64
    finally:
        ak.set_default_dtype(ak.float32)
    with pytest.raises(TypeError, match="only floating-point types are supported as the "
                                        "default type"):
        ak.set_default_dtype(ak.int64)
    assert ak.zeros(1).dtype == ak.float32


def test_default_device():
    ak.set_default_device("cpu")
    assert ak.get_default_device() == ak.device("cpu")
    assert ak.tensor([1.0]).device == ak.zeros(1).device == ak.device("cpu")
    ak.set_default_device(None)


# ---------------------------------------------------- legacy constructors --
@pytest.mark.parametrize("name, dtype", [
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
    ("LongTensor", "int64"), ("IntTensor", "int32"), ("ShortTensor", "int16"),
    ("CharTensor", "int8"), ("ByteTensor", "uint8"), ("BoolTensor", "bool"),
])
def test_legacy_typed_constructors(name, dtype):
    cls = getattr(ak, name)
    data = cls([1, 0])
    assert data.dtype == getattr(ak, dtype)
    assert data.tolist() == ([True, False] if dtype == "bool" else [1, 0])
    assert cls(2, 3).shape == (2, 3) and cls(ak.zeros(4, 1).size()).shape == (4, 1)
    assert isinstance(data, cls) and (dtype == "float32") == isinstance(data, ak.FloatTensor)


def test_legacy_tensor_constructor_takes_sizes_and_data():
    x = ak.randn(2, 3)
    assert ak.Tensor(x.size()).shape == (2, 3)
    assert ak.Tensor(2, 3).shape == (2, 3) and (ak.Tensor(2, 3) == 0).all()
    assert ak.Tensor([2, 3]).tolist() == [2.0, 3.0]
    assert ak.Tensor((2, 3)).tolist() == [2.0, 3.0]   # a plain tuple is data
    assert ak.Tensor().shape == (0,)
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        ak.Tensor(2.5)


def test_variable_makes_a_new_leaf_on_the_same_memory():
    t = ak.ones(2)
    v = Variable(t, requires_grad=True)
    assert v is not t and v.is_leaf and v.requires_grad and not t.requires_grad
    (v * 3).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0] and t.grad is None
    with ak.no_grad():
        t.add_(1)
    assert v.tolist() == [2.0, 2.0] and v._version == t._version   # shared memory, version
    w = ak.ones(2, requires_grad=True)
    u = Variable(w * 2)
    assert u.is_leaf and not u.requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])


# ------------------------------------------------- module-level in-place --
@pytest.mark.parametrize("name, ref", [
    ("sin_", np.sin), ("cos_", np.cos), ("exp_", np.exp), ("tanh_", np.tanh),
    ("abs_", np.abs), ("sqrt_", lambda a: np.sqrt(np.abs(a))), ("neg_", np.negative),
    ("sigmoid_", lambda a: 1 / (1 + np.exp(-a))), ("relu_", lambda a: np.maximum(a, 0)),
    ("floor_", np.floor), ("ceil_", np.ceil), ("round_", np.round),
    ("log1p_", lambda a: np.log1p(np.abs(a))), ("expm1_", np.expm1), ("square_", np.square),
])
def test_module_level_inplace_functions(name, ref):
    a = np.array([-1.25, 0.5, 2.0])
    x = ak.tensor(np.abs(a) if name in ("sqrt_", "log1p_") else a, dtype=ak.float64)
    out = getattr(ak, name)(x)
    assert out is x and x._version == 1
    np.testing.assert_allclose(x.numpy(), ref(a))


def test_module_level_inplace_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        ak.sin_(ak.zeros(2, requires_grad=True))


# ----------------------------------------------- ordering and statistics --
def test_median_by_definition_and_its_gradient(rng):
    a = rng.permutation(12).reshape(3, 4).astype(float)
    x = ak.tensor(a, requires_grad=True)
    m = ak.median(x)
    assert float(m) == np.sort(a.ravel())[5]   # the lower middle of 12 values
    m.backward()
    assert x.grad.numpy().sum() == 1 and x.grad.numpy()[a == float(m)] == 1
    values, indices = x.median(dim=1)
    np.testing.assert_array_equal(values.detach().numpy(), np.sort(a, 1)[:, 1])
    np.testing.assert_array_equal(a[np.arange(3), indices.numpy()], values.detach().numpy())
    assert gradcheck(lambda v: v.median(0, keepdim=True).values, (ak.tensor(
        a, dtype=ak.float64, requires_grad=True),))


def test_median_of_ties_shares_the_gradient_and_nan_wins():
    x = ak.tensor([3.0, 1, 2, 2, 5, 2], requires_grad=True)
    x.median().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 0, 1 / 3, 1 / 3, 0, 1 / 3])
    assert np.isnan(float(ak.median(ak.tensor([1.0, float("nan"), 0.0]))))
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 1 to have "
                                         "non-zero size."):
        ak.median(ak.zeros(2, 0), 1)


def test_sort_argsort(rng):
    a = rng.standard_normal((3, 5))
    x = ak.tensor(a, requires_grad=True)
    values, indices = ak.sort(x, dim=1, descending=True)
    np.testing.assert_array_equal(values.detach().numpy(), -np.sort(-a, 1))
    np.testing.assert_array_equal(x.argsort(dim=1, descending=True).numpy(), indices.numpy())
    np.testing.assert_array_equal(ak.argsort(x, 0).numpy(), np.argsort(a, 0))
    (values * ak.arange(5.0)).sum().backward()
    np.testing.assert_array_equal(np.take_along_axis(x.grad.numpy(), indices.numpy(), 1),
                                  np.tile(np.arange(5.0), (3, 1)))


def test_var_mean_std_mean(rng):
    a = rng.standard_normal((4, 3))
    x = ak.tensor(a, dtype=ak.float64)
    var, mean = ak.var_mean(x, 1)
    np.testing.assert_allclose(var.numpy(), a.var(1, ddof=1))
    np.testing.assert_allclose(mean.numpy(), a.mean(1))
    std, mean = ak.std_mean(x, dim=0, keepdim=True, correction=0)
    np.testing.assert_allclose(std.numpy(), a.std(0, keepdims=True))
    assert ak.var_mean(x)[1].shape == ()


def test_diagonal_is_a_view_with_a_gradient(rng):
    a = rng.standard_normal((3, 4))
    x = ak.tensor(a, requires_grad=True)
    d = x.diagonal(1)
    np.testing.assert_array_equal(d.detach().numpy(), np.diagonal(a, 1))
    d.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3, 4, 1))
    y = ak.zeros(3, 3)
    y.diagonal().fill_(2.0)                  # writes through, as PyTorch's view does
    assert ak.trace(y).item() == 6.0
    np.testing.assert_array_equal(ak.diagonal(ak.ones(2, 3, 4), 0, 1, 2).shape, (2, 3))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 0, 0"):
        ak.ones(2, 2).diagonal(0, 0, 0)


def test_dstack_and_friends():
    a, b = ak.tensor([1, 2]), ak.tensor([3, 4])
    assert ak.dstack((a, b)).tolist() == [[[1, 3], [2, 4]]]
    assert ak.dstack([ak.ones(2, 3), ak.zeros(2, 3)]).shape == (2, 3, 2)
    assert ak.outer(ak.tensor([1.0, 2]), ak.tensor([1.0, 2, 3])).tolist() == \
        [[1, 2, 3], [2, 4, 6]]
    assert ak.mv(ak.ones(2, 3), ak.ones(3)).tolist() == [3.0, 3.0]
    assert ak.cumsum(ak.tensor([1, 2, 3]), 0).tolist() == [1, 3, 6]
    assert ak.tril(ak.ones(3, 3), -1).sum().item() == 3.0


# ------------------------------------------------------------ with PyTorch --
SNIPPETS = [
    lambda lib: lib.zeros(size=(2, 3)),
    lambda lib: lib.ByteTensor([1, 2]),
    lambda lib: lib.Tensor(lib.ones(2, 3).size()).shape,
    lambda lib: lib.median(lib.tensor([1.0, 5, 2, 4])),
    lambda lib: lib.tensor([[1.0, 5, 2], [4, 0, 4]]).median(dim=1),
    lambda lib: lib.tensor([[1.0, 3, 3, 0], [2, 2, 1, 1]]).median(1),
    lambda lib: lib.var_mean(lib.tensor([[1.0, 2], [4, 8]]), 1),
    lambda lib: lib.std_mean(lib.tensor([[1.0, 2], [4, 8]]), dim=0, keepdim=True),
    lambda lib: lib.argsort(lib.tensor([3, 1, 2]), descending=True),
    lambda lib: lib.sort(lib.tensor([[1.0, 3, 3, 0], [2, 2, 1, 1]]), 1, descending=True),
    lambda lib: lib.dstack((lib.tensor([1, 2]), lib.tensor([3, 4]))),
    lambda lib: lib.arange(12.0).reshape(3, 4).diagonal(offset=-1),
    lambda lib: lib.trace(lib.arange(6.0).reshape(2, 3)),
    lambda lib: lib.ones(2, 3).new_full((2,), 7),
    lambda lib: lib.cumsum(lib.tensor([1, 2, 3]), 0),
    lambda lib: lib.log1p(lib.tensor([0.0, 1.0])),
    lambda lib: lib.tensor([1.0, 2.0]).log10(),
]


@needs_torch
@pytest.mark.parametrize("snippet", SNIPPETS)
def test_prints_as_pytorch(snippet):
    assert repr(snippet(ak)) == repr(snippet(torch))


@needs_torch
@pytest.mark.parametrize("name, call", [
    ("median", lambda lib, x: lib.median(x)),
    ("median-dim", lambda lib, x: x.median(1).values),
    ("sort", lambda lib, x: x.sort(0).values),
    ("diagonal", lambda lib, x: lib.diagonal(x, 1)),
    ("trace", lambda lib, x: lib.trace(x)),
    ("tril", lambda lib, x: x.tril(-1)),
    ("triu", lambda lib, x: lib.triu(x, 1)),
    ("diag", lambda lib, x: lib.diag(x[0])),
    ("cumsum", lambda lib, x: x.cumsum(1)),
    ("log1p", lambda lib, x: x.abs().log1p()),
    ("expm1", lambda lib, x: x.expm1()),
    ("tan", lambda lib, x: x.tan()),
    ("sinh", lambda lib, x: lib.sinh(x)),
    ("cosh", lambda lib, x: x.cosh()),
    ("var_mean", lambda lib, x: lib.var_mean(x, 1)[0] * 2),
])
def test_gradients_and_node_names_as_pytorch(name, call, rng):
    a = rng.permutation(12).reshape(3, 4) * 0.25 - 1.375
    results = []
    for lib in (ak, torch):
        x = lib.tensor(a, requires_grad=True)
        y = call(lib, x)
        y.backward(lib.ones_like(y))
        results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    assert results[0][2] == results[1][2]


@needs_torch
def test_variable_as_pytorch():
    for lib in (ak, torch):
        t = lib.ones(2)
        v = lib.autograd.Variable(t, requires_grad=True)
        (v * 2).sum().backward()
        assert (v is t, v.is_leaf, t.grad, v.grad.tolist()) == (False, True, None, [2.0, 2.0])


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("dim, keepdim, correction", [(None, False, None), (1, False, None),
                                                      (0, True, 0), ((0, 1), False, 2)])
def test_var_mean_is_one_node_whose_two_outputs_add_up(fn, dim, keepdim, correction, rng):
    """Both results of one VarMeanBackward0/StdMeanBackward0 reach the loss: the
    gradient (and the gradient of the gradient) match central differences."""
    x = ak.tensor(rng.standard_normal((3, 4)), dtype=ak.float64, requires_grad=True)
    spread, centre = getattr(ak, fn)(x, dim, keepdim=keepdim, correction=correction)
    assert spread.grad_fn is centre.grad_fn and (spread.output_nr, centre.output_nr) == (0, 1)

    def both(t):
        s, m = getattr(ak, fn)(t, dim, keepdim=keepdim, correction=correction)
        return (s * 1.5).sum() + (m * m).sum()

    assert gradcheck(both, (x,))
    assert ak.autograd.gradgradcheck(both, (x,))


def test_var_mean_frees_what_both_outputs_need():
    x = ak.randn(3, 4, requires_grad=True)
    var, mean = ak.var_mean(x, 1)
    var.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        mean.sum().backward()


@pytest.mark.filterwarnings("ignore:divide by zero")  # (0 / 0 is masked to 0, as in PyTorch)
def test_std_mean_of_a_constant_row_sends_zeros():
    x = ak.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], requires_grad=True)
    std, _ = ak.std_mean(x, 1)
    std.sum().backward()
    assert x.grad[0].tolist() == [0.0, 0.0, 0.0]
    assert bool(ak.isfinite(x.grad).all())


@needs_torch
@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("args, kwargs", [((), {}), ((1,), {"keepdim": True}), ((False,), {}),
                                          ((), {"dim": (0, 1), "correction": 0}), ((0,), {})])
def test_var_mean_node_as_pytorch(fn, args, kwargs, rng):
    a = rng.standard_normal((3, 4))

    def seen(lib):
        x = lib.tensor(a, requires_grad=True)
        s, m = getattr(lib, fn)(x, *args, **kwargs)
        node = s.grad_fn
        saved = {n: (tuple(getattr(node, n).shape) if n in ("_saved_self", "_saved_result0")
                     else getattr(node, n)) for n in dir(node) if n.startswith("_saved_")}
        (s.sum() * 2 + m.sum()).backward()
        return type(node).__name__, m.grad_fn is node, saved, np.round(x.grad.numpy(), 10)

    ours, theirs = seen(ak), seen(torch)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-9, atol=1e-12)
