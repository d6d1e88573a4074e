"""PyTorch 2's autograd contract: hooks, ``autograd.grad``'s arguments, retained
gradients, views, ``detach_``, saved tensors and what backward frees.

Each snippet is a function ``case(torch)``; next to it stands the outcome
PyTorch 2 gives (values with their dtypes, or the built-in exception class and
the message), worked out from the documentation and checked on PyTorch itself.
The kit is held to it everywhere; where PyTorch is installed, PyTorch is held to
it too, so the expectations cannot drift from the truth.

Inference mode is in ``test_fidelity_pt2_inference.py``; custom Functions,
gradcheck and ``autograd.functional`` in ``test_fidelity_pt2_function.py``.
"""
from __future__ import annotations

import gc
import warnings
import weakref

import pytest

import autograd_kit as ak
from fidelity import expected_outcomes

F32, F64 = "float32", "float64"


def _x(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


# -- post-accumulate-grad hooks -------------------------------------------------------
def post_accumulate_hook_after_the_tensor_hooks(lib):
    log = []
    x = _x(lib)
    x.register_hook(lambda g: log.append(("pre", g.tolist())))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post", t is x, t.grad.tolist())))
    x.register_hook(lambda g: log.append(("pre2", g.tolist())) or g * 2)
    (x * 3).sum().backward()
    return log, x.grad


def post_accumulate_hook_on_a_non_leaf(lib):
    y = _x(lib) * 2
    y.register_post_accumulate_grad_hook(lambda t: None)


def post_accumulate_hook_without_grad(lib):
    lib.tensor([1.0, 2.0]).register_post_accumulate_grad_hook(lambda t: None)


def post_accumulate_hook_returning_a_value(lib):
    x = _x(lib)
    x.register_post_accumulate_grad_hook(lambda t: t * 0)
    (x * 3).sum().backward()


def post_accumulate_hook_removed(lib):
    log = []
    x = _x(lib)
    handle = x.register_post_accumulate_grad_hook(lambda t: log.append(1))
    (x * 3).sum().backward()
    handle.remove()
    (x * 3).sum().backward()
    return log, x.grad


def post_accumulate_hook_not_run_by_grad(lib):
    log = []
    x = _x(lib)
    x.register_post_accumulate_grad_hook(lambda t: log.append(1))
    lib.autograd.grad((x * 3).sum(), x)
    return log, x.grad


def post_accumulate_hook_clears_grad(lib):
    """The optimizer-in-backward pattern: step, then let go of .grad."""
    x = _x(lib)

    def step(t):
        with lib.no_grad():
            t.sub_(t.grad)
        t.grad = None
    x.register_post_accumulate_grad_hook(step)
    (x * 3).sum().backward()
    return x.grad, x.detach()


def post_accumulate_hook_sees_the_summed_gradient(lib):
    log = []
    x = _x(lib)
    x.register_post_accumulate_grad_hook(lambda t: log.append(t.grad.tolist()))
    ((x * 2) + (x * 3)).sum().backward()
    return log


def post_accumulate_hook_under_create_graph(lib):
    log = []
    x = _x(lib)
    x.register_post_accumulate_grad_hook(lambda t: log.append(t.grad.requires_grad))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x ** 2).sum().backward(create_graph=True)
    x.grad = None
    return log


def post_accumulate_hook_with_inputs(lib):
    log = []
    x, w = _x(lib), _x(lib)
    x.register_post_accumulate_grad_hook(lambda t: log.append("x"))
    w.register_post_accumulate_grad_hook(lambda t: log.append("w"))
    (x * w).sum().backward(inputs=[x])
    return log


# -- hook order around the graph ------------------------------------------------------
def hook_order_at_a_non_leaf(lib):
    log = []
    x = _x(lib)
    y = x * 2
    z = y * 3
    y.register_hook(lambda g: log.append("tensor"))
    y.grad_fn.register_prehook(lambda go: log.append("node pre-hook"))
    y.grad_fn.register_hook(lambda gi, go: log.append("node post-hook"))
    y.retain_grad()
    z.grad_fn.register_hook(lambda gi, go: log.append("later node post-hook"))
    z.sum().backward()
    return log


def retain_grad_after_every_tensor_hook(lib):
    log = []
    y = _x(lib) * 2
    y.register_hook(lambda g: log.append(("h1", g.tolist())) or g * 2)
    y.retain_grad()
    y.register_hook(lambda g: log.append(("h2", g.tolist())) or g * 3)
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.sum().backward()
    return log, y.grad


def hook_order_around_accumulate_grad(lib):
    log = []
    x = _x(lib)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append("node pre-hook"))
    acc.register_hook(lambda gi, go: log.append("node post-hook"))
    x.register_hook(lambda g: log.append("tensor hook"))
    x.register_post_accumulate_grad_hook(lambda t: log.append("post-accumulate hook"))
    y.sum().backward()
    return log


def hooks_around_accumulate_grad_change_the_gradient(lib):
    log = []
    x = _x(lib)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("node pre", go[0].tolist())) or (go[0] * 10,))
    acc.register_hook(lambda gi, go: log.append(("node post", gi, go[0].tolist())))
    x.register_hook(lambda g: log.append(("tensor", g.tolist())) or g + 1)
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post acc", t.grad.tolist())))
    y.sum().backward()
    return log, x.grad


def two_leaves_accumulate_in_input_order(lib):
    log = []
    x, w = _x(lib), _x(lib)
    x.register_post_accumulate_grad_hook(lambda t: log.append("x"))
    w.register_post_accumulate_grad_hook(lambda t: log.append("w"))
    (x * w).sum().backward()
    return log


def grad_runs_only_what_leads_to_its_inputs(lib):
    log = []
    x, w = _x(lib), _x(lib)
    a, b = x * 2, w * 3
    a.register_hook(lambda g: log.append("a"))
    b.register_hook(lambda g: log.append("b"))
    b.grad_fn.register_prehook(lambda go: log.append("b pre-hook"))
    b.grad_fn.register_hook(lambda gi, go: log.append("b post-hook"))
    w.register_hook(lambda g: log.append("w"))
    lib.autograd.grad((a + b).sum(), x)
    return log, w.grad


def grad_runs_a_leaf_input_tensor_hooks_only(lib):
    log = []
    x = _x(lib)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append("node pre-hook"))
    acc.register_hook(lambda gi, go: log.append("node post-hook"))
    x.register_hook(lambda g: log.append("tensor hook") or g * 2)
    return log, lib.autograd.grad(y.sum(), x), log


def grad_does_not_run_a_non_leaf_input_node(lib):
    log = []
    y = _x(lib) * 2
    z = y * 3
    y.register_hook(lambda g: log.append("tensor hook") or g * 2)
    y.grad_fn.register_prehook(lambda go: log.append("node pre-hook"))
    y.grad_fn.register_hook(lambda gi, go: log.append("node post-hook"))
    return lib.autograd.grad(z.sum(), y), log


def grad_runs_an_input_node_needed_for_another_input(lib):
    log = []
    x = _x(lib)
    y = x * 2
    z = y * 3
    y.register_hook(lambda g: log.append("tensor hook"))
    y.grad_fn.register_prehook(lambda go: log.append("node pre-hook"))
    y.grad_fn.register_hook(lambda gi, go: log.append("node post-hook"))
    y.retain_grad()
    return lib.autograd.grad(z.sum(), [y, x]), log, y.grad


def grad_retains_the_gradient_of_a_non_leaf_input(lib):
    y = _x(lib) * 2
    y.retain_grad()
    return lib.autograd.grad((y * 3).sum(), y), y.grad


def backward_inputs_runs_only_what_it_needs(lib):
    log = []
    x, w = _x(lib), _x(lib)
    b = w * 3
    b.register_hook(lambda g: log.append("b"))
    w.register_hook(lambda g: log.append("w"))
    (x * 2 + b).sum().backward(inputs=[x])
    return log, x.grad, w.grad


# -- autograd.grad and backward: their arguments --------------------------------------
def grad_materializes_unused_inputs(lib):
    x, z = _x(lib), _x(lib)
    return lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)


def grad_materialize_refuses_allow_unused_false(lib):
    x, z = _x(lib), _x(lib)
    return lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True, allow_unused=False)


def grad_materialize_with_allow_unused(lib):
    x, z = _x(lib), _x(lib)
    return lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True, allow_unused=True)


def grad_materialized_zeros_under_create_graph(lib):
    x, z = _x(lib), _x(lib)
    g = lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True, create_graph=True)
    return [(t.requires_grad, t.grad_fn is None, t.is_leaf) for t in g]


def grad_materialized_zeros_keep_the_dtype(lib):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    z = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    return lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)


def grad_materializes_an_unreached_non_leaf(lib):
    x = _x(lib)
    return lib.autograd.grad((x * 2).sum(), [x * 3], materialize_grads=True)


def grad_unused_input(lib):
    x, z = _x(lib), _x(lib)
    return lib.autograd.grad((x * 2).sum(), [x, z])


def grad_unused_input_allowed(lib):
    x, z = _x(lib), _x(lib)
    return lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)


def grad_of_nothing(lib):
    return lib.autograd.grad((_x(lib) * 2).sum(), [])


def grad_inputs_as_a_dict(lib):
    x, z = _x(lib), _x(lib)
    g = lib.autograd.grad((x * z * 2).sum(), {"x": x, "z": z})
    return type(g).__name__, sorted(g), g["x"], g["z"]


def grad_only_inputs_false_warns(lib):
    x = _x(lib)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        g = lib.autograd.grad((x * 2).sum(), x, only_inputs=False)
    return g, [(w.category.__name__, str(w.message)) for w in seen]


def grad_is_grads_batched_false(lib):
    x = _x(lib)
    return lib.autograd.grad((x * 2).sum(), x, is_grads_batched=False)


def backward_with_empty_inputs(lib):
    (_x(lib) * 2).sum().backward(inputs=[])


def autograd_backward_with_empty_inputs(lib):
    lib.autograd.backward((_x(lib) * 2).sum(), inputs=())


def backward_inputs_that_do_not_require_grad(lib):
    (_x(lib) * 2).sum().backward(inputs=[lib.ones(2)])


def backward_inputs_one_tensor(lib):
    x, z = _x(lib), _x(lib)
    (x * z).sum().backward(inputs=x)
    return x.grad, z.grad


# -- retain_grad through in-place changes and views ------------------------------------
def retain_grad_then_changed_in_place(lib):
    x = _x(lib)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * 5).sum().backward()
    return y.grad, y.retains_grad, y.grad_fn.name(), x.grad


def retain_grad_after_the_change(lib):
    x = _x(lib)
    y = x * 2
    y.mul_(3)
    y.retain_grad()
    (y * 5).sum().backward()
    return y.grad, x.grad


def retain_grad_on_a_view(lib):
    y = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) * 1
    v = y[0]
    v.retain_grad()
    (v * 3).sum().backward()
    return v.grad, v.retains_grad


def retain_grad_on_a_view_whose_base_changes(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y[0]
    v.retain_grad()
    y.mul_(2)
    (v * 3).sum().backward()
    return v.grad, v.retains_grad, v.grad_fn.name(), x.grad


def retain_grad_on_a_view_changed_in_place(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y[0]
    v.retain_grad()
    v.mul_(2)
    (y * 3).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the .grad of a non-leaf that got none)
        return v.grad, v.retains_grad, x.grad


def retain_grad_on_a_base_whose_view_changes(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    y.retain_grad()
    y[0].mul_(2)
    (y * 3).sum().backward()
    return y.grad, y.retains_grad, x.grad


# -- views: _base, _is_view, in-place rules --------------------------------------------
def base_of_views(lib):
    x = lib.arange(6.0)
    v = x[:2]
    t = x.reshape(2, 3).t()
    d = x.detach()
    return (v._base is x, v[1:]._base is x, x.reshape(2, 3)._base is x, t._base is x,
            t.contiguous()._base is x, x._base, d._base, v._is_view(), t._is_view(),
            x._is_view(), t.contiguous()._is_view(), d._is_view())


def base_of_views_of_a_non_leaf(lib):
    y = lib.arange(6.0).requires_grad_() * 2
    return (y[:2]._base is y, y.unbind(0)[0]._base is y, y.expand(2, 6)._base is y,
            y.view(-1)._base is y, y._base, y.data._base, y.detach()._base)


def base_of_other_views(lib):
    x = lib.arange(6.0)
    return (x.view_as(x)._base is x, x[...]._base is x, x.unsqueeze(0)._base is x,
            x.narrow(0, 1, 2)._base is x, x.select(0, 1)._base is x, x.permute(0)._base is x,
            x[lib.tensor([0, 1])]._base, x.split(2)[1]._base is x)


def view_of_an_unbind_piece_changed_in_place(lib):
    a, b = (lib.arange(6.0).reshape(2, 3).requires_grad_() * 1).unbind()
    a[:2].mul_(2)


def view_of_a_split_piece_changed_in_place(lib):
    a, b = (lib.arange(6.0).requires_grad_() * 1).split(3)
    a.view(3).mul_(2)


def view_of_a_chunk_piece_changed_without_grad(lib):
    x = lib.arange(6.0).requires_grad_()
    a, b = (x * 1).chunk(2)
    with lib.no_grad():
        a[1:].mul_(2)
    return x


def view_made_in_no_grad_changed_with_grad(lib):
    y = lib.arange(6.0).requires_grad_() * 1
    with lib.no_grad():
        v = y[:2]
    v.mul_(2)


def view_of_a_view_made_in_no_grad_changed_with_grad(lib):
    y = lib.arange(6.0).requires_grad_() * 1
    with lib.no_grad():
        v = y[:4]
    v[:2].mul_(2)


def view_made_in_no_grad_changed_when_nothing_requires_grad(lib):
    x = lib.arange(6.0)
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)
    return x


def view_made_in_no_grad_changed_by_an_operand_that_requires_grad(lib):
    x = lib.arange(6.0)
    with lib.no_grad():
        v = x[:2]
    v.mul_(lib.ones(2, requires_grad=True))


# -- detach_ ----------------------------------------------------------------------------
def detach_in_place_on_a_view(lib):
    (lib.arange(6.0).requires_grad_() * 1)[:2].detach_()


def detach_in_place_on_a_view_of_a_leaf(lib):
    lib.arange(6.0).requires_grad_()[:2].detach_()


def detach_in_place_on_a_view_without_grad(lib):
    lib.arange(6.0)[:2].detach_()


def detach_in_place_of_a_saved_tensor(lib):
    x = lib.arange(1.0, 4.0).requires_grad_()
    y = x * 2
    z = y * y
    y.detach_()
    z.sum().backward()


def detach_in_place_of_a_saved_leaf(lib):
    x = lib.arange(1.0, 4.0).requires_grad_()
    z = x * x
    x.detach_()
    z.sum().backward()
    return x.grad, x.requires_grad


def leaf_stops_requiring_grad_after_the_graph_was_built(lib):
    x, w = _x(lib), _x(lib)
    y = (x * w).sum()
    x.requires_grad_(False)
    w.requires_grad = False
    y.backward()
    return x.grad, w.grad


def detach_in_place_keeps_the_version(lib):
    y = lib.arange(1.0, 4.0).requires_grad_() * 2
    y.detach_()
    return y._version, y.is_leaf, y.requires_grad


def detach_in_place_of_a_base_with_views(lib):
    y = lib.arange(1.0, 4.0).requires_grad_() * 2
    v = y[:2]
    y.detach_()
    return v.requires_grad, v.grad_fn.name()


def saved_after_detach_in_place(lib):
    x = lib.arange(1.0, 4.0).requires_grad_()
    y = x * 2
    y.detach_()
    w = lib.ones(3, requires_grad=True)
    (w * y).sum().backward()
    return w.grad


# -- saved tensors: hooks and raw access -------------------------------------------------
def saved_tensors_hooks_cleaned_up_after_an_error(lib):
    x = _x(lib)
    try:
        with lib.autograd.graph.saved_tensors_hooks(lambda t: 1 / 0, lambda t: t):
            x * x
    except ZeroDivisionError:
        pass
    return (x * x).grad_fn._saved_self


def saved_tensors_hooks_cleaned_up_after_an_error_in_the_block(lib):
    x = _x(lib)
    try:
        with lib.autograd.graph.saved_tensors_hooks(lambda t: None, lambda t: None):
            raise ValueError("boom")
    except ValueError:
        pass
    return (x * x).grad_fn._saved_self


def nested_saved_tensors_hooks(lib):
    log = []
    x = _x(lib)
    hooks = lib.autograd.graph.saved_tensors_hooks
    with hooks(lambda t: log.append("outer") or t, lambda t: t):
        with hooks(lambda t: log.append("inner") or t, lambda t: t):
            x * x
        x.exp()
    return log


def raw_saved_tensor_hooks(lib):
    x = _x(lib)
    y = x * x
    log = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: log.append("pack") or t * 10,
                                             lambda t: log.append("unpack") or t)
    seen = y.grad_fn._saved_self
    y.sum().backward()
    return log, seen, x.grad


def raw_saved_tensor_hooks_twice(lib):
    y = _x(lib) * _x(lib)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def raw_saved_tensor_hooks_after_free(lib):
    y = _x(lib) * _x(lib)
    raw = y.grad_fn._raw_saved_self
    y.sum().backward()
    raw.register_hooks(lambda t: t, lambda t: t)


def raw_saved_tensor_unpack_hook_must_give_a_tensor(lib):
    y = _x(lib) * _x(lib)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 3)
    y.sum().backward()


def raw_saved_tensor_after_saved_tensors_hooks(lib):
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = _x(lib) * _x(lib)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def raw_saved_names(lib):
    y = _x(lib) * 2
    return ([n for n in dir(y.grad_fn) if n.startswith("_raw_saved")],
            type(y.grad_fn._raw_saved_other).__name__)


# -- reentrant backward ------------------------------------------------------------------
def _reentrant(lib):
    def forward(ctx, x, depth):
        ctx.depth = depth
        return x * 1

    def backward(ctx, g):
        if ctx.depth > 0:
            with lib.enable_grad():
                leaf = lib.ones(1, requires_grad=True)
                Reentrant.apply(leaf, ctx.depth - 1).sum().backward()
        return g * 2, None
    Reentrant = type("Reentrant", (lib.autograd.Function,),
                     {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    return Reentrant


def reentrant_backward(lib):
    x = lib.tensor([1.0], requires_grad=True)
    _reentrant(lib).apply(x, 1).sum().backward()
    return x.grad


def deeply_reentrant_backward(lib):
    x = lib.tensor([1.0], requires_grad=True)
    _reentrant(lib).apply(x, 200).sum().backward()  # (past any recursion limit)
    return x.grad


def reentrant_grad_in_backward(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with lib.enable_grad():
            xd = x.detach().requires_grad_()
            (gx,) = lib.autograd.grad((xd ** 3).sum(), xd)
        return g * gx
    Inner = type("Inner", (lib.autograd.Function,),
                 {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    x = _x(lib)
    Inner.apply(x).sum().backward()
    return x.grad


# -- what backward and dropped outputs free ------------------------------------------------
def _function(lib, saves_output=False):
    def forward(ctx, x):
        mid = x * 3
        out = x * 2
        ctx.save_for_backward(out if saves_output else mid)
        return out
    return type("Keep", (lib.autograd.Function,), {"forward": staticmethod(forward),
                                                   "backward": staticmethod(lambda ctx, g: g * 2)})


def saved_intermediate_freed_by_backward(lib):
    x = _x(lib)
    y = x.exp()
    z = y * y
    ref = weakref.ref(y)
    del y
    gc.collect()
    alive = ref() is not None
    z.sum().backward()
    return alive, ref() is None


def function_node_freed_with_its_output(lib):
    y = _function(lib).apply(_x(lib))
    ref = weakref.ref(y.grad_fn)
    del y
    return ref() is None  # (no collection needed: no reference cycle)


def function_saving_its_output_freed_with_it(lib):
    y = _function(lib, saves_output=True).apply(_x(lib))
    node, out = weakref.ref(y.grad_fn), weakref.ref(y)
    del y
    return node() is None, out() is None


def function_saved_tensors_freed_by_backward(lib):
    y = _function(lib).apply(_x(lib))
    ref = weakref.ref(y.grad_fn.saved_tensors[0])
    y.sum().backward()
    return ref() is None


def hook_closing_over_its_tensor_is_collected(lib):
    y = _x(lib) * 2
    y.register_hook(lambda g: y)  # a cycle: y, its node, the hook, y
    ref = weakref.ref(y)
    del y
    gc.collect()
    return ref() is None


def retained_tensor_freed_with_its_graph_alive(lib):
    y = _x(lib) * 2
    y.retain_grad()
    ref = weakref.ref(y)
    z = y.sum()
    del y
    return ref() is None, z.requires_grad


# -- the table -----------------------------------------------------------------------------
HOOK_ALREADY = ("Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time.")
VIEW_WHY = ("Given that this use case is ambiguous and error-prone, it is forbidden. You can "
            "clarify your code by moving both the view and the inplace either both inside the "
            "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
            "want the inplace to be tracked).")
MULTI = ("is a view and is being modified inplace. This view is the output of a function that "
         "returns multiple views. Such functions do not allow the output views to be modified "
         "inplace. You should replace the inplace operation by an out-of-place one.")
DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.")
NO_GRAD_VIEW = ("A view was created in no_grad mode and is being modified inplace with grad "
                "mode enabled. " + VIEW_WHY)

CASES = [
    (post_accumulate_hook_after_the_tensor_hooks,
     ("ok", ([("pre", [3.0, 3.0]), ("pre2", [3.0, 3.0]), ("post", True, [6.0, 6.0])],
             ([6.0, 6.0], F32)))),
    (post_accumulate_hook_on_a_non_leaf,
     ("error", "RuntimeError",
      "post accumulate grad hooks cannot be registered on non-leaf tensors")),
    (post_accumulate_hook_without_grad,
     ("error", "RuntimeError",
      "cannot register a hook on a tensor that doesn't require gradient")),
    (post_accumulate_hook_returning_a_value,
     ("error", "RuntimeError", "Tensor post accumulate grad hooks should return None.")),
    (post_accumulate_hook_removed, ("ok", ([1], ([6.0, 6.0], F32)))),
    (post_accumulate_hook_not_run_by_grad, ("ok", ([], None))),
    (post_accumulate_hook_clears_grad, ("ok", (None, ([-2.0, -1.0], F32)))),
    (post_accumulate_hook_sees_the_summed_gradient, ("ok", [[5.0, 5.0]])),
    (post_accumulate_hook_under_create_graph, ("ok", [True])),
    (post_accumulate_hook_with_inputs, ("ok", ["x"])),
    (hook_order_at_a_non_leaf,
     ("ok", ["later node post-hook", "tensor", "node pre-hook", "node post-hook"])),
    (retain_grad_after_every_tensor_hook,
     ("ok", ([("h1", [1.0, 1.0]), ("h2", [2.0, 2.0]), ("pre", [6.0, 6.0])],
             ([6.0, 6.0], F32)))),
    (grad_runs_only_what_leads_to_its_inputs, ("ok", (["a"], None))),
    (backward_inputs_runs_only_what_it_needs, ("ok", ([], ([2.0, 2.0], F32), None))),
    (grad_runs_an_input_node_needed_for_another_input,
     ("ok", ((([3.0, 3.0], F32), ([6.0, 6.0], F32)),
             ["tensor hook", "node pre-hook", "node post-hook"], ([3.0, 3.0], F32)))),
    (grad_retains_the_gradient_of_a_non_leaf_input, ("ok", ((([3.0, 3.0], F32),),
                                                            ([3.0, 3.0], F32)))),
    (grad_materializes_unused_inputs, ("ok", (([2.0, 2.0], F32), ([0.0, 0.0], F32)))),
    (grad_materialize_refuses_allow_unused_false,
     ("error", "ValueError", "Expected allow_unused to be True or not passed when "
      "materialize_grads=True, but got: allow_unused=False.")),
    (grad_materialize_with_allow_unused, ("ok", (([2.0, 2.0], F32), ([0.0, 0.0], F32)))),
    (grad_materialized_zeros_under_create_graph, ("ok", [(False, True, True), (True, True, True)])),
    (grad_materialized_zeros_keep_the_dtype, ("ok", (([2.0, 2.0], F64), ([0.0, 0.0], F64)))),
    (grad_materializes_an_unreached_non_leaf, ("ok", (([0.0, 0.0], F32),))),
    (grad_unused_input,
     ("error", "RuntimeError", "The differentiated Tensor at index 1 appears to not have been "
      "used in the graph. Set allow_unused=True if this is the desired behavior.")),
    (grad_unused_input_allowed, ("ok", (([2.0, 2.0], F32), None))),
    (grad_of_nothing, ("error", "RuntimeError", "`inputs` argument to `grad()` cannot be empty.")),
    (grad_inputs_as_a_dict, ("ok", ("dict", ["x", "z"], ([2.0, 4.0], F32), ([2.0, 4.0], F32)))),
    (grad_only_inputs_false_warns,
     ("ok", ((([2.0, 2.0], F32),),
             [("FutureWarning", "only_inputs argument is deprecated and is ignored now "
               "(defaults to True). To accumulate gradient for other parts of the graph, "
               "please use torch.autograd.backward.")]))),
    (grad_is_grads_batched_false, ("ok", (([2.0, 2.0], F32),))),
    (backward_with_empty_inputs,
     ("error", "RuntimeError", "`inputs` argument to `backward()` cannot be empty.")),
    (autograd_backward_with_empty_inputs,
     ("error", "RuntimeError", "`inputs` argument to `backward()` cannot be empty.")),
    (backward_inputs_that_do_not_require_grad,
     ("error", "RuntimeError", "can't retain_grad on Tensor that has requires_grad=False")),
    (backward_inputs_one_tensor, ("ok", (([1.0, 2.0], F32), None))),
    (retain_grad_then_changed_in_place,
     ("ok", (([5.0, 5.0], F32), True, "MulBackward0", ([30.0, 30.0], F32)))),
    (retain_grad_after_the_change, ("ok", (([5.0, 5.0], F32), ([30.0, 30.0], F32)))),
    (retain_grad_on_a_view, ("ok", (([3.0, 3.0], F32), True))),
    (retain_grad_on_a_view_whose_base_changes,
     ("ok", (([3.0, 3.0], F32), True, "AsStridedBackward0", ([[6.0, 6.0], [0.0, 0.0]], F32)))),
    (retain_grad_on_a_view_changed_in_place,
     ("ok", (None, True, ([[6.0, 6.0], [3.0, 3.0]], F32)))),
    (retain_grad_on_a_base_whose_view_changes,
     ("ok", (([[3.0, 3.0], [3.0, 3.0]], F32), True, ([[6.0, 6.0], [3.0, 3.0]], F32)))),
    (base_of_views,
     ("ok", (True, True, True, True, False, None, None, True, True, False, False, False))),
    (base_of_views_of_a_non_leaf, ("ok", (True, True, True, True, None, None, None))),
    (base_of_other_views, ("ok", (True, True, True, True, True, True, None, True))),
    (view_of_an_unbind_piece_changed_in_place, ("error", "RuntimeError", "Output 0 of Slice "
                                                + MULTI)),
    (view_of_a_split_piece_changed_in_place, ("error", "RuntimeError", "Output 0 of View "
                                              + MULTI)),
    (view_of_a_chunk_piece_changed_without_grad,
     ("ok", ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], F32))),
    (view_made_in_no_grad_changed_with_grad, ("error", "RuntimeError", NO_GRAD_VIEW)),
    (view_of_a_view_made_in_no_grad_changed_with_grad,
     ("error", "RuntimeError", "Output 0 of Slice is a view of a view which was created in "
      "no_grad mode and is being modified inplace with grad mode enabled. " + VIEW_WHY)),
    (view_made_in_no_grad_changed_when_nothing_requires_grad,
     ("ok", ([0.0, 2.0, 2.0, 3.0, 4.0, 5.0], F32))),
    (view_made_in_no_grad_changed_by_an_operand_that_requires_grad,
     ("error", "RuntimeError", NO_GRAD_VIEW)),
    (detach_in_place_on_a_view, ("error", "RuntimeError", DETACH_VIEW)),
    (detach_in_place_on_a_view_of_a_leaf, ("error", "RuntimeError", DETACH_VIEW)),
    (detach_in_place_on_a_view_without_grad, ("error", "RuntimeError", DETACH_VIEW)),
    (detach_in_place_of_a_saved_tensor,
     ("error", "RuntimeError", "Trying to use a saved tensor that has been detached in-place, "
      "i.e. with .detach_().This is not supported, please use out-of-place `.detach()` "
      "instead")),
    (detach_in_place_of_a_saved_leaf, ("ok", (None, False))),
    (detach_in_place_keeps_the_version, ("ok", (0, True, False))),
    (leaf_stops_requiring_grad_after_the_graph_was_built, ("ok", (None, None))),
    (detach_in_place_of_a_base_with_views, ("ok", (True, "SliceBackward0"))),
    (saved_after_detach_in_place, ("ok", ([2.0, 4.0, 6.0], F32))),
    (saved_tensors_hooks_cleaned_up_after_an_error, ("ok", ([1.0, 2.0], F32))),
    (saved_tensors_hooks_cleaned_up_after_an_error_in_the_block, ("ok", ([1.0, 2.0], F32))),
    (nested_saved_tensors_hooks, ("ok", ["inner", "inner", "outer"])),
    (raw_saved_tensor_hooks,
     ("ok", (["pack", "unpack", "unpack"], ([10.0, 20.0], F32), ([11.0, 22.0], F32)))),
    (raw_saved_tensor_hooks_twice, ("error", "RuntimeError", HOOK_ALREADY)),
    (raw_saved_tensor_hooks_after_free,
     ("error", "RuntimeError", "Calling register_hooks on a saved tensor after it has been "
      "freed. Saved intermediate values of the graph are freed when you call .backward() or "
      "autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
      "a second time or if you need to access saved variables after calling backward.")),
    (raw_saved_tensor_unpack_hook_must_give_a_tensor,
     ("error", "TypeError", "Output of saved tensor unpack_hook expected to be a Tensor but got "
      "result of type int")),
    (raw_saved_tensor_after_saved_tensors_hooks, ("error", "RuntimeError", HOOK_ALREADY)),
    (raw_saved_names, ("ok", (["_raw_saved_other", "_raw_saved_self"], "SavedTensor"))),
    (reentrant_backward, ("ok", ([2.0], F32))),
    (deeply_reentrant_backward, ("ok", ([2.0], F32))),
    (reentrant_grad_in_backward, ("ok", ([3.0, 12.0], F32))),
    (saved_intermediate_freed_by_backward, ("ok", (True, True))),
    (function_node_freed_with_its_output, ("ok", True)),
    (function_saving_its_output_freed_with_it, ("ok", (True, True))),
    (function_saved_tensors_freed_by_backward, ("ok", True)),
    (hook_closing_over_its_tensor_is_collected, ("ok", True)),
    (retained_tensor_freed_with_its_graph_alive, ("ok", (True, True))),
    # hook order around AccumulateGrad, and what autograd.grad runs at its inputs
    (hook_order_around_accumulate_grad,
     ("ok", ["tensor hook", "node pre-hook", "post-accumulate hook", "node post-hook"])),
    (hooks_around_accumulate_grad_change_the_gradient,
     ("ok", ([("tensor", [2.0, 2.0]), ("node pre", [3.0, 3.0]), ("post acc", [30.0, 30.0]),
              ("node post", (), [30.0, 30.0])], ([30.0, 30.0], F32)))),
    (two_leaves_accumulate_in_input_order, ("ok", ["x", "w"])),
    (grad_runs_a_leaf_input_tensor_hooks_only,
     ("ok", (["tensor hook"], (([4.0, 4.0], F32),), ["tensor hook"]))),
    (grad_does_not_run_a_non_leaf_input_node,
     ("ok", ((([6.0, 6.0], F32),), ["tensor hook"]))),
]

test_the_kit_does_what_pytorch_2_does, test_pytorch_does_it_too = expected_outcomes(CASES)


# -- facts only the kit can show (PyTorch's C++ nodes take no weak references) ---------------
def test_a_dropped_graph_is_freed_without_the_collector():
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    nodes = [weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])]
    del y
    assert all(ref() is None for ref in nodes)


def test_an_accumulate_grad_node_lives_as_long_as_the_graph_using_it():
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    acc = weakref.ref(y.grad_fn.next_functions[0][0])
    assert acc() is not None
    del y
    assert acc() is None


def test_once_differentiable_results_free_their_graph():
    from autograd_kit.autograd.function import once_differentiable

    class Square(ak.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = ak.tensor([1.0, 2.0], dtype=ak.float64, requires_grad=True)
    (g,) = ak.autograd.grad((Square.apply(x) ** 2).sum(), x, create_graph=True)
    node = weakref.ref(g.grad_fn)
    assert g.grad_fn.name() == "torch::autograd::Error"
    del g
    assert node() is None


def test_a_function_with_two_outputs_is_freed_with_them():
    class Two(ak.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.save_for_backward(a, b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    a, b = Two.apply(ak.tensor([1.0, 2.0], requires_grad=True))
    node = weakref.ref(a.grad_fn)
    del a, b
    assert node() is None


def test_post_accumulate_hooks_without_pytorch():
    """The contract, by its definition: after the sum is in .grad, with the tensor."""
    calls = []
    w = ak.tensor([1.0, -1.0], requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda t: calls.append((t is w, t.grad.tolist())))
    (w * 4).sum().backward()
    (w * 1).sum().backward()
    assert calls == [(True, [4.0, 4.0]), (True, [5.0, 5.0])]


def test_base_is_a_tensor_or_none():
    x = ak.arange(4.0)
    assert x._base is None
    v = x.view(2, 2)[0]
    assert v._base is x and isinstance(v._base, ak.Tensor)
