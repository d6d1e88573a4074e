"""RNNCell, LSTMCell and GRUCell: by their equations, by central differences, and
against PyTorch.

Without PyTorch the tests still check the numbers: each step against the cell's
equations written in numpy, every gradient (inputs, hidden states, weights) by
``gradcheck`` and second derivatives by ``gradgradcheck``, a sequence unrolled
over several steps, the shapes, the start from U(-1/√hidden, 1/√hidden) and the
error messages (PyTorch's wording).  With PyTorch installed: the same seed gives
the same parameters bit for bit, and values, gradients, printed cells, error
messages and the graph's nodes are compared.
"""
from __future__ import annotations

import collections
import doctest
import math

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import nn
from autograd_kit.autograd import gradcheck, gradgradcheck
from autograd_kit.nn import rnn

CELLS = ["RNNCell", "LSTMCell", "GRUCell"]
GATES = {"RNNCell": 1, "LSTMCell": 4, "GRUCell": 3}


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def arr(t):
    return np.asarray(t.detach().cpu())


def states(out):
    """A cell's output as a tuple: (h,) or the LSTM's (h, c)."""
    return out if isinstance(out, tuple) else (out,)


def hidden_arg(name, states_):
    """What a cell takes as its hidden state: one tensor, or the LSTM's pair."""
    return tuple(states_) if name == "LSTMCell" else states_[0]


# -- the equations, in numpy (float64) -----------------------------------------------
def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def reference_step(name, x, hs, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    """One step on a batch, straight from the equations in ``rnn.py``."""
    b_ih = 0 if b_ih is None else b_ih
    b_hh = 0 if b_hh is None else b_hh
    gi, gh = x @ w_ih.T + b_ih, hs[0] @ w_hh.T + b_hh
    if name == "RNNCell":
        pre = gi + gh
        return (np.tanh(pre) if nonlinearity == "tanh" else np.maximum(pre, 0),)
    if name == "LSTMCell":
        i, f, g, o = np.split(gi + gh, 4, axis=1)
        c = sigmoid(f) * hs[1] + sigmoid(i) * np.tanh(g)
        return sigmoid(o) * np.tanh(c), c
    (xr, xz, xn), (hr, hz, hn) = np.split(gi, 3, axis=1), np.split(gh, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return ((1 - z) * n + z * hs[0],)


def params(cell):
    """weight_ih, weight_hh, bias_ih, bias_hh as numpy arrays (None without bias)."""
    return [None if p is None else arr(p)
            for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]


# -- construction ---------------------------------------------------------------------
@pytest.mark.parametrize("name", CELLS)
@pytest.mark.parametrize("bias", [True, False])
def test_parameter_names_shapes_and_start(name, bias):
    cell = getattr(nn, name)(5, 7, bias=bias)
    k = GATES[name]
    want = [("weight_ih", (k * 7, 5)), ("weight_hh", (k * 7, 7))]
    want += [("bias_ih", (k * 7,)), ("bias_hh", (k * 7,))] if bias else []
    assert [(n, tuple(p.shape)) for n, p in cell.named_parameters()] == want
    assert cell.bias is bias and cell.input_size == 5 and cell.hidden_size == 7
    if not bias:
        assert cell.bias_ih is None and cell.bias_hh is None
    bound = 1 / math.sqrt(7)
    for p in cell.parameters():
        assert p.requires_grad and p.dtype == ak.float32
        assert float(p.abs().max()) <= bound


def test_every_parameter_fills_its_range_and_a_seed_repeats_it():
    ak.manual_seed(0)
    cell = nn.LSTMCell(30, 100)
    bound = 1 / math.sqrt(100)
    for p in cell.parameters():  # U(-b, b): the biases too, unlike nn.Linear's
        w = arr(p)
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
        assert abs(w.mean()) < 0.1 * bound
    ak.manual_seed(0)
    again = nn.LSTMCell(30, 100)
    for p, q in zip(cell.parameters(), again.parameters(), strict=True):
        assert np.array_equal(arr(p), arr(q))


def test_repr_and_dtype():
    assert repr(nn.RNNCell(3, 4)) == "RNNCell(3, 4)"
    assert repr(nn.RNNCell(3, 4, bias=False, nonlinearity="relu")) == \
        "RNNCell(3, 4, bias=False, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4, bias=False)) == "LSTMCell(3, 4, bias=False)"
    assert repr(nn.GRUCell(3, 4)) == "GRUCell(3, 4)"
    cell = nn.GRUCell(3, 4, dtype=ak.float64)
    assert all(p.dtype == ak.float64 for p in cell.parameters())
    assert cell(ak.randn(2, 3, dtype=ak.float64)).dtype == ak.float64


def test_docstring_examples_run():
    assert doctest.testmod(rnn).failed == 0


# -- forward: the equations -----------------------------------------------------------
CASES = [pytest.param(name, nl, id=f"{name}-{nl}") for name, nl in
         [("RNNCell", "tanh"), ("RNNCell", "relu"), ("LSTMCell", None), ("GRUCell", None)]]


def make_cell(name, nonlinearity, bias=True, dtype=ak.float64, device="cpu"):
    extra = {"nonlinearity": nonlinearity} if nonlinearity else {}
    return getattr(nn, name)(3, 4, bias=bias, dtype=dtype, device=device, **extra)


@pytest.mark.parametrize("name, nonlinearity", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_forward_matches_the_equations(name, nonlinearity, bias, rng):
    cell = make_cell(name, nonlinearity, bias)
    x = rng.standard_normal((2, 3))
    hs = [rng.standard_normal((2, 4)) for _ in range(2 if name == "LSTMCell" else 1)]
    want = reference_step(name, x, hs, *params(cell), nonlinearity or "tanh")
    got = states(cell(ak.tensor(x), hidden_arg(name, [ak.tensor(h) for h in hs])))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(arr(g), w, rtol=1e-12, atol=1e-12)
    # no hidden state: zeros
    zero = [np.zeros((2, 4))] * len(hs)
    want = reference_step(name, x, zero, *params(cell), nonlinearity or "tanh")
    for g, w in zip(states(cell(ak.tensor(x))), want, strict=True):
        np.testing.assert_allclose(arr(g), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, nonlinearity", CASES)
def test_unbatched_step_is_the_batched_step_of_one(name, nonlinearity, rng):
    cell = make_cell(name, nonlinearity)
    x = ak.tensor(rng.standard_normal(3))
    hs = [ak.tensor(rng.standard_normal(4)) for _ in range(2 if name == "LSTMCell" else 1)]
    for h in (None, hidden_arg(name, hs)):
        one = states(cell(x, h))
        batch_h = None if h is None else hidden_arg(name, [s.unsqueeze(0) for s in hs])
        batch = states(cell(x.unsqueeze(0), batch_h))
        for a, b in zip(one, batch, strict=True):
            assert a.shape == (4,)
            np.testing.assert_array_equal(arr(a), arr(b)[0])


# -- gradients: central differences ----------------------------------------------------
def step_of(name, nonlinearity):
    """The function that computes one step of the cell ``name`` on a batch."""
    return {"LSTMCell": rnn.lstm_cell, "GRUCell": rnn.gru_cell,
            "tanh": rnn.rnn_tanh_cell, "relu": rnn.rnn_relu_cell}[nonlinearity or name]


def flat_step(name, nonlinearity):
    """``step(x, *hidden states, *weights)``: every tensor a separate argument."""
    step, n_states = step_of(name, nonlinearity), 2 if name == "LSTMCell" else 1

    def fn(x, *rest):
        hx = tuple(rest[:n_states]) if n_states == 2 else rest[0]
        return step(x, hx, *rest[n_states:])
    return fn


@pytest.mark.parametrize("name, nonlinearity", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_gradients_of_every_input_and_weight(name, nonlinearity, bias, rng):
    k = GATES[name]
    shapes = [(2, 3)] + [(2, 4)] * (2 if name == "LSTMCell" else 1) + [(k * 4, 3), (k * 4, 4)]
    shapes += [(k * 4,), (k * 4,)] if bias else []
    values = [rng.standard_normal(s) for s in shapes]
    if nonlinearity == "relu":  # keep the pre-activations away from the kink at 0
        values[0] = values[0] + 1.0
    inputs = tuple(ak.tensor(v, requires_grad=True) for v in values)
    fn = flat_step(name, nonlinearity)
    assert gradcheck(fn, inputs)
    if nonlinearity != "relu":
        assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name, nonlinearity", CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_module_gradients_by_central_differences(name, nonlinearity, batched, rng):
    cell = make_cell(name, nonlinearity)
    lead = (2,) if batched else ()
    x = ak.tensor(rng.standard_normal((*lead, 3)) + 0.5, requires_grad=True)
    hs = tuple(ak.tensor(rng.standard_normal((*lead, 4)), requires_grad=True)
               for _ in range(2 if name == "LSTMCell" else 1))
    assert gradcheck(lambda x, *h: cell(x, hidden_arg(name, h)), (x, *hs))
    assert gradcheck(lambda x: cell(x), (x,))  # hx left out: zeros


def unroll(cell, xs, hx=None):
    """Run the cell over a sequence (T, N, input_size): the last state and all outputs."""
    outs = []
    for x in xs:
        hx = cell(x, hx)
        outs.append(states(hx)[0])
    return hx, outs


@pytest.mark.parametrize("name", CELLS)
def test_a_sequence_unrolled_through_time(name, rng):
    nonlinearity = "tanh" if name == "RNNCell" else None
    cell = make_cell(name, nonlinearity)
    xs = ak.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
    hx, outs = unroll(cell, xs)
    # the loop equals the equations applied one step after another
    hs = [np.zeros((2, 4))] * (2 if name == "LSTMCell" else 1)
    for t in range(5):
        hs = reference_step(name, arr(xs)[t], hs, *params(cell))
        np.testing.assert_allclose(arr(outs[t]), hs[0], rtol=1e-12, atol=1e-12)
    # backpropagation through time reaches every step and every weight
    sum(o.sum() for o in outs).backward()
    assert all(float(g.abs().sum()) > 0 for g in xs.grad)
    assert all(p.grad is not None and p.grad.shape == p.shape for p in cell.parameters())
    # and its gradients are right: the same loop, weights passed in, by central differences
    step, n_states = step_of(name, nonlinearity), 2 if name == "LSTMCell" else 1

    def through_time(xs, *weights):
        hx = (ak.zeros(2, 4, dtype=ak.float64),) * n_states
        for x in xs:
            hx = states(step(x, hx if n_states == 2 else hx[0], *weights))
        return hx

    weights = tuple(ak.tensor(arr(p), requires_grad=True) for p in cell.parameters())
    assert gradcheck(through_time, (ak.tensor(arr(xs)[:3], requires_grad=True), *weights))


def test_cells_run_on_every_device(device, rng):
    x = rng.standard_normal((2, 3))
    for name in CELLS:
        ak.manual_seed(0)
        here = getattr(nn, name)(3, 4, dtype=ak.float64)
        ak.manual_seed(0)
        there = getattr(nn, name)(3, 4, dtype=ak.float64, device=device)
        assert all(p.device.type == device for p in there.parameters())
        xt = ak.tensor(x, device=device, requires_grad=True)
        out = states(there(xt))
        sum(o.sum() for o in out).backward()
        for a, b in zip(out, states(here(ak.tensor(x))), strict=True):
            assert a.device.type == device
            np.testing.assert_allclose(arr(a), arr(b), rtol=1e-12)
        assert xt.grad.device.type == device


# -- errors ------------------------------------------------------------------------------
def error_cases(name):
    """(input shape, hidden shape or None, expected error type, message)."""
    hidden = "hx[0]" if name == "LSTMCell" else "hidden"
    return [
        ((2, 5), None, RuntimeError, "input has inconsistent input_size: got 5 expected 3"),
        ((5,), None, RuntimeError, "input has inconsistent input_size: got 5 expected 3"),
        ((2, 2, 3), None, ValueError,
         f"{name}: Expected input to be 1D or 2D, got 3D instead"),
        ((2, 3), (3, 4), RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3"),
        ((2, 3), (2, 5), RuntimeError, "hidden0 has inconsistent hidden_size: got 5, expected 4"),
        ((2, 3), (2, 2, 4), ValueError,
         f"{name}: Expected {hidden} to be 1D or 2D, got 3D instead"),
        ((3,), (2, 4), RuntimeError, "hidden0 has inconsistent hidden_size: got 2, expected 4"),
        ((2, 3), (4,), RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 4"),
    ]


def call_with_shapes(lib, cell, name, xs, hs):
    h = None if hs is None else lib.zeros(*hs)
    return cell(lib.zeros(*xs), None if h is None else hidden_arg(name, [h, h]))


@pytest.mark.parametrize("name", CELLS)
def test_shape_errors_use_pytorchs_wording(name):
    cell = getattr(nn, name)(3, 4)
    for xs, hs, kind, message in error_cases(name):
        with pytest.raises(kind) as info:
            call_with_shapes(ak, cell, name, xs, hs)
        assert str(info.value) == message


def test_lstm_and_rnn_specific_errors():
    lstm = nn.LSTMCell(3, 4)
    with pytest.raises(RuntimeError, match="^lstm_cell expects two hidden states$"):
        lstm(ak.zeros(2, 3), (ak.zeros(2, 4),))
    with pytest.raises(RuntimeError, match="^hidden1 has inconsistent hidden_size: got 5, "):
        lstm(ak.zeros(2, 3), (ak.zeros(2, 4), ak.zeros(2, 5)))
    odd = nn.RNNCell(3, 4, nonlinearity="sigmoid")  # accepted here, refused when used
    with pytest.raises(RuntimeError, match="^Unknown nonlinearity: sigmoid$"):
        odd(ak.zeros(2, 3))


# -- against PyTorch ------------------------------------------------------------------------
def bits(t):
    a = np.ascontiguousarray(t.detach().cpu().numpy())
    return a.view(f"u{a.dtype.itemsize}")


@pytest.mark.parametrize("name", CELLS)
def test_same_seed_same_parameters_as_pytorch(torch, name):
    for seed in (0, 1, 42, 2**31 - 1):
        for bias, dtype in ((True, "float32"), (False, "float32"), (True, "float64")):
            ak.manual_seed(seed)
            torch.manual_seed(seed)
            ours = getattr(nn, name)(6, 5, bias=bias, dtype=getattr(ak, dtype))
            theirs = getattr(torch.nn, name)(6, 5, bias=bias, dtype=getattr(torch, dtype))
            pairs = zip(ours.named_parameters(), theirs.named_parameters(), strict=True)
            for (n, p), (m, q) in pairs:
                assert n == m and np.array_equal(bits(p), bits(q)), (seed, bias, dtype, n)
            assert np.array_equal(bits(ak.rand(3)), bits(torch.rand(3)))  # same draws used
            assert repr(ours) == repr(theirs)


def copy_from(theirs, ours):
    with ak.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
            p.copy_(ak.tensor(q.detach().numpy()))


TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


@pytest.mark.parametrize("name, nonlinearity", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("with_hx", [True, False], ids=["hx", "no-hx"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_values_and_gradients_match_pytorch(torch, name, nonlinearity, dtype, batched,
                                            with_hx, bias, rng):
    extra = {"nonlinearity": nonlinearity} if nonlinearity else {}
    theirs = getattr(torch.nn, name)(3, 4, bias=bias, dtype=getattr(torch, dtype), **extra)
    ours = getattr(nn, name)(3, 4, bias=bias, dtype=getattr(ak, dtype), **extra)
    copy_from(theirs, ours)
    lead = (2,) if batched else ()
    x = rng.standard_normal((*lead, 3)).astype(dtype)
    hs = [rng.standard_normal((*lead, 4)).astype(dtype)
          for _ in range(2 if name == "LSTMCell" else 1)] if with_hx else []
    up = [rng.standard_normal((*lead, 4)).astype(dtype)  # upstream gradients: one per output
          for _ in range(2 if name == "LSTMCell" else 1)]
    grads = []
    for lib, cell in ((torch, theirs), (ak, ours)):
        leaves = [lib.tensor(a, requires_grad=True) for a in [x, *hs]]
        out = states(cell(leaves[0], hidden_arg(name, leaves[1:]) if hs else None))
        assert [tuple(o.shape) for o in out] == [lead + (4,)] * len(out)
        total = sum((o * lib.tensor(u)).sum() for o, u in zip(out, up, strict=True))
        total.backward()
        grads.append([arr(o) for o in out] + [arr(t.grad) for t in leaves]
                     + [arr(p.grad) for p in cell.parameters()])
    for mine, want in zip(grads[1], grads[0], strict=True):
        assert mine.dtype == want.dtype
        np.testing.assert_allclose(mine, want, **TOL[dtype])


@pytest.mark.parametrize("name", CELLS)
def test_a_training_sequence_matches_pytorch(torch, name, rng):
    """Five steps through time, a loss on every output, two SGD updates."""
    theirs = getattr(torch.nn, name)(3, 4, dtype=torch.float64)
    ours = getattr(nn, name)(3, 4, dtype=ak.float64)
    copy_from(theirs, ours)
    xs = rng.standard_normal((5, 2, 3))
    results = []
    for lib, cell in ((torch, theirs), (ak, ours)):
        opt = lib.optim.SGD(cell.parameters(), lr=0.1)
        record = []
        for _ in range(2):
            opt.zero_grad()
            hx, outs = unroll(cell, lib.tensor(xs))
            loss = sum((o ** 2).mean() for o in outs)
            loss.backward()
            record += [loss.item()] + [arr(p.grad) for p in cell.parameters()]
            opt.step()
        results.append(record + [arr(s) for s in states(hx)] + [arr(p) for p in
                                                                  cell.parameters()])
    for mine, want in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(mine, want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", CELLS)
def test_error_messages_match_pytorch(torch, name):
    ours, theirs = getattr(nn, name)(3, 4), getattr(torch.nn, name)(3, 4)
    for xs, hs, kind, _ in error_cases(name):
        messages = []
        for lib, cell in ((torch, theirs), (ak, ours)):
            with pytest.raises(kind) as info:
                call_with_shapes(lib, cell, name, xs, hs)
            messages.append(str(info.value).splitlines()[0])
        assert messages[0] == messages[1]


def structure(outputs):
    """The graph behind ``outputs`` as plain data: nodes numbered in depth-first
    order, each with its class name and the numbers of its next functions."""
    order, number = [], {}
    stack = [o.grad_fn for o in reversed(outputs)]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in number:
            continue
        number[id(fn)] = len(order)
        order.append(fn)
        stack.extend(f for f, _ in reversed(fn.next_functions))
    return [(type(fn).__name__, [(None if f is None else number[id(f)], k)
                                 for f, k in fn.next_functions]) for fn in order]


@pytest.mark.parametrize("name, nonlinearity", CASES)
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
def test_graph_has_pytorchs_nodes_and_edges(torch, name, nonlinearity, batched, bias):
    extra = {"nonlinearity": nonlinearity} if nonlinearity else {}
    graphs = []
    for lib in (torch, ak):
        cell = getattr(lib.nn, name)(3, 4, bias=bias, **extra)
        lead = (2,) if batched else ()
        x = lib.randn(*lead, 3, requires_grad=True)
        h = lib.randn(*lead, 4, requires_grad=True)
        graphs.append(structure(states(cell(x, hidden_arg(name, [h, h * 2])))))
    theirs, ours = graphs
    assert ours == theirs
    names = collections.Counter(n for n, _ in ours)
    assert names["UnsafeSplitBackward0"] == {"RNNCell": 0, "LSTMCell": 1, "GRUCell": 2}[name]
