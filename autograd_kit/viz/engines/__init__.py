"""One small adapter per autograd engine: "the backward pass as step records".

A tool that shows a backward pass (the stepper widget) asks
:func:`backward_pass` for a :class:`BackwardPass` (:mod:`.base`) and never
looks at which engine made the tensor.  Every adapter answers the same questions:

* ``total``: how many nodes a full pass processes, and ``stopper``: the error
  (a ``RuntimeError``) that stops the pass after those steps, or None;
* ``steps()``: a fresh pass, as an iterator of :class:`autograd_kit.engine.Step`
  records, one per node, in the order the engine runs them; applying a step leaves
  the leaves' ``.grad`` exactly as the engine leaves them at that point;
* ``restore()``: everything a pass changed put back as it was before step one;
* ``local(step)``: the node's local derivatives (its formulas applied to a
  gradient of ones), one per edge, where the adapter knows them;
* ``again()``: one more complete pass, as a second ``root.backward()`` would run
  (raising the engine's own error where the engine refuses);
* ``freed``: True when making the adapter already freed saved tensors for real
  (a recorded pass without ``retain_graph``), so a later ``backward()`` on the
  graph is refused;
* ``notes(step=None, names=None)``: sentences for a learner, in the current
  language, on mistakes the adapter sees in the learner's own backward code:
  those met at ``step``, or, without one, all of them (``names``:
  ``{id(obj): variable name}``).  Only micrograd's adapter has any: with the
  kit and PyTorch the backward code is the engine's, not the learner's.

Each adapter is given ``tensors``: tensors the caller knows (the variables it
has names for).  Those that are not leaves and called ``retain_grad()`` get
their ``.grad`` set at the step of their ``grad_fn``, as the engine sets it
(``Step.retained``).  The kit's nodes know their retained tensor; PyTorch's
nodes do not link to their outputs, so its adapter needs the list.

``kit.py`` drives autograd_kit's own ``backward_steps()`` generator, one node at a
time.  ``pytorch.py`` cannot pause PyTorch's engine, so it records PyTorch's real
pass with hooks when it is made and replays the recording.  ``micrograd.py``
runs a micrograd ``Value``'s own ``_backward`` closures, one per step, in the
order micrograd's ``backward()`` runs them; it catches the lecture's classic
mistakes (``=`` for ``+=``, a ``_backward`` never set, grads never reset).
"""
from __future__ import annotations

from ..access import engine_name, is_value, require_tensor
from .base import BackwardPass


def for_tensor(root, gradient=None, retain_graph: bool = False,
               tensors=()) -> BackwardPass:
    """The adapter for ``root``'s engine (``root`` is already known to be a tensor
    of autograd_kit or PyTorch, or a micrograd Value; ``tensors``: see the module
    docstring).  PyTorch is imported only here, only when the root is a PyTorch
    tensor; micrograd never is (a Value is read by duck typing)."""
    if is_value(root):
        from .micrograd import MicrogradPass
        return MicrogradPass(root, gradient, retain_graph, tensors)
    if engine_name(root) == "torch":
        from .pytorch import TorchPass
        return TorchPass(root, gradient, retain_graph, tensors)
    from .kit import KitPass
    return KitPass(root, gradient, retain_graph, tensors)


def backward_pass(root, gradient=None, retain_graph: bool = False, tensors=()):
    """The backward pass from ``root`` as step records, through the adapter for
    its engine: the kit's engine and micrograd's closures stepped live,
    PyTorch's pass recorded with hooks and replayed.  ``tensors``: other tensors
    the caller knows (named variables); those that ``retain_grad()`` get their
    ``.grad`` at the step of their ``grad_fn``, on either engine.  Anything that
    is not a tensor of either, nor a micrograd Value, gets
    :func:`autograd_kit.viz.access.require_tensor`'s one-line ``TypeError``."""
    require_tensor(root, "backward_pass", values=True)
    return for_tensor(root, gradient, retain_graph, tensors)
