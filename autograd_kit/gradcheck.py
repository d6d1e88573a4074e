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


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """True when the engine's gradients match central differences.

    On a mismatch, raises (or, with ``raise_exception=False``, prints) a report
    naming the input and output, with both Jacobians side by side."""
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad and t.dtype not in (
                backend.float64, backend.complex128):
            warnings.warn(GRADCHECK_NOT_DOUBLE.format(index=i), UserWarning, stacklevel=2)
    num = numerical_jacobian(fn, inputs, eps)
    ana = analytical_jacobian(fn, inputs)
    for i, (n_row, a_row) in enumerate(zip(num, ana)):
        for j, (n, a) in enumerate(zip(n_row, a_row)):
            if not backend.np.allclose(a, n, rtol=rtol, atol=atol):
                worst = float(backend.np.abs(a - n).max())
                report = (f"Jacobian mismatch for output {j} with respect to input {i},\n"
                          f"numerical:{n}\nanalytical:{a}\n"
                          f"largest difference: {worst:.3g} (atol={atol}, rtol={rtol})")
                if raise_exception:
                    raise GradcheckError(report)
                print(report)
                return False
    return True


def gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Second derivatives: gradcheck of the first gradient (made with create_graph)."""
    from .engine import grad
    inputs = _as_tuple(inputs)

    def first(*xs):
        outs = _as_tuple(fn(*xs))
        total = outs[0].sum() if len(outs) == 1 else sum(o.sum() for o in outs)
        diff = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
        return grad(total, diff, create_graph=True)
    return gradcheck(first, inputs, eps, atol, rtol, raise_exception)
