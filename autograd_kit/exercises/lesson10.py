"""The checks of Lesson 10 (training a network), registered by :mod:`.registry`.

Exercise 2 asks for the scale that makes two half-batch backward passes add up to
the full batch's gradient.  Exercise 3's ``train(model, optimizer, epochs)`` is
given a model and data of the check's own, and must return the losses the usual
loop (forward, loss, zero_grad, backward, step) gives on them.

In exercise 1 the learner writes ``sgd_step(params, lr)``: what
``optimizer.step()`` followed by ``optimizer.zero_grad()`` do for plain SGD.  For
every parameter ``p`` that has a gradient,

    p  <-  p - lr * p.grad        (in place: the model holds this very tensor)
    p.grad  <-  None              (or zeros: the next backward() starts afresh)

and a parameter whose ``.grad`` is None (it took no part in the loss) is left
alone, as PyTorch's optimizers leave it.

The check makes its own parameters each time (random shapes and values, float32
leaves that require grad), gives them gradients with a ``backward()`` of a loss
that leaves one parameter out, and calls the answer with recording switched on,
as a training loop does.  It runs twice: once with the parameters in a list,
once as a generator, which is what ``model.parameters()`` returns.  Every
parameter must afterwards be the same tensor object, still a leaf that requires
grad, moved by exactly ``-lr * grad``, with its gradient cleared.

What is wrong is said as a misconception, never as the code that would fix it:
the in-place change that recording refuses, a name rebound to a new tensor
(the model keeps the old one), a step uphill, ``lr`` left out, gradients left
for the next ``backward()`` to add to, a generator looped over twice, an
optimizer asked to do the work.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, kit, near, numpy_rng, still_open, with_globals
from .sentences import OPEN


class _OptimizersWatched:
    """``with _OptimizersWatched() as watch:`` counts the calls of any of the kit's
    optimizers' ``step`` and ``zero_grad`` made inside (``watch.calls``)."""

    def __enter__(self):
        from ..optim.optimizer import Optimizer
        self.calls, self.undo = 0, []
        classes, todo = [], [Optimizer]
        while todo:
            cls = todo.pop()
            classes.append(cls)
            todo.extend(cls.__subclasses__())
        for cls in classes:
            for name in ("step", "zero_grad"):
                if name in vars(cls):
                    self._watch(cls, name, vars(cls)[name])
        return self

    def _watch(self, cls, name, original) -> None:
        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)
        setattr(cls, name, counted)
        self.undo.append((cls, name, original))

    def __exit__(self, *exc) -> bool:
        for cls, name, original in reversed(self.undo):
            setattr(cls, name, original)
        return False


def _parameters(rng):
    """Leaves that require grad, with gradients from one ``backward()``; the last
    one takes no part in the loss, so its ``.grad`` stays None."""
    from .. import grad_mode
    from ..ops.creation import tensor
    shapes = [(int(rng.integers(2, 5)), int(rng.integers(2, 4))), (int(rng.integers(2, 5)),),
              (), (int(rng.integers(2, 4)),)]
    params = [tensor(rng.uniform(-2.0, 2.0, s).astype("float32"), requires_grad=True)
              for s in shapes]
    weights = [tensor(rng.uniform(-1.0, 1.0, s).astype("float32")) for s in shapes]
    with grad_mode.enable_grad():
        loss = sum(((p * w).sum() + (p * p).sum() * 0.25 for p, w in
                    zip(params[:-1], weights[:-1])), tensor(0.0))
        loss.backward()
    return params


def _flat(t) -> list:
    values = t.detach().tolist()
    return values if isinstance(values, list) else [values]


def _flatten(nested) -> list:
    out, todo = [], [nested]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(reversed(item))
        else:
            out.append(float(item))
    return out


def _moved_by(after, before, step, tol=1e-5) -> bool:
    """Whether each ``after`` is ``before + step`` within float32 rounding."""
    return all(abs(a - (b + s)) <= tol * (1.0 + abs(b) + abs(s))
               for a, b, s in zip(after, before, step))


def _cleared(p) -> bool:
    return p.grad is None or all(v == 0.0 for v in _flatten(_flat(p.grad)))


_REFUSED = N_("changing a parameter in place was refused: recording was on, and a leaf that "
              "requires grad cannot be changed in place while it is (Lesson 8); the update "
              "itself must not be recorded")
_NONE_GRAD = N_("the update failed on a parameter whose .grad is None (it took no part in "
                "the loss): optimizers leave such parameters alone")
_ASKED = N_("sgd_step asked an optimizer to do the work; here you write the update yourself, "
            "one parameter at a time")


def _call(answer, params, lr: float, as_generator: bool) -> str | None:
    """Call the answer as a training loop would (recording on); a sentence when
    it raised or used an optimizer."""
    from .. import grad_mode
    given = (p for p in params) if as_generator else list(params)
    watch = _OptimizersWatched()
    try:
        with watch, grad_mode.enable_grad():
            answer(given, lr)
    except Exception as err:
        words = str(err)
        if "leaf Variable that requires grad" in words and "in-place" in words:
            return _REFUSED
        if "NoneType" in words:
            return _NONE_GRAD
        return _("calling sgd_step raised {error}").format(error=f"{type(err).__name__}: {err}")
    if watch.calls:
        return _ASKED
    return None


def _trial(answer, rng, as_generator: bool) -> str | None:
    params = _parameters(rng)
    lr = float(rng.uniform(0.05, 0.5))
    before = [_flatten(_flat(p)) for p in params]
    grads = [None if p.grad is None else _flatten(_flat(p.grad)) for p in params]
    flags = [(p.requires_grad, p.is_leaf) for p in params]
    problem = _call(answer, params, lr, as_generator)
    if problem:
        return problem
    if any((p.requires_grad, p.is_leaf) != f for p, f in zip(params, flags)):
        return N_("after the step a parameter is no longer a leaf that requires grad: the "
                  "update was recorded as part of the graph, or tracking was switched off "
                  "for the parameter itself")
    after = [_flatten(_flat(p)) for p in params]
    if after[-1] != before[-1]:
        return N_("a parameter whose .grad is None (it took no part in the loss) was changed: "
                  "optimizers leave such parameters alone")
    used = [k for k, g in enumerate(grads) if g is not None]
    got, was = ([v for k in used for v in rows[k]] for rows in (after, before))
    grad = [v for k in used for v in grads[k]]

    def moved(scale: float) -> bool:
        return _moved_by(got, was, [scale * v for v in grad])
    if not moved(-lr):
        if got == was:
            return N_("the parameters did not move: the update made new tensors and gave them "
                      "the parameters' names, while the model still holds the old tensors "
                      "(or the gradients were cleared before the update used them); change "
                      "each parameter itself, in place")
        if moved(lr):
            return N_("the step went uphill: each parameter moved along its gradient, the "
                      "direction in which the loss grows fastest")
        if moved(-1.0):
            return N_("each parameter moved by its whole gradient: the learning rate lr "
                      "scales the step")
        return N_("the parameters moved, but not by lr times their gradients, in the "
                  "direction that lowers the loss")
    if not all(_cleared(p) for p in params):
        if as_generator:
            return N_("the step is right when params is a list, but given a generator (what "
                      "model.parameters() returns) the gradients are not cleared: a "
                      "generator runs out after one loop, so a second loop over params "
                      "finds nothing")
        return N_("the parameters moved correctly, but their gradients were not cleared: "
                  "the next backward() would add to them (Lesson 6)")
    return None


def l10_ex1(sgd_step) -> str | None:
    if not callable(sgd_step):
        return N_("sgd_step should be a function, defined with def sgd_step(params, lr)")
    if still_open(sgd_step):
        return OPEN
    rng = numpy_rng()
    return _trial(sgd_step, rng, False) or _trial(sgd_step, rng, True)


def l10_ex2(scale):
    if near(scale, 0.5, 1e-4):
        return None
    return _("with that scale, the two halves do not add up to the full-batch gradient")


def l10_ex3(candidate):
    ak = kit()
    nn, optim = ak.nn, ak.optim
    if not callable(candidate):
        return N_("train should be a function, defined with def train(model, optimizer, epochs)")
    rng = numpy_rng()
    seed = int(rng.integers(0, 2 ** 31))
    n = int(rng.integers(30, 60))
    inputs = ak.tensor([[float(v)] for v in rng.uniform(-3.0, 3.0, n)])
    targets = ak.tensor([[float(v)] for v in rng.uniform(-1.0, 1.0, n)])
    loss_fn = nn.MSELoss()
    epochs = int(rng.integers(3, 7))

    def make_model():
        ak.manual_seed(seed)
        return nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))

    def reference(zero=True):
        model = make_model()
        opt = optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _epoch in range(epochs):
            loss = loss_fn(model(inputs), targets)
            if zero:
                opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, model
    model = make_model()
    with with_globals(candidate, {"inputs": inputs, "targets": targets, "loss_fn": loss_fn}):
        got = candidate(model, optim.SGD(model.parameters(), lr=0.1), epochs)
    if got is None:
        return N_("train returned None: return the list of losses, one per epoch")
    if not isinstance(got, (list, tuple)) or len(got) != epochs:
        return _("it should return a list with one loss per epoch")
    if any(getattr(loss, "grad_fn", None) is not None for loss in got):
        return N_("the values are right, but the list holds the loss tensors, each with its "
                  "graph attached: store loss.item(), a plain number (losses kept this way "
                  "before backward() hold every saved tensor of their forward pass)")
    want, trained = reference()
    if near(got, want, 1e-4):
        if not all(near(p, q, 1e-4) for p, q in zip(model.parameters(),
                                                      trained.parameters())):
            return _("the losses are right, but the model it was given was not trained: "
                     "step the optimizer it was given")
        return None
    if near(got, reference(zero=False)[0], 1e-4):
        return N_("that is training without zero_grad(): each step adds its gradient to all "
                  "the earlier ones; clear them once per step")
    if near(got, [want[0]] * epochs, 1e-4):
        return N_("the loss never changes, so the parameters never moved: step() needs the "
                  "gradients that backward() has just computed (is step() missing, or does "
                  "zero_grad() come between backward() and step()?)")
    return _("for another model and other data it does not return the losses of one step per "
             "epoch on the full batch: it must train the model it is given")


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson10.ex1": (("sgd_step",), ("function",), l10_ex1),
    "lesson10.ex2": (("my_scale",), ("number",), l10_ex2),
    "lesson10.ex3": (("train",), ("function",), l10_ex3),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson10.ex1": (
        N_("Exercise 1 (one step by hand)"),
        N_("for each parameter that has a gradient: change the tensor itself, with "
           "recording off, by -lr times its gradient; then clear that gradient. Loop over "
           "params once."),
        N_("That is all plain SGD's step() and zero_grad() do; momentum, Adam and the rest "
           "only change how the step is computed from the gradient.")),
    "lesson10.ex2": (
        N_("Exercise 2"),
        N_("Write the mean over 160 examples in terms of the two means over 80. Without any "
           "scale, the two backward passes add up to twice the full-batch gradient."),
        N_("The mean over 160 is (mean of half A + mean of half B) / 2, so each half gets "
           "0.5.")),
    "lesson10.ex3": (
        N_("Exercise 3"),
        N_("Per epoch, five things in this order: forward, loss, zero_grad(), backward(), "
           "step(); keep loss.item()."),
        N_("Forward, loss, zero_grad, backward, step: the same five lines train every "
           "PyTorch model, whatever its size.")),
}
