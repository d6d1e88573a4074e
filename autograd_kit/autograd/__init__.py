"""``autograd_kit.autograd``: the engine's public entry points, named as PyTorch names them."""
from __future__ import annotations

import warnings

from .. import engine as _engine
from .. import errors as _errors
from .. import grad_mode  # noqa: F401  (``torch.autograd.grad_mode``)
from ..engine import Step, backward_steps
from ..snapshot import GraphSnapshot
from ..function import Function, FunctionCtx
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # (the function, not the module)
from ..grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from ..tensor import NESTED, Tensor, check_backward_inputs, on_fresh_thread
from ..tensor import _MAX_NESTED, _nesting
from . import function, functional, graph  # noqa: F401


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """``torch.autograd.backward``: accumulate gradients of ``tensors`` into the
    leaves (or only into ``inputs``).  The engine's ``backward``, after PyTorch's
    checks of ``inputs``."""
    try:
        if isinstance(inputs, dict):
            inputs = tuple(inputs.values())
        if inputs is not None:
            check_backward_inputs(inputs)
        if _nesting.depth >= _MAX_NESTED:  # (see tensor.py: reentrant backward)
            return on_fresh_thread(_engine.backward, tensors, grad_tensors, retain_graph,
                                   create_graph, grad_variables, inputs)
        with NESTED:
            _engine.backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables,
                             inputs)
    except Exception as err:
        raise _errors.short(err)  # the traceback ends at the public call


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """``torch.autograd.grad``: the gradients of ``outputs`` with respect to
    ``inputs``, returned instead of accumulated into ``.grad``.

    ``allow_unused=True`` gives None for an input the outputs do not depend on;
    ``materialize_grads=True`` gives zeros instead (requiring grad when
    ``create_graph``).  ``inputs`` may be a dict: the result is then a dict with
    the same keys."""
    try:
        if materialize_grads and allow_unused is False:
            raise ValueError(_errors.MATERIALIZE_UNUSED)
        if allow_unused is None:
            allow_unused = materialize_grads
        as_dict = type(inputs) is dict
        inputs_t = (inputs,) if isinstance(inputs, Tensor) else \
            tuple(inputs.values()) if as_dict else tuple(inputs)
        if not inputs_t:
            raise RuntimeError(_errors.BACKWARD_INPUTS_EMPTY.format(fn="grad"))
        if not only_inputs:
            warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                          "True). To accumulate gradient for other parts of the graph, please "
                          "use torch.autograd.backward.", FutureWarning, stacklevel=2)
        if is_grads_batched:
            raise NotImplementedError("is_grads_batched=True needs vmap, which autograd_kit "
                                      "does not have: call grad once per gradient instead")
        if _nesting.depth >= _MAX_NESTED:  # (see tensor.py: reentrant backward)
            result = on_fresh_thread(_engine.grad, outputs, inputs_t, grad_outputs,
                                     retain_graph, create_graph, allow_unused)
        else:
            with NESTED:
                result = _engine.grad(outputs, inputs_t, grad_outputs, retain_graph,
                                      create_graph, allow_unused)
        if materialize_grads:
            from ..ops.creation import zeros_like
            result = tuple(zeros_like(x, requires_grad=create_graph) if g is None else g
                           for g, x in zip(result, inputs_t))
        return dict(zip(inputs.keys(), result)) if as_dict else result
    except Exception as err:
        raise _errors.short(err)  # the traceback ends at the public call
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)


def Variable(data, requires_grad: bool = False, volatile: bool = False):  # noqa: N802
    """The pre-0.4 wrapper, kept so old code runs: a new leaf tensor on the same
    memory as ``data`` (``data.detach()``), requiring grad if asked.

    (Before PyTorch 0.4, a ``Variable`` wrapped a ``Tensor`` to add ``grad`` and
    ``grad_fn``; today every tensor has them.)  The result is a *new* leaf, as in
    PyTorch: gradients reach it, not ``data``.  ``volatile`` was the inference
    switch of those days; it has no effect now, and saying so is a warning."""
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    if volatile:
        if requires_grad:
            raise ValueError("Variable can't be volatile and require_grad at the same time!")
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                      "instead.", UserWarning, stacklevel=2)
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


__all__ = ["backward", "backward_steps", "grad", "Function", "FunctionCtx", "gradcheck",
           "gradgradcheck", "GradcheckError", "Variable", "Step", "GraphSnapshot",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]
