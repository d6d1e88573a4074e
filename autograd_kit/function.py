"""Custom operations: subclass ``Function`` with ``forward`` and ``backward``.

As in PyTorch::

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    y = Cube.apply(x)        # y.grad_fn.name() == "CubeBackward"

``forward`` runs without recording; one node stands for the whole function.
``ctx.saved_tensors`` is version-checked like every saved tensor.  PyTorch 2's
other style works too: ``forward(x)`` without ``ctx``, plus
``setup_context(ctx, inputs, output)`` to save what backward needs.

What ``forward`` returns decides what the caller gets:

* a tuple: one output each, all sharing the node (``output_nr`` 0, 1...); the
  backward receives one gradient per output, zeros where none arrived
  (``ctx.set_materialize_grads(False)``: None);
* a tensor saved with ``save_for_backward`` that is also an output is saved
  *as the output*, with its history: a second derivative then goes through
  this node again;
* ``ctx.mark_dirty(t)``: ``t`` was changed in place and is returned; it is the
  output itself (a view's base learns of the change, as for any in-place op);
* ``ctx.mark_non_differentiable(t)``: the output does not require grad;
* an input returned as it is, or a view of one, is a view the caller may not
  change in place while it requires grad (the change would bypass backward).

The helpers that make those outputs are in ``function_outputs.py``;
``once_differentiable`` is in ``function_once.py`` (importable from here too).
"""
from __future__ import annotations

import inspect
import warnings
import weakref

from . import errors
from .backend import to_dtype, xp_of
from .function_once import once_differentiable  # noqa: F401 (importable from here)
from .function_outputs import _alias, _aliases_of_inputs, _as_view_of, _dirty_output, _is_view, \
    _save
from .graph import edge
from .grad_mode import _state, no_grad
from .multi_output import MultiOutputNode, OutputGrads
from .ops.reduce import sum_to
from .tensor import Tensor


class FunctionCtx:
    """The ``ctx`` passed to forward (or ``setup_context``) and backward."""

    def __init__(self) -> None:
        self._to_save = ()
        self._unpack_at = ()  # per saved tensor: the output edge it is unpacked for (a weak
        #                       reference), or None for the node itself
        self._dirty = ()
        self._non_differentiable = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._node = None  # a weak reference: the node holds this ctx (no cycle)

    @property
    def node(self):
        """The Function's node in the graph (None when nothing was recorded)."""
        return None if self._node is None else self._node()

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(errors.SAVE_NOT_TENSOR.format(i=i, got=type(t).__name__))
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        node = self.node
        if node is None:
            return ()
        try:
            return tuple(node._saved[f"saved_{i}"].unpack(
                             node if at is None else (at() or node), f"saved_{i}")
                         if node._saved.get(f"saved_{i}") is not None else None
                         for i, at in enumerate(self._unpack_at))
        except RuntimeError as err:  # (changed since saved, or freed by a backward)
            raise errors.short(err)  # the line of your backward, then this one

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs that forward changed in place (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient (indices, masks...)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: outputs no gradient reached get None in backward, not zeros."""
        self.materialize_grads = bool(value)


class FunctionNode(MultiOutputNode):
    """The node a custom Function puts in the graph."""

    __slots__ = ("fn_cls", "ctx", "_tensor_positions", "_n_args", "_shapes", "_dtypes",
                 "_out_meta", "_out_at")

    def __call__(self, *grads):
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    def __getattr__(self, attr):
        # In PyTorch the node *is* the ctx: ``y.grad_fn.saved_tensors``,
        # ``y.grad_fn.needs_input_grad`` and what forward stored on ctx.
        if not attr.startswith("_") and attr != "ctx":
            try:
                return getattr(object.__getattribute__(self, "ctx"), attr)
            except AttributeError:
                pass
        return super().__getattr__(attr)

    def apply(self, g, needed=None):
        if g.__class__ is OutputGrads:  # several outputs: one gradient each
            grads = [self._missing(k) if s is None else s for k, s in enumerate(g.slots)]
        else:
            grads = [g]
        if len(self._out_at) != len(grads):  # outputs that are no tensors get None
            it = iter(grads)
            grads = [next(it) if is_tensor else None for is_tensor in self._out_at]
        result = _user_backward(self.fn_cls)(self.ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return self._checked(result)

    def apply_array(self, g, needed=None, borrowed=None):
        wrapped = g.map(Tensor._make) if g.__class__ is OutputGrads else Tensor._make(g)
        return tuple(None if gi is None else gi._data for gi in self.apply(wrapped))

    def _missing(self, k: int):
        """The gradient of an output that none reached: zeros, as PyTorch gives."""
        if not self.ctx.materialize_grads:
            return None
        shape, dtype, xp = self._out_meta[k]
        return Tensor._make(xp.zeros(shape, dtype=dtype))

    def _checked(self, grads: tuple) -> tuple:
        """The gradients for the tensor inputs, after PyTorch's checks of what a
        hand-written backward returned: one entry per forward argument (extra
        entries must be None), each a Tensor or None, each with the input's shape
        or one that broadcasting made from it (then summed back down to it), and
        cast to the input's dtype (an integer gradient for a float input too)."""
        name = type(self).__name__
        if len(grads) < self._n_args or any(x is not None for x in grads[self._n_args:]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {self._n_args}, got {len(grads)})")
        out = []
        for pos, shape, dtype in zip(self._tensor_positions, self._shapes, self._dtypes):
            grad = grads[pos]
            if grad is not None and not isinstance(grad, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
            if grad is not None and tuple(grad.shape) != shape:
                if not _expandable(shape, tuple(grad.shape)):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {pos} - got "
                        f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
                grad = sum_to(grad, shape)
            if grad is not None and grad._data.dtype != dtype:
                grad = grad.to(to_dtype(dtype))
            out.append(grad)
        return tuple(out)


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (PyTorch's ``is_expandable_to``)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


_NODE_CLASSES: dict = {}


def _node_class(fn_cls):
    """One node class per Function, named as PyTorch names it: ``CubeBackward``."""
    if fn_cls not in _NODE_CLASSES:
        _NODE_CLASSES[fn_cls] = type(fn_cls.__name__ + "Backward", (FunctionNode,),
                                     {"__slots__": ()})
    return _NODE_CLASSES[fn_cls]


class Function:
    """Base class for operations with a hand-written backward."""

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class "
                      "itself. Instantiating an autograd function will raise an error in a "
                      "future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(errors.LEGACY_FUNCTION)

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        setup = _has_setup_context(cls)
        if setup or kwargs:  # arguments by keyword become positional, in forward's order
            args, kwargs = _bind(cls.forward, args, kwargs, setup)
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            if setup:  # PyTorch 2 style: forward(*args), then setup
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if not (_state.enabled and any(t._rg for t in tensors)):
            return _aliases_of_inputs(out, tensors)
        try:
            return _connect(cls, ctx, args, tensors, out)
        except RuntimeError as err:
            raise errors.short(err)  # the learner's line, then this call

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError(errors.NO_FORWARD)

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(errors.NO_BACKWARD)

    vjp = backward  # either name may be given (PyTorch's other name for backward)


def _user_backward(cls):
    """The backward the user wrote: ``backward`` or ``vjp``, not both."""
    backward, vjp = cls.backward, cls.vjp
    base = Function.__dict__["backward"].__func__
    if backward is not base and vjp is not base:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                           "not allowed. You should only implement one of them.")
    return vjp if vjp is not base else backward


def _bind(forward, args, kwargs, setup):
    """``apply``'s arguments as forward's positional arguments, as PyTorch passes
    them: in forward's own order, and (with ``setup_context``) with its default
    values filled in, so ``inputs`` holds them all.  The old style binds past
    ``ctx`` and fills only a default skipped before a given argument."""
    sig = inspect.signature(forward)
    bound = sig.bind(*args, **kwargs) if setup else sig.bind(None, *args, **kwargs)
    if setup:
        bound.apply_defaults()
        if bound.kwargs:  # keyword-only arguments: PyTorch passes no keywords to forward
            raise TypeError(f"forward() got an unexpected keyword argument "
                            f"'{next(iter(bound.kwargs))}'")
        return bound.args, {}
    params = list(sig.parameters.values())[1:]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    given = [i for i, p in enumerate(positional) if p.name in bound.arguments]
    out = [bound.arguments[p.name] if p.name in bound.arguments else p.default
           for p in positional[:given[-1] + 1]] if given else []
    for p in params:
        if p.kind is p.VAR_POSITIONAL and p.name in bound.arguments:
            out += list(bound.arguments[p.name])
    rest = {p.name: bound.arguments[p.name] for p in params
            if p.kind is p.KEYWORD_ONLY and p.name in bound.arguments}
    for p in params:
        if p.kind is p.VAR_KEYWORD and p.name in bound.arguments:
            rest.update(bound.arguments[p.name])
    return tuple(out), rest


def _has_setup_context(cls) -> bool:
    return getattr(cls.setup_context, "__func__", cls.setup_context) is not \
        Function.__dict__["setup_context"].__func__


def _connect(cls, ctx, args, tensors, out):
    """Put the Function's node in the graph and make its outputs (see the module
    docstring for what each kind of output becomes)."""
    outputs = out if isinstance(out, tuple) else (out,)
    produced = [o for o in outputs if isinstance(o, Tensor)]
    dirty = {id(t) for t in ctx._dirty}
    if dirty - {id(o) for o in produced}:
        raise RuntimeError(errors.DIRTY_NOT_RETURNED)
    if dirty - {id(t) for t in tensors}:  # allowed, but PyTorch warns
        warnings.warn(errors.MARK_DIRTY_NOT_INPUT, UserWarning, stacklevel=3)
    for t in ctx._dirty:  # changed in place: as for any in-place op, not a leaf's view
        base = t._base
        if base is not None and base._rg and base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
    node = _node_class(cls)([edge(t) for t in tensors])  # tensors only, as in PyTorch
    node.fn_cls, node.ctx = cls, ctx
    node._tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    node._n_args = len(args)
    node._shapes = tuple(tuple(t._data.shape) for t in tensors)
    node._dtypes = tuple(t._data.dtype for t in tensors)
    node._out_meta = tuple((o._data.shape, o._data.dtype, xp_of(o._data)) for o in produced)
    node._out_at = tuple(isinstance(o, Tensor) for o in outputs)  # which outputs are tensors
    ctx._node = weakref.ref(node)
    several = len(produced) > 1
    edges = node._init_outputs(len(produced)) if several else [node]
    skip = {id(t) for t in ctx._non_differentiable}
    inputs = {id(t) for t in tensors}
    made, results, k = {}, [], 0
    for o in outputs:
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        if id(o) in skip:  # (an input: detached, as PyTorch gives it back)
            result = o if id(o) not in inputs else o.detach()
        elif id(o) in dirty:
            result = _dirty_output(o, edges[k], node, tensors)
        elif o._data.dtype.kind not in "fc":  # integers, booleans: no gradient
            result = o if id(o) not in inputs else _alias(o)
        elif id(o) in made:  # the same tensor twice: the later output it is
            result = made[id(o)]
            result._grad_fn = edges[k]
        else:
            result = Tensor._make(o._data, True, edges[k])
            result._vc = o._vc
            if id(o) in inputs or _is_view(o):  # a view of an input (or the input itself)
                _as_view_of(result, o)
                result.__dict__["_creation"] = ("multi" if several else "custom", k,
                                                errors.op_name(node))
        made[id(o)] = result
        results.append(result)
        k += 1
    _save(ctx, node, made, edges, produced)
    return tuple(results) if isinstance(out, tuple) else results[0]
