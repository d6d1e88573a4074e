"""``Tensor.stride()``: the layout of a tensor's memory, as PyTorch reports it.

A stride is a step in memory, counted in elements.  The property that defines it
is checked without PyTorch (an element's address is the tensor's first address
plus the sum of index times stride, in bytes), and the numbers are compared with
PyTorch's for the same views when PyTorch is installed.
"""
import itertools

import numpy as np
import pytest

import autograd_kit as ak

VIEWS = {
    "fresh": lambda x: x,
    "t": lambda x: x.t(),
    "expand": lambda x: x.unsqueeze(0).expand(4, 2, 3),
    "every other column": lambda x: x[:, ::2],
    "a row": lambda x: x[1],
    "unsqueeze": lambda x: x.unsqueeze(1),
    "permute": lambda x: x.unsqueeze(2).permute(2, 1, 0),
    "transpose then contiguous": lambda x: x.transpose(0, 1).contiguous(),
    "0-d": lambda x: x[1, 2],
}


def _source(lib):
    return lib.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_an_element_lies_where_its_strides_say(name):
    y = VIEWS[name](_source(ak))
    size = y.element_size()
    assert len(y.stride()) == y.dim()
    values = np.asarray(y.tolist())
    for index in itertools.product(*(range(n) for n in y.shape)):
        address = y.data_ptr() + size * sum(i * s for i, s in zip(index, y.stride()))
        element = y[index] if index else y
        assert element.data_ptr() == address
        assert element.item() == values[index]


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_strides_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    assert VIEWS[name](_source(ak)).stride() == VIEWS[name](_source(torch)).stride()


def test_one_dimension_and_the_errors_are_pytorchs():
    x = ak.zeros(2, 3)
    assert [x.stride(d) for d in range(-2, 2)] == [x.stride()[d] for d in range(-2, 2)]
    for dim, words in ((2, "Dimension out of range (expected to be in range of [-2, 1], "
                           "but got 2)"),
                       (-3, "but got -3")):
        with pytest.raises(IndexError, match=words.replace("[", r"\[").replace("(", r"\(")
                           .replace(")", r"\)")):
            x.stride(dim)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no "
                                         "dimensions"):
        ak.tensor(1.0).stride(0)
    with pytest.raises(TypeError, match="must be int, not str"):
        x.stride("a")
    assert ak.tensor(1.0).stride() == ()
