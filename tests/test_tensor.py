"""The tensor itself: printing, dtypes, memory sharing, legacy names, shapes.

Every expected ``repr`` below is what PyTorch prints for the same tensor, so a
lesson can show the two side by side.
"""
import numpy as np
import pytest

import autograd_kit as torch

F64 = "torch.float64"

# (what, how to make it, what PyTorch prints)
REPRS = [
    ("ints", lambda: torch.tensor([1, 2, 3]),
     "tensor([1, 2, 3])"),
    ("negative ints", lambda: torch.tensor([-1, 20, -300]),
     "tensor([  -1,   20, -300])"),
    ("int 2-D", lambda: torch.tensor([[1, 2], [30, -4]]),
     "tensor([[ 1,  2],\n"
     "        [30, -4]])"),
    ("whole floats", lambda: torch.tensor([1., 2., 3.]),
     "tensor([1., 2., 3.])"),
    ("fractional floats", lambda: torch.tensor([1.5, 2.25, -3.125]),
     "tensor([ 1.5000,  2.2500, -3.1250])"),
    ("negative whole floats", lambda: torch.tensor([-1., 2.]),
     "tensor([-1.,  2.])"),
    ("one fraction", lambda: torch.tensor([0.1]),
     "tensor([0.1000])"),
    ("zeros", lambda: torch.zeros(3),
     "tensor([0., 0., 0.])"),
    ("zeros 2-D", lambda: torch.zeros(2, 2),
     "tensor([[0., 0.],\n"
     "        [0., 0.]])"),
    ("sci small", lambda: torch.tensor([1e-5, 1.0]),
     "tensor([1.0000e-05, 1.0000e+00])"),
    ("sci big", lambda: torch.tensor([1e10, 1.0]),
     "tensor([1.0000e+10, 1.0000e+00])"),
    ("sci range", lambda: torch.tensor([0.001, 10.0, 5000.]),
     "tensor([1.0000e-03, 1.0000e+01, 5.0000e+03])"),
    ("sci small only", lambda: torch.tensor([1e-5, 2e-5]),
     "tensor([1.0000e-05, 2.0000e-05])"),
    ("sci big whole", lambda: torch.tensor([123456789., 1.]),
     "tensor([1.2346e+08, 1.0000e+00])"),
    ("sci negative", lambda: torch.tensor([-1e-6, 3e3]),
     "tensor([-1.0000e-06,  3.0000e+03])"),
    ("0-d fraction", lambda: torch.tensor(3.5),
     "tensor(3.5000)"),
    ("0-d whole", lambda: torch.tensor(3.),
     "tensor(3.)"),
    ("0-d int", lambda: torch.tensor(7),
     "tensor(7)"),
    ("0-d negative", lambda: torch.tensor(-0.25),
     "tensor(-0.2500)"),
    ("0-d sci", lambda: torch.tensor(1e-7),
     "tensor(1.0000e-07)"),
    ("0-d inf", lambda: torch.tensor(float("inf")),
     "tensor(inf)"),
    ("empty", lambda: torch.tensor([]),
     "tensor([])"),
    ("empty 2-D", lambda: torch.zeros(0, 3),
     "tensor([], size=(0, 3))"),
    ("empty int", lambda: torch.tensor([], dtype=torch.int64),
     "tensor([], dtype=torch.int64)"),
    ("empty float64", lambda: torch.zeros(0, dtype=torch.float64),
     "tensor([], dtype=torch.float64)"),
    ("2-D", lambda: torch.tensor([[1.5, 2.], [3., 4.]]),
     "tensor([[1.5000, 2.0000],\n"
     "        [3.0000, 4.0000]])"),
    ("2-D negative", lambda: torch.tensor([[-1.5, 0.25], [100.125, -7.]]),
     "tensor([[ -1.5000,   0.2500],\n"
     "        [100.1250,  -7.0000]])"),
    ("3-D", lambda: torch.arange(12.).reshape(2, 3, 2),
     "tensor([[[ 0.,  1.],\n"
     "         [ 2.,  3.],\n"
     "         [ 4.,  5.]],\n"
     "\n"
     "        [[ 6.,  7.],\n"
     "         [ 8.,  9.],\n"
     "         [10., 11.]]])"),
    ("3-D int", lambda: torch.arange(12).reshape(2, 2, 3),
     "tensor([[[ 0,  1,  2],\n"
     "         [ 3,  4,  5]],\n"
     "\n"
     "        [[ 6,  7,  8],\n"
     "         [ 9, 10, 11]]])"),
    ("float64", lambda: torch.tensor([1., 2.], dtype=torch.float64),
     "tensor([1., 2.], dtype=torch.float64)"),
    ("float64 fraction", lambda: torch.tensor([0.1, 2.], dtype=torch.float64),
     "tensor([0.1000, 2.0000], dtype=torch.float64)"),
    ("float64 0-d", lambda: torch.tensor(1.5, dtype=torch.float64),
     "tensor(1.5000, dtype=torch.float64)"),
    ("int32", lambda: torch.tensor([1, 2], dtype=torch.int32),
     "tensor([1, 2], dtype=torch.int32)"),
    ("bool", lambda: torch.tensor([True, False]),
     "tensor([ True, False])"),
    ("requires_grad", lambda: torch.tensor([1., 2.], requires_grad=True),
     "tensor([1., 2.], requires_grad=True)"),
    ("requires_grad float64", lambda: torch.tensor([1., 2.], dtype=torch.float64,
                                                   requires_grad=True),
     "tensor([1., 2.], dtype=torch.float64, requires_grad=True)"),
    ("requires_grad 0-d", lambda: torch.tensor(1.5, requires_grad=True),
     "tensor(1.5000, requires_grad=True)"),
    ("grad_fn", lambda: torch.tensor([1., 2.], requires_grad=True) * 2,
     "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    ("grad_fn sum", lambda: (torch.tensor([1., 2.], requires_grad=True) ** 2).sum(),
     "tensor(5., grad_fn=<SumBackward0>)"),
    ("grad_fn float64", lambda: torch.tensor([1., 2.], dtype=torch.float64,
                                             requires_grad=True).exp(),
     "tensor([2.7183, 7.3891], dtype=torch.float64, grad_fn=<ExpBackward0>)"),
    ("nan inf", lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), 1.]),
     "tensor([nan, inf, -inf, 1.])"),
    ("nan inf fraction", lambda: torch.tensor([float("nan"), float("inf"), 1.5]),
     "tensor([   nan,    inf, 1.5000])"),
    ("nan only", lambda: torch.tensor([float("nan")]),
     "tensor([nan])"),
    ("zero and inf", lambda: torch.tensor([0., float("inf")]),
     "tensor([0., inf])"),
    ("-inf and nan", lambda: torch.tensor([-float("inf"), float("nan")]),
     "tensor([-inf, nan])"),
    ("long line", lambda: torch.arange(30.) / 7,
     "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
     "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
     "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
     "        3.8571, 4.0000, 4.1429])"),
    ("long int line", lambda: torch.arange(100) * 1000,
     "tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
     "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000,\n"
     "        20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000, 28000, 29000,\n"
     "        30000, 31000, 32000, 33000, 34000, 35000, 36000, 37000, 38000, 39000,\n"
     "        40000, 41000, 42000, 43000, 44000, 45000, 46000, 47000, 48000, 49000,\n"
     "        50000, 51000, 52000, 53000, 54000, 55000, 56000, 57000, 58000, 59000,\n"
     "        60000, 61000, 62000, 63000, 64000, 65000, 66000, 67000, 68000, 69000,\n"
     "        70000, 71000, 72000, 73000, 74000, 75000, 76000, 77000, 78000, 79000,\n"
     "        80000, 81000, 82000, 83000, 84000, 85000, 86000, 87000, 88000, 89000,\n"
     "        90000, 91000, 92000, 93000, 94000, 95000, 96000, 97000, 98000, 99000])"),
    ("long line requires_grad", lambda: (torch.arange(20.) / 3).requires_grad_(),
     "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
     "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
     "        6.0000, 6.3333], requires_grad=True)"),
    ("long 2-D", lambda: (torch.arange(40.) / 3).reshape(2, 20),
     "tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n"
     "          2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n"
     "          5.3333,  5.6667,  6.0000,  6.3333],\n"
     "        [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n"
     "          9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n"
     "         12.0000, 12.3333, 12.6667, 13.0000]])"),
    ("suffix wraps grad_fn", lambda: torch.arange(16.).requires_grad_() * 1.5,
     "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
     "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000],\n"
     "       grad_fn=<MulBackward0>)"),
    ("suffix wraps dtype", lambda: torch.tensor([1.2345, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.],
                                                dtype=torch.float64, requires_grad=True),
     "tensor([1.2345, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.0000],\n"
     "       dtype=torch.float64, requires_grad=True)"),
    ("summarised ones", lambda: torch.ones(1001),
     "tensor([1., 1., 1.,  ..., 1., 1., 1.])"),
    ("summarised ints", lambda: torch.arange(1001),
     "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    ("summarised sci", lambda: torch.arange(2000.),
     "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
     "        1.9990e+03])"),
    ("summarised 2-D", lambda: torch.arange(1500).reshape(50, 30),
     "tensor([[   0,    1,    2,  ...,   27,   28,   29],\n"
     "        [  30,   31,   32,  ...,   57,   58,   59],\n"
     "        [  60,   61,   62,  ...,   87,   88,   89],\n"
     "        ...,\n"
     "        [1410, 1411, 1412,  ..., 1437, 1438, 1439],\n"
     "        [1440, 1441, 1442,  ..., 1467, 1468, 1469],\n"
     "        [1470, 1471, 1472,  ..., 1497, 1498, 1499]])"),
]


@pytest.mark.parametrize("make, expected", [(m, e) for _, m, e in REPRS],
                         ids=[name for name, _, _ in REPRS])
def test_repr_matches_pytorch(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_repr_of_summarised_3d_tensor():
    t = torch.arange(2000.).reshape(10, 10, 20)
    text = repr(t)
    assert text.startswith(
        "tensor([[[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.7000e+01,\n"
        "          1.8000e+01, 1.9000e+01],\n"
        "         [2.0000e+01, 2.1000e+01, 2.2000e+01,  ..., 3.7000e+01,\n")
    assert "         ...,\n" in text and "\n\n        ...,\n\n" in text
    assert text.endswith(
        "         [1.9800e+03, 1.9810e+03, 1.9820e+03,  ..., 1.9970e+03,\n"
        "          1.9980e+03, 1.9990e+03]]])")
    assert text.count("\n") == 84


def test_repr_of_non_leaf_after_no_grad_and_detach():
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        y = x * 2
    assert repr(y) == "tensor([2., 4.])"
    assert repr((x * 2).detach()) == "tensor([2., 4.])"
    assert repr(x.grad_fn) == "None"


def test_format_of_0d_tensor():
    assert f"{torch.tensor(2.5):.2f}" == "2.50"
    assert f"{torch.tensor(3)}" == "3"


@pytest.mark.gpu
def test_repr_on_cuda():
    assert repr(torch.tensor([1., 2.], device="cuda")) == "tensor([1., 2.], device='cuda:0')"
    assert repr(torch.tensor([1., 2.], device="cuda", dtype=torch.float64)) == (
        "tensor([1., 2.], device='cuda:0', dtype=torch.float64)")
    assert repr(torch.tensor([1., 2.], device="cuda", requires_grad=True)) == (
        "tensor([1., 2.], device='cuda:0', requires_grad=True)")


# ------------------------------------------------------ small value types --
def test_size_repr_and_behaviour(device):
    t = torch.ones(2, 3, device=device)
    assert repr(t.shape) == "torch.Size([2, 3])"
    assert repr(torch.ones((), device=device).shape) == "torch.Size([])"
    assert repr(torch.Size([4])) == "torch.Size([4])"
    assert t.shape == (2, 3) and t.size() == torch.Size([2, 3])
    assert t.size(1) == 3 and t.size(-1) == 3 and t.shape[0] == 2
    assert isinstance(t.shape, tuple)
    assert torch.ones(2, 3, 4, device=device).shape.numel() == 24


def test_device_repr():
    assert repr(torch.ones(1).device) == "device(type='cpu')"
    assert str(torch.ones(1).device) == "cpu"
    assert repr(torch.device("cpu")) == "device(type='cpu')"
    assert repr(torch.device("cuda:1")) == "device(type='cuda', index=1)"
    assert str(torch.device("cuda:1")) == "cuda:1"
    assert torch.ones(1).device == torch.device("cpu") and not torch.ones(1).is_cuda


def test_device_repr_without_index():
    assert repr(torch.device("cuda")) == "device(type='cuda')"
    assert str(torch.device("cuda")) == "cuda"


def test_device_of_tensor(device):
    t = torch.ones(2, device=device)
    assert t.device.type == device
    assert t.is_cuda == (device == "cuda")


def test_dtype_repr():
    assert repr(torch.float32) == "torch.float32"
    assert repr(torch.float64) == F64
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.long is torch.int64
    assert torch.ones(1).type() == "torch.FloatTensor"
    assert torch.tensor([1]).type() == "torch.LongTensor"


# ----------------------------------------------------------------- dtypes --
@pytest.mark.parametrize("make, dtype", [
    (lambda d: torch.tensor(1.5, device=d), "float32"),
    (lambda d: torch.tensor([1.5, 2], device=d), "float32"),
    (lambda d: torch.tensor(np.array([1.5]), device=d), "float64"),
    (lambda d: torch.tensor(np.array([1.5], dtype=np.float32), device=d), "float32"),
    (lambda d: torch.tensor([1, 2], device=d), "int64"),
    (lambda d: torch.tensor(np.array([1], dtype=np.int32), device=d), "int32"),
    (lambda d: torch.tensor([True], device=d), "bool"),
    (lambda d: torch.zeros(2, device=d), "float32"),
    (lambda d: torch.arange(3, device=d), "int64"),
    (lambda d: torch.arange(3., device=d), "float32"),
    (lambda d: torch.full((2,), 3, device=d), "int64"),
    (lambda d: torch.full((2,), 3., device=d), "float32"),
], ids=["py float", "float list", "numpy float64", "numpy float32", "py ints", "numpy int32",
        "bools", "zeros", "arange int", "arange float", "full int", "full float"])
def test_creation_dtypes(device, make, dtype):
    assert make(device).dtype is getattr(torch, dtype)


def test_from_numpy_keeps_float64():
    assert torch.from_numpy(np.array([1.5])).dtype is torch.float64


@pytest.mark.parametrize("compute, dtype", [
    (lambda d: torch.tensor([1, 2], device=d) * 2.5, "float32"),
    (lambda d: torch.tensor([1, 2], device=d) * 2, "int64"),
    (lambda d: torch.ones(2, device=d) * torch.tensor(2., dtype=torch.float64, device=d),
     "float32"),
    (lambda d: torch.tensor(2., dtype=torch.float64, device=d) * torch.ones(2, device=d),
     "float32"),
    (lambda d: torch.ones(2, device=d) * torch.ones(2, dtype=torch.float64, device=d),
     "float64"),
    (lambda d: torch.tensor([1, 2], device=d) * torch.tensor(2., device=d), "float32"),
    (lambda d: torch.tensor([1, 2], device=d) * torch.tensor(2., dtype=torch.float64,
                                                              device=d), "float64"),
    (lambda d: torch.tensor([1], dtype=torch.int32, device=d) * torch.tensor([1], device=d),
     "int64"),
    (lambda d: torch.tensor([1], dtype=torch.int32, device=d) * torch.tensor(1, device=d),
     "int32"),
    (lambda d: torch.tensor([True], device=d) + torch.tensor([True], device=d), "bool"),
    (lambda d: torch.tensor([True], device=d) + 1, "int64"),
    (lambda d: torch.tensor([True], device=d) * 1.5, "float32"),
    (lambda d: torch.ones(1, dtype=torch.float64, device=d) * 1.5, "float64"),
    (lambda d: torch.ones(1, dtype=torch.float16, device=d) * torch.tensor(1., device=d),
     "float16"),
    (lambda d: torch.ones(2, device=d) * np.float64(2), "float32"),
    (lambda d: torch.ones(2, device=d) + torch.tensor([1, 2], device=d), "float32"),
    (lambda d: torch.tensor([1, 2], device=d) ** 0.5, "float32"),
], ids=["int*2.5", "int*2", "f32*f64 0-d", "f64 0-d*f32", "f32*f64", "int*f32 0-d",
        "int*f64 0-d", "int32*int64", "int32*int64 0-d", "bool+bool", "bool+1", "bool*1.5",
        "f64*1.5", "f16*f32 0-d", "f32*numpy f64 scalar", "f32+int", "int**0.5"])
def test_type_promotion(device, compute, dtype):
    assert compute(device).dtype is getattr(torch, dtype)


def test_int_tensor_times_float_values(device):
    assert repr(torch.tensor([1, 2], device=device).cpu() * 2.5) == "tensor([2.5000, 5.0000])"


@pytest.mark.parametrize("compute", [
    lambda d: torch.tensor([1, 2], device=d) / 2,
    lambda d: torch.tensor([3], device=d) / torch.tensor([2], device=d),
], ids=["int/2", "int/int"])
def test_true_division_of_ints_gives_default_float(device, compute):
    out = compute(device)
    assert out.dtype is torch.float32


# ------------------------------------------------------- memory and values --
def test_from_numpy_shares_memory():
    a = np.array([1., 2.])
    t = torch.from_numpy(a)
    a[0] = 9.
    t[1] = 7.
    assert t.tolist() == [9., 7.] and a.tolist() == [9., 7.]


def test_tensor_copies_numpy_input():
    a = np.array([1., 2.])
    t = torch.tensor(a)
    a[0] = 9.
    assert t.tolist() == [1., 2.]


def test_numpy_shares_memory():
    t = torch.tensor([1., 2.])
    n = t.numpy()
    n[0] = 5.
    assert t.tolist() == [5., 2.]
    assert isinstance(n, np.ndarray) and n.dtype == np.float32


def test_item_and_tolist(device):
    f = torch.tensor(2.5, device=device).item()
    i = torch.tensor([3], device=device).item()
    assert f == 2.5 and type(f) is float
    assert i == 3 and type(i) is int
    assert torch.tensor([[1, 2], [3, 4]], device=device).tolist() == [[1, 2], [3, 4]]
    assert torch.tensor(2., device=device).tolist() == 2.0
    assert float(torch.tensor([1.5], device=device)) == 1.5
    assert int(torch.tensor(7, device=device)) == 7


def test_python_protocols(device):
    t = torch.ones(4, 2, device=device)
    assert len(t) == 4
    assert [r.tolist() for r in t][0] == [1., 1.]
    assert bool(torch.tensor(1., device=device))
    with pytest.raises(RuntimeError):
        bool(t)


# ------------------------------------------------------------ legacy names --
def test_legacy_tensor_types():
    f = torch.FloatTensor([1, 2])
    assert repr(f) == "tensor([1., 2.])"
    assert torch.FloatTensor(2, 3).shape == torch.Size([2, 3])
    assert repr(torch.DoubleTensor([1, 2])) == "tensor([1., 2.], dtype=torch.float64)"
    assert repr(torch.LongTensor([1, 2])) == "tensor([1, 2])"
    assert isinstance(torch.ones(1), torch.FloatTensor)
    assert not isinstance(torch.tensor([1]), torch.FloatTensor)
    assert isinstance(torch.tensor([1]), torch.LongTensor)
    assert isinstance(torch.ones(1, dtype=torch.float64), torch.DoubleTensor)


def test_variable_shim():
    x = torch.autograd.Variable(torch.tensor([1., 2.]), requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert isinstance(x, torch.Tensor) and x.is_leaf
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3., 3.]
    plain = torch.autograd.Variable(torch.ones(2))
    assert not plain.requires_grad


def test_variable_volatile_warns_and_refuses_with_requires_grad():
    with pytest.warns(UserWarning, match=r"volatile was removed and now has no effect\. "
                      r"Use `with torch.no_grad\(\):` instead\."):
        v = torch.autograd.Variable(torch.ones(2), volatile=True)
    assert not v.requires_grad
    with pytest.raises(ValueError, match="can't be volatile and require_grad at the same time"):
        torch.autograd.Variable(torch.ones(2), volatile=True, requires_grad=True)


# ------------------------------------------------------------ shape access --
def test_shape_ndim_dim_numel(device):
    t = torch.ones(2, 3, 4, device=device)
    assert t.shape == (2, 3, 4)
    assert t.ndim == 3 and t.dim() == 3
    assert t.numel() == 24 and torch.numel(t) == 24
    s = torch.tensor(5., device=device)
    assert s.shape == () and s.ndim == 0 and s.numel() == 1


def test_transpose_properties(device):
    m = torch.arange(6., device=device).reshape(2, 3)
    assert m.T.shape == (3, 2)
    assert m.T.tolist() == [[0., 3.], [1., 4.], [2., 5.]]
    b = torch.ones(2, 3, 4, device=device)
    assert b.mT.shape == (2, 4, 3)
    assert torch.ones(3, device=device).T.shape == (3,)
    x = torch.ones(2, 3, requires_grad=True, device=device)
    assert x.T.grad_fn.name() == "PermuteBackward0"
    assert x.mT.grad_fn.name() == "TransposeBackward0"
    (x.T * torch.arange(6., device=device).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == [[0., 2., 4.], [1., 3., 5.]]


def test_transpose_is_a_view(device):
    m = torch.zeros(2, 3, device=device)
    m.T[0, 1] = 5.
    assert m.tolist() == [[0., 0., 0.], [5., 0., 0.]]
    assert m._version == 1
