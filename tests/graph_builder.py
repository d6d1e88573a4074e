"""Random autograd graphs for the engine and parity tests.

``build`` draws ``n_ops`` operations from an op list, each applied to two
tensors picked from a growing pool (so subexpressions are shared), and sums
everything into a scalar loss.  Each test file passes its own op list: the
central-difference checks avoid kinks (``abs``, ``clamp``), the PyTorch
comparison wants them.  The same seed always builds the same graph.
"""
import random

import numpy as np


def build(lib, ops, seed, n_ops, device="cpu", data=None):
    """Three float64 leaves of shape (2, 3) in [0.5, 1.5] (or ``data``), then
    ``n_ops`` random ops; returns ``(leaves, loss)``."""
    rnd = random.Random(seed)
    if data is None:
        data = np.random.default_rng(seed).uniform(0.5, 1.5, size=(3, 2, 3))
    leaves = [lib.tensor(d, dtype=lib.float64, requires_grad=True, device=device)
              for d in data]
    pool = list(leaves)
    for _ in range(n_ops):
        op = rnd.choice(ops)
        pool.append(op(rnd.choice(pool), rnd.choice(pool)))
    loss = sum((p * (i + 1)).sum() for i, p in enumerate(pool[3:]))
    return leaves, loss


def iadd(a, b):
    """``+=`` on a non-leaf copy."""
    r = a * 1
    r += b
    return r


def imul(a, b):
    """``mul_`` on a non-leaf copy."""
    r = a + 0
    r.mul_(b)
    return r


def imul_view(a, b):
    """``mul_`` on a view of a non-leaf (CopySlices)."""
    r = a + 0
    r[1].mul_(b[0])
    return r
