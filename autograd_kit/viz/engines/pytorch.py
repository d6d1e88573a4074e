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

Three more things are put right around the recording:

* tensors that called ``retain_grad()``: PyTorch's nodes do not know their
  output tensors, so the caller names candidates (the root is always one).  A
  node's pre-hook runs after PyTorch stored the retained ``.grad``, so it reads
  the value there; the tensor is put back afterwards and set again on replay;
* hooks that returned another gradient: the pre-hook sees the gradient *after*
  tensor hooks, while the parts that arrived along the edges (or the seed, at
  the start) add up to the gradient *before* them; when the two differ, the
  step says so (``Step.before_hooks``), as the kit's engine does;
* a ``.grad`` the user holds is never written into: PyTorch adds into ``.grad``
  in place, so the recorded pass works on clones, and ``restore()`` puts the
  user's own objects back, even when a hook raised an error part way (that
  error is raised again, as the kit's adapter does; a ``RuntimeError`` is
  PyTorch stopping the pass, replayed after the steps that ran).

PyTorch is imported only when this module is used on a PyTorch tensor.
"""
from __future__ import annotations

from autograd_kit.engine import Step

from .. import access
from .base import BackwardPass


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

    def __init__(self, retaining: dict) -> None:
        self.retaining = retaining  # id(node) -> tensors that retain its outputs' grads
        self.order: list = []       # nodes, in the order their pre-hooks fired
        self.grad_in: dict = {}     # id(node) -> gradient flowing in (after hooks)
        self.grads_out: dict = {}   # id(node) -> gradients sent along each edge
        self.locals: dict = {}      # id(node) -> local factors (or None)
        self.old: dict = {}         # id(AccumulateGrad) -> the leaf's .grad before
        self.new: dict = {}         # id(AccumulateGrad) -> the leaf's .grad after
        self.retained: dict = {}    # id(node) -> [(tensor, its retained .grad)]

    def watch(self, node) -> list:
        def before(grad_outputs):
            # one gradient per output of the node (most nodes have one output)
            g = _copy(grad_outputs[0]) if len(grad_outputs) == 1 else \
                tuple(_copy(x) for x in grad_outputs)
            self.order.append(node)
            self.grad_in[id(node)] = g
            # PyTorch stored retained grads just before this pre-hook
            self.retained[id(node)] = [(t, _copy(t.grad)) for t in
                                       self.retaining.get(id(node), ()) if t.grad is not None]
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


def retaining(tensors, nodes) -> dict:
    """``{id(node): [tensors]}`` for the tensors among ``tensors`` that are not
    leaves, called ``retain_grad()`` and have their ``grad_fn`` in ``nodes``
    (each tensor once)."""
    ids = {id(n) for n in nodes}
    out, seen = {}, set()
    for t in tensors:
        if id(t) in seen or access.engine_name(t) != "torch":
            continue
        seen.add(id(t))
        if t.is_leaf or not t.retains_grad or id(t.grad_fn) not in ids:
            continue
        out.setdefault(id(t.grad_fn), []).append(t)
    return out


def summed(parts):
    """The parts added up in arrival order, as PyTorch's input buffer adds them
    (addition is commutative bit for bit, so which side receives does not matter)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def changed_by_hooks(parts, g) -> bool:
    """Do the parts that arrived add up to something other than ``g``, the
    gradient the node's pre-hook saw?  Then a hook returned another gradient."""
    import torch
    if isinstance(g, tuple) or not torch.is_tensor(g) or any(
            not torch.is_tensor(p) for p in parts):
        return False
    total = summed(parts)
    if total.shape != g.shape:
        return True
    # exactly equal, NaN where NaN (a gradient can overflow without any hook)
    return not torch.allclose(total.to(g.dtype), g, rtol=0, atol=0, equal_nan=True)


class TorchPass(BackwardPass):
    """PyTorch's real pass, recorded once and replayed (see the module docstring)."""

    engine = "torch"
    replayed = True
    who = "PyTorch"
    about = ("PyTorch's own backward pass, replayed: PyTorch cannot be paused, so "
             "its real pass ran once, with hooks on every node, when this view was "
             "made; each step shows what PyTorch did at that node")

    def __init__(self, root, gradient=None, retain_graph: bool = False,
                 tensors=()) -> None:
        self.root, self.gradient, self.retain_graph = root, gradient, bool(retain_graph)
        self.stopper = None
        self._steps: list[Step] = []
        self._locals: dict[int, tuple | None] = {}
        self._unfinished: list = []  # retained grads stored at the node that failed
        start = start_node(root)
        nodes = graph_nodes(start) if start is not None else []
        self._start = start
        leaves = [v for v in map(access.leaf_variable, nodes) if v is not None]
        kept = retaining([root, *tensors], nodes)
        # the user's own .grad objects, put back by restore()
        self._before = [(t, t.grad) for t in leaves]
        self._before += [(t, t.grad) for ts in kept.values() for t in ts]
        saved = {} if self.retain_graph else {id(n): saved_tensor_names(n) for n in nodes}
        rec = _Recorder(kept)
        handles = []
        try:
            for t, grad in self._before:  # PyTorch adds in place: into clones
                t.grad = _copy(grad)
            for node in nodes:
                handles += rec.watch(node)
            self._run()
        finally:
            for h in handles:
                h.remove()
            self.restore()
        self._build_steps(rec, saved)
        self.total = len(self._steps)
        self.freed = any(step.released for step in self._steps)

    def _run(self) -> None:
        import torch
        try:
            torch.autograd.backward(self.root, self.gradient,
                                    retain_graph=self.retain_graph)
        except RuntimeError as err:  # PyTorch refused, or stopped part way
            self.stopper = err

    def _seed(self):
        """The gradient the pass starts with: the one given, or ones (as
        ``backward()`` makes it for a single number)."""
        import torch
        if self.gradient is None:
            return torch.ones_like(self.root.detach())
        return self.gradient.detach() if torch.is_tensor(self.gradient) else None

    def _build_steps(self, rec, saved) -> None:
        """Step records, like the kit engine's, for the nodes that completed."""
        arrived: dict[int, list] = {}
        if self._start is not None:
            arrived[id(self._start)] = [self._seed()]
        for node in rec.order:
            key = id(node)
            if key not in rec.grads_out:  # it started, then PyTorch stopped
                self._unfinished = rec.retained.get(key, [])
                break
            g, out = rec.grad_in[key], rec.grads_out[key]
            parts = [p for p in arrived.pop(key, ()) if p is not None] or [g]
            if isinstance(g, tuple):  # several outputs: one gradient each, not a sum
                parts = list(g)
            step = Step(len(self._steps), node, g, parts, out,
                        released=list(saved.get(key, ())))
            if changed_by_hooks(parts, g):
                step.before_hooks = summed(parts)
            var = access.leaf_variable(node)
            if var is not None:
                step.leaves.append((var, rec.old.get(key), rec.new.get(key)))
            step.retained.extend(rec.retained.get(key, ()))
            for (nxt, _nr), gi in zip(getattr(node, "next_functions", ()), out):
                if nxt is not None and gi is not None:
                    arrived.setdefault(id(nxt), []).append(gi)
            self._locals[step.index] = rec.locals.get(key)
            self._steps.append(step)

    def steps(self):
        """The recording, replayed: each step sets the leaves it updated (and the
        tensors that retain grads) to the ``.grad`` PyTorch left there; at the
        end, PyTorch's error if it stopped."""
        for step in self._steps:
            for leaf, _old, new in step.leaves:
                leaf.grad = _copy(new)
            for t, new in step.retained:
                t.grad = _copy(new)
            yield step
        if self.stopper is not None:
            for t, new in self._unfinished:  # stored before the failing node ran
                t.grad = _copy(new)
            raise self.stopper

    def restore(self) -> None:
        """Every ``.grad`` the pass touches back to the very object it was."""
        for t, grad in self._before:
            t.grad = grad

    def local(self, step) -> tuple | None:
        return self._locals.get(step.index)

    def again(self) -> None:
        import torch
        torch.autograd.backward(self.root, self.gradient, retain_graph=self.retain_graph)
