"""Which nodes a picture shows, and in which order.

:func:`walk` is an iterative depth-first search from the root(s) along
``next_functions``, first input first, so it never meets a recursion limit and
always visits nodes in the same order (the order that names the boxes, see
:mod:`.model`).  With a ``limit`` it stops early: a graph too big to walk is
*cut* instead, to the nodes nearest the output, breadth first, while their
boxes fit (:func:`nearest`).  :func:`parents_first` orders the nodes so that
each comes before its inputs.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable

from . import access, constants
from .boxes import Options
from .progress import MASK, SILENT, Progress


def walk(start: list, limit: int | None = None, progress: Progress = SILENT,
         edges: Callable = access.next_edges) -> tuple[list, dict[int, list]]:
    """Every node reachable from ``start``, in iterative depth-first preorder
    (first input first), and each node's ``(input node, input_nr)`` pairs
    (``edges(node)``).  With ``limit``, the walk stops at ``limit + 1`` nodes:
    more than ``limit`` found tells the caller the graph is bigger, without
    walking all of it."""
    order, inputs = [], {}
    stack = list(reversed(start))
    stop = -1 if limit is None else limit + 1
    progress.stage(1, None)
    while stack:
        fn = stack.pop()
        if id(fn) in inputs:
            continue
        order.append(fn)
        inputs[id(fn)] = found_edges = edges(fn)
        stack.extend(n for n, _nr in reversed(found_edges))
        found = len(order)
        if found & MASK == 0:
            progress.update(found)
        if found == stop:
            break
    return order, inputs


def _boxes_of(fn, opts: Options, named: dict[int, int]) -> int:
    """How many boxes drawing ``fn`` adds, at most: its own (an
    ``AccumulateGrad`` also brings its leaf, which stands for it in the forward
    view), constants and named results (forward view), saved tensors."""
    leaf = access.leaf_variable(fn) is not None
    if opts.view == "forward":
        boxes = 1 if leaf else 1 + named.get(id(fn), 0) + sum(
            1 for has_grad, _item in constants.operands(fn) if not has_grad)
    else:
        boxes = 2 if leaf else 1
    if opts.show_saved and not leaf:
        boxes += len(access.saved_names(fn))
    return boxes


def nearest(start: list, budget: int, opts: Options,
            edges: Callable = access.next_edges) -> tuple[list, dict[int, list], list]:
    """The nodes nearest ``start``, breadth first, while their boxes fit in
    ``budget`` (``start`` itself always), each with the ``(input node,
    input_nr)`` pairs among them; and the nodes whose other inputs are left out.
    Only what is drawn and the inputs of what is drawn are ever read."""
    named: dict[int, int] = {}
    if opts.view == "forward":
        for t in opts.named:
            if t.grad_fn is not None:
                named[id(t.grad_fn)] = named.get(id(t.grad_fn), 0) + 1
    start = list({id(fn): fn for fn in start}.values())  # a root given twice is one
    order, inputs = [], {}
    queue, seen, boxes = deque(start), {id(fn) for fn in start}, 0
    while queue:
        cost = _boxes_of(queue[0], opts, named)
        if len(order) >= len(start) and boxes + cost > budget:
            break
        fn = queue.popleft()
        boxes += cost
        order.append(fn)
        inputs[id(fn)] = found_edges = edges(fn)
        for n, _nr in found_edges:
            if id(n) not in seen:
                seen.add(id(n))
                queue.append(n)
    kept = {i: [(n, nr) for n, nr in edges if id(n) in inputs] for i, edges in inputs.items()}
    cut = [fn for fn in order if len(kept[id(fn)]) < len(inputs[id(fn)])]
    return order, kept, cut


def parents_first(fns: list, inputs: dict[int, list]) -> list:
    """``fns`` reordered so that every node comes before its inputs (Kahn's
    algorithm).  Releasing PyTorch's nodes in this order frees one node at a
    time; the other way round, freeing the last one would free the whole chain
    below it recursively, in C++, deep enough to crash on a long chain."""
    waiting = {id(fn): 0 for fn in fns}
    for fn in fns:
        for nxt, _nr in inputs[id(fn)]:
            waiting[id(nxt)] += 1
    ready = [fn for fn in reversed(fns) if waiting[id(fn)] == 0]
    order = []
    while ready:
        fn = ready.pop()
        order.append(fn)
        for nxt, _nr in inputs[id(fn)]:
            waiting[id(nxt)] -= 1
            if waiting[id(nxt)] == 0:
                ready.append(nxt)
    return order
