"""Calling a backward node by hand, ``node(grad)``, as PyTorch allows (lesson 3's
third exercise walks a graph this way).

Without PyTorch the results are checked against the derivatives worked out by
hand; with it, against what ``torch`` returns for the same calls."""
import pytest

import autograd_kit as ak


def calls(lib):
    """What calling each kind of node returns: a tuple for two inputs, one tensor
    for one, () for AccumulateGrad (which fills the leaf's .grad)."""
    w = lib.tensor(2.0, requires_grad=True)
    x = lib.tensor(1.5, requires_grad=True)
    h = w * x
    e = h.exp()
    with lib.no_grad():
        two = h.grad_fn(lib.tensor(5.0))
        one = e.grad_fn(lib.tensor(1.0))
        acc = h.grad_fn.next_functions[0][0]
        nothing = acc(lib.tensor(3.0))
    try:
        h.grad_fn()
    except TypeError as err:
        refused = str(err)
    return {"two": [type(two).__name__, [t.item() for t in two]],
            "one": [type(one).__name__ == "Tensor", round(one.item(), 5)],
            "acc": [nothing, w.grad.item()], "refused": refused}


def test_node_call_gives_the_local_chain_rule():
    got = calls(ak)
    assert got["two"] == ["tuple", [5.0 * 1.5, 5.0 * 2.0]]      # g * x, g * w
    assert got["one"] == [True, round(2.718281828459045 ** 3.0, 5)]  # exp(h), h = 3
    assert got["acc"] == [(), 3.0]
    assert got["refused"] == "expected 1 arguments, got 0 instead"


def test_node_call_matches_pytorch():
    torch = pytest.importorskip("torch")
    assert calls(ak) == calls(torch)
