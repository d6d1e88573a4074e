"""The checks of Lesson 7 (switching tracking off): which lines are
recorded, clone against detach, and training the head of a model only.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, kit, near, numpy_rng, shape_words


def l07_ex1(flags):
    want = [False, True, False, False]
    if not isinstance(flags, (list, tuple)) or len(flags) != 4 or not all(
            isinstance(f, bool) for f in flags):
        return _("the answer should be a list of four True or False values")
    return None if list(flags) == want else _("the value is not right")


def l07_ex2(grads):
    return None if near(grads, [8.0, 4.0]) else shape_words(grads, (2,))


def l07_ex3(candidate):
    ak = kit()
    if not callable(candidate):
        return N_("train_head_only should be a function, defined with "
                  "def train_head_only(model, x)")
    rng = numpy_rng()
    for _trial in range(2):
        body = [[float(v) for v in row] for row in rng.uniform(-1.0, 1.0, (4, 3))]
        head = [float(v) for v in rng.uniform(-1.0, 1.0, 4)]
        x_in = ak.tensor([float(v) for v in rng.uniform(-2.0, 2.0, 3)])
        model = {"body": ak.tensor(body, requires_grad=True),
                 "head": ak.tensor(head, requires_grad=True)}
        ref = {"body": ak.tensor(body, requires_grad=True),
               "head": ak.tensor(head, requires_grad=True)}
        features = (ref["body"].detach() @ x_in).tanh()
        ((ref["head"] * features).sum() - 1).pow(2).backward()
        try:
            candidate(model, x_in)
        except RuntimeError as err:
            if "does not require grad and does not have a grad_fn" in str(err):
                return N_("backward found no graph at all (\"element 0 of tensors does not "
                          "require grad\"): the head was cut off too; leave the head's "
                          "computation recorded")
            if "leaf variables" in str(err):
                return N_("requires_grad_(False) works on leaves only: freeze model['body'] "
                          "itself, or detach() the features the body computes")
            raise
        b, h = model["body"], model["head"]
        if h.grad is None and b.grad is None:
            return N_("no weight has a .grad: train_head_only must call backward() on the loss")
        if b.grad is not None:
            return N_("model['body'].grad is filled, so the body would still train: turn its "
                      "requires_grad off, or detach() its output before the head uses it")
        if h.grad is None:
            return N_("model['head'].grad is None: the head must still receive its gradient")
        if not near(h.grad, ref["head"].grad, 1e-5):
            return N_("the head's gradient is not the one of the given loss: keep the forward "
                      "pass and the loss as they are, and only cut the body off")
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson07.ex1": (("my_flags",), ("list",), l07_ex1),
    "lesson07.ex2": (("my_grads",), ("numbers",), l07_ex2),
    "lesson07.ex3": (("train_head_only",), ("function",), l07_ex3),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson07.ex1": (
        N_("Exercise 1"),
        N_("For each line, find the innermost switch around it: that switch alone decides "
           "whether the line is recorded. r4 is computed after the enable_grad block has "
           "ended."),
        N_("Only r2 is recorded. r4 is computed from r2, which requires grad, but inside "
           "no_grad, so nothing is recorded for it.")),
    "lesson07.ex2": (
        N_("Exercise 2"),
        N_("A clone stays connected to a, so z is really a * a. A detached copy is a "
           "constant that happens to be worth 4, so z is 4a."),
        N_("With clone() z = a**2 and dz/da = 2a = 8; with detach().clone() b is a constant "
           "and dz/da = b = 4.")),
    "lesson07.ex3": (
        N_("Exercise 3"),
        N_("Either model['body'].requires_grad_(False) before the forward pass, or features "
           "= (model['body'] @ x).tanh().detach(): the cut goes between body and head."),
        N_("Only the head is connected to the loss through recorded operations, so only it "
           "gets a gradient; an optimizer given the head alone would train just the head.")),
}
