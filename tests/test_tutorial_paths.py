"""Small end-to-end programs in the spirit of the beginner tutorials, run unchanged
with ``lib`` bound to autograd_kit and to PyTorch.

Each program is our own code on random data, written as a function of ``lib``
(``import autograd_kit as torch`` vs ``import torch``); it returns what a
learner would print.  With PyTorch installed both runs must print the same
numbers; without it, the kit's run still has to pass the checks inside the
program (gradients equal to their formulas, losses that go down...).

Random draws differ between the libraries until their generators agree, so
the data and the initial weights come from numpy and are copied in.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_kit

try:
    import torch
except ImportError:
    torch = None

LIBS = [autograd_kit] + ([torch] if torch is not None else [])


def plain(v):
    """Tensors (and containers of them) as comparable Python values."""
    if hasattr(v, "detach") and hasattr(v, "shape"):
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), v.detach().tolist())
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return [[k, plain(x)] for k, x in v.items()]
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if hasattr(v, "__class__") and v.__class__.__name__ == "Size":
        return tuple(v)
    return v


def same(a, b, path="out"):
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-4, abs=1e-6, nan_ok=True), path
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, str) and isinstance(b, str) and a != b:
        # printed float32 numbers may differ in the last digit (summation order)
        ta, tb = a.replace(",", " ").split(), b.replace(",", " ").split()
        assert len(ta) == len(tb), f"{path}: {a!r} vs {b!r}"
        for x, y in zip(ta, tb):
            try:
                same(float(x), float(y), path)
            except ValueError:
                assert x == y, f"{path}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def run(program, *args):
    """Run ``program`` with each library; with PyTorch present, compare the prints."""
    outs = [plain(program(lib, *args)) for lib in LIBS]
    if len(outs) == 2:
        same(outs[0], outs[1])
    return outs[0]


def set_weights(lib, model, seed=0, scale=0.3):
    """Give both libraries' models the same weights, drawn by numpy."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in model.named_parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * scale, dtype=p.dtype))
    return model


def data(*shape, seed=1, dtype=None):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype or np.float32)


# ------------------------------------------------ 60-minute blitz: tensors --
def blitz_tensors(lib):
    out = []
    x_data = lib.tensor([[1, 2], [3, 4]])
    x_np = lib.from_numpy(np.array([[1, 2], [3, 4]]))
    x_ones = lib.ones_like(x_data)
    x_rand = lib.rand_like(x_data, dtype=lib.float)
    out += [x_data, x_np, x_ones, x_rand.shape, x_rand.dtype == lib.float32]
    shape = (2, 3,)
    out += [lib.ones(shape), lib.zeros(shape), lib.rand(shape).shape]
    tensor = lib.tensor(data(3, 4))
    out += [tensor.shape, str(tensor.dtype), str(tensor.device)]
    device = "cuda" if lib.cuda.is_available() else "cpu"
    tensor = tensor.to(device)
    out += [tensor[0], tensor[:, 0], tensor[..., -1]]
    tensor[:, 1] = 0
    out += [tensor, lib.cat([tensor, tensor, tensor], dim=1).shape]
    y1, y2 = tensor @ tensor.T, tensor.matmul(tensor.T)
    z1, z2 = tensor * tensor, tensor.mul(tensor)
    agg = tensor.sum()
    out += [y1, y2, z1, z2, agg.item(), type(agg.item()).__name__]
    tensor.add_(5)
    out.append(tensor)
    t = lib.ones(5)
    n = t.numpy()
    t.add_(1)
    np.add(n, 1, out=n)
    out += [t, n.tolist()]
    return out


def test_blitz_tensors():
    out = run(blitz_tensors)
    assert out[-1] == [3.0] * 5   # the numpy array shares the tensor's memory


# ----------------------------------------------- 60-minute blitz: autograd --
def blitz_autograd(lib):
    a = lib.tensor([2., 3.], requires_grad=True)
    b = lib.tensor([6., 4.], requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    Q.backward(gradient=lib.tensor([1., 1.]))
    assert (9 * a ** 2 == a.grad).all() and (-2 * b == b.grad).all()
    x, y = lib.rand(5, 5), lib.rand(5, 5)
    z = lib.rand((5, 5), requires_grad=True)
    model = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    for param in model.parameters():
        param.requires_grad = False
    model[2] = lib.nn.Linear(4, 3)   # only the new head is trained
    opt = lib.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    set_weights(lib, model)
    model(lib.tensor(data(2, 4))).sum().backward()
    opt.step()
    return [Q, a.grad, b.grad, (x + y).requires_grad, (x + z).requires_grad,
            [p.grad is None for p in model.parameters()], model[2].weight]


def test_blitz_autograd():
    out = run(blitz_autograd)
    assert out[5] == [True, True, False, False]


# ---------------------------------------- 60-minute blitz: neural networks --
def lenet(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, self.num_flat_features(x))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

        def num_flat_features(self, x):
            n = 1
            for s in x.size()[1:]:
                n *= s
            return n

    return Net()


def blitz_neural_networks(lib):
    net = set_weights(lib, lenet(lib), scale=0.1)
    params = list(net.parameters())
    out = [repr(net), len(params), params[0].size()]
    input = lib.tensor(data(1, 1, 32, 32))
    out.append(net(input))
    net.zero_grad()
    net(input).backward(lib.tensor(data(1, 10, seed=2)))
    target = lib.tensor(data(10, seed=3)).view(1, -1)
    criterion = lib.nn.MSELoss()
    loss = criterion(net(input), target)
    fn = loss.grad_fn
    out += [loss, fn.name(), fn.next_functions[0][0].name(),
            fn.next_functions[0][0].next_functions[0][0].name()]
    net.zero_grad()
    out.append(net.conv1.bias.grad)
    loss.backward()
    out.append(net.conv1.bias.grad)
    for f in net.parameters():
        f.data.sub_(f.grad.data * 0.01)
    optimizer = lib.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        loss = criterion(net(input), target)
        loss.backward()
        optimizer.step()
        out.append(loss.item())
    return out


def test_blitz_neural_networks():
    out = run(blitz_neural_networks)
    assert out[1] == 10 and out[-1] < out[-3]


# ------------------------- 60-minute blitz: training a classifier (random) --
def blitz_classifier(lib, tmp_path):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    net = set_weights(lib, Net(), scale=0.1)
    images = lib.tensor(data(16, 3, 32, 32))
    labels = lib.tensor(np.random.default_rng(4).integers(0, 10, 16))
    trainloader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(images, labels),
                                            batch_size=4, shuffle=False)
    criterion = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    losses = []
    for epoch in range(2):
        running_loss = 0.0
        for i, batch in enumerate(trainloader, 0):
            inputs, labels_ = batch
            optimizer.zero_grad()
            loss = criterion(net(inputs), labels_)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        losses.append(running_loss / len(trainloader))
    path = str(tmp_path / f"{lib.__name__}_net.pth")
    lib.save(net.state_dict(), path)
    net2 = Net()
    net2.load_state_dict(lib.load(path, weights_only=True))
    correct = total = 0
    with lib.no_grad():
        for inputs, labels_ in trainloader:
            _, predicted = lib.max(net2(inputs), 1)
            total += labels_.size(0)
            correct += (predicted == labels_).sum().item()
    return [losses, correct, total, len(trainloader.dataset)]


def test_blitz_classifier_training_loop(tmp_path):
    out = run(blitz_classifier, tmp_path)
    assert out[2] == 16 and out[0][1] < out[0][0]


# ----------------------------------- Learn the Basics: model, optimization --
def basics_model_and_optimization(lib):
    nn = lib.nn
    accelerator = lib.accelerator.current_accelerator().type if lib.accelerator.is_available() \
        else "cpu"
    assert accelerator in ("cpu", "cuda")
    device = "cpu"  # both libraries on the CPU, so that their outputs compare (tests may
    #                 serve "cuda" from a stand-in device)

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(8 * 8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    model = set_weights(lib, NeuralNetwork().to(device), scale=0.2)
    out = [repr(model)]
    X = lib.tensor(data(1, 8, 8))
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    out += [pred_probab, pred_probab.argmax(1)]
    out += [(name, param.size()) for name, param in model.named_parameters()]
    ds = lib.utils.data.TensorDataset(lib.tensor(data(20, 8, 8, seed=5)),
                                      lib.tensor(np.arange(20) % 10))
    loader = lib.utils.data.DataLoader(ds, batch_size=8)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        model.train()
        for batch, (X, y) in enumerate(loader):
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            out.append((batch, loss.item(), batch * 8 + len(X)))
        model.eval()
        test_loss, correct = 0, 0
        with lib.no_grad():
            for X, y in loader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(lib.float).sum().item()
        out.append((test_loss / len(loader), correct / len(loader.dataset)))
    return out


def test_learn_the_basics_model_and_optimization():
    run(basics_model_and_optimization)


# -------------------------------------------------- Learn the Basics: autograd --
def basics_autograd(lib):
    x = lib.ones(5)
    y = lib.zeros(3)
    w = lib.tensor(data(5, 3), requires_grad=True)
    b = lib.tensor(data(3, seed=2), requires_grad=True)
    z = lib.matmul(x, w) + b
    loss = lib.nn.functional.binary_cross_entropy_with_logits(z, y)
    out = [z.grad_fn.name(), loss.grad_fn.name(), loss]
    loss.backward()
    out += [w.grad, b.grad]
    with lib.no_grad():
        z = lib.matmul(x, w) + b
    out.append(z.requires_grad)
    out.append((lib.matmul(x, w) + b).detach().requires_grad)
    inp = lib.eye(4, 5, requires_grad=True)
    out_ = (inp + 1).pow(2).t()
    out_.backward(lib.ones_like(out_), retain_graph=True)
    first = inp.grad.clone()
    out_.backward(lib.ones_like(out_), retain_graph=True)
    second = inp.grad.clone()
    inp.grad.zero_()
    out_.backward(lib.ones_like(out_), retain_graph=True)
    assert (second == 2 * first).all()
    return out + [first, second, inp.grad]


def test_learn_the_basics_autograd():
    run(basics_autograd)


# ------------------------------------------- Learning PyTorch with Examples --
def with_examples_tensors_and_autograd(lib):
    dtype, device = lib.float, lib.device("cpu")
    x = lib.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = lib.sin(x)
    a, b, c, d = (lib.tensor(v, device=device, dtype=dtype) for v in (0.1, -0.2, 0.3, 0.05))
    learning_rate, out = 1e-6, []
    for t in range(50):   # gradients by hand
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        grad_y_pred = 2.0 * (y_pred - y)
        a -= learning_rate * grad_y_pred.sum()
        b -= learning_rate * (grad_y_pred * x).sum()
        c -= learning_rate * (grad_y_pred * x ** 2).sum()
        d -= learning_rate * (grad_y_pred * x ** 3).sum()
    out += [loss, a.item(), d.item()]
    params = [lib.full((), v, dtype=dtype, requires_grad=True) for v in (0.1, -0.2, 0.3, 0.05)]
    for t in range(50):   # the same with autograd
        a, b, c, d = params
        loss = (a + b * x + c * x ** 2 + d * x ** 3 - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= learning_rate * p.grad
                p.grad = None
    out += [loss.item(), [p.item() for p in params]]

    class LegendrePolynomial3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    a, b, c, d = (lib.full((), v, dtype=dtype, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
    P3 = LegendrePolynomial3.apply
    for t in range(20):
        loss = (a + b * P3(c + d * x) - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            for p in (a, b, c, d):
                p -= 5e-6 * p.grad
                p.grad = None
    return out + [loss.item(), b.item(), d.item()]


def test_learning_pytorch_with_examples_tensors_autograd_function():
    out = run(with_examples_tensors_and_autograd)
    assert out[3] < out[0] * 1.01


def with_examples_nn_optim_module(lib):
    x = lib.linspace(-math.pi, math.pi, 200)
    y = lib.sin(x)
    p = lib.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    set_weights(lib, model, scale=0.1)
    loss_fn = lib.nn.MSELoss(reduction="sum")
    out = []
    for t in range(30):
        loss = loss_fn(model(xx), y)
        model.zero_grad()
        loss.backward()
        with lib.no_grad():
            for param in model.parameters():
                param -= 1e-6 * param.grad
    linear_layer = model[0]
    out += [loss.item(), linear_layer.bias.item(), linear_layer.weight[:, 0].item()]
    optimizer = lib.optim.RMSprop(model.parameters(), lr=1e-3)
    for t in range(30):
        loss = loss_fn(model(xx), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    out.append(loss.item())

    class Polynomial3(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d = (lib.nn.Parameter(lib.tensor(v)) for v in
                                              (0.2, 0.5, -0.1, -0.05))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + "
                    f"{self.d.item()} x^3")

    class DynamicNet(Polynomial3):
        def __init__(self):
            super().__init__()
            self.e = lib.nn.Parameter(lib.tensor(0.01))

        def forward(self, x, extra=2):   # the page draws 'extra' at random
            y = super().forward(x)
            for exp in range(4, 4 + extra):
                y = y + self.e * x ** exp
            return y

    for Model in (Polynomial3, DynamicNet):
        model = Model()
        optimizer = lib.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)
        for t in range(30):
            loss = lib.nn.MSELoss(reduction="sum")(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert model.string().startswith("y = ")
        out += [loss.item(), model.a.item(), model.d.item()]
    return out


def test_learning_pytorch_with_examples_nn_optim_module():
    run(with_examples_nn_optim_module)


# -------------------------------------- "What is torch.nn really?" (random data) --
def nn_really(lib):
    F, nn = lib.nn.functional, lib.nn
    rng = np.random.default_rng(7)
    x_train, y_train = map(lib.tensor, (rng.random((64, 784), dtype=np.float32),
                                        rng.integers(0, 10, 64)))
    out = [x_train.shape, y_train.min(), y_train.max()]
    weights = lib.tensor(data(784, 10) / math.sqrt(784))
    weights.requires_grad_()
    bias = lib.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    def accuracy(out, yb):
        return (lib.argmax(out, dim=1) == yb).float().mean()

    bs, lr = 16, 0.5
    xb, yb = x_train[0:bs], y_train[0:bs]
    out += [nll(model(xb), yb), accuracy(model(xb), yb)]
    for i in range((64 - 1) // bs + 1):
        xb, yb = x_train[i * bs:i * bs + bs], y_train[i * bs:i * bs + bs]
        loss = nll(model(xb), yb)
        loss.backward()
        with lib.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
    out += [loss, F.cross_entropy(xb @ weights + bias, yb)]

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.avg_pool2d(xb, 7)
            return xb.view(-1, xb.size(1))

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    sequential = nn.Sequential(Lambda(lambda x: x.view(-1, 1, 28, 28)),
                               nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1), nn.ReLU(),
                               nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
                               nn.AdaptiveAvgPool2d(1), Lambda(lambda x: x.view(x.size(0), -1)))
    train_ds = lib.utils.data.TensorDataset(x_train, y_train)
    train_dl = lib.utils.data.DataLoader(train_ds, batch_size=bs)
    valid_dl = lib.utils.data.DataLoader(train_ds, batch_size=bs * 2)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    for model in (Mnist_CNN(), sequential, nn.Linear(784, 10)):
        set_weights(lib, model, scale=0.2)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for epoch in range(2):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, F.cross_entropy, xb, yb, opt)
            model.eval()
            with lib.no_grad():
                losses, nums = zip(*[loss_batch(model, F.cross_entropy, xb, yb)
                                     for xb, yb in valid_dl])
            out.append(np.sum(np.multiply(losses, nums)) / np.sum(nums))
    return out


def test_what_is_torch_nn_really():
    run(nn_really)


# ------------------------------------------------------ d2l: preliminaries --
def d2l_preliminaries(lib):
    out = []
    x = lib.arange(12, dtype=lib.float32)
    X = x.reshape(3, 4)
    out += [x.numel(), x.shape, X, lib.zeros((2, 3, 4)).shape, lib.ones((2, 3, 4)).sum()]
    X[1, 2] = 17
    X[:2, :] = 12
    out += [X, X[-1], X[1:3], lib.exp(x)[:2]]
    u, v = lib.tensor([1.0, 2, 4, 8]), lib.tensor([2, 2, 2, 2])
    out += [u + v, u - v, u * v, u / v, u ** v]
    Y = lib.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
    out += [lib.cat((X, Y), dim=0).shape, lib.cat((X, Y), dim=1).shape, X == Y, X.sum()]
    a, b = lib.arange(3).reshape((3, 1)), lib.arange(2).reshape((1, 2))
    out.append(a + b)
    before = id(Y)
    Y = Y + X
    out.append(id(Y) == before)
    Z = lib.zeros_like(Y)
    id_z = id(Z)
    Z[:] = X + Y
    before = id(X)
    X += Y
    out += [id(Z) == id_z, id(X) == before]
    A = X.numpy()
    B = lib.from_numpy(A)
    a = lib.tensor([3.5])
    out += [type(A).__name__, B.dtype == X.dtype, a.item(), float(a), int(a)]
    # linear algebra
    A = lib.arange(6, dtype=lib.float32).reshape(2, 3)
    B = A.clone()
    out += [A.T, A * B, A.sum(axis=0), A.sum(axis=[0, 1]), A.mean(), A.sum() / A.numel(),
            A.mean(axis=0), A.sum(axis=1, keepdims=True), A / A.sum(axis=1, keepdims=True),
            A.cumsum(axis=0)]
    x, y = lib.arange(3, dtype=lib.float32), lib.ones(3, dtype=lib.float32)
    out += [lib.dot(x, y), lib.sum(x * y), lib.mv(A, x), A @ x, lib.mm(A, lib.ones(3, 4))]
    u = lib.tensor([3.0, -4.0])
    out += [lib.norm(u), lib.abs(u).sum(), lib.norm(lib.ones((4, 9)))]
    # automatic differentiation
    x = lib.arange(4.0)
    x.requires_grad_(True)
    y = 2 * lib.dot(x, x)
    y.backward()
    assert (x.grad == 4 * x).all()
    x.grad.zero_()
    y = x.sum()
    y.backward()
    out.append(x.grad)
    x.grad.zero_()
    y = x * x
    y.backward(gradient=lib.ones(len(y)))
    out.append(x.grad)
    x.grad.zero_()
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    out.append((x.grad == u).all())

    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        c = b if b.sum() > 0 else 100 * b
        return c

    a = lib.tensor(0.37, requires_grad=True)
    d = f(a)
    d.backward()
    out.append(a.grad == d / a)
    return out


def test_d2l_preliminaries():
    run(d2l_preliminaries)


# ------------------------------------------------- d2l: linear regression --
def d2l_linear_regression(lib):
    true_w, true_b = lib.tensor([2, -3.4]), 4.2
    features = lib.tensor(data(100, 2))
    labels = lib.matmul(features, true_w) + true_b
    labels += lib.tensor(data(100, seed=2) * 0.01)
    labels = labels.reshape((-1, 1))

    def data_iter(batch_size, features, labels):
        num_examples = len(features)
        indices = list(range(num_examples))[::-1]  # (the book shuffles them)
        for i in range(0, num_examples, batch_size):
            batch_indices = lib.tensor(indices[i: min(i + batch_size, num_examples)])
            yield features[batch_indices], labels[batch_indices]

    w = lib.tensor(data(2, 1, seed=3) * 0.01, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with lib.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    out = []
    for epoch in range(3):
        for X, y in data_iter(10, features, labels):
            loss = squared_loss(lib.matmul(X, w) + b, y)
            loss.sum().backward()
            sgd([w, b], 0.03, 10)
        with lib.no_grad():
            train_l = squared_loss(lib.matmul(features, w) + b, labels)
            out.append(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}")
    out += [true_w - w.reshape(true_w.shape), true_b - b]
    # concise implementation
    dataset = lib.utils.data.TensorDataset(*(features, labels))
    data_iter = lib.utils.data.DataLoader(dataset, 10, shuffle=False)
    out.append([t.shape for t in next(iter(data_iter))])
    net = lib.nn.Sequential(lib.nn.Linear(2, 1))
    with lib.no_grad():
        net[0].weight.data.copy_(lib.tensor(data(1, 2, seed=4) * 0.01))
    net[0].bias.data.fill_(0)
    loss = lib.nn.MSELoss()
    trainer = lib.optim.SGD(net.parameters(), lr=0.03)
    for epoch in range(3):
        for X, y in data_iter:
            l = loss(net(X), y)  # noqa: E741 - the book's name
            trainer.zero_grad()
            l.backward()
            trainer.step()
        out.append(f"epoch {epoch + 1}, loss {loss(net(features), labels):f}")
    return out + [net[0].weight.data, net[0].bias.data]


def test_d2l_linear_regression():
    out = run(d2l_linear_regression)
    assert float(out[2].split()[-1]) < float(out[0].split()[-1]) / 3   # it learns


# ---------------------------------------- autograd mechanics and extending --
def mechanics_and_extending(lib):
    x = lib.tensor(data(5, dtype=np.float64), requires_grad=True)
    y = x.pow(2)
    out = [x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self]
    y = x.exp()
    out += [y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result]
    packed = []

    def pack_hook(t):
        packed.append(tuple(t.shape))
        return t

    def unpack_hook(t):
        packed.append("unpack")
        return t

    a = lib.ones(5, requires_grad=True)
    b = lib.full((5,), 2.0, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    out.append(packed)
    with lib.autograd.graph.save_on_cpu(pin_memory=False):
        y = (a * b).sin().sum()
    y.backward()
    out.append(a.grad)

    class LinearFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    linear = LinearFunction.apply
    inputs = (lib.tensor(data(6, 4, dtype=np.float64), requires_grad=True),
              lib.tensor(data(3, 4, seed=2, dtype=np.float64), requires_grad=True),
              lib.tensor(data(3, seed=3, dtype=np.float64), requires_grad=True))
    out.append(lib.autograd.gradcheck(linear, inputs, eps=1e-6, atol=1e-4))
    out.append(linear(*inputs).grad_fn.name())
    return out


def test_autograd_mechanics_and_extending_notes():
    out = run(mechanics_and_extending)
    assert out[:4] == [True, True, True, False]


# --------------------------------------------- pieces the pages rely on --
def rmsprop_runs(lib, kwargs):
    w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    opt = lib.optim.RMSprop([w], lr=0.01, **kwargs)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = (w ** 3).sum() + (w * w).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [w, losses]


@pytest.mark.parametrize("kwargs", [{}, {"momentum": 0.9}, {"centered": True},
                                    {"weight_decay": 0.1, "alpha": 0.9}])
def test_rmsprop(kwargs):
    losses = run(rmsprop_runs, kwargs)[1]
    assert losses[-1] < losses[0]


def loader_runs(lib, tmp_path):
    ds = lib.utils.data.TensorDataset(lib.arange(10.0).reshape(5, 2), lib.arange(5))
    out = [len(ds), ds[1], ds[1:3]]
    for kwargs in ({"batch_size": 2}, {"batch_size": 2, "drop_last": True},
                   {"batch_size": None}):
        loader = lib.utils.data.DataLoader(ds, **kwargs)
        out += [len(loader), list(loader)]
    path = tmp_path / f"{lib.__name__}.pt"
    lib.save({"w": lib.ones(2), "n": 3}, path)
    out.append(lib.load(path, map_location="cpu"))
    return out


def test_tensor_dataset_data_loader_save_load(tmp_path):
    out = run(loader_runs, tmp_path)
    assert out[3] == 3 and out[5] == 2 and out[7] == 5


def test_shuffled_batches_cover_the_dataset_once():
    autograd_kit.manual_seed(0)
    ds = autograd_kit.utils.data.TensorDataset(autograd_kit.arange(10))
    seen = sorted(v for (batch,) in autograd_kit.utils.data.DataLoader(ds, 3, shuffle=True)
                  for v in batch.tolist())
    assert seen == list(range(10))
