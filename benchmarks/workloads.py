"""The benchmark workloads, each written once per library.

Every workload has

* a ``*_data(size)`` function that draws the inputs and initial weights with
  numpy (float32, fixed seed), so every library starts from the same numbers;
* ``*_floor(xp, data)``: hand-written array code, forward *and* backward
  derived by hand, for ``xp`` = numpy (CPU) or cupy (GPU).  This is the floor:
  what the arithmetic costs with no autograd at all;
* ``*_torchlike(tk, data)``: the PyTorch-API version.  The *same function* runs
  for PyTorch and for autograd_kit (``import autograd_kit as torch``), so the
  two are compared on identical code;
* ``*_mygrad(mg, data)``: the MyGrad version (CPU only).

Each returns a :class:`harness.Case` whose ``run()`` is one timed unit and whose
``grads()`` returns the gradients of one forward/backward from the initial
state, for the correctness check that precedes timing.
"""
from __future__ import annotations

import numpy as np

from harness import Case

SEED = 0


def _rng():
    return np.random.default_rng(SEED)


def _uniform(rng, shape, bound):
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def _put(tk, arr, device, requires_grad=False):
    """A framework tensor on ``device`` holding a copy of numpy array ``arr``."""
    return tk.tensor(arr, device=device, requires_grad=requires_grad)


# =====================================================================
# 1. small-op chain: per-op overhead of the autograd machinery
# =====================================================================
# One "cycle" is five elementwise ops.  Composed they map y to
# 0.5*sin(2*y), whose fixed point 0 has slope 1: the values shrink slowly and
# the gradient neither explodes nor vanishes, so the gradient check is
# meaningful even after 2,000 ops.
OPS_PER_CYCLE = 5


def chain_data(size):
    """A 4-element float32 input; ``n_ops`` elementwise ops (a multiple of 5)."""
    n_ops = size["n_ops"]
    assert n_ops % OPS_PER_CYCLE == 0, "n_ops must be a multiple of 5"
    return {"x": _uniform(_rng(), (size["numel"],), 1.0),
            "cycles": n_ops // OPS_PER_CYCLE, "device": size.get("device", "cpu")}


def chain_floor(xp, data):
    """Forward keeps what backward needs (the inputs of sin); backward walks back."""
    x = xp.asarray(data["x"])
    cycles = data["cycles"]

    def forward_backward():
        saved = []
        y = x
        for _ in range(cycles):
            y = y * 2.0
            saved.append(y)
            y = xp.sin(y)
            y = y * 0.5
            y = y + 0.25
            y = y - 0.25
        y.sum()
        g = xp.ones_like(y)          # d(sum)/dy
        for s in reversed(saved):    # sub, add: identity; mul 0.5; sin; mul 2
            g = g * 0.5
            g = g * xp.cos(s)
            g = g * 2.0
        return g

    return Case(run=forward_backward, grads=lambda: [forward_backward()])


def chain_torchlike(tk, data):
    """``cycles`` x (mul, sin, mul, add, sub) on a leaf, then ``.sum().backward()``."""
    x = _put(tk, data["x"], data["device"], requires_grad=True)
    cycles = data["cycles"]

    def forward_backward():
        x.grad = None
        y = x
        for _ in range(cycles):
            y = y * 2.0
            y = y.sin()
            y = y * 0.5
            y = y + 0.25
            y = y - 0.25
        y.sum().backward()

    def grads():
        forward_backward()
        return [x.grad]

    return Case(run=forward_backward, grads=grads)


def chain_mygrad(mg, data):
    """The same chain in MyGrad (numpy float32 constants: Python floats would upcast)."""
    x = mg.tensor(data["x"].copy())
    cycles = data["cycles"]
    two, half, quarter = np.float32(2.0), np.float32(0.5), np.float32(0.25)

    def forward_backward():
        y = x
        for _ in range(cycles):
            y = y * two
            y = mg.sin(y)
            y = y * half
            y = y + quarter
            y = y - quarter
        y.sum().backward()

    def grads():
        forward_backward()
        return [x.grad]

    return Case(run=forward_backward, grads=grads)


# =====================================================================
# 2. MLP training: d_in -> hidden -> hidden -> d_out, ReLU, MSE, SGD
# =====================================================================
def mlp_data(size):
    """Inputs, targets and PyTorch-style initial weights (uniform +-1/sqrt(fan_in))."""
    rng = _rng()
    dims = [size["d_in"], size["hidden"], size["hidden"], size["d_out"]]
    params = []
    for fan_in, fan_out in zip(dims[:-1], dims[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(_uniform(rng, (fan_out, fan_in), bound))   # weight: (out, in)
        params.append(_uniform(rng, (fan_out,), bound))          # bias
    return {"X": rng.standard_normal((size["batch"], size["d_in"])).astype(np.float32),
            "Y": rng.standard_normal((size["batch"], size["d_out"])).astype(np.float32),
            "params": params, "steps": size["steps"], "lr": 0.01,
            "device": size.get("device", "cpu")}


def mlp_floor(xp, data):
    """Forward, backward and the SGD update written out by hand with matmuls.

    ``zero_grad`` has no counterpart: the hand-written gradients are fresh arrays.
    """
    X, Y = xp.asarray(data["X"]), xp.asarray(data["Y"])
    params = [xp.array(p) for p in data["params"]]   # copies: training changes them
    lr, steps = data["lr"], data["steps"]

    def forward_backward():
        W1, b1, W2, b2, W3, b3 = params
        h1 = X @ W1.T + b1
        a1 = xp.maximum(h1, 0)
        h2 = a1 @ W2.T + b2
        a2 = xp.maximum(h2, 0)
        out = a2 @ W3.T + b3
        diff = out - Y
        (diff * diff).mean()                 # the loss, computed as the frameworks do
        g_out = diff * (2.0 / diff.size)     # d mean((out - Y)^2) / d out
        g_W3, g_b3 = g_out.T @ a2, g_out.sum(axis=0)
        g_h2 = (g_out @ W3) * (h2 > 0)
        g_W2, g_b2 = g_h2.T @ a1, g_h2.sum(axis=0)
        g_h1 = (g_h2 @ W2) * (h1 > 0)
        g_W1, g_b1 = g_h1.T @ X, g_h1.sum(axis=0)
        return [g_W1, g_b1, g_W2, g_b2, g_W3, g_b3]

    def train():
        for _ in range(steps):
            for p, g in zip(params, forward_backward()):
                p -= lr * g

    return Case(run=train, grads=forward_backward)


def mlp_torchlike(tk, data):
    """``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``, ``nn.MSELoss``, ``optim.SGD``;
    each step is zero_grad, forward, backward, step."""
    nn = tk.nn
    d_in, hidden = data["params"][0].shape[1], data["params"][0].shape[0]
    d_out = data["params"][4].shape[0]
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(),
                          nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, d_out))
    with tk.no_grad():  # start from the shared initial weights
        for p, init in zip(model.parameters(), data["params"]):
            p.copy_(tk.tensor(init))
    if data["device"] != "cpu":
        model.to(data["device"])
    X, Y = _put(tk, data["X"], data["device"]), _put(tk, data["Y"], data["device"])
    loss_fn = nn.MSELoss()
    opt = tk.optim.SGD(model.parameters(), lr=data["lr"])
    steps = data["steps"]

    def train():
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_fn(model(X), Y)
            loss.backward()
            opt.step()

    def grads():
        opt.zero_grad()
        loss_fn(model(X), Y).backward()
        return [p.grad for p in model.parameters()]

    return Case(run=train, grads=grads)


def mlp_mygrad(mg, data):
    """MyGrad has no nn.Linear or optimizer: the layers are ``x @ W.T + b`` and the
    SGD update is done in place on ``.data`` (MyGrad resets ``.grad`` on each backward)."""
    relu = mg.nnet.activations.relu
    X, Y = data["X"], data["Y"]
    params = [mg.tensor(p.copy()) for p in data["params"]]
    lr = np.float32(data["lr"])
    steps = data["steps"]

    def loss():
        W1, b1, W2, b2, W3, b3 = params
        h = relu(X @ W1.T + b1)
        h = relu(h @ W2.T + b2)
        out = h @ W3.T + b3
        return mg.mean(mg.square(out - Y))

    def train():
        for _ in range(steps):
            loss().backward()
            for p in params:
                p.data -= lr * p.grad

    def grads():
        loss().backward()
        return [p.grad for p in params]

    return Case(run=train, grads=grads)


# =====================================================================
# 3. large elementwise: y = tanh(x * w + b) * x, sum, backward
# =====================================================================
def elementwise_data(size):
    """Three float32 vectors of ``numel`` elements, all requiring gradients."""
    rng = _rng()
    n = size["numel"]
    return {"x": _uniform(rng, (n,), 1.0), "w": _uniform(rng, (n,), 1.0),
            "b": _uniform(rng, (n,), 1.0), "device": size.get("device", "cpu")}


def elementwise_floor(xp, data):
    """Backward by hand, using d(sum)/dy = 1:
    g_u = x * (1 - t^2), dx = t + g_u * w, dw = g_u * x, db = g_u."""
    x, w, b = (xp.asarray(data[k]) for k in "xwb")

    def forward_backward():
        u = x * w + b
        t = xp.tanh(u)
        y = t * x
        y.sum()
        g_u = x * (1 - t * t)
        return [t + g_u * w, g_u * x, g_u]

    return Case(run=forward_backward, grads=forward_backward)


def elementwise_torchlike(tk, data):
    """``((x * w + b).tanh() * x).sum().backward()`` with x, w, b leaves."""
    x, w, b = (_put(tk, data[k], data["device"], requires_grad=True) for k in "xwb")

    def forward_backward():
        x.grad = w.grad = b.grad = None
        y = (x * w + b).tanh() * x
        y.sum().backward()

    def grads():
        forward_backward()
        return [x.grad, w.grad, b.grad]

    return Case(run=forward_backward, grads=grads)


def elementwise_mygrad(mg, data):
    """The same expression in MyGrad."""
    x, w, b = (mg.tensor(data[k].copy()) for k in "xwb")

    def forward_backward():
        y = mg.tanh(x * w + b) * x
        y.sum().backward()

    def grads():
        forward_backward()
        return [x.grad, w.grad, b.grad]

    return Case(run=forward_backward, grads=grads)
