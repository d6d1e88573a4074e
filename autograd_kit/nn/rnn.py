"""Recurrent cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` -- one time step each.

A recurrent network reads a sequence x₁, x₂, ... one element at a time and
carries a *hidden state* h from step to step: h_t = cell(x_t, h_{t-1}).  A cell
is that one step; a loop over the sequence unrolls it, and backpropagation
through the unrolled loop ("through time") needs nothing new: each step is
made of ordinary operations, so the engine differentiates it like any graph.

Every cell holds two weight matrices, one for the input and one for the hidden
state, with the gates stacked row-wise (PyTorch's names and order)::

    weight_ih  (k·hidden_size, input_size)     bias_ih  (k·hidden_size,)
    weight_hh  (k·hidden_size, hidden_size)    bias_hh  (k·hidden_size,)

with k = 1 (RNN), 4 (LSTM: gates i, f, g, o) or 3 (GRU: gates r, z, n).  Each
step starts from the two products ``x W_ihᵀ + b_ih`` and ``h W_hhᵀ + b_hh``,
cut into k pieces of ``hidden_size`` columns.

* **RNN**:  h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)   (or relu)
* **LSTM**: i, f, o = σ(·), g = tanh(·) of the four pieces of the sum;
  c' = f ⊙ c + i ⊙ g   (forget some memory, write some new),
  h' = o ⊙ tanh(c')    (show some of it).
* **GRU**:  r, z = σ(·) of the first two pieces of the sum;
  n = tanh(x-part of n + r ⊙ h-part of n)   (the reset gate r reaches only h),
  h' = (1 − z) ⊙ n + z ⊙ h, computed as (h − n) ⊙ z + n.

The functions ``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell`` and ``gru_cell``
do the arithmetic on a batch, in the order of PyTorch's CPU code (h-part first),
so the graph has PyTorch's nodes: ``AddmmBackward0`` for each product,
``AddBackward0``, ``SigmoidBackward0``, ``TanhBackward0``, ``MulBackward0``.
The gates are cut with ``unsafe_chunk`` (``UnsafeSplitBackward0``), as PyTorch
cuts them.  The modules add what PyTorch's modules
add: a missing hidden state is zeros, an input without a batch dimension is
given one and loses it again, and shapes are checked with PyTorch's messages.

Initialisation as in PyTorch: every parameter uniform in (-1/√hidden_size,
1/√hidden_size), drawn in the order weight_ih, weight_hh, bias_ih, bias_hh,
so after ``manual_seed(s)`` a cell starts from PyTorch's numbers.
"""
from __future__ import annotations

import math

from ..ops.creation import empty, zeros
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


# -- one step on a batch: input (N, input_size), hidden (N, hidden_size) -------------
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = tanh(h W_hhᵀ + b_hh + x W_ihᵀ + b_ih)."""
    return (F.linear(hx, w_hh, b_hh) + F.linear(input, w_ih, b_ih)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = relu(h W_hhᵀ + b_hh + x W_ihᵀ + b_ih)."""
    return (F.linear(hx, w_hh, b_hh) + F.linear(input, w_ih, b_ih)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h', c') from ``hx = (h, c)``: gates i, f, g, o, then c' = f⊙c + i⊙g, h' = o⊙tanh(c')."""
    h, c = hx
    gates = F.linear(h, w_hh, b_hh) + F.linear(input, w_ih, b_ih)
    i, f, g, o = gates.unsafe_chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c_next = f * c + i * g
    return o * c_next.tanh(), c_next


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = (h − n)⊙z + n with r, z = σ(·), n = tanh(x-part + r ⊙ h-part)."""
    x_r, x_z, x_n = F.linear(input, w_ih, b_ih).unsafe_chunk(3, 1)
    h_r, h_z, h_n = F.linear(hx, w_hh, b_hh).unsafe_chunk(3, 1)
    r = (h_r + x_r).sigmoid()
    z = (h_z + x_z).sigmoid()
    n = (x_n + h_n * r).tanh()
    return (hx - n) * z + n


# -- the modules ---------------------------------------------------------------------
def _check_input(input, input_size: int) -> None:
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                           f"expected {input_size}")


def _check_hidden(input, hx, hidden_size: int, label: int) -> None:
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} "
                           f"batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, "
                           f"expected {hidden_size}")


class RNNCellBase(Module):
    """The parameters, their initialisation and the shape handling shared by the cells."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = num_chunks * hidden_size
        self.weight_ih = Parameter(empty(rows, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(rows, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(rows, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(rows, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s if nonlinearity == "tanh" else s + f", nonlinearity={nonlinearity}"

    def _batch(self, input, hx, states: int):
        """Check ranks, add the batch dimension to an unbatched step, fill a missing
        hidden state with zeros, check sizes.  ``hx`` is None, a tensor (``states``
        = 1) or a pair (the LSTM's).  Returns (is_batched, input, tuple of states)."""
        cell = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{cell}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            hx = (hx,) if states == 1 else tuple(hx)
            for k, h in enumerate(hx):
                if h.dim() not in (1, 2):
                    name = "hidden" if states == 1 else f"hx[{k}]"
                    raise ValueError(f"{cell}: Expected {name} to be 1D or 2D, got "
                                     f"{h.dim()}D instead")
            if len(hx) != states:
                raise RuntimeError("lstm_cell expects two hidden states")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = (zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                        device=input.device),) * states
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx)
        _check_input(input, self.weight_ih.size(1))
        for label, h in enumerate(hx):
            _check_hidden(input, h, self.weight_hh.size(1), label)
        return batched, input, hx


class RNNCell(RNNCellBase):
    """An Elman RNN cell: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh), or relu.

    >>> import autograd_kit as torch
    >>> cell = torch.nn.RNNCell(3, 5)
    >>> h = cell(torch.randn(2, 3))            # no hidden state: zeros
    >>> cell(torch.randn(2, 3), h).shape
    torch.Size([2, 5])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        batched, input, (hx,) = self._batch(input, hx, 1)
        if self.nonlinearity == "tanh":
            step = rnn_tanh_cell
        elif self.nonlinearity == "relu":
            step = rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = step(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell: ``(h', c') = cell(x, (h, c))``.

    >>> import autograd_kit as torch
    >>> cell = torch.nn.LSTMCell(3, 5)
    >>> h, c = cell(torch.randn(3))            # one unbatched step
    >>> h.shape, c.shape
    (torch.Size([5]), torch.Size([5]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        batched, input, hx = self._batch(input, hx, 2)
        h, c = lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                         self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """A gated recurrent unit: h' = (1 − z) ⊙ n + z ⊙ h.

    >>> import autograd_kit as torch
    >>> cell = torch.nn.GRUCell(3, 5, bias=False)
    >>> [name for name, _ in cell.named_parameters()]
    ['weight_ih', 'weight_hh']
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        batched, input, (hx,) = self._batch(input, hx, 1)
        out = gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)
