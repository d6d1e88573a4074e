"""Products: ``cumprod`` (running product along ``dim``), and the gradients of
``prod`` and ``cumprod`` when a factor is zero.

The derivative of a product by one factor is the product of the *others*.
Without zeros that is ``result / x`` (for ``prod``) and, for ``cumprod``
(output j = x_0 ... x_j, so input k reaches outputs k..n-1),

    grad_k = Σ_{j ≥ k} g_j · y_j / x_k     = reverse_cumsum(g · y)_k / x_k.

A zero factor makes both divisions 0/0, so the product of the others is built
without dividing:

* ``prod``: exclusive running products from both ends,
  ``others_k = (x_0 ... x_{k-1}) · (x_{k+1} ... x_{n-1})``, each a ``cumprod``
  of the row shifted by one with a 1 in front (PyTorch's
  ``prod_safe_zeros_backward``: ``cat``, ``cumprod``, ``flip``);
* ``cumprod``: for inputs before the first zero the formula above holds, with
  the sum stopped before the zero (the outputs from there on are 0 and add
  nothing); the first zero z receives ``(x_0 ... x_{z-1}) · Σ g_j (x_{z+1} ...
  x_j)`` over j from z to just before the next zero; later inputs get 0, as
  every product through them also holds x_z.  (PyTorch's masks, so that an
  infinite factor past a zero gives PyTorch's inf and NaN.)

Under ``create_graph`` the gradient must be differentiable again, so there
PyTorch (and the kit) compute the cumprod gradient with zeros the slow way: for
each k, the products that omit x_k, written into row k of a zero tensor.
"""
from __future__ import annotations

from .. import backend
from ..tensor import Tensor
from ._rules import RESULT, record, rule
from .unary_more import running_input


def cumprod(x, dim, *, dtype=None):
    """``out_j = x_0 · x_1 · ... · x_j`` along ``dim`` (CumprodBackward0);
    integers and booleans multiply in int64, as in PyTorch."""
    a, d = running_input(x, dim, dtype)
    out = backend.cumprod(a, d) if a.ndim else a.copy()
    return record(CumprodBackward0, out, (x,), self=x, dim=d, result=RESULT)


def _is_tensor(x) -> bool:
    return x.__class__ is Tensor or isinstance(x, Tensor)


def _reverse_cumsum(a, dim, xp):
    return xp.flip(xp.flip(a, dim).cumsum(axis=dim), dim)


def cumprod_backward(g, self, dim, result):
    """The gradient of a cumprod (see the module's text)."""
    size = self.numel() if _is_tensor(self) else self.size
    if self.ndim == 0 or size <= 1 or self.shape[dim] == 1:
        return g
    if _is_tensor(g):
        x = self._data
        if not (x == 0).any():
            from .unary_more import reverse_cumsum
            return reverse_cumsum(result * g, dim) / self
        return _cumprod_backward_recorded(g, self, dim)
    xp = backend.xp_of(self)
    if not (self == 0).any():
        return _reverse_cumsum(result * g, dim, xp) / self
    zeros = (self == 0).cumsum(axis=dim)      # how many zeros up to and including k
    before, between = zeros == 0, zeros == 1  # before the first zero; from it to the second
    first = between & (self == 0)             # the first zero itself
    # before it: Σ_{j < z} g_j y_j / x_k (the outputs from the zero on add nothing)
    head = _reverse_cumsum(xp.where(before, result * g, 0), dim, xp) / xp.where(before, self, 1)
    # at it: (x_0 ... x_{z-1}) times Σ_{z ≤ j < second zero} g_j (x_{z+1} ... x_j)
    up_to = xp.concatenate([xp.ones_like(xp.take(result, [0], axis=dim)),
                            xp.take(result, range(self.shape[dim] - 1), axis=dim)], axis=dim)
    up_to = xp.where(first, up_to, 0).sum(axis=dim, keepdims=True)
    after = backend.cumprod(xp.where(between & ~first, self, 1), dim)
    at_zero = _reverse_cumsum(xp.where(between, up_to * after * g, 0), dim, xp)
    return xp.where(before, head, xp.where(first, at_zero, 0)).astype(g.dtype, copy=False)


def _cumprod_backward_recorded(g, x, dim):
    """With zeros, under create_graph: for each k, the products of the inputs
    that omit x_k (a product up to k times the running products after it),
    multiplied with g and summed, copied into row k of zeros (PyTorch's O(n²)
    loop, recorded op by op so that it can be differentiated again)."""
    from .creation import ones, zeros
    from .shape import cat
    n = x.shape[dim]
    out = zeros(tuple(x.shape), dtype=g.dtype, device=g.device)
    one_size = list(x.shape)
    one_size[dim] = 1
    one = ones(1, dtype=g.dtype, device=g.device).expand(*one_size)
    for k in range(n):
        if k == 0:
            omitted = cat([one, x.narrow(dim, 1, n - 1).cumprod(dim)], dim)
        elif k == n - 1:
            omitted = x.narrow(dim, 0, k).prod(dim, True)
        else:
            until = x.narrow(dim, 0, k).prod(dim, True)
            after = x.narrow(dim, k + 1, n - k - 1).cumprod(dim)
            omitted = cat([until, until.expand_as(after) * after], dim)
        out.select(dim, k).copy_((g.narrow(dim, k, n - k) * omitted).sum(dim))
    return out


def prod_safe_zeros(g, x, dim):
    """g times the product of the other factors along ``dim``, from exclusive
    running products from both ends: no division, so zeros are fine."""
    from .creation import ones
    from .shape import cat
    if x.numel() == 0:
        return g.expand_as(x)
    n = x.shape[dim]
    if n == 1:  # one factor: d x / d x = 1, no other factor is read
        return g
    one_size = list(x.shape)
    one_size[dim] = 1
    one = ones(*one_size, dtype=g.dtype, device=g.device)
    left = cat([one, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = cat([one, x.narrow(dim, 1, n - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return g * (left * right)


def prod_backward(g, self, result, dim, keepdim):
    """prod's gradient on Tensors (create_graph): g · result / x without zeros,
    else the zero-safe products (for the product of all elements, of the
    flattened input, viewed back).  On arrays: the formula table's
    ``product_of_others``."""
    from .formula_env import product_of_others, unsqueeze_dims
    if not _is_tensor(g):
        if dim is None:
            return g * product_of_others(self, result, None)
        return unsqueeze_dims(g, dim, keepdim) * product_of_others(
            self, unsqueeze_dims(result, dim, keepdim), dim)
    if self.ndim == 0:
        return g
    if dim is not None:
        g, result = unsqueeze_dims(g, dim, keepdim), unsqueeze_dims(result, dim, keepdim)
    if not (self._data == 0).any():
        return g * (result / self)
    if dim is None:
        return prod_safe_zeros(g, self.contiguous().view(-1), 0).view_as(self)
    return prod_safe_zeros(g, self, dim[0] if isinstance(dim, tuple) else dim)


# Backward formulas: g is the gradient of the output; one formula per input.
CumprodBackward0 = rule("CumprodBackward0", "self dim result",
                        self="cumprod_backward(g, self, dim, result)")
