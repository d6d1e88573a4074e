"""The checks of Lesson 3 (backward and the chain rule): a gradient by hand,
pieces that accumulate, and a backward pass walked node by node (exercise 3,
tried on graphs of the check's own while every node call is counted).
"""
from __future__ import annotations

from ..i18n import _
from .common import N_, Counted, kit, near, num, numpy_rng


def l03_ex1(dL_dh, w_grad, x_grad):
    if not near(dL_dh, 5.0):
        if near(dL_dh, 6.0):
            return N_("dL/dh: you followed only the path through the square; h is also "
                      "subtracted directly")
        return N_("dL/dh is not right")
    if not near(w_grad, 7.5):
        return N_("dL/dh is right, but w.grad is not: one more link, times dh/dw = x")
    if not near(x_grad, 10.0):
        return N_("dL/dh is right, but x.grad is not: one more link, times dh/dx = w")
    return None


def l03_ex2(pieces, m_grad, k_grad):
    if not isinstance(pieces, (list, tuple)):
        return N_("the pieces should be a list, one number per path from m to N")
    if len(pieces) != 2:
        return _("you gave {n} piece(s): count the paths from m to N").format(n=len(pieces))
    try:
        mine = sorted(num(p) for p in pieces)
    except TypeError:
        return N_("the pieces are not right")
    if not near(mine, [-1.0, 0.25]):
        return N_("the pieces are not right")
    if not near(m_grad, -0.75):
        return N_("the pieces are right, but m.grad is not: think about what AccumulateGrad "
                  "does with the pieces it receives")
    if not near(k_grad, 4.0):
        return N_("k.grad is not right: k is used once, in k * m")
    return None


def l03_ex3(candidate):
    from collections import Counter
    ak = kit()
    from ..graph import Node
    if not callable(candidate):
        return N_("my_backward should be a function, defined with def my_backward(root)")
    rng = numpy_rng()

    def two_graphs(vals):
        w = ak.tensor(vals[0], requires_grad=True)
        x = ak.tensor(vals[1], requires_grad=True)
        h = w * x
        a = ak.tensor(vals[2:4], requires_grad=True)
        b = ak.tensor(vals[4:6], requires_grad=True)
        c = ak.tensor(vals[6:8])
        return [(h ** 2 - h, {"w": w, "x": x}),
                (((a * c).sin() + a * b * b).sum(), {"a": a, "b": b})]
    for _trial in range(2):
        vals = [float(v) for v in rng.uniform(0.3, 2.0, 8)]
        for (root, leaves), (ref_root, ref_leaves) in zip(two_graphs(vals), two_graphs(vals)):
            ref_root.backward()
            calls = Counter()
            original = Node.__call__

            def counted(node, *grads):  # (used before the loop moves on)
                calls[node] += 1  # noqa: B023
                return original(node, *grads)  # noqa: B023
            Node.__call__ = counted
            try:
                with Counted() as engine_runs:
                    candidate(root)
            except AttributeError as err:
                if "NoneType" in str(err):
                    return N_("it stopped at a None in next_functions: that entry is an input "
                              "that needs no gradient (a constant); skip it")
                raise
            finally:
                Node.__call__ = original
            for name, leaf in leaves.items():
                if leaf.grad is None:
                    return _("afterwards {name}.grad is still None: the walk must reach the "
                             "AccumulateGrad nodes and call them too (calling one adds into its "
                             "leaf's .grad)").format(name=name)
                if not near(leaf.grad, ref_leaves[name].grad, 1e-5):
                    return _("afterwards {name}.grad is not what backward() gives").format(
                        name=name)
            if not calls or engine_runs.runs:
                return N_("the gradients are right, but no node was called by hand: walk "
                          "next_functions and call each node yourself instead of calling "
                          "backward()")
            twice = [node.name().split("::")[-1] for node, n in calls.items() if n > 1]
            if twice:
                return _("the gradients are right, but a {node} node ran more than once: wait "
                         "until all of a node's gradients have arrived (its count reaches "
                         "zero), then run it once on their sum").format(node=twice[0])
    return None


#: name -> (answer names, kinds for the ready test, the test); merged into
#: :data:`.registry.EXERCISES`
EXERCISES = {
    "lesson03.ex1": (("my_dL_dh", "my_w_grad", "my_x_grad"),
                     ("number", "number", "number"), l03_ex1),
    "lesson03.ex2": (("my_m_pieces", "my_m_grad", "my_k_grad"),
                     ("numbers", "number", "number"), l03_ex2),
    "lesson03.ex3": (("my_backward",), ("function",), l03_ex3),
}

#: name -> (title, hint, why); merged into :data:`.registry.TEXT`
TEXT = {
    "lesson03.ex1": (
        N_("Exercise 1"),
        N_("Multiply the local derivatives along each path from L to h and add the paths; "
           "then multiply by the local derivative of h = w * x."),
        N_("dL/dh = 2h - 1 = 5 (6 through the square, -1 directly), so w.grad = 5 * 1.5 = "
           "7.5 and x.grad = 5 * 2 = 10.")),
    "lesson03.ex2": (
        N_("Exercise 2"),
        N_("One piece comes through the product (its local derivative by m is k), the other "
           "through the square root (1 / (2 sqrt(m)))."),
        N_("m receives k = -1 and 1 / (2 sqrt(m)) = 0.25, summed to -0.75; k.grad = m = 4.")),
    "lesson03.ex3": (
        N_("Exercise 3"),
        N_("Count first, then walk: every node waits for as many gradients as arrows lead "
           "into it; keep a sum per node, and call a node only when its count reaches zero."),
        N_("That loop is the heart of every reverse-mode engine: count, wait, run once on "
           "the sum, pass on. backward() does the same, plus hooks, retain_graph and "
           "freeing saved tensors.")),
}
