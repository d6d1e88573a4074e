"""A convolution's backward as PyTorch computes it under ``create_graph``: one
kernel, ``convolution_backward(g, x, W)``, recorded as *one* node with three
outputs -- the gradients for the input, the weight and the bias --
``ConvolutionBackwardBackward0``, whose inputs are g, x and W.

For y = conv(x, W) + b the kernel computes (⋆ is the convolution of conv.py)

    gx = convᵀ(g, W)          gW = corr(x, g)          gb = Σ g  (over N, H, W)

Each output is linear in g and in one of x, W, so differentiating it again
needs no new idea.  With ĝx, ĝW, ĝb the gradients arriving for the three
outputs:

    for g:  conv(ĝx, W) + conv(x, ĝW) + ĝb      (each term: the forward again)
    for x:  convᵀ(g, ĝW)                         (gW = corr(x, g) is linear in x)
    for W:  corr(ĝx, g)                          (gx = convᵀ(g, W) is linear in W)

which are the words of conv.py again, so third derivatives come out of the
same code.  The node keeps what PyTorch's keeps: g, x, W and the geometry.
"""
from __future__ import annotations

from ..grad_mode import is_grad_enabled, no_grad
from ..graph import SavedTensor, edge
from ..multi_output import MultiOutputNode
from ..tensor import Tensor
from ._rules import NODE_CLASSES
from .conv import conv2d_forward, conv_input_grad, conv_weight_grad
from .formula_env import ENV, _is_tensor, _raw
from .formula_env import sum as _sum


def convolution_backward(g, input, weight, stride, padding, dilation, need):
    """(gx, gW, gb), each only where ``need`` says; on Tensors the three come
    out of one recorded ConvolutionBackwardBackward0 node."""
    if not _is_tensor(g):
        return (conv_input_grad(g, input, weight, stride, padding, dilation) if need[0] else None,
                conv_weight_grad(g, input, weight, stride, padding, dilation) if need[1] else None,
                _sum(g, (0, 2, 3)) if need[2] else None)
    arrays = convolution_backward(_raw(g), _raw(input), _raw(weight), stride, padding,
                                  dilation, need)
    outs = [None if a is None else Tensor._make(a) for a in arrays]
    if is_grad_enabled() and (g.requires_grad or input.requires_grad or weight.requires_grad):
        node = ConvolutionBackwardBackward0([edge(g), edge(input), edge(weight)])
        node._saved = {"grad_output": SavedTensor(g), "input": SavedTensor(input),
                       "weight": SavedTensor(weight), "stride": stride, "padding": padding,
                       "dilation": dilation, "transposed": False, "output_padding": (0, 0),
                       "groups": 1}
        node._holds_tensors = True
        for out, e in zip(outs, node._init_outputs(3)):
            if out is not None:
                out._grad_fn, out._rg = e, True
    return tuple(outs)


class ConvolutionBackwardBackward0(MultiOutputNode):
    """The convolution kernel's node (see the module's text)."""

    __slots__ = ()
    input_names = ("grad_output", "input", "weight")
    formula_text = {"grad_output": "conv2d(grads[0], weight) + conv2d(input, grads[1])"
                                   " + grads[2]",
                    "input": "conv_input_grad(grad_output, input, grads[1])",
                    "weight": "conv_weight_grad(grad_output, grads[0], weight)"}

    def apply(self, grads, needed=None):
        kw = {k: (v.unpack(self, k) if isinstance(v, SavedTensor) else v)
              for k, v in self._saved.items()}
        g, x, w = kw["grad_output"], kw["input"], kw["weight"]
        stride, padding, dilation = kw["stride"], kw["padding"], kw["dilation"]
        gx_in, gw_in, gb_in = grads.slots
        out = tuple(g.shape[-2:])  # (the size of the convolution's output)
        for_g = None
        if gx_in is not None:
            for_g = conv2d_forward(gx_in, w, None, stride, padding, dilation, out)
        if gw_in is not None:
            part = conv2d_forward(x, gw_in, None, stride, padding, dilation, out)
            for_g = part if for_g is None else for_g + part
        if gb_in is not None:
            part = gb_in.reshape(1, -1, 1, 1).expand(*g.shape)
            for_g = part if for_g is None else for_g + part
        for_x = None if gw_in is None else \
            conv_input_grad(g, x, gw_in, stride, padding, dilation)
        for_w = None if gx_in is None else \
            conv_weight_grad(g, gx_in, w, stride, padding, dilation)
        return (for_g, for_x, for_w)

    def apply_array(self, grads, needed=None, borrowed=None):
        with no_grad():
            outs = self.apply(grads.map(Tensor._make))
        return tuple(None if o is None else o._data for o in outs)


NODE_CLASSES[ConvolutionBackwardBackward0.__name__] = ConvolutionBackwardBackward0
ENV["convolution_backward"] = convolution_backward
