"""The checks of Appendix A (pictures of graphs), registered by :mod:`.registry`.

Exercise 2 asks how many saved tensors (orange boxes) the picture of a small
graph shows.

In exercise 1 the learner writes ``count_boxes(output)``: how many boxes
``make_dot(output)`` draws, found by walking the graph from ``output.grad_fn``
through ``next_functions`` instead of drawing it.  The picture has

* one box per backward node reached (``AccumulateGrad`` included), each once,
  however many paths lead to it;
* one more box per leaf that requires grad, beside its ``AccumulateGrad``;
* one box for ``output`` itself;

and nothing for a ``None`` in ``next_functions`` (an input that does not
require grad).

The right count is taken from the picture the kit would draw (the boxes of
:func:`autograd_kit.viz.model.build`), on graphs the check builds each time with
random sizes: a chain, a node two paths reach (a diamond), a leaf used twice, a
constant beside tracked inputs.  While the answer runs, the picture's builder is
watched: an answer that draws the picture and counts its boxes is told to walk
the graph instead.  What is wrong is said as a misconception (a shared node
counted once per path, the leaves or the output forgotten, a constant counted),
never as the code that would fix it.
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, numpy_rng, still_open
from .sentences import OPEN


def _graphs(rng) -> list:
    """Outputs of small graphs, each with a trap for a hasty walk."""
    from ..ops.creation import tensor

    def leaf(requires=True):
        return tensor(float(rng.uniform(0.5, 1.5)), requires_grad=requires)
    a, b, c, k = leaf(), leaf(), leaf(), leaf(False)
    chain = a
    for _link in range(int(rng.integers(2, 5))):
        chain = (chain * k).tanh()
    shared = a * b                                   # reached by two paths
    diamond = shared.sin() + shared.cos() * int(rng.integers(2, 4))
    twice = a * a + b                                # one AccumulateGrad, two arrows
    mixed = ((a * k).exp() + (b - c) * k).sum() * (c + 1.0)
    return [chain, diamond, twice, mixed]


def _drawn(output) -> int:
    """The boxes of the picture the kit draws for ``output``."""
    from ..viz import model
    return len(model.build([output], model.Options()).nodes)


def _edges(fn) -> list:
    return [nxt for nxt, _nr in getattr(fn, "next_functions", ())]


def _counts(output) -> dict:
    """What walks of the graph find: the distinct nodes and leaves (AccumulateGrad
    nodes) and their None edges, and the boxes of a walk that counts a node (and
    its leaf) once per path that reaches it."""
    seen, per_path, todo = {}, 0, [output.grad_fn]
    while todo:                                      # every path (the graphs are small)
        fn = todo.pop()
        per_path += 1 + hasattr(fn, "variable")
        seen[id(fn)] = fn
        todo.extend(nxt for nxt in _edges(fn) if nxt is not None)
    distinct = list(seen.values())
    return {"nodes": len(distinct), "per_path": per_path + 1,
            "leaves": sum(1 for fn in distinct if hasattr(fn, "variable")),
            "nones": sum(1 for fn in distinct for nxt in _edges(fn) if nxt is None)}


class _PictureWatched:
    """``with _PictureWatched() as watch:`` counts the boxes the picture's builder
    adds inside (``watch.boxes``)."""

    def __enter__(self):
        from ..viz import model
        self.owner, self.original, self.boxes = model._Builder, model._Builder.add, 0

        def counted(builder, *args, **kwargs):
            self.boxes += 1
            return self.original(builder, *args, **kwargs)
        self.owner.add = counted
        return self

    def __exit__(self, *exc) -> bool:
        self.owner.add = self.original
        return False


def _whole_number(value):
    if isinstance(value, bool):
        return None
    if type(value) is int or (type(value) is float and value.is_integer()):
        return int(value)
    return None


#: each misconception, and whether a count fits it: (count, right count, what walks find)
_MISTAKES = [
    (N_("a node that two paths reach is counted once per path, but the picture draws each "
        "node once: remember the nodes already counted"),
     lambda got, want, c: got == c["per_path"]),
    (N_("the leaves are missing: a leaf that requires grad has a box of its own, beside its "
        "AccumulateGrad node"),
     lambda got, want, c: got == want - c["leaves"]),
    (N_("one box short: the output tensor is a box of its own"),
     lambda got, want, c: got == want - 1),
    (N_("the leaves and the output are missing: each is a box of its own"),
     lambda got, want, c: got == want - c["leaves"] - 1),
    (N_("a None in next_functions is counted, but it stands for an input that does not "
        "require grad, and the picture draws nothing for it"),
     lambda got, want, c: got == want + c["nones"]),
]


def _problem(wrong: list) -> str:
    """The misconception that every wrong count fits, given ``(count, right count,
    what walks find)`` for each graph counted wrong."""
    for sentence, fits in _MISTAKES:
        if all(fits(got, want, c) for got, want, c in wrong):
            return sentence
    return N_("for some graphs the count is not the number of boxes the picture draws")


def la_ex1(count_boxes) -> str | None:
    if not callable(count_boxes):
        return N_("count_boxes should be a function, defined with def count_boxes(output)")
    if still_open(count_boxes):
        return OPEN
    wrong = []
    for output in _graphs(numpy_rng()):
        watch = _PictureWatched()
        try:
            with watch:
                got = count_boxes(output)
        except Exception as err:
            return _("calling count_boxes raised {error}").format(
                error=f"{type(err).__name__}: {err}")
        if watch.boxes:
            return N_("count_boxes drew the picture to count its boxes; here the count comes "
                      "from walking the graph itself, through next_functions")
        number = _whole_number(got)
        if number is None:
            return N_("count_boxes should return a whole number")
        want = _drawn(output)
        if number != want:
            wrong.append((number, want, _counts(output)))
    return _problem(wrong) if wrong else None


def _is_int(value, want) -> bool:
    return type(value) is int and value == want or (type(value) is float and value == want)


def la_ex2(count):
    return None if _is_int(count, 2) else _("the value is not right")


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lessonA.ex1": (("count_boxes",), ("function",), la_ex1),
    "lessonA.ex2": (("my_saved_count",), ("number",), la_ex2),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lessonA.ex1": (
        N_("Exercise 1 (count the boxes)"),
        N_("keep a list of nodes to visit and a set of the ones already seen; start from "
           "output.grad_fn; for each node, follow its next_functions (skipping None), and "
           "count an extra box for a node that has a .variable, the leaf it stands for."),
        N_("The same walk, with a box drawn where you counted, is what make_dot does: the "
           "picture is the graph that backward() would run, node by node.")),
    "lessonA.ex2": (
        N_("Exercise 2"),
        N_("exp keeps one value; addition keeps none. The product gain * level only needs "
           "to send a gradient to gain: which of its two inputs does that gradient need?"),
        N_("ExpBackward0 keeps its result, MulBackward0 keeps level (for gain's gradient), "
           "AddBackward0 keeps nothing.")),
}
