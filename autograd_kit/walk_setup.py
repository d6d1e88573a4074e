"""What the engine works out before its walk (``engine.backward_steps``): the
gradients the roots start with, how many edges lead into each node (a node
runs once all of them delivered), and which nodes must run at all when only
some inputs' gradients are wanted (``autograd.grad``, ``backward(inputs=...)``).
"""
from __future__ import annotations

from . import errors
from .tensor import Size, Tensor


def _root_grads(tensors, grad_tensors):
    grads = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if t.grad_fn is None and not t._rg:
            raise errors.NoGradFnError(i, t)
        if g is None:
            if t._data.size != 1:
                raise errors.NonScalarBackwardError(t)
            g = Tensor._make(_ones_like(t._data))
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        elif g._data.shape != t._data.shape:
            raise errors.GradShapeError(i, Size(g._data.shape), Size(t._data.shape), t)
        grads.append(g)
    return grads


def _grads_tuple(grads, n: int) -> tuple:
    """The gradients given for ``n`` roots, as PyTorch reads them: None for each,
    one Tensor, or any sequence (so a number is "not iterable", and a string or
    an array gives elements that are no gradients)."""
    if grads is None:
        return (None,) * n
    return (grads,) if isinstance(grads, Tensor) else tuple(grads)


def _ones_like(a):
    from .backend import xp_of
    return xp_of(a).ones_like(a)


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def count_dependencies(roots):
    """How many edges lead into each node reachable from ``roots`` (iterative DFS).
    (Roots count as visited from the start: a root reached from another root is
    walked once.)"""
    deps, stack = {}, list(roots)
    for root in roots:
        deps[root] = 0
    while stack:
        for nxt in stack.pop()._next:
            if nxt is None:
                continue
            n = deps.get(nxt)
            if n is None:  # first visit
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = n + 1
    for root in roots:
        if not deps.get(root):
            deps.pop(root, None)
    return deps


def _needed(roots, targets):
    """Nodes from which some target can be reached (only those must run)."""
    parents, seen, stack = {}, set(roots), list(roots)
    while stack:
        node = stack.pop()
        for nxt in node._next:
            if nxt is None:
                continue
            parents.setdefault(nxt, []).append(node)
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    needed, stack = set(targets), list(targets)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed
