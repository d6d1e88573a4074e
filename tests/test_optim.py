"""optim: SGD and Adam step for step against PyTorch; the Optimizer machinery.

The comparisons build the same float64 MLP in both libraries with the same
starting weights, train both for a few steps, and compare losses, gradients and
parameters after every step.
"""
import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import nn, optim


def arr(t):
    return np.asarray(t.detach().cpu())


def mlp(nn_, **kw):
    return nn_.Sequential(nn_.Linear(3, 6, **kw), nn_.Tanh(), nn_.Linear(6, 4, **kw),
                          nn_.ReLU(), nn_.Linear(4, 2, **kw))


def twin_models(torch, device):
    torch.manual_seed(0)
    theirs = mlp(torch.nn, dtype=torch.float64)
    ours = mlp(nn, dtype=ak.float64, device=device)
    with ak.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            p.copy_(ak.tensor(q.detach().numpy()))
    return ours, theirs


def data(device):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 2))
    return (ak.tensor(x, device=device), ak.tensor(y, device=device)), x, y


def train_side_by_side(torch, device, make_opt, steps=6):
    """Run ``steps`` training steps in both libraries, comparing as we go."""
    ours, theirs = twin_models(torch, device)
    (xo, yo), x, y = data(device)
    xt, yt = torch.tensor(x), torch.tensor(y)
    opt_o, opt_t = make_opt(optim, ours), make_opt(torch.optim, theirs)
    initial = [arr(p).copy() for p in ours.parameters()]
    for _ in range(steps):
        opt_o.zero_grad()
        opt_t.zero_grad()
        lo = nn.functional.mse_loss(ours(xo), yo)
        lt = torch.nn.functional.mse_loss(theirs(xt), yt)
        assert np.isclose(lo.item(), lt.item(), rtol=1e-10)
        lo.backward()
        lt.backward()
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            assert np.allclose(arr(p.grad), q.grad.numpy(), rtol=1e-9, atol=1e-12)
        opt_o.step()
        opt_t.step()
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            assert np.allclose(arr(p), q.detach().numpy(), rtol=1e-9, atol=1e-12)
    for p, old in zip(ours.parameters(), initial, strict=True):  # the models really moved
        assert not np.allclose(arr(p), old)
    return ours, theirs, opt_o, opt_t


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, weight_decay=0.01, nesterov=True),
    dict(lr=0.05, momentum=0.5, maximize=True),
]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=lambda c: ",".join(c))
def test_sgd_matches_pytorch(config, device):
    torch = pytest.importorskip("torch")
    ours, _, opt, _ = train_side_by_side(
        torch, device, lambda lib, m: lib.SGD(m.parameters(), **config))
    if config.get("momentum"):
        assert all("momentum_buffer" in opt.state[p] for p in ours.parameters())


ADAM_CONFIGS = [
    dict(),
    dict(lr=0.01, betas=(0.8, 0.99)),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, eps=1e-3, maximize=True),
]


@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=lambda c: ",".join(c) or "default")
def test_adam_matches_pytorch(config, device):
    torch = pytest.importorskip("torch")
    ours, _, opt, opt_t = train_side_by_side(
        torch, device, lambda lib, m: lib.Adam(m.parameters(), **config))
    p, q = next(iter(ours.parameters())), next(iter(opt_t.state))
    assert sorted(opt.state[p]) == sorted(opt_t.state[q])
    assert opt.state[p]["step"].item() == opt_t.state[q]["step"].item() == 6


def test_param_groups_with_their_own_settings_match_pytorch(device):
    torch = pytest.importorskip("torch")

    def make(lib, m):
        return lib.SGD([{"params": m[0].parameters()},
                        {"params": m[2].parameters(), "lr": 0.2, "momentum": 0.5},
                        {"params": m[4].parameters(), "weight_decay": 0.1}],
                       lr=0.05, momentum=0.9)

    _, _, opt, opt_t = train_side_by_side(torch, device, make)
    for g, h in zip(opt.param_groups, opt_t.param_groups, strict=True):
        for key in ("lr", "momentum", "weight_decay"):
            assert g[key] == h[key]


def test_updates_happen_in_place_under_no_grad(device):
    ak.manual_seed(0)  # a start where every ReLU passes a gradient, so every weight moves
    model = mlp(nn, device=device)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    params = list(model.parameters())
    before = [(id(p), p.data_ptr(), p._version, arr(p).copy()) for p in params]
    model(ak.randn(4, 3, device=device)).sum().backward()
    opt.step()
    for p, (ident, ptr, version, old) in zip(params, before, strict=True):
        assert id(p) == ident and p.data_ptr() == ptr  # same tensor, same memory
        assert p._version > version and not np.allclose(arr(p), old)
        assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_parameters_without_grad_are_left_alone(device):
    a, b = nn.Parameter(ak.ones(2, device=device)), nn.Parameter(ak.ones(2, device=device))
    opt = optim.Adam([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()
    assert np.all(arr(a) < 1) and np.all(arr(b) == 1)
    assert b not in opt.state or not opt.state[b]


def test_zero_grad_set_to_none_or_zeros(device):
    model = mlp(nn, device=device)
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(ak.randn(2, 3, device=device)).sum().backward()
    grads = [p.grad for p in model.parameters()]
    opt.zero_grad(set_to_none=False)
    for p, g in zip(model.parameters(), grads, strict=True):
        assert p.grad is g and np.all(arr(g) == 0)
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_gradients_accumulate_without_zero_grad(device):
    p = nn.Parameter(ak.tensor([1.0, 2.0], device=device))
    opt = optim.SGD([p], lr=0.0)
    for _ in range(3):
        (p * p).sum().backward()
        opt.step()
    assert arr(p.grad).tolist() == [6.0, 12.0]  # 3 × 2p
    opt.zero_grad()
    (p * p).sum().backward()
    assert arr(p.grad).tolist() == [2.0, 4.0]


def test_step_with_closure_returns_the_loss():
    p = nn.Parameter(ak.tensor([3.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 9.0 and arr(p).tolist() == [1.5]  # 3 - 0.25 · 6


# -- state_dict -----------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.05, amsgrad=True)],
                         ids=["sgd", "adam"])
def test_state_dict_round_trip_resumes_training_exactly(make, device):
    ak.manual_seed(0)
    model = mlp(nn, dtype=ak.float64, device=device)
    (x, y), _, _ = data(device)

    def step(m, opt):
        opt.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        opt.step()

    opt = make(model.parameters())
    for _ in range(3):
        step(model, opt)
    clone = mlp(nn, dtype=ak.float64, device=device)
    clone.load_state_dict(model.state_dict())
    opt2 = make(clone.parameters())
    opt2.load_state_dict(opt.state_dict())
    for _ in range(3):
        step(model, opt)
        step(clone, opt2)
    for p, q in zip(model.parameters(), clone.parameters(), strict=True):
        assert np.array_equal(arr(p), arr(q))
    first_o, first_c = next(iter(model.parameters())), next(iter(clone.parameters()))
    for key, value in opt.state[first_o].items():  # state was copied, not shared
        assert value is not opt2.state[first_c][key]


def test_state_dict_layout_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = twin_models(torch, "cpu")
    opts = [optim.SGD([{"params": ours[0].parameters()}, {"params": ours[2].parameters()}],
                      lr=0.1, momentum=0.9),
            torch.optim.SGD([{"params": theirs[0].parameters()},
                             {"params": theirs[2].parameters()}], lr=0.1, momentum=0.9)]
    for m, lib in ((ours, ak), (theirs, torch)):
        m(lib.ones(2, 3, dtype=lib.float64)).sum().backward()
    for opt in opts:
        opt.step()
    sd, sd_t = opts[0].state_dict(), opts[1].state_dict()
    assert list(sd) == list(sd_t) == ["state", "param_groups"]
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in sd_t["param_groups"]]
    assert sorted(sd["state"]) == sorted(sd_t["state"])
    for i, s in sd["state"].items():
        assert np.allclose(arr(s["momentum_buffer"]), sd_t["state"][i]["momentum_buffer"].numpy())


def test_load_state_dict_checks_the_groups():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    one = optim.SGD(a.parameters(), lr=0.1)
    two = optim.SGD([{"params": [a.weight]}, {"params": [a.bias]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        one.load_state_dict(two.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([b.weight], lr=0.1).load_state_dict(one.state_dict())


# -- construction errors --------------------------------------------------------------------
def test_constructor_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    cases = [("SGD", dict(lr=-1.0)), ("SGD", dict(lr=0.1, momentum=-0.5)),
             ("SGD", dict(lr=0.1, weight_decay=-1.0)), ("SGD", dict(lr=0.1, nesterov=True)),
             ("Adam", dict(lr=-1.0)), ("Adam", dict(eps=-1.0)), ("Adam", dict(betas=(1.0, 0.9))),
             ("Adam", dict(betas=(0.9, -0.1))), ("Adam", dict(weight_decay=-1.0))]
    for name, kwargs in cases:
        messages = []
        for lib in (ak, torch):
            with pytest.raises(ValueError) as info:
                getattr(lib.optim, name)(lib.nn.Linear(1, 1).parameters(), **kwargs)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    for bad, error in (([], ValueError), (ak.zeros(2, requires_grad=True), TypeError)):
        with pytest.raises(error) as ours:
            optim.SGD(bad, lr=0.1)
        with pytest.raises(error) as theirs:
            torch.optim.SGD(torch.zeros(2, requires_grad=True) if error is TypeError else [],
                            lr=0.1)
        assert str(ours.value) == str(theirs.value)


def test_a_parameter_may_not_be_in_two_groups():
    layer = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": layer.parameters()}, {"params": [layer.weight]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([layer.weight * 2], lr=0.1)


def test_a_linear_regression_converges(device):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 3))
    true_w, true_b = np.array([[1.5, -2.0, 0.5]]), 0.3
    y = x @ true_w.T + true_b
    X, Y = ak.tensor(x, device=device), ak.tensor(y, device=device)
    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.5),
                 lambda ps: optim.Adam(ps, lr=0.1)):
        model = nn.Linear(3, 1, dtype=ak.float64, device=device)
        opt = make(model.parameters())
        for _ in range(300):
            opt.zero_grad()
            nn.functional.mse_loss(model(X), Y).backward()
            opt.step()
        assert np.allclose(arr(model.weight), true_w, atol=1e-2)
        assert np.isclose(model.bias.item(), true_b, atol=1e-2)
