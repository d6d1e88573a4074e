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

import math

from .. import backend
from ._rules import RESULT, record, rule
from .formula_env import _is_tensor, inverse_permutation, unsqueeze_dims
from .unary_more import reverse_cumsum, running_input


def cumprod(x, dim, *, dtype=None):
    """``out_j = x_0 · x_1 · ... · x_j`` along ``dim`` (CumprodBackward0);
    integers and booleans multiply in int64, as in PyTorch."""
    a, d = running_input(x, dim, dtype)
    out = backend.cumprod(a, d) if a.ndim else a.copy()
    return record(CumprodBackward0, out, (x,), self=x, dim=d, result=RESULT)


def cumprod_backward(g, self, dim, result):
    """The gradient of a cumprod (see the module's text)."""
    size = self.numel() if _is_tensor(self) else self.size
    if self.ndim == 0 or size <= 1 or self.shape[dim] == 1:
        return g
    if _is_tensor(g):
        if not (self._data == 0).any():
            return reverse_cumsum(result * g, dim) / self
        return _cumprod_backward_recorded(g, self, dim)
    xp = backend.xp_of(self)
    if not (self == 0).any():
        return reverse_cumsum(result * g, dim) / self
    zeros = (self == 0).cumsum(axis=dim)      # how many zeros up to and including k
    before, between = zeros == 0, zeros == 1  # before the first zero; from it to the second
    first = between & (self == 0)             # the first zero itself
    # before it: Σ_{j < z} g_j y_j / x_k (the outputs from the zero on add nothing)
    head = reverse_cumsum(xp.where(before, result * g, 0), dim) / xp.where(before, self, 1)
    # at it: (x_0 ... x_{z-1}) times Σ_{z ≤ j < second zero} g_j (x_{z+1} ... x_j)
    up_to = xp.concatenate([xp.ones_like(xp.take(result, [0], axis=dim)),
                            xp.take(result, range(self.shape[dim] - 1), axis=dim)], axis=dim)
    up_to = xp.where(first, up_to, 0).sum(axis=dim, keepdims=True)
    after = backend.cumprod(xp.where(between & ~first, self, 1), dim)
    at_zero = reverse_cumsum(xp.where(between, up_to * after * g, 0), dim)
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
    """prod's gradient: g · result / x without zeros, else the zero-safe products
    (under create_graph, for the product of all elements, of the flattened
    input, viewed back; in a plain backward, :func:`product_of_others`)."""
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


def product_of_others(a, result, dims):
    """On arrays: d(x1 x2 ... xn)/dxi = the product of all the other x's along
    ``dims`` (None: all).  That is result / xi when no x is zero; with zeros it
    is computed directly, as exclusive products from both ends."""
    xp = backend.xp_of(a)
    if a.ndim == 0 or dims == ():  # a 0-d tensor: the product is x itself, d/dx = 1
        return xp.ones_like(a)
    zeros = a == 0
    if not zeros.any():
        return result / a
    extent = a.size if dims is None else math.prod(a.shape[d] for d in dims)
    if extent == 1:  # each product has one factor: d/dx x = 1
        return xp.ones_like(a)
    if dims is None and int(zeros.sum()) > 1:
        return xp.zeros_like(a)  # two zeros: every other-product is 0 (inf and NaN or not)
    axes = tuple(range(a.ndim)) if dims is None else dims
    if len(axes) == 1 and dims is not None:
        return _exclusive_products(a, axes[0], xp)
    # several axes: move them to the end and flatten them
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = xp.transpose(a, rest + list(axes))
    shaped = moved.reshape(moved.shape[:len(rest)] + (-1,))
    others = _exclusive_products(shaped, -1, xp).reshape(moved.shape)
    return xp.transpose(others, inverse_permutation(rest + list(axes)))


def _exclusive_products(a, axis, xp):
    """(x_0 ... x_{k-1}) · (x_{k+1} ... x_{n-1}) for each k along ``axis``."""
    ones = xp.ones_like(xp.take(a, [0], axis=axis))
    left = backend.cumprod(xp.concatenate([ones, a], axis=axis), axis)
    right = xp.flip(backend.cumprod(xp.concatenate([ones, xp.flip(a, axis)], axis=axis), axis),
                    axis)
    n = a.shape[axis]
    return (xp.take(left, range(n), axis=axis) * xp.take(right, range(1, n + 1), axis=axis))


# Backward formulas: g is the gradient of the output; one formula per input.
CumprodBackward0 = rule("CumprodBackward0", "self dim result",
                        self="cumprod_backward(in_dtype_of(g, self), self, dim, result)")
