"""PyTorch's backward pass, recorded with hooks and replayed step by step.

PyTorch's engine runs a whole pass in C++ and cannot be paused between nodes.
So this adapter lets PyTorch do its real pass once, when it is made, and watches
it through hooks on every node of the graph (removed afterwards):

* a node's *pre-hook* fires just before the node runs: its position in the
  pass and the gradient flowing in (and, for a leaf's ``AccumulateGrad``, the
  ``.grad`` before);
* a node's *hook* fires just after: the gradients it sent along each edge (and
  the leaf's ``.grad`` after).

The pass is run with the ``retain_graph`` asked for, so PyTorch frees (or keeps)
the saved tensors exactly as a plain ``backward()`` would, and a second pass is
refused with PyTorch's own error.  Then the leaves' ``.grad`` are put back as
they were, and replaying the recording sets them, step by step, to the values
PyTorch left at that point.  Every number shown is one PyTorch computed.

PyTorch is imported only when this module is used on a PyTorch tensor.
"""
from __future__ import annotations

from autograd_kit.engine import Step

from .. import access
from . import BackwardPass


def _copy(t):
    """A detached copy (None stays None): later in-place accumulation must not
    change what was recorded."""
    return None if t is None else t.detach().clone()


def start_node(root):
    """The node a backward pass from ``root`` starts at (a leaf's AccumulateGrad
    for a leaf root), or None when ``root`` is in no graph."""
    if root.grad_fn is not None:
        return root.grad_fn
    if not root.requires_grad:
        return None
    try:
        from torch.autograd.graph import get_gradient_edge
        return get_gradient_edge(root).node
    except Exception:  # older PyTorch: the accumulator behind a view of the leaf
        return root.view_as(root).grad_fn.next_functions[0][0]


def graph_nodes(start) -> list:
    """Every node reachable from ``start`` (iteratively, each once)."""
    out, seen, stack = [], set(), [start]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(n for n, _ in access.next_edges(node))
    return out


def saved_tensor_names(node) -> list[str]:
    """Names of the tensors ``node`` saved (sizes and scalars it saved are not
    freed by a pass, so they are left out)."""
    return [n for n in access.saved_names(node)
            if access.is_tensor(access.saved_value(node, n))]


def local_factors(node, grad_in):
    """The node's own backward applied to a gradient of ones, one result per edge,
    for nodes the kit has a formula table for (called before the node runs, while
    its saved tensors exist).  AccumulateGrad is never called: it changes .grad."""
    import torch
    if not access.formula_text(node) or not torch.is_tensor(grad_in):
        return None
    try:
        with torch.no_grad():
            return tuple(node(torch.ones_like(grad_in)))
    except Exception:
        return None


class _Recorder:
    """The hooks' notebook: what each node did, in the order PyTorch ran them."""

    def __init__(self) -> None:
        self.order: list = []       # nodes, in the order their pre-hooks fired
        self.grad_in: dict = {}     # id(node) -> gradient flowing in
        self.grads_out: dict = {}   # id(node) -> gradients sent along each edge
        self.locals: dict = {}      # id(node) -> local factors (or None)
        self.old: dict = {}         # id(AccumulateGrad) -> the leaf's .grad before
        self.new: dict = {}         # id(AccumulateGrad) -> the leaf's .grad after

    def watch(self, node) -> list:
        def before(grad_outputs):
            # one gradient per output of the node (most nodes have one output)
            g = _copy(grad_outputs[0]) if len(grad_outputs) == 1 else \
                tuple(_copy(x) for x in grad_outputs)
            self.order.append(node)
            self.grad_in[id(node)] = g
            var = access.leaf_variable(node)
            if var is not None:
                self.old[id(node)] = _copy(var.grad)
            else:
                self.locals[id(node)] = local_factors(node, g)

        def after(grad_inputs, _grad_outputs):
            self.grads_out[id(node)] = tuple(_copy(g) for g in grad_inputs)
            var = access.leaf_variable(node)
            if var is not None:
                self.new[id(node)] = _copy(var.grad)

        return [node.register_prehook(before), node.register_hook(after)]


class TorchPass(BackwardPass):
    """PyTorch's real pass, recorded once and replayed (see the module docstring)."""

    engine = "torch"
    replayed = True
    who = "PyTorch"
    about = ("PyTorch's own backward pass, replayed: PyTorch cannot be paused, so "
             "its real pass ran once, with hooks on every node, when this view was "
             "made; each step shows what PyTorch did at that node")

    def __init__(self, root, gradient=None, retain_graph: bool = False) -> None:
        self.root, self.gradient, self.retain_graph = root, gradient, bool(retain_graph)
        self.stopper = None
        self._steps: list[Step] = []
        self._locals: dict[int, tuple | None] = {}
        start = start_node(root)
        nodes = graph_nodes(start) if start is not None else []
        leaves = [v for v in map(access.leaf_variable, nodes) if v is not None]
        self._before = [(leaf, _copy(leaf.grad)) for leaf in leaves]
        saved = {} if self.retain_graph else {id(n): saved_tensor_names(n) for n in nodes}
        rec = _Recorder()
        handles = []
        try:
            for node in nodes:
                handles += rec.watch(node)
            self._run(rec)
        finally:
            for h in handles:
                h.remove()
        self._build_steps(rec, saved)
        self.total = len(self._steps)
        self.restore()

    def _run(self, rec) -> None:
        import torch
        try:
            torch.autograd.backward(self.root, self.gradient,
                                    retain_graph=self.retain_graph)
        except RuntimeError as err:  # PyTorch refused, or stopped part way
            self.stopper = err

    def _build_steps(self, rec, saved) -> None:
        """Step records, like the kit engine's, for the nodes that completed."""
        arrived: dict[int, list] = {}
        for node in rec.order:
            key = id(node)
            if key not in rec.grads_out:  # it started, then PyTorch stopped
                break
            g, out = rec.grad_in[key], rec.grads_out[key]
            parts = arrived.pop(key, None) or [g]
            if isinstance(g, tuple):  # several outputs: one gradient each, not a sum
                parts = list(g)
            step = Step(len(self._steps), node, g, parts, out,
                        released=list(saved.get(key, ())))
            var = access.leaf_variable(node)
            if var is not None:
                step.leaves.append((var, rec.old.get(key), rec.new.get(key)))
            for (nxt, _nr), gi in zip(getattr(node, "next_functions", ()), out):
                if nxt is not None and gi is not None:
                    arrived.setdefault(id(nxt), []).append(gi)
            self._locals[step.index] = rec.locals.get(key)
            self._steps.append(step)

    def steps(self):
        """The recording, replayed: each step sets the leaves it updated to the
        ``.grad`` PyTorch left there; at the end, PyTorch's error if it stopped."""
        for step in self._steps:
            for leaf, _old, new in step.leaves:
                leaf.grad = _copy(new)
            yield step
        if self.stopper is not None:
            raise self.stopper

    def restore(self) -> None:
        for leaf, grad in self._before:
            leaf.grad = _copy(grad)

    def local(self, step) -> tuple | None:
        return self._locals.get(step.index)

    def again(self) -> None:
        import torch
        torch.autograd.backward(self.root, self.gradient, retain_graph=self.retain_graph)
