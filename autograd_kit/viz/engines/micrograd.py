"""micrograd's backward pass, run live: the learner's own ``_backward`` closures,
one node per step.

micrograd (Karpathy's scalar engine, and every ``Value`` class written along
with his lecture) has no engine to pause: ``Value.backward()`` is a few lines::

    topo = build_topo(self)   # every Value after its inputs (depth first over _prev)
    self.grad = 1
    for v in reversed(topo):
        v._backward()         # adds v.grad times each local derivative into the inputs

This adapter does just that, one ``_backward`` call per step, in the very same
order (the walk over ``_prev`` that micrograd's recursive ``build_topo`` makes,
here with an explicit stack).  A leaf has no input to send anything to, so its
empty closure is not a step.  Nothing is computed here: every gradient shown is
one the learner's closures wrote into ``.grad``.  A step records the ``grad`` of
each input of the node before and after its closure ran.

Three classic mistakes of the lecture are caught and said in a sentence
(:meth:`MicrogradPass.notes`):

* ``=`` where ``+=`` belongs: a closure that *sets* an input's ``grad`` instead
  of adding to it.  A value used twice (``a + a``, or by two operations) then
  keeps only the last gradient that reaches it.  Found by running each closure
  once more on its own, from two starting grads of the input: adding moves the
  result by the difference, setting does not;
* ``_backward`` never set: a node with inputs whose closure is still the
  default ``lambda: None`` (a function that reads no variable at all), so it
  sends nothing;
* grads not reset between passes: grads that are not zero before the pass
  starts, so this pass adds on top of the last one.

The same probe gives each edge's local derivative (the closure run with the
node's grad at 1 and its inputs' at 0), which the stepper shows as
``upstream × local``.  Every probe puts the grads back as they were.

``restore()`` puts every ``.grad`` back; ``again()`` runs one more whole pass, as
a second ``backward()`` does: micrograd never empties a grad, so every
gradient below the root doubles -- the reason for ``zero_grad()``.
micrograd is never imported: a Value is known by duck typing
(:func:`autograd_kit.viz.access.is_value`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from autograd_kit import backend
from autograd_kit.engine import Step
from autograd_kit.i18n import N_, _
from autograd_kit.tensor import Tensor

from .. import access, labels
from .base import BackwardPass

#: the input's grad a probe starts from, to tell ``+=`` from ``=``
PROBE_START = 1.0
#: the most gradients a sentence lists before "…"
LISTED = 4


@dataclass
class ValueStep(Step):
    """A :class:`autograd_kit.engine.Step` of micrograd's pass.  ``children``:
    ``[(input, grad before, grad after)]``, the numbers as the closure left them,
    inputs in the picture's order; ``problems``: the :class:`Mistake` s met here."""

    children: list = field(default_factory=list)
    problems: list = field(default_factory=list)


@dataclass(frozen=True)
class Mistake:
    """One of the classic mistakes (see the module docstring).  ``kind``:
    ``"overwrites"`` (``node``'s closure sets ``value.grad``; ``before`` and
    ``after``: that grad around the step), ``"no_backward"`` (``node`` has
    inputs and no closure) or ``"not_reset"`` (``value.grad`` was ``before``
    when the pass started)."""

    kind: str
    node: object = None
    value: object = None
    before: object = None
    after: object = None


WORDS = {
    "overwrites": N_("The _backward of the node {node} sets {input}.grad with = instead of "
                     "adding to it with +=. A value used more than once (twice in one "
                     "operation, as in a + a, or by two operations) then keeps only the "
                     "last gradient that reaches it, not their sum. Write {input}.grad += "
                     "... in that _backward."),
    "lost": N_("In this pass {input}.grad was {before} before this step and {after} after "
               "it: the {before} it already held was lost."),
    "no_backward": N_("The node {node} has inputs, but its _backward was never set: it is "
                      "still the default that does nothing, so no gradient reaches {inputs} "
                      "from it. In the method that makes this node, set "
                      "out._backward = _backward before returning out."),
    "not_reset": N_("Before this pass starts, some gradients are not zero ({grads}): "
                    "micrograd adds into .grad with +=, so this pass adds its gradients on "
                    "top of the old ones. Set every grad back to 0 before calling "
                    "backward() again (p.grad = 0.0 for each parameter p, as zero_grad() "
                    "does), and run the forward pass again, so that the other Values "
                    "start from 0 too."),
}


def topo_order(root) -> list:
    """Every Value below ``root``, each after its inputs: micrograd's
    ``build_topo`` (depth first, inputs in ``_prev``'s own order), with a stack."""
    topo, seen = [], {id(root)}
    stack = [(root, iter(access.value_inputs(root)))]
    while stack:
        v, rest = stack[-1]
        for child in rest:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(access.value_inputs(child))))
                break
        else:
            stack.pop()
            topo.append(v)
    return topo


def number(x):
    """A grad as a 0-d float64 tensor, so the stepper writes it as it writes the
    kit's (``-1.5``); what is not a number stays as it is."""
    try:
        return Tensor._make(backend.as_array(float(x)))
    except Exception:
        return x


def _difference(after, before):
    try:
        return after - before
    except Exception:
        return None


def _nonzero(g) -> bool:
    try:
        return bool(g != 0)
    except Exception:
        return g is not None


def _added(start: float, first, second) -> bool:
    """Did the closure add (``second - start == first``), rather than set?"""
    try:
        a, b = float(first), float(second)
    except Exception:
        return True  # not numbers: nothing can be said
    return abs((b - start) - a) <= 1e-9 * max(1.0, abs(a), abs(start))


def never_set(fn) -> bool:
    """Whether ``fn`` is a default ``_backward``: a plain function that reads no
    variable at all (``lambda: None``), so it cannot reach any Value."""
    code = getattr(fn, "__code__", None)
    return (code is not None and getattr(fn, "__self__", None) is None
            and not getattr(fn, "__closure__", None) and not code.co_names
            and not code.co_freevars)


def stopped(err: Exception) -> RuntimeError:
    """A learner's closure failed: the error as a ``RuntimeError`` (the kind of
    error that stops a pass, for the stepper), with Python's own words."""
    return RuntimeError(f"{type(err).__name__}: {err}")


class MicrogradPass(BackwardPass):
    """micrograd's pass, one ``_backward`` closure per step (see the module
    docstring).  ``gradient``: the root's starting grad, a number (1, as
    ``backward()`` sets it, by default); ``retain_graph`` and ``tensors`` change
    nothing: micrograd frees nothing and has no ``retain_grad``."""

    engine = "micrograd"
    who = "micrograd"
    about = "micrograd's backward pass: the Values' own _backward closures, run one at a time"

    def __init__(self, root, gradient=None, retain_graph: bool = False,
                 tensors=()) -> None:
        if gradient is not None and (isinstance(gradient, bool) or
                                     not isinstance(gradient, (int, float))):
            raise TypeError("micrograd's backward() starts from the root's grad: gradient "
                            f"must be a number, not {type(gradient).__name__}")
        self.root, self.seed = root, 1 if gradient is None else gradient
        self.retain_graph = bool(retain_graph)
        topo = topo_order(root)
        self._nodes = [v for v in reversed(topo) if access.value_inputs(v)]
        self._inputs = access.value_edges([root])  # each node's inputs, the picture's order
        self._held = [(v, v.grad) for v in topo]    # restore() puts these back
        stale = [Mistake("not_reset", value=v, before=g) for v, g in self._held
                 if v is not root and _nonzero(g)]  # (the root's grad is set, not added to)
        self._stale = sorted(stale, key=lambda m: bool(access.value_inputs(m.value)))
        self._locals: dict[int, tuple | None] = {}
        self._mistakes: dict[int, list[Mistake]] = {}
        self.total, self.stopper = self._count()

    # -- the pass ---------------------------------------------------------------------
    def _count(self):
        """A whole pass with probes (local derivatives, mistakes), then undone."""
        return self._dry_run(self._run(probe=True))

    def _run(self, probe: bool = False):
        self.root.grad = self.seed
        arrived: dict[int, list] = {id(self.root): [number(self.seed)]}
        for v, g in ((m.value, m.before) for m in self._stale):
            arrived[id(v)] = [number(g)]  # what was left there counts as the first part
        for index, v in enumerate(self._nodes):
            kids = [c for c, _nr in self._inputs(v)]
            if probe:
                self._probe(index, v, kids)
            g, before = v.grad, [c.grad for c in kids]
            try:
                v._backward()
            except Exception as err:  # the learner's code failed: the pass stops here
                raise stopped(err) from err
            after = [c.grad for c in kids]
            step = self._step(index, v, g, kids, before, after, arrived.pop(id(v), None))
            for c, out in zip(kids, step.grads_out):
                arrived.setdefault(id(c), []).append(out)
            if probe:
                self._lost(index, v, step.children)
            yield step

    def _step(self, index, v, g, kids, before, after, parts) -> ValueStep:
        grad_in = number(g)
        step = ValueStep(index, v, grad_in, parts or [grad_in],
                         tuple(number(_difference(a, b)) for a, b in zip(after, before)),
                         children=list(zip(kids, before, after)),
                         problems=list(self._mistakes.get(index, ())))
        step.leaves = [(c, number(b), number(a)) for c, b, a in step.children
                       if not access.value_inputs(c)]
        return step

    def _probe(self, index: int, v, kids: list) -> None:
        """Run ``v``'s closure on its own, from grads 0 and then
        :data:`PROBE_START` in its inputs (``v.grad`` at 1), and put every grad
        back: the local derivatives, and whether it adds or sets."""
        held = [(u, u.grad) for u in [v, *kids]]
        runs = []
        try:
            for start in (0, PROBE_START):
                v.grad = 1
                for c in kids:
                    c.grad = start
                v._backward()
                runs.append([c.grad for c in kids])
        except Exception:  # the real call will say it
            return
        finally:
            for u, grad in held:
                u.grad = grad
        first, second = runs
        self._locals[index] = tuple(number(x) for x in first)
        found = self._mistakes.setdefault(index, [])
        if never_set(v._backward) and not any(_nonzero(x) for x in first):
            found.append(Mistake("no_backward", v))
        for c, a, b in zip(kids, first, second):
            if not _added(PROBE_START, a, b):
                found.append(Mistake("overwrites", v, c))

    def _lost(self, index: int, v, children: list) -> None:
        """Add the grads each "overwrites" mistake held around the step."""
        found = self._mistakes.get(index, [])
        around = {id(c): (b, a) for c, b, a in children}
        for k, m in enumerate(found):
            if m.kind == "overwrites" and id(m.value) in around:
                b, a = around[id(m.value)]
                found[k] = Mistake("overwrites", v, m.value, b, a)

    # -- the contract -----------------------------------------------------------------
    def steps(self):
        """A fresh pass, live: each ``next()`` runs one node's ``_backward``."""
        return self._run()

    def restore(self) -> None:
        """Every ``.grad`` of the graph back to what it was before step one."""
        for v, grad in self._held:
            v.grad = grad

    def local(self, step) -> tuple | None:
        return self._locals.get(step.index)

    def again(self) -> None:
        """One more whole pass, as micrograd's ``backward()`` runs it."""
        self.root.grad = self.seed
        for v in reversed(topo_order(self.root)):
            try:
                v._backward()
            except Exception as err:
                raise stopped(err) from err

    # -- the mistakes -----------------------------------------------------------------
    @property
    def mistakes(self) -> list[Mistake]:
        """Every mistake found: grads left from before (leaves first), then each
        step's, in the order of the pass."""
        return list(self._stale) + [m for i in sorted(self._mistakes)
                                    for m in self._mistakes[i]]

    def notes(self, step=None, names=None) -> list[str]:
        """The mistakes as sentences, in the current language: with ``step``, those
        met at that step; without, all of them (:attr:`mistakes`).  ``names``:
        ``{id(value): name}`` (a Value's own ``label`` is used otherwise)."""
        names = names or {}
        if step is not None:
            return _once([sentence(m, names) for m in getattr(step, "problems", ())])
        found = self.mistakes
        stale = [m for m in found if m.kind == "not_reset"]
        out = [grads_sentence(stale, names)] if stale else []
        return _once(out + [sentence(m, names) for m in found if m.kind != "not_reset"])


def _once(sentences: list[str]) -> list[str]:
    """Each sentence once (``a + a`` with a tuple ``_prev`` has two arrows from
    ``a``, and the same mistake is met on both)."""
    return list(dict.fromkeys(sentences))


def node_text(v, names: dict) -> str:
    """``*`` for a node, ``* (n)`` when it has a name."""
    name = names.get(id(v)) or access.value_label(v)
    return f"{access.node_name(v)} ({name})" if name else access.node_name(v)


def sentence(m: Mistake, names: dict) -> str:
    """One mistake of a step in words (the current language)."""
    if m.kind == "no_backward":
        inputs = ", ".join(labels.value_name(c, names) for c, _nr in access.next_edges(m.node))
        return _(WORDS["no_backward"]).format(node=node_text(m.node, names), inputs=inputs)
    text = _(WORDS["overwrites"]).format(node=node_text(m.node, names),
                                         input=labels.value_name(m.value, names))
    if _nonzero(m.before):  # set, not added: what the input held before is gone
        text += " " + _(WORDS["lost"]).format(
            input=labels.value_name(m.value, names), before=labels.scalar_text(m.before),
            after=labels.scalar_text(m.after))
    return text


def grads_sentence(stale: list[Mistake], names: dict) -> str:
    """The grads left from an earlier pass, in one sentence."""
    shown = [f"{labels.value_name(m.value, names)}.grad = {labels.scalar_text(m.before)}"
             for m in stale[:LISTED]]
    if len(stale) > LISTED:
        shown.append("…")
    return _(WORDS["not_reset"]).format(grads=", ".join(shown))
