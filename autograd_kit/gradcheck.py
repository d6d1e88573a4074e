"""Checking gradients by hand: compare the engine with central differences.

For each input element x_i, the numerical derivative of output element y_j is

    (f(x + eps e_i) - f(x - eps e_i)) / (2 eps)

which is accurate to O(eps²).  Filling a Jacobian this way and comparing it with
the one the engine computes (one backward per output element) is the classic
test that a backward formula is right.  Use float64: float32 has too few digits.
"""
from __future__ import annotations

import warnings

from . import backend
from .errors import GRADCHECK_NOT_DOUBLE
from .tensor import Tensor


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck(..., raise_exception=True)`` with a readable report."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _host(t):
    return backend.to_host(t._data).astype(float).ravel()


def numerical_jacobian(fn, inputs, eps=1e-6):
    """One matrix per (input, output) pair: d out_j / d in_i by central differences."""
    outs = _as_tuple(fn(*inputs))
    jac = [[backend.np.zeros((o.numel(), t.numel())) for o in outs] for t in inputs]
    for i, t in enumerate(inputs):
        if not (isinstance(t, Tensor) and t.requires_grad):
            continue
        flat = t._data.reshape(-1)
        for k in range(flat.size):
            # the raw array is nudged directly (no version bump, no graph); ``fn``
            # keeps grad mode on, since gradgradcheck's ``fn`` itself calls grad()
            orig = flat[k].item()
            flat[k] = orig + eps
            plus = [_host(o) for o in _as_tuple(fn(*inputs))]
            flat[k] = orig - eps
            minus = [_host(o) for o in _as_tuple(fn(*inputs))]
            flat[k] = orig
            for j in range(len(outs)):
                jac[i][j][:, k] = (plus[j] - minus[j]) / (2 * eps)
    return jac


def analytical_jacobian(fn, inputs):
    """The same matrices from the engine: one backward per output element."""
    from .engine import grad
    outs = _as_tuple(fn(*inputs))
    diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    jac = [[backend.np.zeros((o.numel(), t.numel())) for o in outs] for t in inputs]
    for j, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            seed = backend.np.zeros(o.numel())
            seed[r] = 1
            g_out = Tensor._make(backend.move(seed.reshape(o._data.shape).astype(o._data.dtype),
                                              o.device))
            grads = grad(o, diff, g_out, retain_graph=True, allow_unused=True)
            gi = iter(grads)
            for i, t in enumerate(inputs):
                if isinstance(t, Tensor) and t.requires_grad:
                    g = next(gi)
                    if g is not None:
                        jac[i][j][r, :] = backend.to_host(g._data).ravel()
    return jac


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, *,
              nondet_tol=0.0) -> bool:
    """True when the engine's gradients match central differences.

    The engine's Jacobian is computed twice: a backward that gives different
    numbers for the same input and gradient (it is not *reentrant*) fails,
    beyond ``nondet_tol``.  On a mismatch, raises (or, with
    ``raise_exception=False``, prints) a report naming the input and output,
    with both Jacobians side by side."""
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype not in (
                backend.float64, backend.complex128):
            warnings.warn(GRADCHECK_NOT_DOUBLE.format(index=i), UserWarning, stacklevel=2)
    num = numerical_jacobian(fn, inputs, eps)
    ana = analytical_jacobian(fn, inputs)
    again = analytical_jacobian(fn, inputs)
    if any(float(backend.np.abs(a - b).max(initial=0.0)) > nondet_tol
           for a_row, b_row in zip(ana, again) for a, b in zip(a_row, b_row)):
        return _fail(NOT_REENTRANT.format(tol=nondet_tol), raise_exception)
    for i, (n_row, a_row) in enumerate(zip(num, ana)):
        for j, (n, a) in enumerate(zip(n_row, a_row)):
            if not backend.np.allclose(a, n, rtol=rtol, atol=atol):
                worst = float(backend.np.abs(a - n).max())
                return _fail(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                             f"numerical:{n}\nanalytical:{a}\n"
                             f"largest difference: {worst:.3g} (atol={atol}, rtol={rtol})",
                             raise_exception)
    if not _zero_in_zero_out(fn, inputs):
        return _fail("backward not multiplied by grad_output", raise_exception)
    return True


def _zero_in_zero_out(fn, inputs) -> bool:
    """Backward is linear in the output's gradient: a zero one gives zeros."""
    from .engine import grad
    outs = [o for o in _as_tuple(fn(*inputs)) if o.requires_grad]
    diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not outs or not diff:
        return True
    zeros = [Tensor._make(o._data * 0) for o in outs]
    grads = grad(outs, diff, zeros, allow_unused=True)
    return all(g is None or not backend.np.any(backend.to_host(g._data)) for g in grads)


NOT_REENTRANT = ("Backward is not reentrant, i.e., running backward with same input and "
                 "grad_output multiple times gives different values, although analytical "
                 "gradient matches numerical gradient.The tolerance for nondeterminism was "
                 "{tol}.")


def _fail(report: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(report)
    print(report)
    return False


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, nondet_tol=0.0) -> bool:
    """Second derivatives: gradcheck of the first gradient, made with create_graph.

    The first gradient is ``grad(fn(inputs), inputs, grad_outputs)``, a function
    of the inputs *and* of ``grad_outputs`` (it is linear in them), so both are
    checked, as PyTorch does.  Without ``grad_outputs``, random ones are used."""
    from .engine import grad
    from .ops.creation import randn
    inputs = _as_tuple(inputs)
    outs = _as_tuple(fn(*inputs))
    if grad_outputs is None:
        grad_outputs = tuple(randn(*o.shape, dtype=o.dtype, device=o.device,
                                   requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first(*xs):
        ins, gos = xs[:n], xs[n:]
        diff = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        grads = grad(_as_tuple(fn(*ins)), diff, gos, create_graph=True, allow_unused=True)
        return tuple(x * 0 if g is None else g for x, g in zip(diff, grads))  # (unused: 0)
    return gradcheck(first, inputs + grad_outputs, eps, atol, rtol, raise_exception,
                     nondet_tol=nondet_tol)
