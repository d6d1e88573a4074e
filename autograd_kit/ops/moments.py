"""``var_mean`` and ``std_mean``: two results, one node.

PyTorch records ``v, m = torch.var_mean(x)`` as *one* node, VarMeanBackward0,
with two outputs (``v.grad_fn is m.grad_fn``; ``output_nr`` 0 and 1), as for the
pieces of ``unbind`` (see ``multi_output.py``).  Its backward runs once and adds
the two contributions to the gradient of x (N values reduced, c the correction):

    from the variance:  g_v · 2 (x − mean) / (N − c)
    from the mean:      g_m / N
    (std_mean: g_s / (2 s) takes the place of g_v, and 0 where s = 0)

A result that no gradient reached contributes nothing.  The formulas are written
with tensor operations on the saved x, so ``create_graph=True`` differentiates
them again.  Because the node is shared, a backward through one result frees
what the other needs, as in PyTorch.
"""
from __future__ import annotations

from .. import backend
from ..grad_mode import is_grad_enabled, no_grad
from ..graph import SavedTensor, edge
from ..multi_output import MultiOutputNode, OutputEdge
from ..tensor import Tensor
from ._rules import NODE_CLASSES
from .formula_grads import mean_backward, std_backward, var_backward
from .reduce import normalize_dims, spread_array


class _MomentsBackward(MultiOutputNode):
    __slots__ = ()
    input_names = ("self",)

    def apply(self, g, needed=None):
        """PyTorch's var_mean_backward / std_mean_backward: the variance's (or
        the std's) gradient, plus the mean's, each written as PyTorch writes
        it (a Scalar times g: MulBackward1; g / N: DivBackward1), and for the
        std the node's own result, not a recomputed one."""
        kw = {k: (v.unpack(self, k) if isinstance(v, SavedTensor) else v)
              for k, v in self._saved.items()}
        x, c, keepdim, dim = kw["self"], kw["correction"], kw["keepdim"], kw["dim"]
        dims = normalize_dims(dim, x.ndim)
        dim = None if dim is None or not x.ndim else dims  # (a 0-d x: all of it)
        c = 1 if c is None else c
        spread, g_mean = g.slots
        grad = None
        if spread is not None:
            if self.is_std:
                grad = std_backward(spread, x, self._own_result(kw["result0"]), dim, c, keepdim)
            else:
                grad = var_backward(spread, x, dim, c, keepdim)
        if g_mean is not None:
            part = mean_backward(g_mean, x, dims, keepdim)
            grad = part if grad is None else grad + part
        return (grad,)

    def _own_result(self, result):
        """The saved std as output 0 of this node: its gradient enters through
        output 0's edge (the one its tensor had, or a new one if that is gone)."""
        refs = (self._extra or {}).get("edges", ())
        edge0 = refs[0]() if refs else None
        result._grad_fn = edge0 if edge0 is not None else OutputEdge(self, 0, 2)
        return result

    def apply_array(self, g, needed=None, borrowed=None):
        (out,) = self.apply(g.map(Tensor._make))
        return (out._data,)


class VarMeanBackward0(_MomentsBackward):
    __slots__ = ()
    is_std = False
    formula_text = {"self": "var_backward(grads[0], self, dim, correction, keepdim)"
                            " + mean_backward(grads[1], self, dim, keepdim)"}


class StdMeanBackward0(_MomentsBackward):
    __slots__ = ()
    is_std = True
    formula_text = {"self": "std_backward(grads[0], self, result0, dim, correction, keepdim)"
                            " + mean_backward(grads[1], self, dim, keepdim)"}


for _cls in (VarMeanBackward0, StdMeanBackward0):
    NODE_CLASSES[_cls.__name__] = _cls


def moments(x, spread_name, dim, unbiased, keepdim, correction):
    """(var or std, mean) of ``x`` as the two outputs of one node.

    What the node keeps mirrors PyTorch: ``dim`` as given (None: every dim),
    ``correction`` as the call said it (None when neither ``unbiased`` nor
    ``correction`` nor ``dim`` was given), ``keepdim``, x itself, and for
    std_mean the standard deviation (``result0``)."""
    shown = correction
    if isinstance(dim, bool):  # var_mean(x, False): the old positional ``unbiased``
        dim, unbiased = None, dim
    if shown is None and (unbiased is not None or dim is not None):
        shown = 1 if unbiased is None or unbiased else 0
    with no_grad():
        spread = Tensor._make(spread_array(spread_name, x, dim, unbiased, keepdim, correction,
                                           f"{spread_name}_mean")[0])
        centre = x.mean(normalize_dims(dim, x.ndim), keepdim)
        _running_mean_infinities(centre, x, normalize_dims(dim, x.ndim), keepdim)
    if is_grad_enabled() and x.requires_grad:
        cls = StdMeanBackward0 if spread_name == "std" else VarMeanBackward0
        node = cls([edge(x)])
        node._saved = {"self": SavedTensor(x), "correction": shown, "keepdim": keepdim,
                       "dim": None if dim is None else (dim,) if isinstance(dim, int)
                       else tuple(dim)}
        if spread_name == "std":
            node._saved["result0"] = SavedTensor(spread, is_output=True)
        node._holds_tensors = True
        for out, e in zip((spread, centre), node._init_outputs(2)):
            out._grad_fn, out._rg = e, True
    return spread, centre


def _running_mean_infinities(centre, x, dims, keepdim) -> None:
    """PyTorch computes var_mean's mean as a running mean (Welford's update,
    m += (x - m) / k, over the elements in order): once m is infinite, any later
    element makes it inf - inf = NaN.  So an infinity anywhere but last gives a
    NaN mean, where the plain mean gives +-inf.  (Arrays: only when an inf is there.)"""
    a = x._data
    if a.dtype.kind != "f" or not a.size:
        return
    xp = backend.xp_of(a)
    inf = xp.isinf(a)
    if not inf.any():
        return
    rest = [i for i in range(a.ndim) if i not in dims]
    moved = xp.transpose(inf, rest + list(dims)).reshape([a.shape[i] for i in rest] + [-1])
    early = moved[..., :-1].any(axis=-1)
    if keepdim:
        early = early.reshape([1 if i in dims else a.shape[i] for i in range(a.ndim)])
    data = centre._data
    centre._data = xp.where(early, xp.asarray(xp.nan, dtype=data.dtype), data).astype(
        data.dtype, copy=False)
