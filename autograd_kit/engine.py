"""The backward pass, as one generator that yields a record per node.

``backward_steps`` is *the* engine: ``Tensor.backward()``, ``autograd.grad()``
and the step-by-step widget all consume it, so what a learner watches is
exactly what ``backward()`` does.

The algorithm, in three moves:

1. **Count dependencies.**  Walk the graph from the roots (iteratively: a
   100,000-node chain must not hit Python's recursion limit) and count, for
   each node, how many edges lead into it.
2. **Process ready nodes.**  A node is *ready* when every edge into it has
   delivered its gradient.  Gradients arriving at one node are summed (this is
   the chain rule's sum over paths).  Among ready nodes the most recently
   created runs first (PyTorch's order), ``AccumulateGrad`` immediately, and
   several leaves made ready together in the order they became ready; so the
   order is deterministic.
3. **Apply and pass on.**  ``node.apply(g)`` gives one gradient per entry of
   ``next_functions``; each goes into its target's buffer.  Without
   ``retain_graph`` the node's saved tensors are released afterwards.

Gradients travel as Tensors when ``create_graph=True`` (their own graph is
recorded, for higher derivatives) and as plain arrays otherwise, through
``node.apply_array``: the same formulas, without building Tensors nobody will
differentiate.  Hooks, the ``Step`` records and ``.grad`` always see Tensors.
A plain ``backward()`` goes one step further at nodes nobody watches (no
hooks, no ``retain_grad``): ``_fast_node`` is ``_process`` without the cases
that cannot happen there, and a property test holds the two to the same
gradients, hook calls and freed buffers.

With anomaly detection on (``autograd/anomaly.py``) the loop also checks every
node's gradients for NaN and, when a node fails, first warns with the forward
traceback that node recorded.  Errors leave ``backward_steps``, ``backward``
and ``grad`` with their tracebacks cut at that public call (``errors.short``).
"""
from __future__ import annotations

import heapq
import warnings
from dataclasses import dataclass, field

from . import errors
from .accumulate import add_up, settle, store_grad, take_over
from .graph import NUMBER_FREED, AccumulateGrad, hook_result, next_node
from .grad_mode import _anomaly, _state
from .multi_output import OutputGrads
from .tensor import Tensor, plug_in
from .gc_pause import _run_paused
from .walk_setup import (_as_tuple, _grads_tuple, _needed, _ones_like, _root_grads,  # noqa: F401
                         count_dependencies)


@dataclass
class Step:
    """What happened at one node of the backward pass."""

    index: int                       # 0, 1, 2... in execution order
    node: object                     # the grad_fn (or AccumulateGrad) processed
    grad_in: Tensor                  # the gradient that flowed into it (after hooks)
    contributions: list              # the separate gradients summed into grad_in
    grads_out: tuple                 # one gradient (or None) per next_functions entry
    leaves: list = field(default_factory=list)    # [(leaf, old_grad, new_grad)]
    retained: list = field(default_factory=list)  # [(non-leaf with retain_grad, new_grad)]
    released: list = field(default_factory=list)  # names of saved tensors freed here
    # the summed gradient as it arrived, when a hook (a tensor hook or a node
    # pre-hook) returned another one in its place; None when no hook did
    before_hooks: Tensor | None = None


def _tensor_hooks(node, g):
    """The hooks of the tensor whose gradient ``g`` is, then ``retain_grad``
    (PyTorch's order); for a leaf, its own hooks (``x.register_hook``).
    ``g`` is a Tensor here, whichever way the pass carries its gradients."""
    if node.__class__ is AccumulateGrad:
        return node.run_hooks(g), None
    hooks = node._pre_hooks
    if hooks:
        for hook in list(hooks.get(0, ())):
            new = hook(g)
            if new is not None:
                g = hook_result(hook, g, new)
    retained = None
    if node._retain is not None:
        t = node._retain()
        if t is not None:
            retained = store_grad(t, g)
    return g, retained


def _node_pre_hooks(node, g):
    """The node's own pre-hooks (``grad_fn.register_prehook``), after the tensor's."""
    for hook in list(node._pre_hooks.get(-1, ())):
        new = hook((g,))
        if new is not None:
            g = new[0]
    return g


def backward_steps(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                   inputs=None, *, _capture=None, _detail=True):
    """Run backward one node at a time, yielding a :class:`Step` for each.

    Exhausting the generator has exactly the effect of ``torch.autograd.backward``:
    leaf ``.grad`` fields accumulate, and (unless ``retain_graph``) saved
    tensors are released as their nodes finish.
    """
    try:
        tensors = _as_tuple(tensors)
        grad_tensors = _grads_tuple(grad_tensors, len(tensors))
        if len(grad_tensors) < len(tensors):  # (extra gradients are ignored, as in PyTorch)
            raise RuntimeError(f"got {len(grad_tensors)} tensors and {len(tensors)} gradients")
        if retain_graph is None:
            retain_graph = create_graph
        grads = _root_grads(tensors, grad_tensors)
        buffers = {}
        for t, g in zip(tensors, grads):
            buffers.setdefault(next_node(t), []).append(g if create_graph else g._data)
        roots = list(buffers)
        deps = count_dependencies(roots)
        targets = None
        if _capture is not None:
            targets = _capture
        elif inputs is not None:
            targets = {next_node(t): t for t in _as_tuple(inputs)}
        needed = _needed(roots, targets) if targets is not None else None
        # (newest first; among nodes of one number -- the AccumulateGrad nodes --
        # the first to become ready)
        ready = [(-n._seq, i, n) for i, n in enumerate(roots) if deps.get(n, 0) == 0]
        heapq.heapify(ready)
        try:
            yield from _run(ready, buffers, deps, needed, retain_graph, create_graph,
                            _capture, _detail, targets if inputs is not None else None)
        except errors.AutogradError as err:
            if err.root is None:
                err.root = tensors  # so an explanation can draw the whole graph
            raise
    except Exception as err:
        raise errors.short(err)  # the engine's frames are no help to the learner


def _run(ready, buffers, deps, needed, retain_graph, create_graph, _capture, _detail,
         targets=None):
    """The loop of ``backward_steps``: process ready nodes until none is left.

    Formulas run with grad mode = ``create_graph``; while the generator is
    paused at a ``yield`` the caller's own grad mode is back in force."""
    index = 0
    pop, push = heapq.heappop, heapq.heappush
    arrays = not create_graph
    wrap = _memo_wrap() if arrays and _detail else _wrap if arrays else _same
    # a plain backward() takes the fast path at nodes without hooks (_fast_node)
    fast = arrays and not _detail and _capture is None and targets is None and needed is None
    lent = {}  # leaves whose .grad borrows an array the pass may still read
    # ids of saved arrays passed on as gradients themselves (``_times_one``):
    # only a plain backward() lends them, and copies them before user code
    borrowed = set() if fast else None
    anomaly, outer = _anomaly.enabled, _anomaly.parent
    check_nan = anomaly and _anomaly.check_nan
    # Grad mode is switched by plain stores into the thread's state, not by calls:
    # Ctrl-C arrives only as a function starts or after a call returns, so the
    # ``finally`` below always restores the caller's mode (see ``_run_paused``).
    mode = _state  # (thread-local: ``mode.enabled`` is this thread's grad mode)
    caller_mode, formula_mode = mode.enabled, bool(create_graph)
    node = None
    paused = False  # at a ``yield``: the caller's own grad mode is in force
    try:
        mode.enabled = formula_mode
        node = pop(ready)[2] if ready else None
        step = None
        order = len(ready)  # counts the nodes made ready (ties run first come, first served)
        while node is not None:
            if anomaly:  # nodes made by this node's formulas remember it
                _anomaly.parent = node
            contributions = buffers.pop(node, None)
            nf = node._next
            if fast and contributions is not None and node._extra is None and \
                    node.__class__ is not AccumulateGrad:
                grads_out, step = _fast_node(node, contributions, retain_graph,
                                             borrowed), None
            elif contributions is None or (needed is not None and node not in needed):
                grads_out, step = (None,) * len(nf), None  # no gradient reaches it
            else:
                grads_out, step = _process(node, contributions, needed, retain_graph,
                                           _capture, _detail, targets, index, arrays, wrap,
                                           lent, borrowed)
            if check_nan:  # anomaly detection: stop at the first NaN gradient
                _anomaly_check_nan(node, grads_out)
            became_ready = None
            for nxt, gi in zip(nf, grads_out):
                if nxt is None:
                    continue
                if gi is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buffers[nxt] = [gi]
                    else:
                        buf.append(gi)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    order += 1
                    if became_ready is None:
                        became_ready, its_order = nxt, order
                    else:
                        push(ready, (-nxt._seq, order, nxt))
            grads_out = gi = contributions = None  # hold no gradient longer than needed
            if step is not None:
                mode.enabled = caller_mode
                if anomaly:
                    _anomaly.parent = outer  # (the caller's own nodes have no parent)
                paused = True
                yield step
                caller_mode = mode.enabled  # (the caller may have changed it meanwhile)
                paused = False
                mode.enabled = formula_mode
                index += 1
            # the next node: the newest ready one (a chain skips the heap)
            if became_ready is not None and ready:
                node = heapq.heappushpop(ready, (-became_ready._seq, its_order,
                                                 became_ready))[2]
            elif became_ready is not None:
                node = became_ready
            else:
                node = pop(ready)[2] if ready else None
    except Exception:
        if _anomaly.enabled:  # show where the failing node was made, then fail
            _anomaly_report(node)
        raise
    finally:
        if not paused:  # (closed or dropped at a ``yield``, the mode is the caller's
            mode.enabled = caller_mode  # already: maybe in another thread, by the gc)
            if anomaly:
                _anomaly.parent = outer
        settle(lent)


def _fast_node(node, contributions, retain_graph, borrowed):
    """``_process`` for a plain ``backward()`` at a node with no hooks, no
    ``retain_grad`` and no metadata: sum what arrived, apply the chain rule on
    arrays, free the saved tensors.  Nobody looks at the gradients on the way,
    so no Tensor and no ``Step`` is made.  (``test_engine_paths_agree`` runs
    both on random graphs: the same gradients, hook calls and freed buffers.)"""
    g = add_up(contributions) if len(contributions) > 1 else contributions[0]
    contributions.clear()  # g is now held here only: apply_array may reuse its memory
    if borrowed and not node._formulas_only:  # a custom backward may write into g
        g = _unborrow(g, borrowed)
    grads_out = node.apply_array(g, None, borrowed)
    if not retain_graph and node._holds_tensors:
        if node._holds_tensors is True:
            node.release_saved()
        else:  # numbers only: marked freed, nothing to drop (graph.py)
            node._holds_tensors = NUMBER_FREED
    return grads_out


def _process(node, contributions, needed, retain_graph, capture, detail, targets, index,
             arrays, wrap, lent, borrowed=None):
    """One node: sum what arrived, run hooks, apply the chain rule, free buffers.

    With ``arrays``, gradients are plain arrays; they are wrapped as Tensors only
    where someone looks at them (hooks, ``.grad``, ``autograd.grad``, Steps)."""
    g = contributions[0]
    if g.__class__ is OutputGrads:  # a node with several outputs
        return _process_multi(node, contributions, needed, retain_graph, capture, detail,
                              index, arrays, wrap, borrowed)
    if len(contributions) > 1:
        if arrays and not detail:
            g = add_up(contributions)
        else:
            for extra in contributions[1:]:
                g = g + extra
    is_leaf_node = node.__class__ is AccumulateGrad
    if borrowed and not (is_leaf_node and node.variable._hooks is None):
        g = _unborrow(g, borrowed)  # hooks come next (a hookless leaf: ``take_over``)
    captured = capture is not None and node in capture  # autograd.grad: hand it back
    # a captured input runs only its tensor's hooks; its node runs on only when the
    # pass must go through it to reach another input (a leaf never does)
    runs = not captured or (not is_leaf_node and any(n in needed for n in node._next))
    retained = unhooked = None
    hooked = node._extra is not None  # (hooks, retain_grad or metadata set)
    tensor_hooked = node.variable._hooks is not None if is_leaf_node else \
        hooked and (node._pre_hooks is not None or node._retain is not None)
    if tensor_hooked:
        gt, retained = _tensor_hooks(node, wrap(g))
        unhooked, g = g, (gt._data if arrays else gt)
    if captured:
        capture[node] = wrap(g)
    if runs and hooked and node._pre_hooks is not None and -1 in node._pre_hooks:
        gt = _node_pre_hooks(node, wrap(g))
        if unhooked is None:
            unhooked = g
        g = gt._data if arrays else gt
    old = None
    if not runs:
        grads_out = () if is_leaf_node else (None,) * len(node._next)
    elif is_leaf_node:
        if detail:
            v = node.variable
            old = None if v._grad is None else Tensor._make(v._grad._data.copy())
        if not (arrays and not detail and take_over(node, g, contributions, lent)):
            node.accumulate(wrap(g))  # (its tensor hooks ran above)
        grads_out = ()
    else:
        if targets is not None and node in targets:
            retained = store_grad(targets[node], wrap(g))  # backward(inputs=[non-leaf])
        grads_out = _apply(node, g, needed, arrays)
    if runs and hooked and node._post_hooks:
        for hook in list(node._post_hooks):
            new = hook(_wrap_all(grads_out, wrap) if arrays else grads_out, (wrap(g),))
            if new is not None:
                grads_out = tuple(_raw(gi) for gi in new) if arrays else tuple(new)
    released = [] if retain_graph or not node._holds_tensors else node.release_saved()
    step = None
    if detail and not node._output_edge:  # (an output edge is part of its node's step)
        step = Step(index, node, wrap(g), [wrap(c) for c in contributions],
                    _wrap_all(grads_out, wrap) if arrays else grads_out, released=released)
        if is_leaf_node and runs:
            step.leaves.append((node.variable, old, node.variable._grad))
        if retained is not None:
            step.retained.append(retained)
        if unhooked is not None and unhooked is not g:  # a hook gave another gradient
            step.before_hooks = wrap(unhooked)
    return grads_out, step


def _process_multi(node, contributions, needed, retain_graph, capture, detail, index,
                   arrays, wrap, borrowed=None):
    """``_process`` for a node with several outputs (``multi_output.py``): the
    slots that arrived are added slot by slot; the hooks of outputs that got no
    gradient are called with None; node hooks see one gradient per output."""
    g = contributions[0]
    for extra in contributions[1:]:
        g = g + extra
    if borrowed:
        g = _unborrow(g, borrowed)
    node.hooks_without_gradient(g.slots)
    shown = tuple(None if s is None else wrap(s) for s in g.slots)
    if node._pre_hooks is not None:
        for hook in list(node._pre_hooks.get(-1, ())):
            new = hook(shown)
            if new is not None:
                shown = tuple(new)
                g = OutputGrads([_raw(s) if arrays else s for s in shown])
    if capture is not None and node in capture:
        capture[node] = OutputGrads(list(shown))
    grads_out = _apply(node, g, needed, arrays)
    if node._post_hooks:
        for hook in list(node._post_hooks):
            new = hook(_wrap_all(grads_out, wrap) if arrays else grads_out, shown)
            if new is not None:
                grads_out = tuple(_raw(gi) for gi in new) if arrays else tuple(new)
    released = [] if retain_graph or not node._holds_tensors else node.release_saved()
    step = None
    if detail:
        step = Step(index, node, shown, [tuple(None if s is None else wrap(s)
                                               for s in c.slots) for c in contributions],
                    _wrap_all(grads_out, wrap) if arrays else grads_out, released=released)
    return grads_out, step


def _anomaly_check_nan(node, grads_out):
    from .autograd.anomaly import check_nan
    check_nan(node, grads_out)


def _anomaly_report(node):
    from .autograd.anomaly import report_failure
    report_failure(node)


def _unborrow(g, borrowed):
    """``g``, or a copy where it is a saved array that a plain backward() passed
    on as a gradient (``OpNode._times_one``): what a hook or a custom backward
    is given is its own to change in place."""
    if g.__class__ is OutputGrads:
        if any(s is not None and id(s) in borrowed for s in g.slots):
            return OutputGrads([s.copy() if s is not None and id(s) in borrowed else s
                                for s in g.slots])
        return g
    return g.copy() if id(g) in borrowed else g


def _apply(node, g, needed, arrays):
    if arrays:
        return node.apply_array(g, needed)
    return node.apply(g, needed) if needed is not None else node.apply(g)


_wrap = Tensor._make


def _same(g):
    return g


def _wrap_all(grads, wrap):
    return tuple(None if gi is None else wrap(gi) for gi in grads)


def _memo_wrap():
    """A wrapper that gives the same Tensor for the same array throughout one
    pass, so that a Step's ``grads_out`` *are* the next Steps' ``contributions``."""
    memo = {}

    def wrap(a):
        t = memo.get(id(a))
        if t is None or t._data is not a:
            t = memo[id(a)] = _wrap(a)
        return t
    return wrap


def _raw(g):
    return None if g is None else g._data


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """``torch.autograd.backward``: accumulate gradients of ``tensors`` into the leaves."""
    if create_graph:
        warnings.warn(errors.CREATE_GRAPH_CYCLE, UserWarning, stacklevel=3)
    try:
        _run_paused(backward_steps(tensors, grad_tensors if grad_tensors is not None
                                   else grad_variables, retain_graph, create_graph, inputs,
                                   _detail=False))
    except Exception as err:
        raise errors.short(err)  # the traceback ends at the public call


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """``torch.autograd.grad``: the gradients of ``outputs`` w.r.t. ``inputs``,
    returned instead of accumulated into ``.grad``."""
    try:
        return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                     allow_unused, materialize_grads)
    except Exception as err:
        raise errors.short(err)  # the traceback ends at the public call


def _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
          materialize_grads):
    for out in (outputs,) if isinstance(outputs, Tensor) else tuple(outputs):
        if not isinstance(out, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
    inputs_t = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    for t in inputs_t:
        if not isinstance(t, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
    for t in inputs_t:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    capture = {}
    keys = []
    for t in inputs_t:
        node = next_node(t)  # (for an output of a node with several outputs: its edge)
        capture[node] = None
        keys.append(node)
    _run_paused(backward_steps(outputs, grad_outputs, retain_graph, create_graph,
                               _capture=capture, _detail=False))
    result = []
    for i, (t, node) in enumerate(zip(inputs_t, keys)):
        g = capture[node]
        if g is None:
            if materialize_grads:
                g = Tensor._make(_ones_like(t._data) * 0)
            elif not allow_unused:
                raise RuntimeError(errors.UNUSED_INPUT.format(index=i))
        elif not create_graph and g._rg:
            g = g.detach()
        result.append(g)
    return tuple(result)


plug_in("run_backward", backward)  # (what ``Tensor.backward`` runs)
