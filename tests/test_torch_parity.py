"""The same snippets run in PyTorch and in autograd_kit must agree.

Each snippet is written once, as a function of the library module (``lib`` is
either ``torch`` or ``autograd_kit``) and a device; it returns plain Python data
(values, gradients, node names along the whole graph, printed forms, error
messages), and the two results are compared.  PyTorch always runs on the CPU;
autograd_kit runs on every device the ``device`` fixture offers.
"""
import warnings

import numpy as np

import graph_builder
import pytest

torch = pytest.importorskip("torch")

import autograd_kit as ak  # noqa: E402


# ------------------------------------------------------------- helpers --
def plain(v):
    """Tensors, nodes and containers as comparable Python data."""
    if isinstance(v, (torch.Tensor, ak.Tensor)):
        return ("tensor", repr(v.dtype), tuple(v.shape), v.detach().cpu().tolist())
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def same(a, b, path="result"):
    """Compare two ``plain`` results: numbers approximately, everything else exactly."""
    if isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-6, nan_ok=True), path
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def both(snippet, device):
    """Run ``snippet`` in PyTorch (CPU) and in autograd_kit (on ``device``); compare."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = plain(snippet(torch, "cpu"))
        got = plain(snippet(ak, device))
    same(expected, got)
    return got


def walk(t):
    """Every node of ``t``'s graph, depth first, as (depth, name, input_nr) rows;
    ``None`` edges included, shared nodes listed at each use."""
    rows, stack = [], [(t.grad_fn, 0, 0)]
    while stack:
        node, nr, depth = stack.pop()
        rows.append((depth, None if node is None else node.name(), nr))
        if node is not None:
            stack.extend((n, i, depth + 1) for n, i in reversed(node.next_functions))
    return rows


def error_of(fn):
    """(is a RuntimeError, message) of what ``fn`` raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever is raised
        return (isinstance(e, RuntimeError), str(e).replace("torch.cuda.", "torch."))
    return None


def get_grad(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


# ---------------------------------------------------- leaf and non-leaf --
def leaf_attributes(lib, dev):
    x = lib.tensor([1., 2., 3.], requires_grad=True, device=dev)
    c = lib.tensor([4., 5., 6.], device=dev)
    y = x * c
    z = y.mean()
    before = {name: [t.is_leaf, t.requires_grad, t.grad_fn is None, repr(t.dtype),
                     tuple(t.shape)] for name, t in (("x", x), ("c", c), ("y", y), ("z", z))}
    z.backward()
    return {"before": before, "x.grad": x.grad, "y.grad": get_grad(y), "c.grad": c.grad,
            "z": z.item(), "names": [y.grad_fn.name(), z.grad_fn.name()],
            "retains": [x.retains_grad, y.retains_grad]}


def test_leaf_and_non_leaf_attributes(device):
    both(leaf_attributes, device)


def reprs(lib, dev):
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    return [repr(x), repr(y), repr(y.sum()), repr(y.detach()), repr(x.exp()),
            repr(lib.tensor([[1.5, -2.], [3., 4.]], dtype=lib.float64)),
            repr(lib.tensor([1, 2]) * 2.5), repr(lib.arange(12).reshape(3, 4)),
            repr(lib.tensor(0.125)), repr(lib.zeros(2, 0)), repr(x.shape), repr(x.dtype),
            repr((x * 1e-6).detach()), repr(lib.ones(1001) / 3), str(x.device)]


def test_printed_forms():
    both(reprs, "cpu")


# --------------------------------------------------- graphs, walked whole --
EXPRESSIONS = {
    "(a*b + c)**2": lambda lib, a, b, c: (a * b + c) ** 2,
    "(a + b) * (a - c)": lambda lib, a, b, c: (a + b) * (a - c),
    "a.exp().sum() * b.mean()": lambda lib, a, b, c: a.exp().sum() * b.mean(),
    "sigmoid(a*b + c)": lambda lib, a, b, c: lib.sigmoid(a * b + c),
    "tanh, relu, log": lambda lib, a, b, c: (a.tanh() + b.relu() + (c * c + 1).log()),
    "matmul": lambda lib, a, b, c: (a.reshape(1, 3) @ b.reshape(3, 1)).squeeze(),
    "outer and transpose": lambda lib, a, b, c: (a.unsqueeze(1) * b.unsqueeze(0)).t().sum(1),
    "division and scalars": lambda lib, a, b, c: 1 / a + 2 - b / 3 - (-c) * 4,
    "pow variants": lambda lib, a, b, c: a ** 2 + a ** b + 2 ** c,
    "indexing": lambda lib, a, b, c: a[0] * b[1:].sum() + c[[0, 2]].prod(),
    "cat and stack": lambda lib, a, b, c: lib.cat([a, b]).sum() + lib.stack([b, c]).mean(0),
    "where and clamp": lambda lib, a, b, c: lib.where(a > 1.5, a, b).clamp(0., 2.5) * c,
    "softmax": lambda lib, a, b, c: a.softmax(0) * b + c.log_softmax(0),
    "max, min, abs": lambda lib, a, b, c: a.max() + b.min() + (c - 2).abs().sum(),
    "expand and view": lambda lib, a, b, c: a.view(3, 1).expand(3, 2).sum(0) * b[:2],
    "shared input": lambda lib, a, b, c: a * a * a + a,
    "sqrt, sin, cos": lambda lib, a, b, c: a.sqrt() * b.sin() + c.cos(),
    "mse by hand": lambda lib, a, b, c: ((a * b - c) ** 2).mean(),
}


def expression(name):
    def snippet(lib, dev):
        a = lib.tensor([1., 2., 3.], requires_grad=True, device=dev)
        b = lib.tensor([0.5, -1., 2.], requires_grad=True, device=dev)
        c = lib.tensor([2., 1., 0.5], requires_grad=True, device=dev)
        d = EXPRESSIONS[name](lib, a, b, c)
        graph = walk(d)
        d.sum().backward() if d.ndim else d.backward()
        return {"value": d, "graph": graph, "grads": [a.grad, b.grad, c.grad]}
    return snippet


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_expression_graphs(device, name):
    got = both(expression(name), device)
    assert got["graph"][0][1] is not None


def seed_example(lib, dev):
    a = lib.tensor(2., requires_grad=True, device=dev)
    b = lib.tensor(3., requires_grad=True, device=dev)
    c = lib.tensor(4., requires_grad=True, device=dev)
    d = (a * b + c) ** 2
    nf = d.grad_fn.next_functions
    first = [(n.name() if n else None, i) for n, i in nf]
    add = nf[0][0]
    second = [(n.name() if n else None, i) for n, i in add.next_functions]
    acc = add.next_functions[1][0]
    d.backward()
    return {"d": d, "first": first, "second": second, "acc_is_c": acc.variable is c,
            "grads": [a.grad, b.grad, c.grad], "walk": walk(d)}


def test_seed_example_next_functions(device):
    got = both(seed_example, device)
    assert got["first"] == [["AddBackward0", 0]]


# ------------------------------------------------------ backward variants --
def backward_with_vector(lib, dev):
    x = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=dev)
    w = lib.tensor([[0.5, -1.], [2., 1.]], requires_grad=True, device=dev)
    y = x @ w
    y.backward(lib.tensor([[1., 0.], [0.5, 2.]], device=dev))
    z = x * 3
    z.backward(lib.ones(2, 2, device=dev) * 0.1)
    return [x.grad, w.grad]


def test_backward_with_gradient_vector(device):
    both(backward_with_vector, device)


def retain_graph_accumulation(lib, dev):
    x = lib.tensor(3., requires_grad=True, device=dev)
    loss = 2 * x * x
    loss.backward(retain_graph=True)
    first = x.grad.item()
    loss.backward()
    second = x.grad.item()
    err = error_of(loss.backward)
    return [first, second, err, x.grad.item()]


def test_retain_graph_accumulation(device):
    assert both(retain_graph_accumulation, device)[:2] == [12., 24.]


def zero_grad_loop(lib, dev):
    w = lib.tensor([1., -1.], requires_grad=True, device=dev)
    b = lib.tensor(0., requires_grad=True, device=dev)
    xs = lib.tensor([[1., 2.], [3., 4.], [5., 6.]], device=dev)
    ys = lib.tensor([1., 2., 3.], device=dev)
    losses, grads = [], []
    for step in range(5):
        loss = ((xs @ w + b - ys) ** 2).mean()
        loss.backward()
        grads.append([w.grad.clone(), b.grad.clone()])
        with lib.no_grad():
            w -= 0.01 * w.grad
            b -= 0.01 * b.grad
        if step % 2:
            w.grad.zero_()
            b.grad.zero_()
        else:
            w.grad = None
            b.grad = None
        losses.append(loss.item())
    return {"losses": losses, "grads": grads, "w": w, "b": b,
            "leaf": [w.is_leaf, b.is_leaf], "versions": [w._version, b._version]}


def test_zero_grad_loop(device):
    both(zero_grad_loop, device)


def no_grad_snippet(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    with lib.no_grad():
        y = x * 2
        with lib.enable_grad():
            z = x * 2
        x.add_(1)
    @lib.no_grad()
    def f():
        return x * 3
    with lib.set_grad_enabled(False):
        s = x.exp()
    return {"y": [y.requires_grad, y.is_leaf, y.grad_fn is None],
            "z": [z.requires_grad, z.grad_fn.name()], "f": f().requires_grad,
            "s": s.requires_grad, "x": x, "version": x._version,
            "enabled": lib.is_grad_enabled()}


def test_no_grad(device):
    both(no_grad_snippet, device)


def detach_clone_five_ways(lib, dev):
    """y = a * b where b is: a separate leaf / the same tensor / a constant /
    a.detach().clone() / a.clone()."""
    out = []
    for mode in ("separate leaf", "same tensor", "constant", "detach().clone()", "clone()"):
        a = lib.tensor([2., 3.], requires_grad=True, device=dev)
        if mode == "separate leaf":
            b = lib.tensor([2., 3.], requires_grad=True, device=dev)
        elif mode == "same tensor":
            b = a
        elif mode == "constant":
            b = lib.tensor([2., 3.], device=dev)
        elif mode == "detach().clone()":
            b = a.detach().clone()
        else:
            b = a.clone()
        y = (a * b).sum()
        y.backward()
        out.append({"mode": mode, "y": y, "a.grad": a.grad, "b.grad": get_grad(b),
                    "b.is_leaf": b.is_leaf, "b.requires_grad": b.requires_grad,
                    "b.grad_fn": b.grad_fn.name() if b.grad_fn else None, "walk": walk(y)})
    return out


def test_detach_clone_five_way_comparison(device):
    got = both(detach_clone_five_ways, device)
    assert got[1]["a.grad"][3] == [4., 6.]


def detach_shares(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    d = x.detach()
    d[0] = 9.
    dd = x.data
    dd[1] = 7.
    return [x, x._version, d._version, dd._version, d.requires_grad, x.requires_grad]


def test_detach_and_data_share_memory(device):
    both(detach_shares, device)


# --------------------------------------------------------------- in-place --
def inplace_non_leaf(lib, dev):
    x = lib.tensor([1., 2., 4.], requires_grad=True, device=dev)
    y = 2 * x
    y += 2
    y.log_()
    g = walk(y)
    y.sum().backward()
    return [x.grad, g, y._version, y]


def test_inplace_on_non_leaf(device):
    both(inplace_non_leaf, device)


def copy_slices(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    s = lib.zeros(3, device=dev)
    s[1:] = x
    g1 = walk(s)
    (s * lib.tensor([1., 2., 3.], device=dev)).sum().backward()
    m = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=dev)
    v = m * 1
    w = v[0]
    w.mul_(3)
    names = [v.grad_fn.name(), w.grad_fn.name()]
    g2 = walk(v)
    (v * lib.tensor([[1., 2.], [3., 4.]], device=dev)).sum().backward()
    return [x.grad, g1, s, names, g2, m.grad, v, v._version, w._version]


def test_copy_slices(device):
    both(copy_slices, device)


def index_put(lib, dev):
    x = lib.tensor([1., 2., 3.], requires_grad=True, device=dev)
    y = lib.tensor([10., 20., 30.], requires_grad=True, device=dev)
    s = x * 1
    s[s > 1.5] = y[:2] * 2
    t = x * 1
    t[lib.tensor([0, 2], device=dev)] = y[1:]
    g = [walk(s), walk(t)]
    (s * lib.tensor([1., 2., 3.], device=dev) + t).sum().backward()
    return [s, t, g, x.grad, y.grad]


def test_index_put(device):
    both(index_put, device)


def slice_trap(lib, dev):
    x = lib.tensor(2., requires_grad=True, device=dev)
    s = lib.ones(2, device=dev)
    s[1] = s[0] * x
    err = error_of(s.sum().backward)
    x2 = lib.tensor(2., requires_grad=True, device=dev)
    s2 = lib.ones(2, device=dev)
    s2[1] = s2[0].clone() * x2
    s2[0] = s2[1].clone() * x2
    s2.sum().backward()
    return [err, s._version, s2, x2.grad, walk(s2)]


def test_slice_trap_and_clone(device):
    both(slice_trap, device)


def stale_view(lib, dev):
    x = lib.tensor([1., 2., 3.], requires_grad=True, device=dev)
    a = x * 1
    v = a[0:2]
    a.mul_(2)
    name = v.grad_fn.name()
    v.sum().backward()
    return [name, v, x.grad]


def test_view_of_base_modified_in_place(device):
    both(stale_view, device)


def inplace_node_names(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    out = []
    for op in (lambda t: t.add_(1), lambda t: t.mul_(x), lambda t: t.clamp_(0, 1.5),
               lambda t: t.copy_(x * 2), lambda t: t.fill_(2.), lambda t: t.zero_(),
               lambda t: t.exp_(), lambda t: t.sub_(x, alpha=2)):
        t = x * 1
        op(t)
        out.append([t.grad_fn.name(), repr(t).replace(", device='cuda:0'", "")])
    return out


def test_inplace_node_names(device):
    both(inplace_node_names, device)


# ----------------------------------------------------- hooks and grad() --
def hooks_in_backward(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    w = lib.tensor([3., 4.], requires_grad=True, device=dev)
    log = []
    y = x * w
    y.retain_grad()
    h = y.register_hook(lambda g: log.append(("y", g.tolist())) or g * 2)
    x.register_hook(lambda g: log.append(("x", g.tolist())))
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: log.append(
        ("post", [None if g is None else g.tolist() for g in gi])))
    (y * y).sum().backward(retain_graph=True)
    h.remove()
    (y * 2).sum().backward()
    return {"log": log, "x.grad": x.grad, "w.grad": w.grad, "y.grad": y.grad}


def test_hooks_in_backward(device):
    both(hooks_in_backward, device)


def autograd_grad(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    w = lib.tensor([3., 4.], requires_grad=True, device=dev)
    y = x * w
    gx, gu = lib.autograd.grad((y * y).sum(), [x, lib.ones(1, requires_grad=True)],
                               allow_unused=True, retain_graph=True)
    (gg,) = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (g2,) = lib.autograd.grad(gg.sum(), x)
    (gy,) = lib.autograd.grad((y * y).sum(), y, grad_outputs=lib.tensor(3., device=dev))
    return {"x.grad": x.grad, "w.grad": w.grad, "gx": gx, "gu": gu, "gg": gg,
            "gg.rg": gg.requires_grad, "gg.fn": gg.grad_fn is not None, "g2": g2, "gy": gy}


def test_autograd_grad(device):
    both(autograd_grad, device)


def leaf_hook_in_autograd_grad(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    log = []
    x.register_hook(lambda g: log.append(g.tolist()) or g * 2)
    (g,) = lib.autograd.grad((x * 3).sum(), x)
    return [g, log, x.grad]


def test_leaf_hook_in_autograd_grad(device):
    both(leaf_hook_in_autograd_grad, device)


def node_hook_for_unneeded_input(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    w = lib.tensor([3., 4.], requires_grad=True, device=dev)
    y = x * w
    log = []
    y.grad_fn.register_hook(lambda gi, go: log.append(
        [None if g is None else g.tolist() for g in gi]))
    lib.autograd.grad(y.sum(), x)             # w's gradient is not needed
    return log


def test_node_hook_for_unneeded_input(device):
    both(node_hook_for_unneeded_input, device)


def node_hook_replaces_grad_inputs(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    y = x * 3
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, None))
    y.sum().backward()
    return x.grad


def test_node_hook_replaces_grad_inputs(device):
    both(node_hook_replaces_grad_inputs, device)


def backward_inputs(lib, dev):
    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    w = lib.tensor([3., 4.], requires_grad=True, device=dev)
    h = x * w
    (h * h).sum().backward(inputs=[w], retain_graph=True)
    a = [x.grad, w.grad]
    (h * h).sum().backward(inputs=[h])
    return [a, x.grad, w.grad, get_grad(h)]


def test_backward_inputs(device):
    both(backward_inputs, device)


def custom_function(lib, dev):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.k, None

    x = lib.tensor([1., 2.], requires_grad=True, device=dev)
    y = Cube.apply(x, 2.)
    names = [y.grad_fn.name(), [(n.name() if n else None) for n, _ in y.grad_fn.next_functions]]
    y.sum().backward()
    h = x * 1
    z = Cube.apply(h, 1.)
    h.add_(1)
    return [y, names, x.grad, error_of(z.sum().backward)]


def test_custom_function(device):
    both(custom_function, device)


# ----------------------------------------------------- error messages --
def _iadd_leaf(lib, dev):
    w = lib.ones(3, requires_grad=True, device=dev)
    w += 1


ERRORS = {
    "non-scalar backward": lambda lib, d: (lib.ones(3, requires_grad=True, device=d) * 2)
    .backward(),
    "leaf add_": lambda lib, d: lib.ones(3, requires_grad=True, device=d).add_(1),
    "leaf +=": _iadd_leaf,
    "leaf setitem": lambda lib, d: lib.ones(3, requires_grad=True, device=d)
    .__setitem__(0, 1.),
    "view of leaf": lambda lib, d: lib.ones(3, requires_grad=True, device=d)[0].add_(1),
    "no grad_fn": lambda lib, d: lib.ones(3, device=d).sum().backward(),
    "wrong gradient shape": lambda lib, d: (lib.ones(3, requires_grad=True, device=d) * 2)
    .backward(lib.ones(2, device=d)),
    "int requires_grad": lambda lib, d: lib.tensor([1, 2], requires_grad=True, device=d),
    "int requires_grad_()": lambda lib, d: lib.tensor([1, 2], device=d).requires_grad_(),
    "non-leaf requires_grad_(False)": lambda lib, d: (
        lib.ones(2, requires_grad=True, device=d) * 2).requires_grad_(False),
    "non-leaf requires_grad_(True)": lambda lib, d: (
        lib.ones(2, requires_grad=True, device=d) * 2).requires_grad_(True),
    "numpy with grad": lambda lib, d: lib.ones(2, requires_grad=True).numpy(),
    "int add_(1.5)": lambda lib, d: lib.tensor([1, 2], device=d).add_(1.5),
    "int div_(2)": lambda lib, d: lib.tensor([1, 2], device=d).div_(2),
    "bool add_(1)": lambda lib, d: lib.tensor([True], device=d).add_(1),
    "in-place broadcast": lambda lib, d: lib.ones(3, device=d).add_(lib.ones(2, 3, device=d)),
    "binary shapes": lambda lib, d: lib.ones(2, 3, device=d) * lib.ones(4, 1, 5, device=d),
    "matmul shapes": lambda lib, d: lib.ones(2, 3, device=d) @ lib.ones(2, 3, device=d),
    "view shape": lambda lib, d: lib.ones(4, device=d).view(3),
    "copy_ shapes": lambda lib, d: lib.ones(2, 3, device=d).copy_(lib.ones(2, device=d)),
    "retain_grad without grad": lambda lib, d: lib.ones(2, device=d).retain_grad(),
    "hook without grad": lambda lib, d: lib.ones(2, device=d).register_hook(lambda g: g),
    "item of many": lambda lib, d: lib.ones(3, device=d).item(),
    "grad unused": lambda lib, d: (lambda x: lib.autograd.grad(
        (x * 2).sum(), [x, lib.ones(2, requires_grad=True, device=d)]))(
        lib.ones(3, requires_grad=True, device=d)),
    "grad of input without grad": lambda lib, d: lib.autograd.grad(
        (lib.ones(3, requires_grad=True, device=d) * 2).sum(), [lib.ones(2, device=d)]),
    "exp result modified": lambda lib, d: (lambda y: (y.add_(1), y.sum().backward()))(
        lib.ones(3, requires_grad=True, device=d).exp()),
    "saved after free": lambda lib, d: (lambda y: (y.sum().backward(),
                                                   y.grad_fn._saved_self))(
        lib.ones(2, requires_grad=True, device=d) * lib.ones(2, requires_grad=True, device=d)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_messages(device, name):
    got = both(lambda lib, d: error_of(lambda: ERRORS[name](lib, d)), device)
    assert got is None or got[0] is True


# ----------------------------------------------------------- dtypes --
def promotions(lib, dev):
    i = lib.tensor([1, 2], device=dev)
    f = lib.ones(2, device=dev)
    d0 = lib.tensor(2., dtype=lib.float64, device=dev)
    cases = [i * 2.5, i * 2, f * d0, d0 * f, f * f.double(), i * lib.tensor(2., device=dev),
             i / 2, i / i, i ** 0.5, lib.tensor([True], device=dev) + 1, f + i,
             lib.tensor(np.array([1.5]), device=dev), lib.tensor([1, 2], dtype=lib.int32) * 3,
             i.float(), f.long(), lib.arange(3, device=dev) * 0.5]
    return [[repr(c.dtype), c.tolist()] for c in cases]


def test_dtype_promotion(device):
    both(promotions, device)


# ------------------------------------------------------ random graphs --
def random_graph(lib, dev, seed, n_ops=12):
    ops = [
        lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
        lambda a, b: a / (b * b + 1), lambda a, b: (a * 0.1).exp(),
        lambda a, b: (a * a + 1).log(), lambda a, b: a.tanh(), lambda a, b: a.sigmoid(),
        lambda a, b: (a * a + 0.5) ** 1.5, lambda a, b: a.sum(1, keepdim=True) * b,
        lambda a, b: a.mean(0) * b, lambda a, b: a.T.T * b, lambda a, b: a[:, 1:2] * b,
        lambda a, b: (a @ b.T) @ a * 0.1, lambda a, b: (a - 1).relu() + b,
        lambda a, b: lib.cat([a[:, :1], b[:, 1:]], 1), lambda a, b: a.reshape(3, 2)
        .reshape(2, 3) * b, lambda a, b: (a * a + 1).sqrt(), lambda a, b: -a + b,
        lambda a, b: 1 - a * b, lambda a, b: 2.5 * a, lambda a, b: a.sin() * b.cos(),
        lambda a, b: a.clamp(0.7, 1.2) * b, lambda a, b: lib.where(a > b, a, b * 2),
        lambda a, b: a.max(1, keepdim=True)[0] * b, lambda a, b: a.softmax(1) * b,
        lambda a, b: (a - 1).abs(), lambda a, b: a.unsqueeze(0).squeeze(0) * b,
        lambda a, b: a[0:1].expand(2, 3) * b, graph_builder.iadd, graph_builder.imul,
    ]
    return graph_builder.build(lib, ops, seed, n_ops, dev)


def random_graph_snippet(seed):
    def snippet(lib, dev):
        leaves, loss = random_graph(lib, dev, seed)
        order, seen, stack = [], set(), [loss.grad_fn]
        while stack:                     # record the order nodes run in
            n = stack.pop()
            if n is None or n in seen:
                continue
            seen.add(n)
            n.register_prehook(lambda go, n=n: order.append(n.name()))
            stack.extend(nx for nx, _ in n.next_functions)
        graph = walk(loss)
        loss.backward()
        return {"loss": loss, "graph": graph, "order": order,
                "grads": [t.grad for t in leaves]}
    return snippet


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs(device, seed):
    both(random_graph_snippet(seed), device)
