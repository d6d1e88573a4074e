"""Random draws from tensors that require grad: PyTorch records a node and sends
back zeros (a draw is not differentiated through its parameters), so that
``normal(mu, sigma).sum().backward()`` runs and leaves zero gradients instead
of failing with "does not require grad"."""
import pytest

import autograd_kit as torch

CASES = {
    "normal(tensor, float)": (lambda m, mu, sd: m.normal(mu, 1.5), "NormalBackward1", ("mu",)),
    "normal(float, tensor)": (lambda m, mu, sd: m.normal(0.5, sd), "NormalBackward2", ("sd",)),
    "normal(tensor, tensor)": (lambda m, mu, sd: m.normal(mu, sd), "NormalBackward3",
                               ("mu", "sd")),
    "normal, broadcast": (lambda m, mu, sd: m.normal(mu.reshape(3, 1), sd), "NormalBackward3",
                          ("mu", "sd")),
    "bernoulli(probs)": (lambda m, mu, sd: m.bernoulli(sd / 4), "BernoulliBackward0", ("sd",)),
}


def _leaves(m, device=None):
    kw = {} if device is None else {"device": device}
    mu = m.tensor([0.0, 1.0, -1.0], requires_grad=True, **kw)
    sd = m.tensor([1.0, 2.0, 0.5], requires_grad=True, **kw)
    return {"mu": mu, "sd": sd}


@pytest.mark.parametrize("case", CASES)
def test_a_draw_records_a_node_and_sends_back_zeros(case, device):
    draw, node, inputs = CASES[case]
    leaves = _leaves(torch, device)
    y = draw(torch, leaves["mu"], leaves["sd"])
    assert y.requires_grad and type(y.grad_fn).__name__ == node
    y.sum().backward()
    for name, leaf in leaves.items():
        if name in inputs:
            assert leaf.grad.cpu().tolist() == [0.0] * 3
        else:
            assert leaf.grad is None
    with torch.no_grad():
        assert draw(torch, leaves["mu"], leaves["sd"]).grad_fn is None


@pytest.mark.parametrize("case", CASES)
def test_a_draw_node_as_pytorch(case):
    real = pytest.importorskip("torch")
    draw, _, _ = CASES[case]

    def seen(m):
        leaves = _leaves(m)
        m.manual_seed(3)
        y = draw(m, leaves["mu"], leaves["sd"])
        fn = y.grad_fn
        saved = sorted(n for n in dir(fn) if n.startswith("_saved_"))
        values = {n: tuple(getattr(fn, n)) for n in saved}
        y.sum().backward()
        grads = {k: None if v.grad is None else v.grad.tolist() for k, v in leaves.items()}
        return type(fn).__name__, values, grads, [round(v, 4) for v in y.detach().flatten().tolist()]

    assert seen(torch) == seen(real)
