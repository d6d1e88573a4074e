"""The engine's "write ``g * R`` into g" path, on both sides of its condition.

``OpNode.apply_array`` computes a formula of the form ``g * R`` (or a word with
an in-place twin, such as relu's ``threshold_backward``) *into* the incoming
gradient when only the engine holds it and it is at least ``_REUSE_BYTES``
(256 KiB) big.  That is a second program beside the plain formulas, chosen at
run time by a size, a reference count and a dtype.  It once crashed with
``NameError: name 'cos' is not defined`` for every array above the threshold:
its formulas were compiled against a copy of the formula words taken before
all the words existed, and every other test used small arrays.

So here:

* the named cases, at the sizes that crashed, against the plain path and PyTorch;
* every rule that has such a formula, through both paths (the threshold moved
  below and above its cases' sizes), float64 and float32, bit for bit, with a
  count that proves the in-place formula really ran;
* elementwise rules at real sizes just below and just above 256 KiB.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit.ops import _rules
from autograd_kit.ops._rules import NODE_CLASSES

from op_cases import CASES

REUSING = sorted(name for name, cls in NODE_CLASSES.items() if getattr(cls, "g_times", None))
THRESHOLD = _rules._REUSE_BYTES


@contextlib.contextmanager
def _threshold(nbytes):
    """The reuse path allowed from ``nbytes`` up (0: always; NEVER: ruled out)."""
    saved = _rules._REUSE_BYTES
    _rules._REUSE_BYTES = nbytes
    try:
        yield
    finally:
        _rules._REUSE_BYTES = saved


NEVER = 1 << 62


def _grads(fn, arrays, dtype, reuse: bool, only: int):
    """The gradient of ``fn(*leaves).sin().sum()`` where only leaf ``only``
    requires grad (the path serves a node with one gradient to compute; sin
    makes the incoming gradient a fresh array only the engine holds), with the
    reuse path allowed or ruled out.  None where ``fn`` needs another leaf to
    require grad (a gradient made with ``create_graph=True``)."""
    with _threshold(0 if reuse else NEVER):
        leaves = [ak.tensor(a, dtype=dtype, requires_grad=i == only)
                  for i, a in enumerate(arrays)]
        try:
            out = fn(*leaves)
        except RuntimeError as e:
            assert "does not require grad" in str(e)
            return None
        out.sin().sum().backward()
        return leaves[only].grad.numpy()


@pytest.fixture
def counted(monkeypatch):
    """Counts the calls of every in-place formula, per node name."""
    calls: dict[str, int] = {}

    def wrap(name, f):
        if f is None:
            return None

        def into(g, saved):
            calls[name] = calls.get(name, 0) + 1
            return f(g, saved)
        return into

    for name in REUSING:
        cls = NODE_CLASSES[name]
        monkeypatch.setattr(cls, "g_times", tuple(wrap(name, f) for f in cls.g_times))
    return calls


@pytest.mark.parametrize("dtype", [ak.float64, ak.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", REUSING)
def test_every_in_place_formula_equals_the_plain_one(name, dtype, counted):
    for case in CASES[name]:
        arrays = case.draw(np.random.default_rng(7))
        for only in range(len(arrays)):
            before = counted.get(name, 0)
            plain = _grads(case.fn, arrays, dtype, False, only)
            assert counted.get(name, 0) == before, "the plain side took the in-place path"
            reused = _grads(case.fn, arrays, dtype, True, only)
            if plain is None:
                assert reused is None
                continue
            assert plain.dtype == reused.dtype and plain.shape == reused.shape
            np.testing.assert_array_equal(reused, plain)
    if name in UNREACHED:
        assert counted.get(name, 0) == 0, f"{name} is reached now: take it off UNREACHED"
    else:
        assert counted.get(name, 0) >= 1, f"no case of {name} reached its in-place formula"


# Rules whose in-place formula the engine never picks, and why.  (Each is held to
# the plain formula by the direct call below all the same.)
UNREACHED = {
    "DotBackward0": "g is 0-d and the inputs are 1-d: g never has an input's shape",
    "ThresholdBackwardBackward0": "its other input (self) always needs a gradient too "
                                  "when grad_output does, so two formulas run",
}


@pytest.mark.parametrize("name", REUSING)
def test_in_place_formulas_called_directly(name):
    """Each in-place formula, called on a copy of g with a real node's saved
    values, gives what the plain formula gives, bit for bit."""
    from autograd_kit.graph import SavedTensor
    cls = NODE_CLASSES[name]
    rng = np.random.default_rng(11)
    for case in CASES[name]:
        out = case.fn(*case.inputs())
        node = out.grad_fn
        assert type(node) is cls
        kw = {k: (v.unpack_data(node, k) if v.__class__ is SavedTensor else v)
              for k, v in node._saved.items()}
        g = rng.standard_normal(out.shape)
        for i, into in enumerate(cls.g_times):
            if into is None or not node._need[i]:  # (no gradient: its values not kept)
                continue
            need = tuple(j == i for j in range(cls.n_inputs))
            plain = cls.gradients(g, need, kw)[i]
            written = into(g.copy(), kw)
            np.testing.assert_array_equal(np.broadcast_to(written, np.shape(plain)), plain)


# ---------------------------------------------------------- real sizes --
ELEMENTWISE = {
    "ExpBackward0": lambda x: x.exp(), "SinBackward0": lambda x: x.sin(),
    "CosBackward0": lambda x: x.cos(), "AbsBackward0": lambda x: x.abs(),
    "Expm1Backward0": lambda x: x.expm1(), "TanBackward0": lambda x: (0.5 * x).tan(),
    "SinhBackward0": lambda x: x.sinh(), "CoshBackward0": lambda x: x.cosh(),
    "ReluBackward0": lambda x: x.relu(), "MulBackward0": lambda x: x * 2.5,
}


def test_the_elementwise_table_is_every_one_input_rule():
    """A new one-input rule with an in-place formula joins the real-size test."""
    two_inputs = {"MulBackward0", "DotBackward0", "TanhBackwardBackward0",
                  "ThresholdBackwardBackward0"}
    assert set(REUSING) - two_inputs <= set(ELEMENTWISE)


def _sizes(dtype):
    """Element counts just below and just above the threshold for ``dtype``."""
    n = THRESHOLD // np.dtype(dtype).itemsize
    return [n - 1, n, n + 1]


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_real_sizes_on_both_sides_of_the_threshold(name, np_dtype, counted):
    fn = ELEMENTWISE[name]
    for n in _sizes(np_dtype):
        x = np.linspace(-1.5, 1.5, n, dtype=np_dtype)
        before = counted.get(name, 0)
        leaf = ak.tensor(x, requires_grad=True)
        (3 * fn(leaf)).sum().backward()  # (3 * ... makes g fresh: MulBackward0 computes it)
        took = counted.get(name, 0) > before
        assert took == (n * np.dtype(np_dtype).itemsize >= THRESHOLD), n
        with _threshold(NEVER):
            plain = ak.tensor(x, requires_grad=True)
            (3 * fn(plain)).sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), plain.grad.numpy())


# ------------------------------------------------- the cases named in the issue --
NAMED = {
    "3 * sin": lambda t: (3 * t.sin()).sum(),
    "3 * cos": lambda t: (3 * t.cos()).sum(),
    "3 * abs": lambda t: (3 * t.abs()).sum(),
    "tanh(exp(x*x) + 3 sin)": lambda t: ((t * t).exp() + t.sin() * 3.0).tanh().sum(),
}


@pytest.mark.parametrize("n", [100_000, 1_000_000])
@pytest.mark.parametrize("what", sorted(NAMED))
def test_named_big_cases_run_and_match(what, n):
    """``linspace(-1, 1, n)`` through each named expression: it used to raise
    ``NameError`` above 65,536 float32 elements."""
    loss = NAMED[what]
    x = ak.linspace(-1, 1, n, requires_grad=True)
    loss(x).backward()
    with _threshold(NEVER):
        plain = ak.linspace(-1, 1, n, requires_grad=True)
        loss(plain).backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain.grad.numpy())
    torch = _torch()
    if torch is not None:
        xt = torch.linspace(-1, 1, n, requires_grad=True)
        loss(xt).backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=2e-6, atol=2e-6)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch
