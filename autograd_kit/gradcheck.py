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


def _numel(value) -> int:
    """Columns of a Jacobian block: none for an input that is no tensor (a number)."""
    return value.numel() if isinstance(value, Tensor) else 0


def _host(t):
    return backend.to_host(t._data).astype(float).ravel()


def numerical_jacobian(fn, inputs, eps=1e-6):
    """One matrix per (input, output) pair: d out_j / d in_i by central differences."""
    outs = _as_tuple(fn(*inputs))
    jac = [[backend.np.zeros((o.numel(), _numel(t))) for o in outs] for t in inputs]
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
    jac = [[backend.np.zeros((o.numel(), _numel(t))) for o in outs] for t in inputs]
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


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None) -> bool:
    """True when the engine's gradients match central differences.

    The engine's Jacobian is computed twice: a backward that gives different
    numbers for the same input and gradient (it is not *reentrant*) fails,
    beyond ``nondet_tol``.  On a mismatch, raises ``GradcheckError`` naming the
    output and the input, with both Jacobians; with ``raise_exception=False``
    it returns False instead, quietly.

    ``fast_mode=True`` compares one number per (input, output) pair instead of
    whole Jacobians: vᵀ J u for random vectors u (shaped like the input) and v
    (like the output), by differences along u and by one backward with v.  A
    mismatch there is checked again the slow way, for the report.
    (The options about forward mode, batching and masks are accepted and have
    nothing to do here: the kit has neither forward mode nor vmap.)"""
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, fast_mode) -> bool:
    diff = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i, t in diff:
        if t.dtype not in (backend.float64, backend.complex128):
            warnings.warn(GRADCHECK_NOT_DOUBLE.format(index=i), UserWarning, stacklevel=3)
    outs = _as_tuple(func(*inputs))
    if not any(o.requires_grad for o in outs):  # nothing to differentiate: f must be flat
        num = numerical_jacobian(func, inputs, eps)
        if any(backend.np.any(n != 0) for row in num for n in row):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    if fast_mode:
        _fast_check(func, inputs, outs, eps, atol, rtol)
    num = None if fast_mode else numerical_jacobian(func, inputs, eps)
    ana = analytical_jacobian(func, inputs)
    again = analytical_jacobian(func, inputs)
    if any(float(backend.np.abs(a - b).max(initial=0.0)) > nondet_tol
           for a_row, b_row in zip(ana, again) for a, b in zip(a_row, b_row)):
        raise GradcheckError(NOT_REENTRANT.format(tol=nondet_tol))
    if num is not None:
        for i, (n_row, a_row) in enumerate(zip(num, ana)):
            for j, (n, a) in enumerate(zip(n_row, a_row)):
                if outs[j].requires_grad and not backend.np.allclose(a, n, rtol=rtol,
                                                                     atol=atol):
                    raise GradcheckError(f"Jacobian mismatch for output {j} with respect to "
                                         f"input {i},\nnumerical:{_shown(n)}\n"
                                         f"analytical:{_shown(a)}\n")
    if not _zero_in_zero_out(func, inputs):
        raise GradcheckError("backward not multiplied by grad_output")
    return True


def _shown(jac) -> str:
    """A Jacobian block as PyTorch prints it in its report: a float64 tensor."""
    return repr(Tensor._make(jac.astype("float64")))


def _fast_check(func, inputs, outs, eps, atol, rtol) -> None:
    """``fast_mode``: per (input i, output j), vᵀ J u by central differences along u
    and by a backward pass with v.  On a mismatch, the slow Jacobians for the report."""
    from .engine import grad
    rng = backend.np.random.default_rng(0)  # (its own generator: the kit's stays as it was)
    for i, t in enumerate(inputs):
        if not (isinstance(t, Tensor) and t.requires_grad):
            continue
        u = rng.standard_normal(t.numel())
        u /= max(float(backend.np.linalg.norm(u)), 1e-30)
        flat = t._data.reshape(-1)
        orig = backend.to_host(flat).astype(float).copy()
        step = backend.move((eps * u).astype(flat.dtype), t.device)
        try:
            flat[...] = flat + step
            plus = [_host(o) for o in _as_tuple(func(*inputs))]
            flat[...] = backend.move(orig.astype(flat.dtype), t.device) - step
            minus = [_host(o) for o in _as_tuple(func(*inputs))]
        finally:
            flat[...] = backend.move(orig.astype(flat.dtype), t.device)
        for j, o in enumerate(outs):
            if not o.requires_grad:
                continue
            v = rng.standard_normal(o.numel())
            numerical = float(v @ ((plus[j] - minus[j]) / (2 * eps)))
            seed = Tensor._make(backend.move(v.reshape(o._data.shape).astype(o._data.dtype),
                                             o.device))
            (g,) = grad(o, t, seed, retain_graph=True, allow_unused=True)
            analytical = 0.0 if g is None else float(_host(g) @ u)
            if not backend.np.isclose(analytical, numerical, rtol=rtol, atol=atol):
                num = numerical_jacobian(func, inputs, eps)[i][j]
                ana = analytical_jacobian(func, inputs)[i][j]
                worst = float(backend.np.abs(num - ana).max())
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{numerical}\nanalytical:{analytical}\n\n" + FAST_MODE_NOTE
                    + f"\n\nNumerical:\n {_shown(num)}\nAnalytical:\n{_shown(ana)}\n\n"
                    f"The max per-element difference (slow mode) is: {worst}.\n")


FAST_MODE_NOTE = (
    "The above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:")


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


NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output "
    "multiple times gives different values, although analytical gradient matches numerical "
    "gradient.The tolerance for nondeterminism was {tol}.\n\nNOTE: If your op relies on "
    "non-deterministic operations i.e., it is listed here:\nhttps://pytorch.org/docs/stable/"
    "generated/torch.use_deterministic_algorithms.html\nthis failure might be expected.\n\n"
    "If you are adding a new operator, please file an issue and then use one of the\n"
    "workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.\n"
    "If the test\n- manually invokes gradcheck/gradgradcheck, then call gradcheck/"
    "gradgradcheck\n  with `nondet_tol=<tol>` as a keyword argument.\n- is OpInfo-based "
    "(e.g., in test_ops_gradients.py), then modify the OpInfo for the test\n  to have "
    "`gradcheck_nondet_tol=<tol>`.\n- is a Module test (e.g., in common_nn.py), then modify "
    "the corresponding\n  module_test entry to have `gradcheck_nondet_tol=<tol>`\n")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False) -> bool:
    """Second derivatives: gradcheck of the first gradient, made with create_graph.

    The first gradient is ``grad(fn(inputs), inputs, grad_outputs)``, a function
    of the inputs *and* of ``grad_outputs`` (it is linear in them), so both are
    checked, as PyTorch does.  Without ``grad_outputs``, random ones are used."""
    from .engine import grad
    from .ops.random_creation import randn
    fn = func
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
    return gradcheck(first, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, fast_mode=fast_mode)
