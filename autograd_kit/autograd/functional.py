"""``torch.autograd.functional``: Jacobians, Hessians and their products with vectors.

Everything here is built from one tool, ``autograd.grad``, which computes a
*vector–Jacobian product*: for y = f(x) and a vector v shaped like y, it gives
vᵀ J = Σ_i v_i ∂y_i/∂x (reverse mode).  From it:

* ``vjp(f, x, v)``       one call: vᵀ J;
* ``jacobian(f, x)``     one vjp per output element, with v = each unit vector in
                         turn: the rows of J, stacked to shape ``y.shape + x.shape``;
* ``jvp(f, x, v)``       J v (forward mode) by the *double-backward trick*: u ↦ uᵀ J
                         is linear in u, so differentiating it with respect to u, in
                         direction v, gives (J v)ᵀ;
* ``hessian(f, x)``      the Jacobian of the gradient (f returns one number);
* ``vhp(f, x, v)``       vᵀ H: differentiate the gradient once more, in direction v;
* ``hvp(f, x, v)``       H v, by the double-backward trick on the gradient (equal to
                         vᵀ H whenever H is symmetric, as for smooth f).

``inputs`` is a Tensor or a tuple of Tensors; results come back in the same
structure.  The inputs are not changed: f runs on fresh copies that require
grad.  Results carry no graph unless ``create_graph=True``.  With
``strict=True``, an output that does not depend on an input is an error instead
of a block of zeros.  ``vectorize=True`` gives the same numbers (computed row by
row here: the kit has no ``vmap``).
"""
from __future__ import annotations

from ..engine import grad as _autograd_grad
from ..grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..ops.creation import zeros_like
from ..ops.shape import stack
from ..tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# ---------------------------------------------------------------- helpers --
def _as_tuple(value, what: str, fn: str):
    """(was it a tuple?, the Tensors as a tuple), refusing anything else."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the {where} has type {type(item)}.")
    return was_tuple, items


def _unpack(values, was_tuple: bool):
    return values if was_tuple else values[0]


def _fresh(tensors, create_graph: bool, need_graph: bool = True):
    """New Tensor objects for f to run on: differentiable views of the caller's
    tensors when create_graph keeps the history, detached copies otherwise."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _finish(tensors, create_graph: bool):
    """Results without history unless the caller asked for a graph."""
    if create_graph:
        return tuple(tensors)
    return tuple(t.detach() for t in tensors)


def _grad(outputs, inputs, vs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad (None for an input
    that none of them depends on)."""
    vs = (None,) * len(outputs) if vs is None else vs
    pairs = [(o, v) for o, v in zip(outputs, vs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, grads = zip(*pairs)
    return _autograd_grad(outs, inputs, grads, retain_graph=retain_graph,
                          create_graph=create_graph, allow_unused=True)


def _check_v(v, like, like_is_tuple: bool) -> None:
    if len(v) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got "
                           f"{len(v)}." if like_is_tuple
                           else "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.shape != b.shape:
            entry = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")


def _read_v(v, like, like_is_tuple, fn, create_graph, none_ok: bool, none_message: str):
    if v is None:
        if not none_ok:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn)
    v = _fresh(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


_OUT_V_NONE = ("The vector v can only be None if the user-provided function returns a single "
               "Tensor with a single element.")
_IN_V_NONE = ("The vector v can only be None if the input to the user-provided function is a "
              "single Tensor with a single element.")


def _inputs(inputs, fn: str, create_graph: bool):
    """(whether a tuple was given, the inputs as fresh tensors that require grad)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    return in_tuple, _fresh(inputs, create_graph)


def _outputs(func, inputs, fn: str, strict: bool):
    """(whether ``func`` returned a tuple, its outputs); in strict mode each must
    require grad."""
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
    _strict_outputs(outputs, strict)
    return out_tuple, outputs


def _strict_outputs(outputs, strict: bool) -> None:
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require "
                                   "gradients. The outputs must be computed in a differentiable "
                                   "manner from the input when running in strict mode.")


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _zeros_for_none(grads, refs, strict: bool, create_graph: bool, stage: str):
    """A missing gradient (the output does not depend on that input) is a block of
    zeros -- or, with ``strict``, an error."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            which = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {which} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


_DEPENDS = {
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should ensure "
               "that your function is thrice differentiable and that the hessian depends on the "
               "inputs.",
}


def _strict_depends(grads, kind: str, strict: bool) -> None:
    """With ``strict``: every intermediate gradient must exist and carry a graph
    (else the next differentiation would silently give zeros)."""
    if not strict:
        return
    for i, g in enumerate(grads):
        if g is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not g.requires_grad:
            raise RuntimeError(_DEPENDS[kind].format(i=i))


def _single_number(outputs, was_tuple: bool, fn: str) -> None:
    if was_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain "
                           "a single element")


# ------------------------------------------------------------ public API --
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(f(inputs), vᵀ J): one backward pass with v as the output gradient."""
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, "vjp", create_graph)
        out_tuple, outputs = _outputs(func, inputs, "vjp", strict)
        v = _read_v(v, outputs, out_tuple, "vjp", create_graph,
                    len(outputs) == 1 and outputs[0].numel() == 1, _OUT_V_NONE)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(result, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(f(inputs), J v), by the double-backward trick: g(u) = uᵀ J is linear in u;
    its vector–Jacobian product with v is (J v)ᵀ."""
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, "jvp", create_graph)
        v = _read_v(v, inputs, in_tuple, "jvp", create_graph,
                    len(inputs) == 1 and inputs[0].numel() == 1, _IN_V_NONE)
        out_tuple, outputs = _outputs(func, inputs, "jvp", strict)
        u = tuple(zeros_like(o, requires_grad=True) for o in outputs)  # the dummy direction
        uJ = _grad(outputs, inputs, u, create_graph=True)
        _strict_depends(uJ, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(uJ, u, v, create_graph=create_graph)
        result = _zeros_for_none(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(result, create_graph), out_tuple))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """∂f/∂x, shaped ``output.shape + input.shape``; a tuple per output and per
    input when either is a tuple (``jac[i][j]`` = ∂output_i/∂input_j)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":  # PyTorch's conditions; the numbers come from reverse mode
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian isonly implemented for "
                                      "`vectorize=True`.")
    elif strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, "jacobian", create_graph)
        out_tuple, outputs = _outputs(func, inputs, "jacobian", strict)
        blocks = tuple(_jacobian_of(i, out, inputs, create_graph, strict)
                       for i, out in enumerate(outputs))
    blocks = tuple(_finish(row, create_graph) for row in blocks)
    if not in_tuple:
        blocks = tuple(row[0] for row in blocks)
    return blocks if out_tuple else blocks[0]


def _jacobian_of(i, out, inputs, create_graph, strict):
    """The blocks ∂out/∂input_j: one backward pass per element of ``out`` (a row of J)."""
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                       f"of input {j}. This is not allowed in strict mode.")
                g = zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
            rows[j].append(g)
    return tuple(stack(r, 0).reshape(tuple(out.shape) + tuple(x.shape)) if r else
                 zeros_like(x).reshape(tuple(out.shape) + tuple(x.shape))
                 for r, x in zip(rows, inputs))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """∂²f/∂x², for f returning one number: the Jacobian of the gradient.
    ``hess[i][j]`` = ∂²f/∂input_i∂input_j when ``inputs`` is a tuple."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def one_number(*xs):
        out_tuple, out = _outputs(func, xs, "hessian", strict)
        _single_number(out, out_tuple, "hessian")
        return out[0].squeeze()

    def gradient(*xs):
        jac = jacobian(one_number, xs, create_graph=True)
        _strict_depends(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return result if in_tuple else result[0][0]


def _gradient_of_one_number(func, inputs, v, fn, create_graph, strict):
    with enable_grad():
        in_tuple, inputs = _inputs(inputs, fn, create_graph)
        v = _read_v(v, inputs, in_tuple, fn, create_graph,
                    len(inputs) == 1 and inputs[0].numel() == 1, _IN_V_NONE)
        out_tuple, outputs = _outputs(func, inputs, fn, strict)
        _single_number(outputs, out_tuple, fn)
        jac = _grad(outputs, inputs, create_graph=True)
        _strict_depends(jac, "jacobian", strict)
    return in_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(f(inputs), vᵀ H): the gradient of f, differentiated once more in direction v."""
    in_tuple, inputs, v, outputs, jac = _gradient_of_one_number(func, inputs, v, "vhp",
                                                                create_graph, strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back")
    return (_finish(outputs, create_graph)[0], _unpack(_finish(result, create_graph), in_tuple))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(f(inputs), H v), by the double-backward trick on the gradient: u ↦ uᵀ H is
    linear in u; its vector–Jacobian product with v is (H v)ᵀ."""
    in_tuple, inputs, v, outputs, jac = _gradient_of_one_number(func, inputs, v, "hvp",
                                                                create_graph, strict)
    with enable_grad():
        u = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        uH = _grad(jac, inputs, u, create_graph=True)
        _strict_depends(uH, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(uH, u, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back_trick")
    return (_finish(outputs, create_graph)[0], _unpack(_finish(result, create_graph), in_tuple))
