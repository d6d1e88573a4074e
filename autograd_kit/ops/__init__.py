"""All operations, one module per family, attached to Tensor as methods.

``arith``  + - * / ** @        ``unary``   exp log sin tanh relu clamp...
``reduce`` sum mean max var softmax   ``shape``  reshape transpose x[i] cat where
``loss``   mse_loss nll_loss    ``compare`` == < argmax (no gradient)
``inplace`` add_ x[i]=v ...     ``creation`` tensor zeros randn...
``conv``   conv2d max_pool2d (im2col)   ``pooling`` avg_pool2d adaptive_avg_pool2d
``loss_more`` BCE with logits, smooth L1, Huber   ``ordering`` sort argsort median
``diagonal`` diagonal diag trace tril triu        ``unary_more`` log1p expm1 tan cumsum...
``moments`` var_mean, std_mean (one node, two outputs)
``scatter`` gather scatter scatter_add (along one dimension)   ``products`` cumprod
``index_select`` index_select index_add   ``masked`` masked_select masked_scatter
``scalar`` tensor-and-number ops of the formulas (MulBackward1...)
``kernels`` backward kernels recorded as ops (TanhBackwardBackward0...)
``module_forms`` torch.sin_(x), x.new_full...: other spellings of the ops above
Each family file ends with its table of backward formulas.
"""
from __future__ import annotations

from .. import backend, errors, graph
from ..tensor import Tensor
from . import (arith, compare, conv, conv_kernel, convert, creation, formula_env,
               formula_grads, indexing, index_select, inplace, kernels, loss, loss_more, masked,
               module_forms, pooling, products, random_creation, random_fill, reduce, scalar,
               scatter, shape, unary, unary_more)
from ._rules import record
from .formula_env import ENV, OPS, on_tensors

# -- what the layers below call back --------------------------------------------
# The formulas and the graph sit below the operations and import none of them;
# the few operations they run (a formula's words on Tensors, a gradient summed
# down to its input's shape, a refreshed view's backward) are put in place here.
OPS.__dict__.update({
    "sgn": unary_more.sgn, "where": shape.where, "bmm": module_forms.bmm, "sum": reduce.sum,
    "sum_to": reduce.sum_to, "mul_scalar": scalar.mul_scalar, "sub_scalar": scalar.sub_scalar,
    "div_scalar": scalar.div_scalar, "record": record, "PowBackward0": arith.PowBackward0,
    "index_fill": indexing.index_fill, "index_put": indexing.index_put,
    "index_select": index_select.index_select, "arange": creation.arange,
    "zeros": creation.zeros, "full": creation.full, "logit": unary.logit, "div": arith.div,
    "masked_fill": shape.masked_fill, "scatter_into_zeros": scatter.scatter_into_zeros,
    "threshold_backward": unary.threshold_backward,
    "leaky_relu_backward": unary.leaky_relu_backward, "erf": unary.erf,
    "_erf_array": unary._erf_array, "CloneBackward0": shape.CloneBackward0,
})
graph.scatter_view = indexing.scatter_view  # (AsStridedBackward0's backward)
# words of the formula tables that belong to an op family
ENV.update({
    "scale_for": loss.scale_for, "nll_grad": on_tensors(loss.nll_grad),
    "nll_of": on_tensors(loss.nll_of),
    "weighted": loss.weighted,
    "bce_backward": loss.bce_backward,
    "to_device": on_tensors(convert.to_device),
    "gather_view": on_tensors(indexing.gather_view),
    "scatter_view": on_tensors(indexing.scatter_view),
    "select_backward": indexing.select_backward,
    "slice_backward": indexing.slice_backward,
    "index_backward": indexing.index_backward,
    "gather_along": scatter.gather_along, "scatter_zeros": scatter.scatter_zeros,
    "gather_backward": scatter.gather_backward,
    "scatter_into_zeros": scatter.scatter_into_zeros,
    "prod_backward": products.prod_backward, "cumprod_backward": products.cumprod_backward,
    "index_select_backward": index_select.index_select_backward,
    "index_add_source_grad": index_select.index_add_source_grad,
})

_ip = inplace.make_inplace


def _operator(fn):
    """A binary operator (``/``, ``*=``...): an operand that is neither a tensor, a
    number nor an array (the op says so with ``NotAnOperand`` where it turns the
    operand into an array) gives NotImplemented, so that Python raises its own
    error (``unsupported operand type(s) for /: 'Tensor' and 'str'``), as for
    PyTorch.  ``+ - *`` are :func:`arith.operator_form`'s."""
    def op(self, other):
        try:
            return fn(self, other)
        except backend.NotAnOperand:
            return NotImplemented
        except Exception as err:
            raise errors.short(err)  # the learner's line and this one, as before
    op.__name__, op.__doc__ = getattr(fn, "__name__", "op"), fn.__doc__
    return op


METHODS = {
    # arithmetic and operators
    "add": arith.add, "sub": arith.sub, "mul": arith.mul, "div": arith.div,
    "true_divide": arith.div, "pow": arith.pow, "neg": arith.neg, "matmul": arith.matmul,
    "mm": arith.mm, "dot": arith.dot, "multiply": arith.mul, "subtract": arith.sub,
    "__add__": arith.add_operator, "__radd__": arith.add_operator,
    "__sub__": arith.sub_operator, "__rsub__": _operator(arith.rsub),
    "__mul__": arith.mul_operator, "__rmul__": arith.mul_operator,
    "__truediv__": _operator(arith.div), "__rtruediv__": _operator(arith.rdiv),
    "__pow__": _operator(arith.pow), "__rpow__": _operator(arith.rpow), "__neg__": arith.neg,
    "__matmul__": _operator(arith.matmul),
    "__rmatmul__": _operator(lambda self, other: arith.matmul(other, self)),
    "__abs__": unary.abs,
    "__pos__": unary.positive,
    # elementwise
    "exp": unary.exp, "log": unary.log, "logit": unary.logit, "sin": unary.sin, "cos": unary.cos,
    "tanh": unary.tanh, "sigmoid": unary.sigmoid, "relu": unary.relu, "sqrt": unary.sqrt,
    "rsqrt": unary.rsqrt, "abs": unary.abs, "reciprocal": unary.reciprocal,
    "square": unary.square, "clamp": unary.clamp, "clip": unary.clamp,
    "clamp_min": unary.clamp_min, "clamp_max": unary.clamp_max, "sign": unary.sign,
    "floor": unary.floor, "ceil": unary.ceil, "round": unary.round,
    # reductions
    "sum": reduce.sum, "mean": reduce.mean, "max": reduce.max, "min": reduce.min,
    "nansum": reduce.nansum, "nanmean": reduce.nanmean,
    "amax": reduce.amax, "amin": reduce.amin, "var": reduce.var, "std": reduce.std,
    "softmax": reduce.softmax, "log_softmax": reduce.log_softmax,
    "logsumexp": reduce.logsumexp, "prod": reduce.prod, "norm": reduce.norm,
    "maximum": reduce.maximum, "minimum": reduce.minimum, "sum_to_size": reduce.sum_to_size,
    # shapes and indexing
    "reshape": shape.reshape, "view": shape.view, "flatten": shape.flatten,
    "transpose": shape.transpose, "t": shape.t, "permute": shape.permute, "flip": shape.flip,
    "squeeze": shape.squeeze, "unsqueeze": shape.unsqueeze, "expand": shape.expand,
    "clone": shape.clone, "contiguous": shape.contiguous, "repeat": shape.repeat,
    "narrow": indexing.narrow, "unbind": indexing.unbind, "split": indexing.split,
    "unsafe_split": indexing.unsafe_split, "unsafe_chunk": indexing.unsafe_chunk,
    "chunk": indexing.chunk, "select": indexing.select, "__getitem__": indexing.getitem,
    "view_as": lambda self, o: shape.view(self, *o.shape),
    "reshape_as": lambda self, o: shape.reshape(self, *o.shape),
    "expand_as": lambda self, o: shape.expand(self, tuple(o.shape)),
    "broadcast_to": lambda self, size: shape.expand(self, tuple(size)),
    "where": lambda self, cond, other: shape.where(cond, self, other),
    "masked_fill": shape.masked_fill, "index_fill": indexing.index_fill,
    "gather": scatter.gather, "scatter": scatter.scatter, "scatter_add": scatter.scatter_add,
    "index_select": index_select.index_select, "index_add": index_select.index_add,
    "masked_select": masked.masked_select, "masked_scatter": masked.masked_scatter,
    # comparisons and logic (no gradient)
    "eq": compare.eq, "ne": compare.ne, "lt": compare.lt, "le": compare.le,
    "gt": compare.gt, "ge": compare.ge, "__eq__": compare.eq, "__ne__": compare.ne,
    "__lt__": compare.lt, "__le__": compare.le, "__gt__": compare.gt, "__ge__": compare.ge,
    "__and__": compare.logical_and_, "__or__": compare.logical_or_,
    "__xor__": compare.logical_xor_, "__invert__": compare.bitwise_not,
    "__rand__": lambda self, other: compare.logical_and_(other, self),
    "__ror__": lambda self, other: compare.logical_or_(other, self),
    "__rxor__": lambda self, other: compare.logical_xor_(other, self),
    "__floordiv__": arith.floor_divide, "__mod__": arith.remainder,
    "__rfloordiv__": arith.rfloor_divide, "__rmod__": arith.rremainder,
    "floor_divide": arith.floor_divide, "remainder": arith.remainder, "atan2": arith.atan2,
    "logical_and": compare.logical_and, "logical_or": compare.logical_or,
    "logical_xor": compare.logical_xor,
    "logical_not": compare.logical_not, "argmax": compare.argmax, "argmin": compare.argmin,
    "all": compare.all, "any": compare.any, "isfinite": compare.isfinite,
    "isnan": compare.isnan, "equal": compare.equal, "allclose": compare.allclose,
    "nonzero": compare.nonzero,
    # dtype and device
    "to": convert.to, "type": convert.type_, "cpu": lambda self: convert.to(self, "cpu"),
    "cuda": lambda self, device=None: convert.to(self, device if device is not None
                                                  else "cuda"),
    "float": lambda self: convert.to(self, backend.float32),
    "double": lambda self: convert.to(self, backend.float64),
    "half": lambda self: convert.to(self, backend.float16),
    "long": lambda self: convert.to(self, backend.int64),
    "int": lambda self: convert.to(self, backend.int32),
    "bool": lambda self: convert.to(self, backend.bool),
    "new_tensor": lambda self, data, **kw: creation.tensor(
        data, dtype=kw.get("dtype", self.dtype), device=kw.get("device", self.device),
        requires_grad=kw.get("requires_grad", False)),
    "new_zeros": lambda self, *size, **kw: creation.zeros(
        *size, dtype=kw.get("dtype", self.dtype), device=kw.get("device", self.device)),
    "new_ones": lambda self, *size, **kw: creation.ones(
        *size, dtype=kw.get("dtype", self.dtype), device=kw.get("device", self.device)),
    # in-place
    "add_": _ip(arith.add, "add"), "sub_": _ip(arith.sub, "subtract"),
    "mul_": _ip(arith.mul, "multiply"), "div_": _ip(arith.div, "divide"),
    "pow_": _ip(arith.pow), "neg_": _ip(arith.neg),
    "clamp_": _ip(unary.clamp), "clip_": _ip(unary.clamp), "log_": _ip(unary.log),
    "exp_": _ip(unary.exp), "relu_": _ip(unary.relu), "sigmoid_": _ip(unary.sigmoid),
    "tanh_": _ip(unary.tanh), "sqrt_": _ip(unary.sqrt), "abs_": _ip(unary.abs),
    "sin_": _ip(unary.sin), "cos_": _ip(unary.cos),
    "copy_": lambda self, src: inplace.inplace(self, inplace.copy, src),
    "fill_": lambda self, value: inplace.inplace(self, inplace.fill, value),
    "zero_": lambda self: inplace.inplace(self, inplace.zero),
    "masked_fill_": lambda self, mask, value: inplace.inplace(
        self, lambda old: shape.masked_fill(old, mask, value)),
    "index_fill_": lambda self, dim, index, value: inplace.inplace(
        self, lambda old: indexing.index_fill(old, dim, index, value)),
    "scatter_": lambda self, dim, index, src=None, value=None, *, reduce=None: inplace.inplace(
        self, lambda old, s: scatter.scatter(old, dim, index, s, value, reduce=reduce), src),
    "scatter_add_": lambda self, dim, index, src: inplace.inplace(
        self, lambda old, s: scatter.scatter_add(old, dim, index, s), src),
    "index_add_": lambda self, dim, index, source, *, alpha=1: inplace.inplace(
        self, lambda old, s: index_select.index_add(old, dim, index, s, alpha=alpha), source),
    "masked_scatter_": lambda self, mask, source: inplace.inplace(
        self, lambda old, s: masked.masked_scatter(old, mask, s), source),
    "__iadd__": _operator(_ip(arith.add, "add")),
    "__isub__": _operator(_ip(arith.sub, "subtract")),
    "__imul__": _operator(_ip(arith.mul, "multiply")),
    "__itruediv__": _operator(_ip(arith.div, "divide")), "__setitem__": inplace.setitem,
    # random numbers (PyTorch's stream): uniform_, normal_, random_, bernoulli_...
    **random_fill.METHODS,
    "bernoulli": lambda self, p=None, *, generator=None: random_creation.bernoulli(
        self, p, generator=generator),
    "multinomial": lambda self, num_samples, replacement=False, *, generator=None:
        random_creation.multinomial(self, num_samples, replacement, generator=generator),
}

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
module_forms.install()  # diagonal, sort, median, log1p, cumsum, floor_... (newer op files)

Tensor.T = property(shape.T, doc="All dimensions reversed.")
Tensor.mT = property(shape.mT, doc="The last two dimensions swapped.")
Tensor.H = Tensor.T
