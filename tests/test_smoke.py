"""The first example of every tutorial, end to end."""
import autograd_kit as torch


def test_first_backward(device):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = (x * x).sum()
    assert repr(y) == "tensor(5., grad_fn=<SumBackward0>)" or device != "cpu"
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert x.is_leaf and not y.is_leaf
    assert y.grad_fn.name() == "SumBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
