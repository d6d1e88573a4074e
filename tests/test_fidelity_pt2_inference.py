"""``torch.inference_mode``: the context, the decorator, and inference tensors.

Inside ``inference_mode()`` nothing is recorded, even under ``enable_grad()``,
and the tensors made are *inference tensors*: they carry no version counter, so
outside inference mode PyTorch refuses to change them in place, to save them for
backward, or to make them require grad.  A view shares its base's kind.

As in ``test_fidelity_pt2.py``: each snippet stands next to the outcome PyTorch
2 gives; the kit is held to it always, PyTorch too where it is installed.
"""
from __future__ import annotations

import threading

import pytest

import autograd_kit as ak
from fidelity import expected_outcomes

F32 = "float32"
INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can "
           "make a clone to get a normal tensor before doing inplace update.See "
           "https://github.com/pytorch/rfcs/pull/17 for more details.")
SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
         "inference mode in computation tracked by autograd. To work around this, you can make "
         "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
         "instead of `torch.inference_mode()`.")
REQUIRES_GRAD = ("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                 "allowed.")


def _made_inside(lib, *shape):
    with lib.inference_mode():
        return lib.ones(*shape)


# -- the mode ---------------------------------------------------------------------------
def inside_and_after(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        y = x * 2
        inside = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
    return (y.requires_grad, y.is_inference(), x.is_inference(), inside,
            lib.is_inference_mode_enabled(), lib.is_grad_enabled(), y.grad_fn)


def off_again_inside_no_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        with lib.inference_mode(False):
            y = x * 2
            inside = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
    return y.requires_grad, y.is_inference(), inside


def off_again_inside_itself(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        with lib.inference_mode(False):
            y = x * 2
            inside = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
        back = lib.is_inference_mode_enabled()
    return y.requires_grad, y.is_inference(), inside, back


def enable_grad_inside_records_nothing(lib):
    with lib.inference_mode():
        before = lib.is_grad_enabled()
        with lib.enable_grad():
            modes = lib.is_grad_enabled(), lib.is_inference_mode_enabled()
            y = lib.ones(2, requires_grad=True) * 2
        after = lib.is_grad_enabled()
    return before, modes, after, y.requires_grad, y.is_inference()


def as_a_decorator(lib):
    @lib.inference_mode()
    def f(x):
        return x * 2, lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    y, on, grad = f(lib.ones(2, requires_grad=True))
    return y.requires_grad, y.is_inference(), on, grad, f.__name__, lib.is_inference_mode_enabled()


def as_a_decorator_without_parentheses(lib):
    @lib.inference_mode
    def f(x):
        return x * 2, lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    y, on, grad = f(lib.ones(2, requires_grad=True))
    return y.requires_grad, y.is_inference(), on, grad, f.__name__


def false_as_a_decorator_turns_grad_on(lib):
    @lib.inference_mode(False)
    def f(x):
        return x * 2, lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    with lib.no_grad():
        y, on, grad = f(lib.ones(2, requires_grad=True))
        after = lib.is_grad_enabled()
    return y.requires_grad, y.is_inference(), on, grad, after


def false_as_a_decorator_inside_inference_mode(lib):
    @lib.inference_mode(False)
    def f(x):
        return x * 2, lib.is_inference_mode_enabled(), lib.is_grad_enabled()
    with lib.inference_mode():
        y, on, grad = f(lib.ones(2, requires_grad=True))
        after = lib.is_inference_mode_enabled()
    return y.requires_grad, y.is_inference(), on, grad, after


def decorating_a_generator(lib):
    @lib.inference_mode()
    def steps():
        yield lib.is_inference_mode_enabled()
        yield lib.is_inference_mode_enabled()
    gen = steps()
    return next(gen), lib.is_inference_mode_enabled(), next(gen)


def its_mode_and_clone(lib):
    mode = lib.inference_mode()
    return (mode.mode, lib.inference_mode(False).mode, mode.clone().mode,
            isinstance(mode, lib.no_grad), lib.autograd.inference_mode is lib.inference_mode)


def left_by_an_exception(lib):
    try:
        with lib.inference_mode():
            raise ValueError("boom")
    except ValueError:
        pass
    return lib.is_inference_mode_enabled(), lib.is_grad_enabled()


# -- inference tensors ------------------------------------------------------------------
def changed_in_place_outside(lib):
    _made_inside(lib, 2).add_(1)


def changed_in_place_outside_under_no_grad(lib):
    y = _made_inside(lib, 2)
    with lib.no_grad():
        y.mul_(2)


def written_before_it_is_refused(lib):
    """PyTorch finds out when the version would be bumped: after the write."""
    y = _made_inside(lib, 2)
    try:
        y.add_(1)
    except RuntimeError:
        pass
    return y


def changed_in_place_inside(lib):
    with lib.inference_mode():
        y = lib.ones(2)
        y.add_(1)
    return y


def item_assigned_outside(lib):
    y = _made_inside(lib, 2)
    y[0] = 3.0


def zeroed_outside(lib):
    _made_inside(lib, 3).zero_()


def written_by_out_outside(lib):
    lib.add(lib.ones(3), 1, out=_made_inside(lib, 3))


def view_changed_in_place_outside(lib):
    y = _made_inside(lib, 3)
    y[:2].mul_(2)


def saved_for_backward(lib):
    y = _made_inside(lib, 2)
    return lib.ones(2, requires_grad=True) * y


def used_where_nothing_is_saved(lib):
    y = _made_inside(lib, 2)
    x = lib.ones(2, requires_grad=True)
    (x + y).sum().backward()
    return x.grad


def saved_by_a_function(lib):
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return x * w
    Scale = type("Scale", (lib.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(lambda ctx, g: (g, None))})
    return Scale.apply(lib.ones(2, requires_grad=True), _made_inside(lib, 2))


def made_to_require_grad_outside(lib):
    _made_inside(lib, 2).requires_grad_()


def made_to_require_grad_by_the_attribute(lib):
    _made_inside(lib, 2).requires_grad = True


def made_to_require_grad_inside(lib):
    with lib.inference_mode():
        y = lib.ones(2)
        y.requires_grad_()
    return y.requires_grad, y.is_inference()


def made_to_stop_requiring_grad_outside(lib):
    with lib.inference_mode():
        y = lib.ones(2, requires_grad=True)
    y.requires_grad_(False)
    return y.requires_grad


def a_leaf_that_requires_grad(lib):
    with lib.inference_mode():
        w = lib.ones(2, requires_grad=True)
        z = w * 2
    return w.requires_grad, z.requires_grad, w.is_inference(), z.is_inference(), z.is_leaf


def its_version(lib):
    return _made_inside(lib, 2)._version


def its_version_inside(lib):
    with lib.inference_mode():
        return lib.ones(2)._version


def a_normal_tensor_changed_inside(lib):
    x = lib.ones(2)
    with lib.inference_mode():
        x.add_(1)
    return x, x._version, x.is_inference()


def a_view_of_a_normal_tensor_made_inside(lib):
    x = lib.ones(3)
    with lib.inference_mode():
        v = x[:2]
    return v.is_inference(), v._is_view(), v._base is x


def a_view_made_inside_changed_outside(lib):
    y = lib.arange(6.0).requires_grad_() * 1
    with lib.inference_mode():
        v = y[:2]
    v.mul_(2)


def a_view_made_inside_changed_outside_without_grad(lib):
    x = lib.arange(6.0)
    with lib.inference_mode():
        v = x[:2]
    v.mul_(2)
    return x, v.is_inference()


def a_view_made_outside(lib):
    v = _made_inside(lib, 3)[:2]
    return v.is_inference(), v.requires_grad


def detached_and_cloned(lib):
    y = _made_inside(lib, 2)
    c = y.clone()
    c.add_(1)
    return y.detach().is_inference(), y.data.is_inference(), c.is_inference(), c


def backward_inside(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with lib.inference_mode():
        y.backward()
    return x.grad, x.grad.is_inference()


def ops_outside_give_normal_tensors(lib):
    y = _made_inside(lib, 2)
    z = y * 2
    z.add_(1)
    return z.is_inference(), z


def legacy_constructor_inside(lib):
    with lib.inference_mode():
        t = lib.Tensor([1.0, 2.0])
    return t.is_inference()


def grad_of_an_inference_tensor(lib):
    y = _made_inside(lib, 2)
    return y.grad, y.is_leaf, y.requires_grad, y.numpy().tolist()


CASES = [
    (inside_and_after, ("ok", (False, True, False, (True, False), False, True, None))),
    (off_again_inside_no_grad, ("ok", (True, False, (False, True)))),
    (off_again_inside_itself, ("ok", (True, False, (False, True), True))),
    (enable_grad_inside_records_nothing, ("ok", (False, (True, True), False, False, True))),
    (as_a_decorator, ("ok", (False, True, True, False, "f", False))),
    (as_a_decorator_without_parentheses, ("ok", (False, True, True, False, "f"))),
    (false_as_a_decorator_turns_grad_on, ("ok", (True, False, False, True, False))),
    (false_as_a_decorator_inside_inference_mode, ("ok", (True, False, False, True, True))),
    (decorating_a_generator, ("ok", (True, False, True))),
    (its_mode_and_clone, ("ok", (True, False, True, False, True))),
    (left_by_an_exception, ("ok", (False, True))),
    (changed_in_place_outside, ("error", "RuntimeError", INPLACE)),
    (changed_in_place_outside_under_no_grad, ("error", "RuntimeError", INPLACE)),
    (written_before_it_is_refused, ("ok", ([2.0, 2.0], F32))),
    (changed_in_place_inside, ("ok", ([2.0, 2.0], F32))),
    (item_assigned_outside, ("error", "RuntimeError", INPLACE)),
    (zeroed_outside, ("error", "RuntimeError", INPLACE)),
    (written_by_out_outside, ("error", "RuntimeError", INPLACE)),
    (view_changed_in_place_outside, ("error", "RuntimeError", INPLACE)),
    (saved_for_backward, ("error", "RuntimeError", SAVED)),
    (used_where_nothing_is_saved, ("ok", ([1.0, 1.0], F32))),
    (saved_by_a_function, ("error", "RuntimeError", SAVED)),
    (made_to_require_grad_outside, ("error", "RuntimeError", REQUIRES_GRAD)),
    (made_to_require_grad_by_the_attribute, ("error", "RuntimeError", REQUIRES_GRAD)),
    (made_to_require_grad_inside, ("ok", (True, True))),
    (made_to_stop_requiring_grad_outside, ("ok", False)),
    (a_leaf_that_requires_grad, ("ok", (True, False, True, True, True))),
    (its_version, ("error", "RuntimeError", "Inference tensors do not track version counter.")),
    (its_version_inside,
     ("error", "RuntimeError", "Inference tensors do not track version counter.")),
    (a_normal_tensor_changed_inside, ("ok", (([2.0, 2.0], F32), 1, False))),
    (a_view_of_a_normal_tensor_made_inside, ("ok", (False, True, True))),
    (a_view_made_inside_changed_outside,
     ("error", "RuntimeError", "A view was created in inference mode and is being modified "
      "inplace in normal mode. Given that this use case is ambiguous and error-prone, it is "
      "forbidden. You can clarify your code by moving both the view and the inplace either "
      "both inside the inference_mode block (if you don't want the inplace to be tracked) or "
      "both outside (if you want the inplace to be tracked).")),
    (a_view_made_inside_changed_outside_without_grad,
     ("ok", (([0.0, 2.0, 2.0, 3.0, 4.0, 5.0], F32), False))),
    (a_view_made_outside, ("ok", (True, False))),
    (detached_and_cloned, ("ok", (True, True, False, ([2.0, 2.0], F32)))),
    (backward_inside, ("ok", (([2.0, 4.0], F32), True))),
    (ops_outside_give_normal_tensors, ("ok", (False, ([3.0, 3.0], F32)))),
    (legacy_constructor_inside, ("ok", True)),
    (grad_of_an_inference_tensor, ("ok", (None, True, False, [1.0, 1.0]))),
]
test_the_kit_does_what_pytorch_2_does, test_pytorch_does_it_too = expected_outcomes(CASES)


def test_inference_mode_is_per_thread():
    seen = {}

    def other():
        seen["mode"] = ak.is_inference_mode_enabled()
        seen["tensor"] = ak.ones(2).is_inference()
    with ak.inference_mode():
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert ak.ones(2).is_inference()
    assert seen == {"mode": False, "tensor": False}


def test_tensors_made_after_leaving_are_normal_again():
    with ak.inference_mode():
        inside = ak.ones(2)
    outside = ak.ones(2)
    assert inside.is_inference() and not outside.is_inference()
    outside.add_(1)  # (the fast path for in-place updates is back)
    assert outside._version == 1
