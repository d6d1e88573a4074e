"""nn: Parameter, Module, layers, losses, functional, init, utils.

Where PyTorch is installed it is the oracle: the same model-building code runs
on both libraries (``build(nn)``), weights are copied across, and names, reprs,
values and gradients are compared.
"""
import copy
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import nn
from autograd_kit.nn import functional as F


def arr(t):
    return np.asarray(t.detach().cpu())


def put(a, device, requires_grad=False):
    return ak.tensor(np.asarray(a), device=device, requires_grad=requires_grad)


def copy_weights(src_torch, dst):
    """Give ``dst`` (ours) the parameter values of ``src_torch`` (PyTorch)."""
    theirs = list(src_torch.parameters())
    ours = list(dst.parameters())
    assert len(theirs) == len(ours)
    with ak.no_grad():
        for p, q in zip(ours, theirs, strict=True):
            p.copy_(ak.tensor(q.detach().numpy()))


def mlp(nn_, dtype=None, device=None):
    return nn_.Sequential(nn_.Linear(3, 5, dtype=dtype, device=device), nn_.Tanh(),
                          nn_.Linear(5, 4, dtype=dtype, device=device), nn_.ReLU(),
                          nn_.Linear(4, 2, dtype=dtype, device=device))


class Net(nn.Module):
    """A hand-written module: two layers, a buffer and a plain attribute."""

    def __init__(self, nn_=nn):
        super().__init__()
        self.fc1 = nn_.Linear(2, 4)
        self.act = nn_.ReLU()
        self.fc2 = nn_.Linear(4, 1, bias=False)
        self.scale = 3.0


# -- Parameter ------------------------------------------------------------------------
def test_parameter_is_a_leaf_requiring_grad_and_prints_like_pytorch(device):
    t = ak.tensor([1.0, 2.0], device=device)
    p = nn.Parameter(t)
    assert isinstance(p, ak.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    if device == "cpu":
        assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
        assert str(p) == repr(p)
        frozen = nn.Parameter(ak.tensor([1.0, 2.0]), requires_grad=False)
        assert repr(frozen) == "Parameter containing:\ntensor([1., 2.])"
    assert type(p * 2) is ak.Tensor and type(p.detach()) is ak.Tensor
    with ak.no_grad():
        t.add_(1.0)  # Parameter(t) shares memory with t, as in PyTorch
    assert arr(p).tolist() == [2.0, 3.0]


def test_parameter_repr_matches_pytorch():
    torch = pytest.importorskip("torch")
    for values in ([1.0, 2.0], [[0.5, -1.25], [3.0, 4.0]]):
        for rg in (True, False):
            ours = nn.Parameter(ak.tensor(values), requires_grad=rg)
            theirs = torch.nn.Parameter(torch.tensor(values), requires_grad=rg)
            assert repr(ours) == repr(theirs)


def test_parameter_rejects_integer_data_and_survives_deepcopy():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ak.tensor([1, 2]))
    p = nn.Parameter(ak.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q is not p
    assert arr(q).tolist() == [1.0, 2.0]


# -- Module registration and traversal ------------------------------------------------
def test_module_registers_parameters_modules_and_buffers():
    net = Net()
    net.register_buffer("running", ak.zeros(2))
    net.register_buffer("scratch", ak.ones(1), persistent=False)
    names = [n for n, _ in net.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert len(list(net.modules())) == 4 and list(net.children())[1] is net.act
    assert [n for n, _ in net.named_buffers()] == ["running", "scratch"]
    assert list(net.state_dict()) == ["running", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert net.scale == 3.0 and "scale" not in net._parameters
    assert net.fc2.bias is None
    del net.fc2
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias"]


def test_parameter_names_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = mlp(nn), mlp(torch.nn)
    assert [n for n, _ in ours.named_parameters()] == \
        [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    shapes = [tuple(p.shape) for p in ours.parameters()]
    assert shapes == [tuple(p.shape) for p in theirs.parameters()]


def test_shared_parameters_are_listed_once():
    layer = nn.Linear(2, 2)
    model = nn.Sequential(layer, nn.ReLU(), layer)
    assert len(list(model.parameters())) == 2
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    tied = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    tied[1].weight = tied[0].weight  # weight tying: one Parameter in two modules
    assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert len(list(tied.named_parameters(remove_duplicate=False))) == 4


def test_assignment_errors_use_pytorch_wording():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Linear(2, 3), torch.nn.Linear(2, 3)
    messages = []
    for mod, lib in ((ours, ak), (theirs, torch)):
        with pytest.raises(TypeError) as info:
            mod.weight = lib.zeros(3, 2)
        messages.append(str(info.value))
    assert messages[0] == messages[1]

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ak.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(ak.zeros(1))
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = ours.nope


# -- reprs ------------------------------------------------------------------------------
def _repr_models(nn_):
    class Block(nn_.Module):
        def __init__(self):
            super().__init__()
            self.body = nn_.Sequential(nn_.Linear(4, 4), nn_.LeakyReLU(0.2))
            self.heads = nn_.ModuleList([nn_.Linear(4, 2) for _ in range(3)] + [nn_.Sigmoid()])

    return [
        nn_.Sequential(nn_.Linear(2, 3), nn_.ReLU()),
        nn_.Sequential(nn_.Flatten(), nn_.Linear(8, 3, bias=False), nn_.Tanh(),
                       nn_.Dropout(0.1), nn_.Softmax(dim=1), nn_.Identity(),
                       nn_.LogSoftmax(dim=-1), nn_.ReLU(inplace=True)),
        Block(), nn_.ModuleList(), nn_.Sequential(), nn_.MSELoss(),
        nn_.CrossEntropyLoss(reduction="sum"), nn_.NLLLoss(), nn_.BCELoss(), nn_.L1Loss(),
        nn_.Sequential(OrderedDict([("hidden", nn_.Linear(1, 2)), ("out", nn_.Sigmoid())])),
        nn_.Softmax(), nn_.LeakyReLU(), nn_.Flatten(0, 2),
    ]


def test_module_reprs_are_identical_to_pytorch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_repr_models(nn), _repr_models(torch.nn), strict=True):
        assert repr(ours) == repr(theirs)


def test_module_repr_without_pytorch():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    assert repr(model) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, "
                           "bias=True)\n  (1): ReLU()\n)")
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU()])) == "ModuleList(\n  (0-1): 2 x ReLU()\n)"


# -- Linear -----------------------------------------------------------------------------
def test_linear_graph_matches_pytorch_nodes(device):
    layer = nn.Linear(3, 2, device=device)
    y = layer(ak.randn(4, 3, device=device))
    fn = y.grad_fn
    assert fn.name() == "AddmmBackward0"
    (acc_b, _), (none, _), (t_node, _) = fn.next_functions
    assert acc_b.name() == "torch::autograd::AccumulateGrad" and acc_b.variable is layer.bias
    assert none is None
    assert t_node.name() == "TBackward0"
    assert t_node.next_functions[0][0].variable is layer.weight
    x = ak.randn(4, 3, device=device, requires_grad=True)
    assert layer(x).grad_fn.next_functions[1][0].variable is x
    no_bias = nn.Linear(3, 2, bias=False, device=device)
    assert no_bias(x).grad_fn.name() == "MmBackward0"


def test_linear_node_names_agree_with_pytorch():
    torch = pytest.importorskip("torch")

    def names(lib, nn_, bias, shape):
        lib.manual_seed(0)
        y = nn_.Linear(3, 2, bias=bias)(lib.randn(*shape, requires_grad=True))
        fn = y.grad_fn
        return [fn.name()] + [n.name() if n else None for n, _ in fn.next_functions]

    for bias in (True, False):
        assert names(ak, nn, bias, (4, 3)) == names(torch, torch.nn, bias, (4, 3))


def test_linear_default_init_is_uniform_in_one_over_sqrt_fan_in():
    ak.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = arr(layer.weight), arr(layer.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(-k, k) has standard deviation k/√3: the draw really fills the whole range
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert abs(w.mean()) < 0.02 * bound and np.abs(w).max() > 0.99 * bound
    ak.manual_seed(0)
    assert np.array_equal(arr(nn.Linear(400, 300).weight), w)  # reproducible


def test_linear_dtype_and_rank_3_input_match_pytorch(device):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Linear(3, 2, dtype=torch.float64)
    ours = nn.Linear(3, 2, dtype=ak.float64, device=device)
    assert ours.weight.dtype == ak.float64
    copy_weights(theirs, ours)
    x = np.random.default_rng(0).standard_normal((2, 5, 3))
    xt = torch.tensor(x, requires_grad=True)
    xo = put(x, device, requires_grad=True)
    yt, yo = theirs(xt), ours(xo)
    assert np.allclose(arr(yo), yt.detach().numpy())
    (yt ** 2).sum().backward()
    (yo ** 2).sum().backward()
    assert np.allclose(arr(xo.grad), xt.grad.numpy())
    assert np.allclose(arr(ours.weight.grad), theirs.weight.grad.numpy())
    assert np.allclose(arr(ours.bias.grad), theirs.bias.grad.numpy())


def test_mlp_forward_and_gradients_match_pytorch(device):
    torch = pytest.importorskip("torch")
    theirs, ours = mlp(torch.nn, dtype=torch.float64), mlp(nn, dtype=ak.float64, device=device)
    copy_weights(theirs, ours)
    x = np.random.default_rng(1).standard_normal((6, 3))
    target = np.random.default_rng(2).standard_normal((6, 2))
    lt = torch.nn.MSELoss()(theirs(torch.tensor(x)), torch.tensor(target))
    lo = nn.MSELoss()(ours(put(x, device)), put(target, device))
    lt.backward()
    lo.backward()
    assert np.isclose(lo.item(), lt.item())
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert np.allclose(arr(p.grad), q.grad.numpy())


def test_inplace_activations_and_any_input_rank_match_pytorch(device):
    torch = pytest.importorskip("torch")

    def build(nn_, lib):
        return nn_.Sequential(nn_.Linear(3, 4, dtype=lib.float64), nn_.ReLU(inplace=True),
                              nn_.Linear(4, 4, dtype=lib.float64),
                              nn_.LeakyReLU(0.1, inplace=True), nn_.Linear(4, 2, dtype=lib.float64))

    theirs, ours = build(torch.nn, torch), build(nn, ak).to(device)
    copy_weights(theirs, ours)
    x = np.random.default_rng(6).standard_normal((2, 5, 3))
    for xi in (x[0, 0], x[0], x):  # one sample, a batch, a batch of sequences
        xo, xt = put(xi, device, requires_grad=True), torch.tensor(xi, requires_grad=True)
        yo, yt = ours(xo), theirs(xt)
        assert np.allclose(arr(yo), yt.detach().numpy())
        (yo ** 2).sum().backward()
        (yt ** 2).sum().backward()
        assert np.allclose(arr(xo.grad), xt.grad.numpy())
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            assert np.allclose(arr(p.grad), q.grad.numpy())
        ours.zero_grad()
        theirs.zero_grad()


def test_models_survive_deepcopy_and_pickle():
    import pickle
    model = mlp(nn)
    x = ak.randn(3, 3)
    for twin in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert type(twin[0].weight) is nn.Parameter and twin[0].weight is not model[0].weight
        assert np.allclose(arr(twin(x)), arr(model(x)))
        assert [n for n, _ in twin.named_parameters()] == [n for n, _ in model.named_parameters()]
    best = copy.deepcopy(model.state_dict())  # the usual "keep the best weights" idiom
    with ak.no_grad():
        model[0].weight.zero_()
    assert not np.all(arr(best["0.weight"]) == 0)


# -- state_dict ---------------------------------------------------------------------------
def test_state_dict_round_trip_keeps_parameter_objects(device):
    a, b = mlp(nn, device=device), mlp(nn, device=device)
    x = ak.randn(4, 3, device=device)
    assert not np.allclose(arr(a(x)), arr(b(x)))
    sd = a.state_dict()
    assert isinstance(sd, OrderedDict)
    assert all(not v.requires_grad and v.grad_fn is None for v in sd.values())
    before = [id(p) for p in b.parameters()]
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert [id(p) for p in b.parameters()] == before  # copied in place, not replaced
    assert all(p.requires_grad and p.is_leaf for p in b.parameters())
    assert np.allclose(arr(a(x)), arr(b(x)))
    with ak.no_grad():
        b[0].weight.add_(1.0)  # the copies are independent of a's tensors
    assert not np.allclose(arr(a[0].weight), arr(b[0].weight))


def test_state_dict_values_share_memory_with_parameters():
    layer = nn.Linear(2, 2)
    sd = layer.state_dict()
    with ak.no_grad():
        layer.weight.zero_()
    assert np.all(arr(sd["weight"]) == 0)


def test_load_state_dict_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    linear = lambda lib: lib.nn.Linear(2, 3)  # noqa: E731
    seq = lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())  # noqa: E731
    cases = [(linear, lambda lib: {"weight": lib.zeros(3, 2), "foo": lib.zeros(1)}),
             (linear, lambda lib: {"weight": lib.zeros(2, 2), "bias": lib.zeros(3)}),
             (seq, lambda lib: {"0.weight": lib.zeros(3, 3), "1.weight": lib.zeros(1),
                                "extra": lib.zeros(1)})]
    for build, make in cases:
        messages = []
        for lib in (ak, torch):
            with pytest.raises(RuntimeError) as info:
                build(lib).load_state_dict(make(lib))
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    nested = [lib.nn.Sequential(lib.nn.Linear(1, 1)).load_state_dict(
        {"0.weight": lib.zeros(1, 1), "1.weight": lib.zeros(1)}, strict=False)
        for lib in (ak, torch)]
    assert repr(nested[0]) == repr(nested[1])
    assert nested[0].missing_keys == ["0.bias"] and nested[0].unexpected_keys == ["1.weight"]


def test_load_state_dict_rejects_non_mappings():
    with pytest.raises(TypeError, match="dict-like"):
        nn.Linear(1, 1).load_state_dict([1, 2])


# -- grads, modes, devices --------------------------------------------------------------
def test_zero_grad_set_to_none_and_in_place(device):
    model = mlp(nn, device=device)
    model(ak.randn(2, 3, device=device)).sum().backward()
    grads = [p.grad for p in model.parameters()]
    assert all(g is not None for g in grads)
    model.zero_grad(set_to_none=False)
    assert all(p.grad is g for p, g in zip(model.parameters(), grads, strict=True))  # same tensors
    assert all(np.all(arr(p.grad) == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_train_eval_and_dropout():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert model.training and model[1].training
    assert model.eval() is model and not model[1].training
    x = ak.ones(1000, 100)
    assert model[1](x) is x  # identity when evaluating
    model.train()
    out = arr(model[1](x))
    zeros = (out == 0).mean()
    assert 0.4 < zeros < 0.6 and np.allclose(out[out != 0], 2.0)


def test_requires_grad_and_dtype_conversion_keep_identity(device):
    model = mlp(nn, device=device)
    ids = [id(p) for p in model.parameters()]
    assert model.double() is model
    assert all(p.dtype == ak.float64 for p in model.parameters())
    assert [id(p) for p in model.parameters()] == ids
    assert model(ak.randn(2, 3, dtype=ak.float64, device=device)).dtype == ak.float64
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    assert model(ak.randn(2, 3, dtype=ak.float64, device=device)).grad_fn is None


def test_to_device_moves_parameters_grads_and_buffers(device):
    model = Net()
    model.register_buffer("running", ak.zeros(4))
    model.fc2(model.act(model.fc1(ak.randn(3, 2)))).sum().backward()
    ids = [id(p) for p in model.parameters()]
    assert model.to(device) is model
    for p in model.parameters():
        assert p.device.type == device and p.grad.device.type == device
    assert model.running.device.type == device
    assert [id(p) for p in model.parameters()] == ids
    model.cpu()
    assert all(p.device.type == "cpu" for p in model.parameters())


# -- containers ---------------------------------------------------------------------------
def test_sequential_indexing_slicing_and_append():
    torch = pytest.importorskip("torch")

    def build(nn_):
        return nn_.Sequential(nn_.Linear(2, 3), nn_.ReLU(), nn_.Linear(3, 1))

    ours, theirs = build(nn), build(torch.nn)
    assert len(ours) == 3 and isinstance(ours[-1], nn.Linear) and ours[1] is list(ours)[1]
    assert repr(ours[1:]) == repr(theirs[1:])
    assert isinstance(ours[1:], nn.Sequential)
    ours.append(nn.Sigmoid())
    theirs.append(torch.nn.Sigmoid())
    ours.insert(1, nn.Tanh())
    theirs.insert(1, torch.nn.Tanh())
    del ours[0]
    del theirs[0]
    assert repr(ours) == repr(theirs)
    with pytest.raises(IndexError):
        ours[10]


def test_module_list_registers_its_modules():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Linear(2, 1))

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = layers

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = Stack()
    assert len(layers) == 4 and layers[-1].out_features == 1
    assert len(list(model.parameters())) == 8
    assert [n for n, _ in model.named_parameters()][-1] == "layers.3.bias"
    assert tuple(model(ak.randn(5, 2)).shape) == (5, 1)
    assert isinstance(layers[1:], nn.ModuleList) and len(layers[1:]) == 3


# -- functional and losses ------------------------------------------------------------------
def _pair(x, device, torch, requires_grad=True):
    return put(x, device, requires_grad), torch.tensor(x, requires_grad=requires_grad)


def _check_same(ours_out, theirs_out, ours_in, theirs_in):
    assert np.allclose(arr(ours_out), theirs_out.detach().numpy())
    ours_out.sum().backward()
    theirs_out.sum().backward()
    for a, b in zip(ours_in, theirs_in, strict=True):
        assert np.allclose(arr(a.grad), b.grad.numpy())


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "leaky_relu", "softmax",
                                  "log_softmax"])
def test_activations_match_pytorch(name, device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((4, 5))
    xo, xt = _pair(x, device, torch)
    kwargs = {"dim": 1} if "softmax" in name else {}
    weights = np.linspace(-1, 1, 20).reshape(4, 5)  # a non-trivial upstream gradient
    yo = getattr(F, name)(xo, **kwargs) * put(weights, device)
    yt = getattr(torch.nn.functional, name)(xt, **kwargs) * torch.tensor(weights)
    _check_same(yo, yt, [xo], [xt])


def test_softmax_without_dim_warns_and_picks_pytorchs_dim():
    x = ak.randn(3, 4)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    assert np.allclose(arr(y).sum(axis=1), 1.0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_pytorch(reduction, device):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(4)
    logits, target = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    probs, labels = 1 / (1 + np.exp(-logits)), rng.integers(0, 3, size=6)
    soft = np.exp(target) / np.exp(target).sum(1, keepdims=True)
    cases = [
        (F.mse_loss, tf.mse_loss, logits, target),
        (F.l1_loss, tf.l1_loss, logits, target),
        (F.binary_cross_entropy, tf.binary_cross_entropy, probs, rng.random((6, 3))),
        (F.cross_entropy, tf.cross_entropy, logits, labels),
        (F.cross_entropy, tf.cross_entropy, logits, soft),
        (F.nll_loss, tf.nll_loss, np.log(soft), labels),
    ]
    for ours_fn, theirs_fn, x, y in cases:
        xo, xt = _pair(x, device, torch)
        lo = ours_fn(xo, put(y, device), reduction=reduction)
        lt = theirs_fn(xt, torch.tensor(y), reduction=reduction)
        assert tuple(lo.shape) == tuple(lt.shape)
        _check_same(lo, lt, [xo], [xt])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_unbatched_cross_entropy_matches_pytorch(reduction, device):
    torch = pytest.importorskip("torch")
    x = np.array([0.5, -1.0, 2.0])
    for label in (0, 2):
        xo, xt = _pair(x, device, torch)
        lo = F.cross_entropy(xo, put(np.int64(label), device), reduction=reduction)
        lt = torch.nn.functional.cross_entropy(xt, torch.tensor(label), reduction=reduction)
        assert tuple(lo.shape) == tuple(lt.shape) == ()
        _check_same(lo, lt, [xo], [xt])


def test_loss_modules_call_the_functions(device):
    x, y = ak.randn(5, 3, device=device), ak.randn(5, 3, device=device)
    assert np.isclose(nn.MSELoss()(x, y).item(), F.mse_loss(x, y).item())
    assert np.isclose(nn.L1Loss(reduction="sum")(x, y).item(), (x - y).abs().sum().item())
    labels = ak.tensor([0, 2, 1, 1, 0], device=device)
    assert np.isclose(nn.CrossEntropyLoss()(x, labels).item(),
                      nn.NLLLoss()(F.log_softmax(x, 1), labels).item())
    p = x.sigmoid()
    assert np.isclose(nn.BCELoss()(p, (y > 0).float()).item(),
                      F.binary_cross_entropy(p, (y > 0).float()).item())


def test_loss_misuse_gives_pytorch_messages():
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(ak.randn(3, 1), ak.randn(3))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but "
                                           "got Float"):
        F.cross_entropy(ak.randn(3, 2), ak.tensor([0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(ak.rand(3, 1), ak.rand(3))


# -- init and utils --------------------------------------------------------------------------
def test_init_functions_fill_in_place_without_recording():
    w = nn.Parameter(ak.empty(200, 100))
    bound = math.sqrt(6 / (200 + 100))
    assert nn.init.xavier_uniform_(w) is w
    assert np.abs(arr(w)).max() <= bound and np.abs(arr(w)).max() > 0.98 * bound
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    relu_bound = math.sqrt(2) * math.sqrt(3 / 100)
    assert np.abs(arr(w)).max() <= relu_bound and np.abs(arr(w)).max() > 0.98 * relu_bound
    nn.init.normal_(w, mean=2.0, std=0.5)
    assert abs(arr(w).mean() - 2.0) < 0.02 and abs(arr(w).std() - 0.5) < 0.02
    nn.init.constant_(w, 0.25)
    assert np.all(arr(w) == 0.25)
    nn.init.zeros_(w)
    assert np.all(arr(w) == 0)
    nn.init.ones_(w)
    assert np.all(arr(w) == 1)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_calculate_gain_matches_pytorch():
    torch = pytest.importorskip("torch")
    for name, param in [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                        ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)]:
        assert math.isclose(nn.init.calculate_gain(name, param),
                            torch.nn.init.calculate_gain(name, param))


@pytest.mark.parametrize("max_norm,norm_type", [(0.1, 2.0), (100.0, 2.0), (0.5, 1.0),
                                                (0.05, float("inf"))])
def test_clip_grad_norm_matches_pytorch(max_norm, norm_type, device):
    torch = pytest.importorskip("torch")
    theirs, ours = mlp(torch.nn, dtype=torch.float64), mlp(nn, dtype=ak.float64, device=device)
    copy_weights(theirs, ours)
    x = np.random.default_rng(5).standard_normal((8, 3))
    theirs(torch.tensor(x)).pow(2).sum().backward()
    ours(put(x, device)).pow(2).sum().backward()
    total_t = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type)
    total_o = nn.utils.clip_grad_norm_(ours.parameters(), max_norm, norm_type)
    assert np.isclose(total_o.item(), total_t.item())
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert np.allclose(arr(p.grad), q.grad.numpy())


def test_clip_grad_norm_limits_the_norm():
    p = nn.Parameter(ak.zeros(4))
    p.grad = ak.tensor([3.0, 4.0, 0.0, 0.0])
    total = nn.utils.clip_grad_norm_([p], max_norm=1.0)
    assert np.isclose(total.item(), 5.0)
    assert np.isclose(np.linalg.norm(arr(p.grad)), 1.0, atol=1e-5)
    nn.utils.clip_grad_value_([p], 0.5)
    assert np.abs(arr(p.grad)).max() <= 0.5


# -- it learns ------------------------------------------------------------------------------
def test_a_small_classifier_learns(device):
    """Two interleaved spirals-ish classes (XOR of the signs): not linearly separable."""
    ak.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(200, 2))
    labels = ((x[:, 0] > 0) ^ (x[:, 1] > 0)).astype(np.int64)
    X, Y = put(x.astype(np.float32), device), put(labels, device)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2)).to(device)
    loss_fn = nn.CrossEntropyLoss()
    opt = ak.optim.Adam(model.parameters(), lr=0.05)
    with ak.no_grad():
        first = loss_fn(model(X), Y).item()
    for _ in range(150):
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
    with ak.no_grad():
        final = loss_fn(model(X), Y).item()
        accuracy = (arr(model(X).argmax(1)) == labels).mean()
    chance = math.log(2)  # the loss of a classifier that knows nothing
    assert first > 0.8 * chance and final < 0.25 * first
    assert accuracy > 0.9


def test_a_small_regression_learns_with_sgd(device):
    ak.manual_seed(1)
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, size=(128, 1))
    X, Y = put(x.astype(np.float32), device), put(np.sin(x).astype(np.float32), device)
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
    opt = ak.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(300):
        opt.zero_grad()
        loss = F.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.05 * losses[0]
    assert losses[-1] < float(np.var(np.sin(x))) * 0.05  # far better than predicting the mean


def test_warnings_are_not_raised_by_normal_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = mlp(nn)
        F.mse_loss(model(ak.randn(4, 3)), ak.randn(4, 2)).backward()


def test_linear_on_one_example_records_pytorchs_nodes():
    """A 1-D input with a bias goes through addmm as one row, as in PyTorch:
    ViewBackward0 over AddmmBackward0 (whose input edge is a view of x)."""
    torch = pytest.importorskip("torch")

    def run(lib):
        w = lib.arange(12.0).reshape(3, 4).requires_grad_()
        b = lib.ones(3, requires_grad=True)
        x = lib.arange(4.0).requires_grad_()
        y = lib.nn.functional.linear(x, w, b)
        names, stack = [], [(y.grad_fn, 0)]
        while stack:
            fn, depth = stack.pop()
            names.append((depth, fn.name()))
            stack.extend((n, depth + 1) for n, _ in reversed(fn.next_functions) if n is not None)
        (y * lib.tensor([1.0, -2.0, 3.0])).sum().backward()
        return names, y.tolist(), x.grad.tolist(), w.grad.tolist(), b.grad.tolist()
    assert run(ak) == run(torch)
