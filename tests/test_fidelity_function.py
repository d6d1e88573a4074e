"""Custom ``autograd.Function``s as PyTorch 2 runs them.

Each snippet is written once and run with the kit and with PyTorch (when it is
installed): values, gradients, exception classes and messages must agree.  The
tests without PyTorch check the same facts against numbers worked out by hand.
"""
import pytest

import autograd_kit as ak
from fidelity import outcome, same_as_pytorch


def _fn(lib, name, forward, backward, setup=None):
    """A Function class for ``lib`` from plain functions."""
    attrs = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    if setup is not None:
        attrs["setup_context"] = staticmethod(setup)
    return type(name, (lib.autograd.Function,), attrs)


def _x(lib):
    return lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)


# -- snippets ------------------------------------------------------------------------
def _exp_saving_its_output(lib):
    """A Function computing exp(x) that saves its own result for backward."""
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r
    return _fn(lib, "Exp", forward, backward)


def second_derivative_through_saved_output(lib):
    """exp saves its own result; d²/dx² exp(x) = exp(x)."""
    Exp = _exp_saving_its_output(lib)
    x = _x(lib)
    (g,) = lib.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return g, gg


def square_from_its_output(lib):
    """x² whose backward reads the output: 2 r / x * g; the second derivative is 2."""
    def forward(ctx, x):
        r = x * x
        ctx.save_for_backward(x, r)
        return r

    def backward(ctx, g):
        x, r = ctx.saved_tensors
        return 2 * r / x * g
    Sq = _fn(lib, "Sq", forward, backward)
    x = _x(lib)
    (g,) = lib.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return g, gg


def _two(lib, materialize=True):
    def forward(ctx, x):
        ctx.set_materialize_grads(materialize)
        return x * 2, x * 3

    def backward(ctx, g1, g2):
        ctx.seen = (g1, g2)
        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)
    return _fn(lib, "Two", forward, backward)


def tuple_of_outputs(lib):
    x = _x(lib)
    a, b = _two(lib).apply(x)
    a.sum().backward()
    node = a.grad_fn
    return (node is b.grad_fn, a.output_nr, b.output_nr, node.name(), x.grad,
            node.next_functions[0][1], node.seen)  # (the node is the ctx, as in PyTorch)


def tuple_of_outputs_without_materializing(lib):
    x = _x(lib)
    a, b = _two(lib, materialize=False).apply(x)
    seen = []
    b.register_hook(lambda g: seen.append(g))
    (a * 5).sum().backward()
    return x.grad, seen


def outputs_used_downstream(lib):
    """Both outputs feed one loss; their gradients reach backward separately."""
    x = _x(lib)
    a, b = _two(lib).apply(x)
    (a * b).sum().backward()  # d/dx (2x)(3x) = 12 x
    return x.grad, (a * b).grad_fn.next_functions[0][1], (a * b).grad_fn.next_functions[1][1]


def input_returned_unchanged(lib):
    Id = _fn(lib, "Id", lambda ctx, x: x, lambda ctx, g: g * 5)
    x = _x(lib)
    y = Id.apply(x)
    y.sum().backward()
    return y is x, y.requires_grad, y.grad_fn.name(), x.grad


def same_tensor_twice(lib):
    def forward(ctx, x):
        r = x * 2
        return r, r

    def backward(ctx, g1, g2):
        return g1 + g2 * 100
    Twice = _fn(lib, "Twice", forward, backward)
    x = _x(lib)
    a, b = Twice.apply(x)
    (a.sum() + b.sum()).backward()
    return a is b, a.output_nr, x.grad


def new_leaf_from_forward(lib):
    Make = _fn(lib, "Make", lambda ctx, x: lib.ones(3, dtype=lib.float64),
               lambda ctx, g: g * 7)
    x = _x(lib)
    y = Make.apply(x)
    y.sum().backward()
    return y.requires_grad, y.is_leaf, x.grad


def other_input_returned(lib):
    Pick = _fn(lib, "Pick", lambda ctx, x, w: w, lambda ctx, g: (g * 7, g))
    x, w = _x(lib), _x(lib)
    y = Pick.apply(x, w)
    y.sum().backward()
    return y is w, x.grad, w.grad


def _doubler(lib):
    def forward(ctx, a, b):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a

    return _fn(lib, "Doubler", forward, lambda ctx, g: (2 * g, None))


def mark_dirty_on_a_non_leaf(lib):
    x, w = _x(lib), _x(lib)
    a = x * 1
    y = _doubler(lib).apply(a, w)
    y.sum().backward()
    return y is a, a._version, y.grad_fn.name(), x.grad


def mark_dirty_on_a_leaf(lib):
    x, w = _x(lib), _x(lib)
    return _doubler(lib).apply(x, w)


def mark_dirty_not_returned(lib):
    def forward(ctx, a):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a * 1
    Bad = _fn(lib, "Bad", forward, lambda ctx, g: g)
    return Bad.apply(_x(lib) * 1)


def mark_dirty_on_a_view(lib):
    """The Function adds w into row 0 of a base, in place: w must get its
    gradient through the base (not zero), the base keeps the rest."""
    def forward(ctx, v, w):
        v.add_(w)
        ctx.mark_dirty(v)
        return v
    AddInto = _fn(lib, "AddInto", forward, lambda ctx, g: (g, g * 3))
    x, w = lib.ones(2, 3, dtype=lib.float64, requires_grad=True), _x(lib)
    base = x * 1
    y = AddInto.apply(base[0], w)
    (base * lib.tensor([[1.0], [10.0]], dtype=lib.float64)).sum().backward()
    return y.grad_fn.name(), base.grad_fn.name(), x.grad, w.grad


def non_differentiable_output(lib):
    def forward(ctx, x):
        i = x.argmax()
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(x, i)
        return x.max(), i

    def backward(ctx, g, gi):
        x, i = ctx.saved_tensors
        out = lib.zeros_like(x)
        out[i] = g
        return out + gi.sum() * 0  # gi: zeros of i's shape
    Max = _fn(lib, "Max", forward, backward)
    x = _x(lib)
    v, i = Max.apply(x)
    v.backward()
    return v.requires_grad, i.requires_grad, i.grad_fn, x.grad


def only_non_differentiable(lib):
    def forward(ctx, x):
        r = x * 2
        ctx.mark_non_differentiable(r)
        return r
    Nd = _fn(lib, "Nd", forward, lambda ctx, g: g)
    r = Nd.apply(_x(lib))
    return r.requires_grad, r.is_leaf, outcome(lambda _: r.sum().backward(), None)


def needs_input_grad(lib):
    seen = []

    def forward(ctx, a, b, k):
        seen.append(ctx.needs_input_grad)
        return a * b * k

    def backward(ctx, g):
        seen.append(ctx.needs_input_grad)
        return g, None, None
    Mul = _fn(lib, "Mul", forward, backward)
    Mul.apply(_x(lib), lib.ones(3, dtype=lib.float64), 3).sum().backward()
    return seen


def _once(lib):
    from_module = lib.autograd.function.once_differentiable

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @from_module
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g
    return _fn(lib, "Once", forward, backward)


def once_differentiable_first_derivative(lib):
    x = _x(lib)
    (g,) = lib.autograd.grad(_once(lib).apply(x).sum(), x, create_graph=True)
    return g, g.requires_grad


def once_differentiable_twice(lib):
    x = _x(lib)
    y = _once(lib).apply(x)
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()


def setup_context_style(lib):
    def forward(x, k):
        return x * k

    def setup(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(output)

    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * ctx.k + out * 0, None
    Scale = _fn(lib, "Scale", forward, backward, setup)
    x = _x(lib)
    y = Scale.apply(x, 3.0)
    y.sum().backward()
    return y.grad_fn.name(), x.grad


def module_imports(lib):
    mod = lib.autograd.function
    return (mod.Function is lib.autograd.Function, isinstance(mod.FunctionCtx(), object),
            callable(mod.once_differentiable))


def call_op_node(lib):
    x, w = _x(lib), _x(lib)
    y = x * w
    return y.grad_fn(lib.ones(3, dtype=lib.float64)), (x * w).sum().grad_fn(
        lib.tensor(2.0, dtype=lib.float64))


def call_node_with_two_gradients(lib):
    y = _x(lib).exp()
    return y.grad_fn(lib.ones(3), lib.ones(3))


def call_function_node(lib):
    Id = _fn(lib, "Id", lambda ctx, x: x * 1, lambda ctx, g: g)
    y = Id.apply(_x(lib))
    return y.grad_fn(lib.ones(3))


def legacy_call(lib):
    Id = _fn(lib, "Id", lambda ctx, x: x * 1, lambda ctx, g: g)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        fn = Id()
    return fn(_x(lib))


def int_gradient_is_cast(lib):
    Twice = _fn(lib, "Twice", lambda ctx, x: x * 2,
                lambda ctx, g: lib.ones(3, dtype=lib.int64) * 2)
    x = lib.ones(3, requires_grad=True)
    Twice.apply(x).sum().backward()
    return x.grad


def double_gradient_is_cast(lib):
    Twice = _fn(lib, "Twice", lambda ctx, x: x * 2,
                lambda ctx, g: g.to(lib.float64) * 2)
    x = lib.ones(3, requires_grad=True)
    Twice.apply(x).sum().backward()
    return x.grad


def view_from_forward_changed_in_place(lib):
    First = _fn(lib, "First", lambda ctx, x: x[:2], lambda ctx, g: lib.cat([g, g[:1] * 0]))
    y = First.apply(_x(lib))
    y.mul_(2)


def input_returned_changed_in_place(lib):
    Id = _fn(lib, "Id", lambda ctx, x: x, lambda ctx, g: g)
    y = Id.apply(_x(lib) * 1)
    y.add_(1)


def views_from_forward_changed_in_place(lib):
    def forward(ctx, x):
        return x[0], x[1]
    Rows = _fn(lib, "Rows", forward, lambda ctx, g1, g2: lib.stack([g1, g2]))
    a, b = Rows.apply(lib.ones(2, 2, requires_grad=True) * 1)
    b.mul_(2)


def view_from_forward_cloned_then_changed(lib):
    First = _fn(lib, "First", lambda ctx, x: x[:2], lambda ctx, g: lib.cat([g, g[:1] * 0]))
    x = _x(lib)
    y = First.apply(x).clone()
    y.mul_(2)
    y.sum().backward()
    return x.grad


def view_from_forward_changed_without_grad(lib):
    First = _fn(lib, "First", lambda ctx, x: x[:2], lambda ctx, g: lib.cat([g, g[:1] * 0]))
    x = _x(lib)
    y = First.apply(x)
    with lib.no_grad():
        y.mul_(2)
    return x, y


def hook_on_output_without_gradient(lib):
    x = _x(lib)
    a, b = _two(lib).apply(x)
    calls = []
    b.register_hook(lambda g: calls.append(g))
    a.sum().backward()
    return calls, x.grad


def retain_grad_on_one_output(lib):
    x = _x(lib)
    a, b = _two(lib).apply(x)
    b.retain_grad()
    (a + 10 * b).sum().backward()
    return a.retains_grad, b.retains_grad, b.grad, x.grad


def grad_with_respect_to_an_output(lib):
    x = _x(lib)
    a, b = _two(lib).apply(x)
    return lib.autograd.grad((a * b).sum(), [b, x])


def saved_output_changed_in_place(lib):
    y = _exp_saving_its_output(lib).apply(_x(lib))
    y.add_(1)
    y.sum().backward()


SNIPPETS = [second_derivative_through_saved_output, square_from_its_output, tuple_of_outputs,
            tuple_of_outputs_without_materializing, outputs_used_downstream,
            input_returned_unchanged, same_tensor_twice, new_leaf_from_forward,
            other_input_returned, mark_dirty_on_a_non_leaf, mark_dirty_on_a_leaf,
            mark_dirty_not_returned, mark_dirty_on_a_view, non_differentiable_output,
            only_non_differentiable, needs_input_grad, once_differentiable_first_derivative,
            once_differentiable_twice, setup_context_style, module_imports, call_op_node,
            call_node_with_two_gradients, call_function_node, legacy_call,
            int_gradient_is_cast, double_gradient_is_cast, view_from_forward_changed_in_place,
            input_returned_changed_in_place, views_from_forward_changed_in_place,
            view_from_forward_cloned_then_changed, view_from_forward_changed_without_grad,
            hook_on_output_without_gradient, retain_grad_on_one_output,
            grad_with_respect_to_an_output, saved_output_changed_in_place]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.__name__ for s in SNIPPETS])
def test_as_pytorch_does(snippet):
    same_as_pytorch(snippet)


# -- the same facts without PyTorch ------------------------------------------------
def ok(snippet):
    result = outcome(snippet, ak)
    assert result[0] == "ok", result
    return result[1]


def error(snippet):
    result = outcome(snippet, ak)
    assert result[0] == "error", result
    return result[1:]


def values(t):
    return t[0]


def test_second_derivatives_through_a_saved_output():
    g, gg = ok(second_derivative_through_saved_output)
    assert values(g) == pytest.approx(values(gg))  # exp'' = exp' = exp
    g, gg = ok(square_from_its_output)
    assert values(g) == [2.0, 4.0, 6.0] and values(gg) == [2.0, 2.0, 2.0]


def test_several_outputs_share_one_node():
    shared, nr_a, nr_b, name, grad, _, seen = ok(tuple_of_outputs)
    assert (shared, nr_a, nr_b, name) == (True, 0, 1, "TwoBackward")
    assert values(grad) == [2.0, 2.0, 2.0]
    assert values(seen[1]) == [0.0, 0.0, 0.0]  # the unused output's gradient: zeros
    grad, seen = ok(tuple_of_outputs_without_materializing)
    assert values(grad) == [10.0, 10.0, 10.0] and seen == [None]
    grad, nr0, nr1 = ok(outputs_used_downstream)
    assert values(grad) == [12.0, 24.0, 36.0] and (nr0, nr1) == (0, 1)


def test_what_forward_may_return():
    same, rg, name, grad = ok(input_returned_unchanged)
    assert (same, rg, name, values(grad)) == (False, True, "IdBackward", [5.0] * 3)
    same, nr, grad = ok(same_tensor_twice)
    assert (same, nr, values(grad)) == (True, 1, [200.0] * 3)  # only the later output
    rg, leaf, grad = ok(new_leaf_from_forward)
    assert (rg, leaf, values(grad)) == (True, False, [7.0] * 3)
    same, gx, gw = ok(other_input_returned)
    assert (same, values(gx), values(gw)) == (False, [7.0] * 3, [1.0] * 3)


def test_mark_dirty():
    same, version, name, grad = ok(mark_dirty_on_a_non_leaf)
    assert (same, version, name, values(grad)) == (True, 2, "DoublerBackward", [2.0] * 3)
    assert error(mark_dirty_on_a_leaf) == (
        "RuntimeError", "a leaf Variable that requires grad has been used in an in-place "
        "operation.")
    assert error(mark_dirty_not_returned)[1].startswith("Some elements marked as dirty")
    view_name, base_name, gx, gw = ok(mark_dirty_on_a_view)
    assert (view_name, base_name) == ("AsStridedBackward0", "torch::autograd::CopySlices")
    assert values(gx) == [[1.0] * 3, [10.0] * 3]
    assert values(gw) == [3.0] * 3  # through the Function's backward, from row 0


def test_non_differentiable_outputs():
    v_rg, i_rg, i_fn, grad = ok(non_differentiable_output)
    assert (v_rg, i_rg, i_fn, values(grad)) == (True, False, None, [0.0, 0.0, 1.0])
    rg, leaf, failure = ok(only_non_differentiable)
    assert (rg, leaf) == (False, True) and failure[0] == "error"


def test_needs_input_grad_and_once_differentiable():
    assert ok(needs_input_grad) == [(True, False, False)] * 2
    g, rg = ok(once_differentiable_first_derivative)
    assert values(g) == [2.0, 4.0, 6.0] and rg is False
    assert error(once_differentiable_twice) == (
        "RuntimeError", "trying to differentiate twice a function that was marked with "
        "@once_differentiable")


def test_setup_context_and_the_function_module():
    name, grad = ok(setup_context_style)
    assert name == "ScaleBackward" and values(grad) == [3.0] * 3
    assert ok(module_imports) == (True, True, True)
    from autograd_kit.autograd.function import Function, FunctionCtx, once_differentiable
    assert Function is ak.autograd.Function and FunctionCtx and once_differentiable


def test_calling_nodes():
    pair, single = ok(call_op_node)
    assert values(pair[0]) == [1.0, 2.0, 3.0] and values(single) == [2.0] * 3
    assert error(call_node_with_two_gradients) == ("TypeError",
                                                   "expected 1 arguments, got 2 instead")
    assert error(call_function_node) == ("TypeError", "'IdBackward' object is not callable")
    assert error(legacy_call)[0] == "RuntimeError"


def test_gradients_are_cast_to_the_inputs_dtype():
    assert ok(int_gradient_is_cast) == ([2.0] * 3, "float32")
    assert ok(double_gradient_is_cast) == ([2.0] * 3, "float32")


def test_views_made_by_a_function_are_not_changed_in_place():
    kind, text = error(view_from_forward_changed_in_place)
    assert text.startswith("Output 0 of First is a view and is being modified inplace. "
                           "This view was created inside a custom Function")
    assert error(input_returned_changed_in_place)[1].startswith("Output 0 of Id is a view")
    assert error(views_from_forward_changed_in_place)[1].startswith(
        "Output 1 of Rows is a view and is being modified inplace. This view is the output "
        "of a function that returns multiple views.")
    assert values(ok(view_from_forward_cloned_then_changed)) == [2.0, 2.0, 0.0]
    x, y = ok(view_from_forward_changed_without_grad)
    assert values(x) == [2.0, 4.0, 3.0]  # the view shares the input's memory


def test_hooks_and_retain_grad_on_one_output():
    calls, grad = ok(hook_on_output_without_gradient)
    assert calls == [None] and values(grad) == [2.0] * 3
    a_keeps, b_keeps, b_grad, x_grad = ok(retain_grad_on_one_output)
    assert (a_keeps, b_keeps) == (False, True) and values(b_grad) == [10.0] * 3
    assert values(x_grad) == [32.0] * 3
    gb, gx = ok(grad_with_respect_to_an_output)
    assert values(gb) == [2.0, 4.0, 6.0] and values(gx) == [12.0, 24.0, 36.0]


def test_a_saved_output_changed_in_place_is_caught():
    kind, text = error(saved_output_changed_in_place)
    assert kind == "RuntimeError" and "modified by an inplace operation" in text


def outputs_that_are_no_tensors(lib):
    def forward(ctx, x):
        return x * 2, 5

    def backward(ctx, g, g_number):
        ctx.seen = g_number
        return g * 2
    Pair = _fn(lib, "Pair", forward, backward)
    x = _x(lib)
    a, n = Pair.apply(x)
    a.sum().backward()
    return n, a.grad_fn.seen, x.grad


def input_returned_without_graph(lib):
    Id = _fn(lib, "Id", lambda ctx, x: x, lambda ctx, g: g)
    x, p = _x(lib), lib.ones(2)
    with lib.no_grad():
        y = Id.apply(x)
    z = Id.apply(p)
    return y is x, z is p, y.requires_grad, z.requires_grad


@pytest.mark.parametrize("snippet", [outputs_that_are_no_tensors, input_returned_without_graph],
                         ids=lambda s: s.__name__)
def test_as_pytorch_does_too(snippet):
    same_as_pytorch(snippet)


def test_outputs_that_are_no_tensors_without_pytorch():
    n, seen, grad = ok(outputs_that_are_no_tensors)
    assert (n, seen, values(grad)) == (5, None, [2.0] * 3)
    assert ok(input_returned_without_graph) == (False, False, False, False)
