"""Custom ``autograd.Function``s, ``gradcheck`` and ``autograd.functional`` as
PyTorch 2 runs them: ``setup_context`` and default arguments, ``vjp`` as the
other name of ``backward``, ``once_differentiable``'s graph, ``mark_dirty`` and
``mark_non_differentiable``, views returned by forward; gradcheck's reports and
``fast_mode``; the functional API's strategies.

As in ``test_fidelity_pt2.py``: each snippet stands next to the outcome PyTorch
2 gives; the kit is held to it always, PyTorch too where it is installed.
"""
from __future__ import annotations

import contextlib
import io
import warnings

import pytest

import autograd_kit as ak
from fidelity import expected_outcomes, oracle, outcome

F32, F64 = "float32", "float64"


def _fn(lib, name, forward, backward=None, setup=None, **more):
    attrs = {"forward": staticmethod(forward), **more}
    if backward is not None:
        attrs["backward"] = staticmethod(backward)
    if setup is not None:
        attrs["setup_context"] = staticmethod(setup)
    return type(name, (lib.autograd.Function,), attrs)


def _x(lib):
    return lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)


# -- apply's arguments ----------------------------------------------------------------------------
def setup_context_sees_default_arguments(lib):
    seen = []

    def forward(x, k=3.0):
        return x * k

    def setup(ctx, inputs, output):
        seen.append(inputs[1:])
    Scale = _fn(lib, "Scale", forward, lambda ctx, g: (g * 3, None), setup)
    x = _x(lib)
    Scale.apply(x).sum().backward()
    Scale.apply(x, k=2.0)
    return seen, x.grad


def setup_context_wants_a_gradient_per_default_argument(lib):
    Scale = _fn(lib, "Scale", lambda x, k=3.0: x * k, lambda ctx, g: g * 3,
                lambda ctx, inputs, output: None)
    x = _x(lib)
    Scale.apply(x).sum().backward()


def setup_context_refuses_keyword_only_arguments(lib):
    Scale = _fn(lib, "Scale", lambda x, *, k=3.0: x * k, lambda ctx, g: g,
                lambda ctx, inputs, output: None)
    return Scale.apply(_x(lib), k=2.0)


def setup_context_with_a_forward_taking_ctx(lib):
    Twice = _fn(lib, "Twice", lambda ctx, x: x * 2, lambda ctx, g: g * 2,
                lambda ctx, inputs, output: None)
    return Twice.apply(_x(lib))


def old_style_default_argument_not_counted(lib):
    Scale = _fn(lib, "Scale", lambda ctx, x, k=3.0: x * k, lambda ctx, g: g * 3)
    x = _x(lib)
    Scale.apply(x).sum().backward()
    return x.grad


def old_style_keywords_taken_in_forward_order(lib):
    seen = []

    def forward(ctx, x, b=None, a=2):
        seen.append(ctx.needs_input_grad)
        return x * b
    Mul = _fn(lib, "Mul", forward, lambda ctx, g: (g, g, None))
    x, w = _x(lib), _x(lib)
    Mul.apply(x, a=3, b=w)
    Mul.apply(x, b=w, a=3)
    Mul.apply(x, w)
    return seen


def old_style_keywords_need_their_gradients(lib):
    def forward(ctx, x, w=None, k=2):
        return x * w
    Mul = _fn(lib, "Mul", forward, lambda ctx, g: (g, g))
    x, w = _x(lib), _x(lib)
    Mul.apply(x, k=3, w=w).sum().backward()


def old_style_keyword_gradients_reach_them(lib):
    def forward(ctx, x, w=None):
        return x * w
    Mul = _fn(lib, "Mul", forward, lambda ctx, g: (g * 2, g * 5))
    x, w = _x(lib), _x(lib)
    Mul.apply(x, w=w).sum().backward()
    return x.grad, w.grad


# -- forward, backward, vjp -----------------------------------------------------------------------
def no_backward(lib):
    Twice = _fn(lib, "Twice", lambda ctx, x: x * 2)
    Twice.apply(_x(lib)).sum().backward()


def no_forward(lib):
    Nothing = type("Nothing", (lib.autograd.Function,),
                   {"backward": staticmethod(lambda ctx, g: g)})
    Nothing.apply(_x(lib))


def vjp_instead_of_backward(lib):
    Twice = _fn(lib, "Twice", lambda ctx, x: x * 2, vjp=staticmethod(lambda ctx, g: g * 5))
    x = _x(lib)
    Twice.apply(x).sum().backward()
    return x.grad


def both_vjp_and_backward(lib):
    Twice = _fn(lib, "Twice", lambda ctx, x: x * 2, lambda ctx, g: g,
                vjp=staticmethod(lambda ctx, g: g * 5))
    Twice.apply(_x(lib)).sum().backward()


def saving_a_number(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 2
    return _fn(lib, "Keep", forward, lambda ctx, g: g).apply(_x(lib))


def integer_output_needs_no_gradient(lib):
    seen = []

    def backward(ctx, g, gb):
        seen.append(gb)
        return g * 2
    Split = _fn(lib, "Split", lambda ctx, x: (x * 2, x > 1), backward)
    x = _x(lib)
    a, b = Split.apply(x)
    a.sum().backward()
    return seen, x.grad, b.requires_grad, b.grad_fn


# -- once_differentiable --------------------------------------------------------------------------
def _once(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @lib.autograd.function.once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g
    return _fn(lib, "Once", forward, backward)


def once_differentiable_graph(lib):
    x = _x(lib)
    y = _once(lib).apply(x)
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    return (g.requires_grad, g.grad_fn.name(),
            [(fn.name(), fn.variable.requires_grad) for fn, _ in g.grad_fn.next_functions])


def once_differentiable_without_create_graph(lib):
    x = _x(lib)
    (g,) = lib.autograd.grad(_once(lib).apply(x).sum(), x, create_graph=True)
    return g.requires_grad, g.grad_fn


def once_differentiable_twice(lib):
    x = _x(lib)
    y = _once(lib).apply(x)
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()


# -- mark_dirty, mark_non_differentiable, materialize_grads ---------------------------------------
def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                    for w in seen]  # (PyTorch adds where in its C++ sources it warned)


def mark_dirty_on_a_new_tensor(lib):
    def forward(ctx, x):
        y = x * 2
        y.mul_(2)
        ctx.mark_dirty(y)
        return y
    Quad = _fn(lib, "Quad", forward, lambda ctx, g: g * 4)
    x = _x(lib)

    def run():
        Quad.apply(x).sum().backward()
        return x.grad
    return _warnings_of(run)


def mark_dirty_on_a_view_of_a_leaf(lib):
    def forward(ctx, v):
        v.mul_(2)
        ctx.mark_dirty(v)
        return v
    _fn(lib, "Double", forward, lambda ctx, g: g * 2).apply(_x(lib)[:2])


def mark_dirty_through_setup_context(lib):
    def forward(x):
        x.mul_(2)
        return x

    def setup(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])
    Double = _fn(lib, "Double", forward, lambda ctx, g: g * 2, setup)
    x = _x(lib)
    y = x * 1
    z = Double.apply(y)
    z.sum().backward()
    return z is y, x.grad, y._version


def non_differentiable_input_returned(lib):
    def forward(ctx, x):
        ctx.mark_non_differentiable(x)
        return x
    x = _x(lib)
    y = _fn(lib, "Keep", forward, lambda ctx, g: g).apply(x)
    return y is x, y.requires_grad, y.is_leaf, y._base is x


def _non_differentiable_second_output(lib, materialize):
    """What backward receives for an output marked non-differentiable."""
    seen = []

    def forward(ctx, x):
        if not materialize:
            ctx.set_materialize_grads(False)
        a, b = x * 2, x * 3
        ctx.mark_non_differentiable(b)
        return a, b

    def backward(ctx, ga, gb):
        seen.append(gb)
        return ga * 2
    x = _x(lib)
    a, b = _fn(lib, "Two", forward, backward).apply(x)
    a.sum().backward()
    return seen, x.grad


def non_differentiable_output_gets_zeros(lib):
    return _non_differentiable_second_output(lib, materialize=True)


def non_differentiable_output_without_materializing(lib):
    return _non_differentiable_second_output(lib, materialize=False)


def without_materializing_a_none_gradient(lib):
    seen = []

    def forward(ctx, x, w):
        ctx.set_materialize_grads(False)
        return x * w, x + w

    def backward(ctx, g1, g2):
        seen.append((g1 is None, g2 is None))
        return None, g2
    x, w = _x(lib), _x(lib)
    a, b = _fn(lib, "Two", forward, backward).apply(x, w)
    b.sum().backward()
    return seen, x.grad, w.grad


# -- what forward returns: views of inputs --------------------------------------------------------
def view_returned_by_forward(lib):
    First = _fn(lib, "First", lambda ctx, x: x[:2], lambda ctx, g: lib.cat([g, g[:1] * 0]))
    x = _x(lib)
    y = First.apply(x)
    return y._is_view(), y._base is x, y.grad_fn.name()


def input_returned_as_it_is(lib):
    Same = _fn(lib, "Same", lambda ctx, x: x, lambda ctx, g: g)
    x = _x(lib)
    y = Same.apply(x)
    return y._is_view(), y._base is x, y is x, y.grad_fn.name()


def input_returned_without_grad(lib):
    Same = _fn(lib, "Same", lambda ctx, x: x, lambda ctx, g: g)
    x = lib.ones(2)
    y = Same.apply(x)
    return y is x, y._base is x, y.requires_grad


def nested_apply(lib):
    Inner = _fn(lib, "Inner", lambda ctx, x: x * 2, lambda ctx, g: g * 2)
    Outer = _fn(lib, "Outer", lambda ctx, x: Inner.apply(x) * 3, lambda ctx, g: g * 6)
    x = _x(lib)
    y = Outer.apply(x)
    y.sum().backward()
    return y.grad_fn.name(), x.grad


# -- gradcheck ------------------------------------------------------------------------------------
def _wrong(lib):
    return _fn(lib, "Wrong", lambda ctx, x: x * 2, lambda ctx, g: g * 3)


def _x2(lib):
    return lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)


def _quietly(fn):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        result = fn()
    return result, out.getvalue()


def gradcheck_mismatch(lib):
    lib.autograd.gradcheck(_wrong(lib).apply, (_x2(lib),))


def gradcheck_mismatch_not_raised(lib):
    return _quietly(lambda: lib.autograd.gradcheck(_wrong(lib).apply, (_x2(lib),),
                                                   raise_exception=False))


def gradcheck_fast_mode_not_raised(lib):
    return _quietly(lambda: lib.autograd.gradcheck(_wrong(lib).apply, (_x2(lib),),
                                                   raise_exception=False, fast_mode=True))


def gradcheck_fast_mode_passes(lib):
    return lib.autograd.gradcheck(lambda x: (x ** 2).sin(), (_x2(lib),), fast_mode=True)


def gradcheck_mismatch_of_a_second_output(lib):
    Two = _fn(lib, "Two", lambda ctx, x: (x * 2, x * 3), lambda ctx, g1, g2: g1 * 2 + g2 * 2)
    lib.autograd.gradcheck(Two.apply, (_x2(lib),))


def gradcheck_without_inputs_that_require_grad(lib):
    return lib.autograd.gradcheck(lambda x: x * 2, (lib.ones(2, dtype=lib.float64),))


def gradcheck_of_an_output_without_grad(lib):
    return lib.autograd.gradcheck(lambda x: x.detach() * 2, (_x2(lib),))


def gradcheck_skips_outputs_without_grad(lib):
    return lib.autograd.gradcheck(lambda x: (x * 2, x.detach() * 3), (_x2(lib),))


def gradcheck_with_a_number_input(lib):
    return lib.autograd.gradcheck(lambda x, k: x * k, (_x2(lib), 3))


def gradcheck_keywords_only(lib):
    return lib.autograd.gradcheck(lambda x: x * 2, (_x2(lib),), 1e-6)


def gradcheck_not_reentrant(lib):
    calls = []

    def backward(ctx, g):
        calls.append(1)
        return g * 2 + len(calls) * 1e-4  # (a little different each time)
    Jitter = _fn(lib, "Jitter", lambda ctx, x: x * 2, backward)
    lib.autograd.gradcheck(Jitter.apply, (_x2(lib),))


def gradgradcheck_fast_mode(lib):
    return lib.autograd.gradgradcheck(lambda x: x ** 3, (_x2(lib),), fast_mode=True)


# -- autograd.functional's strategies -------------------------------------------------------------
def jacobian_forward_mode_without_vectorize(lib):
    return lib.autograd.functional.jacobian(lambda a: a * 2, lib.ones(2),
                                            strategy="forward-mode")


def jacobian_forward_mode_vectorized(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's own internals warn here)
        return lib.autograd.functional.jacobian(lambda a: a ** 2, lib.ones(2),
                                                strategy="forward-mode", vectorize=True)


def jacobian_forward_mode_with_create_graph(lib):
    return lib.autograd.functional.jacobian(lambda a: a ** 2, lib.ones(2), create_graph=True,
                                            strategy="forward-mode", vectorize=True)


def jacobian_forward_mode_strict(lib):
    return lib.autograd.functional.jacobian(lambda a: a ** 2, lib.ones(2), strict=True,
                                            strategy="forward-mode", vectorize=True)


def jacobian_unknown_strategy(lib):
    return lib.autograd.functional.jacobian(lambda a: a, lib.ones(2), strategy="sideways")


def hessian_unknown_strategy(lib):
    return lib.autograd.functional.hessian(lambda a: a.sum(), lib.ones(2),
                                           outer_jacobian_strategy="sideways")


def jvp_strict_with_create_graph_of_a_linear_function(lib):
    return lib.autograd.functional.jvp(lambda a: a * 2, lib.ones(2), lib.ones(2), strict=True,
                                       create_graph=True)


def hvp_strict_with_create_graph(lib):
    out, hv = lib.autograd.functional.hvp(lambda a: (a ** 3).sum(), lib.ones(2), lib.ones(2),
                                          strict=True, create_graph=True)
    return out, hv, hv.requires_grad


def hessian_strict_of_independent_inputs(lib):
    return lib.autograd.functional.hessian(lambda a, b: (a ** 3).sum(),
                                           (lib.ones(2), lib.ones(2)), strict=True)


def vhp_strict_of_a_linear_function(lib):
    return lib.autograd.functional.vhp(lambda a: (a * 3).sum(), lib.ones(2), lib.ones(2),
                                       strict=True)


INDEPENDENT_JACOBIAN = ("While computing the hessian, found that the jacobian of the "
                        "user-provided function with respect to input {} is independent of the "
                        "input. This is not allowed in strict mode. You should ensure that your "
                        "function is twice differentiable and that the jacobian depends on the "
                        "inputs (this would be violated by a linear function for example).")
FAST_NOTE = (
    "The above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:")

CASES = [
    (setup_context_sees_default_arguments, ("ok", ([(3.0,), (2.0,)], ([3.0, 3.0, 3.0], F64)))),
    (setup_context_wants_a_gradient_per_default_argument,
     ("error", "RuntimeError",
      "function ScaleBackward returned an incorrect number of gradients (expected 2, got 1)")),
    (setup_context_refuses_keyword_only_arguments,
     ("error", "TypeError", "forward() got an unexpected keyword argument 'k'")),
    (setup_context_with_a_forward_taking_ctx,
     ("error", "TypeError", "missing a required argument: 'x'")),
    (old_style_default_argument_not_counted, ("ok", ([3.0, 3.0, 3.0], F64))),
    (old_style_keywords_taken_in_forward_order,
     ("ok", [(True, True, False), (True, True, False), (True, True)])),
    (old_style_keywords_need_their_gradients,
     ("error", "RuntimeError",
      "function MulBackward returned an incorrect number of gradients (expected 3, got 2)")),
    (old_style_keyword_gradients_reach_them,
     ("ok", (([2.0, 2.0, 2.0], F64), ([5.0, 5.0, 5.0], F64)))),
    (no_backward, ("error", "NotImplementedError", "You must implement either the backward or "
                   "vjp method for your custom autograd.Function to use it with backward mode "
                   "AD.")),
    (no_forward, ("error", "NotImplementedError",
                  "You must implement the forward function for custom autograd.Function.")),
    (vjp_instead_of_backward, ("ok", ([5.0, 5.0, 5.0], F64))),
    (both_vjp_and_backward, ("error", "RuntimeError", "Implementing both 'backward' and 'vjp' "
                             "for a custom Function is not allowed. You should only implement "
                             "one of them.")),
    (saving_a_number, ("error", "TypeError",
                       "save_for_backward can only save variables, but argument 1 is of type "
                       "int")),
    (integer_output_needs_no_gradient,
     ("ok", ([([False, False, False], "bool")], ([2.0, 2.0, 2.0], F64), False, None))),
    (once_differentiable_graph,
     ("ok", (True, "torch::autograd::Error", [("torch::autograd::AccumulateGrad", True)]))),
    (once_differentiable_without_create_graph, ("ok", (False, None))),
    (once_differentiable_twice, ("error", "RuntimeError", "trying to differentiate twice a "
                                 "function that was marked with @once_differentiable")),
    (mark_dirty_on_a_new_tensor,
     ("ok", (([4.0, 4.0, 4.0], F64),
             [("UserWarning", "ctx.mark_dirty() received a tensor that was not an input. Only "
               "input Tensors that have been mutated should be passed to ctx.mark_dirty().")]))),
    (mark_dirty_on_a_view_of_a_leaf, ("error", "RuntimeError", "a view of a leaf Variable that "
                                      "requires grad is being used in an in-place operation.")),
    (mark_dirty_through_setup_context, ("ok", (True, ([2.0, 2.0, 2.0], F64), 2))),
    (non_differentiable_input_returned, ("ok", (False, False, True, False))),
    (non_differentiable_output_gets_zeros,
     ("ok", ([([0.0, 0.0, 0.0], F64)], ([2.0, 2.0, 2.0], F64)))),
    (non_differentiable_output_without_materializing,
     ("ok", ([None], ([2.0, 2.0, 2.0], F64)))),
    (without_materializing_a_none_gradient,
     ("ok", ([(True, False)], None, ([1.0, 1.0, 1.0], F64)))),
    (view_returned_by_forward, ("ok", (True, True, "FirstBackward"))),
    (input_returned_as_it_is, ("ok", (True, True, False, "SameBackward"))),
    (input_returned_without_grad, ("ok", (False, True, False))),
    (nested_apply, ("ok", ("OuterBackward", ([6.0, 6.0, 6.0], F64)))),
    (gradcheck_mismatch,
     ("error", "RuntimeError", "Jacobian mismatch for output 0 with respect to input 0,\n"
      "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 2.0000]], dtype=torch.float64)\n"
      "analytical:tensor([[3., 0.],\n        [0., 3.]], dtype=torch.float64)\n")),
    (gradcheck_mismatch_not_raised, ("ok", (False, ""))),
    (gradcheck_fast_mode_not_raised, ("ok", (False, ""))),
    (gradcheck_fast_mode_passes, ("ok", True)),
    (gradcheck_mismatch_of_a_second_output,
     ("error", "RuntimeError", "Jacobian mismatch for output 1 with respect to input 0,\n"
      "numerical:tensor([[3.0000, 0.0000],\n        [0.0000, 3.0000]], dtype=torch.float64)\n"
      "analytical:tensor([[2., 0.],\n        [0., 2.]], dtype=torch.float64)\n")),
    (gradcheck_without_inputs_that_require_grad,
     ("error", "ValueError", "gradcheck expects at least one input tensor to require gradient, "
      "but none of them have requires_grad=True.")),
    (gradcheck_of_an_output_without_grad,
     ("error", "RuntimeError", "Numerical gradient for function expected to be zero")),
    (gradcheck_skips_outputs_without_grad, ("ok", True)),
    (gradcheck_with_a_number_input, ("ok", True)),
    (gradcheck_keywords_only,
     ("error", "TypeError", "gradcheck() takes 2 positional arguments but 3 were given")),
    (gradgradcheck_fast_mode, ("ok", True)),
    (jacobian_forward_mode_without_vectorize,
     ("error", "NotImplementedError", "Computing Jacobian using forward-AD or "
      "forward-over-reverse Hessian isonly implemented for `vectorize=True`.")),
    (jacobian_forward_mode_vectorized, ("ok", ([[2.0, 0.0], [0.0, 2.0]], F32))),
    (jacobian_forward_mode_with_create_graph,
     ("error", "NotImplementedError", "torch.autograd.functional.jacobian: `create_graph=True` "
      'and `strategy="forward-mode"` are not supported together (yet). Please either set '
      '`create_graph=False` or `strategy="reverse-mode"`.')),
    (jacobian_forward_mode_strict,
     ("error", "RuntimeError", "torch.autograd.functional.jacobian: `strict=True` and "
      '`strategy="forward-mode"` are not supported together (yet). Please either set '
      '`strict=False` or `strategy="reverse-mode"`.')),
    (jacobian_unknown_strategy,
     ("error", "AssertionError", 'Expected strategy to be either "forward-mode" or '
      '"reverse-mode". Hint: If your function has more outputs than inputs, "forward-mode" '
      'tends to be more performant. Otherwise, prefer to use "reverse-mode".')),
    (hessian_unknown_strategy,
     ("error", "AssertionError",
      'Expected strategy to be either "forward-mode" or "reverse-mode".')),
    (jvp_strict_with_create_graph_of_a_linear_function,
     ("error", "RuntimeError", "The jacobian of the user-provided function is independent of "
      "input 0. This is not allowed in strict mode when create_graph=True.")),
    (hvp_strict_with_create_graph, ("ok", ((2.0, F32), ([6.0, 6.0], F32), True))),
    (hessian_strict_of_independent_inputs,
     ("error", "RuntimeError", INDEPENDENT_JACOBIAN.format(1))),
    (vhp_strict_of_a_linear_function, ("error", "RuntimeError", INDEPENDENT_JACOBIAN.format(0))),
]
test_the_kit_does_what_pytorch_2_does, test_pytorch_does_it_too = expected_outcomes(CASES)


def gradcheck_fast_mode_mismatch(lib):
    lib.autograd.gradcheck(_wrong(lib).apply, (_x2(lib),), fast_mode=True)


def _fast_report_parts(lib):
    kind, cls, message = outcome(gradcheck_fast_mode_mismatch, lib)
    head, numerical, analytical = message.split("\n")[:3]
    return (kind, cls, head, numerical.startswith("numerical:"),
            analytical.startswith("analytical:"), message.split("\n\n", 1)[1])


FAST_REPORT = ("error", "RuntimeError", "Jacobian mismatch for output 0 with respect to input 0,",
               True, True, FAST_NOTE + "\n\nNumerical:\n tensor([[2.0000, 0.0000],\n        "
               "[0.0000, 2.0000]], dtype=torch.float64)\nAnalytical:\ntensor([[3., 0.],\n"
               "        [0., 3.]], dtype=torch.float64)\n\nThe max per-element difference (slow "
               "mode) is: 1.000000000053511.\n")


def test_gradcheck_fast_mode_report():
    """The fast-mode numbers come from random vectors (PyTorch's and the kit's
    differ); the rest of the report is the same."""
    assert _fast_report_parts(ak) == FAST_REPORT


def test_gradcheck_fast_mode_report_as_pytorch():
    assert _fast_report_parts(oracle()) == FAST_REPORT


def test_gradcheck_fast_mode_numbers_are_consistent():
    """vᵀ J u, twice: by differences and by backward; for the wrong backward (3
    instead of 2) the analytical number is 1.5 times the numerical one."""
    kind, cls, message = outcome(gradcheck_fast_mode_mismatch, ak)
    numerical = float(message.split("\n")[1].removeprefix("numerical:"))
    analytical = float(message.split("\n")[2].removeprefix("analytical:"))
    assert analytical == pytest.approx(1.5 * numerical, rel=1e-6)


def test_gradcheck_not_reentrant_report():
    kind, cls, message = outcome(gradcheck_not_reentrant, ak)
    assert (kind, cls) == ("error", "RuntimeError")
    assert message.startswith("Backward is not reentrant, i.e., running backward with same "
                              "input and grad_output multiple times gives different values, "
                              "although analytical gradient matches numerical gradient.The "
                              "tolerance for nondeterminism was 0.0.\n\nNOTE: If your op "
                              "relies on non-deterministic operations")


def test_gradcheck_not_reentrant_report_as_pytorch():
    assert outcome(gradcheck_not_reentrant, ak) == outcome(gradcheck_not_reentrant, oracle())
