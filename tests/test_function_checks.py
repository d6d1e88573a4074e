"""What a hand-written ``Function.backward`` may return: PyTorch's checks, with
PyTorch's messages (PyTorch itself is the oracle when installed)."""
import pytest

import autograd_kit as ak

CASES = {
    "a scalar for a vector input": lambda g: (g.sum(), g),
    "too few gradients": lambda g: (g,),
    "one gradient too many": lambda g: (g, g, g),
    "an extra None": lambda g: (g, g, None),
    "a float": lambda g: (1.0, g),
    "a broadcast gradient": lambda g: (g.expand(2, 3), g),
}


def _run(lib, backward):
    class Product(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return backward(g)

    x = lib.ones(3, requires_grad=True)
    y = lib.ones(3, requires_grad=True)
    try:
        Product.apply(x, y).sum().backward()
    except RuntimeError as err:
        return "error", str(err).replace("ProductBackward", "<node>")
    return "ok", x.grad.tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_backward_results_are_checked_as_pytorch_checks_them(case):
    torch = pytest.importorskip("torch")
    assert _run(ak, CASES[case]) == _run(torch, CASES[case])


def test_messages_without_pytorch():
    kind, text = _run(ak, CASES["too few gradients"])
    assert kind == "error" and "incorrect number of gradients (expected 2, got 1)" in text
    kind, text = _run(ak, CASES["a scalar for a vector input"])
    assert "invalid gradient at index 0 - got [] but expected shape compatible with [3]" in text
    assert _run(ak, CASES["a broadcast gradient"]) == ("ok", [2.0, 2.0, 2.0])
