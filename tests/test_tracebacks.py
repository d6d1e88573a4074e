"""Short tracebacks: a mistake shows the learner's line, the public call and the
message -- no more of the kit's frames than PyTorch shows of its own.

Each case is a small function, written once for both libraries, whose failing
line ends with ``# FAILS``.  PyTorch's frame count (where installed) is the
bound; a pure-Python library cannot go below one frame, the public call itself,
where PyTorch's C++ methods show none.  The kit's own bound (below) holds
whether PyTorch is installed or not.
"""
import copy
import inspect
import os
import traceback

import pytest

import autograd_kit as ak
from shell_support import ANSI, close_shell, make_shell

KIT = os.path.dirname(ak.__file__) + os.sep


def backward_twice(lib):
    x = lib.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()  # FAILS


def grad_twice(lib):
    x = lib.ones(3, requires_grad=True)
    y = (x * x).sum()
    lib.autograd.grad(y, [x])
    lib.autograd.grad(y, [x])  # FAILS


def modified_saved(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()  # FAILS


def modified_saved_grad(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    lib.autograd.grad(y.sum(), x)  # FAILS


def leaf_inplace(lib):
    x = lib.ones(3, requires_grad=True)
    x.add_(1)  # FAILS


def leaf_augmented_assignment(lib):
    x = lib.ones(3, requires_grad=True)
    x += 1  # FAILS


def leaf_setitem(lib):
    x = lib.ones(3, requires_grad=True)
    x[0] = 5  # FAILS


def view_of_leaf_inplace(lib):
    x = lib.ones(3, requires_grad=True)
    x[0:2].mul_(2)  # FAILS


def non_scalar_backward(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).backward()  # FAILS


def non_scalar_grad(lib):
    x = lib.ones(3, requires_grad=True)
    lib.autograd.grad(x * 2, x)  # FAILS


def backward_without_grad_fn(lib):
    lib.ones(3).sum().backward()  # FAILS


def grad_without_grad_fn(lib):
    x = lib.ones(3, requires_grad=True)
    lib.autograd.grad(lib.ones(3).sum(), [x])  # FAILS


def grad_unused_input(lib):
    x = lib.ones(3, requires_grad=True)
    w = lib.ones(3, requires_grad=True)
    lib.autograd.grad((x * 2).sum(), [x, w])  # FAILS


def grad_input_without_grad(lib):
    x = lib.ones(3, requires_grad=True)
    lib.autograd.grad((x * 2).sum(), [lib.ones(3)])  # FAILS


def gradient_of_wrong_shape(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).backward(lib.ones(4))  # FAILS


def add_shapes(lib):
    lib.ones(3) + lib.ones(4)  # FAILS


def mul_shapes(lib):
    x = lib.ones(3, requires_grad=True)
    x * lib.ones(4)  # FAILS


def sub_shapes(lib):
    lib.ones(2, 3) - lib.ones(2)  # FAILS


def div_shapes(lib):
    lib.ones(2, 3) / lib.ones(3, 2)  # FAILS


def matmul_shapes(lib):
    lib.ones(2, 3) @ lib.ones(2, 3)  # FAILS


def inplace_shapes(lib):
    lib.ones(3).add_(lib.ones(2, 3))  # FAILS


def inplace_cast(lib):
    lib.ones(3, dtype=lib.int64).add_(0.5)  # FAILS


def setitem_shapes(lib):
    a = lib.ones(3)
    a[0:2] = lib.ones(3)  # FAILS


def numpy_of_requires_grad(lib):
    x = lib.ones(3, requires_grad=True)
    x.numpy()  # FAILS


def item_of_many(lib):
    lib.ones(3).item()  # FAILS


def bool_of_many(lib):
    bool(lib.ones(3))  # FAILS


def requires_grad_on_non_leaf(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).requires_grad = False  # FAILS


def integer_requires_grad(lib):
    lib.tensor([1, 2]).requires_grad_()  # FAILS


def retain_grad_without_grad(lib):
    lib.ones(3).retain_grad()  # FAILS


def hook_without_grad(lib):
    lib.ones(3).register_hook(lambda g: g)  # FAILS


def deepcopy_of_non_leaf(lib):
    x = lib.ones(3, requires_grad=True)
    copy.deepcopy(x * 2)  # FAILS


def grad_of_wrong_size(lib):
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.ones(4)  # FAILS


def expand_shapes(lib):
    lib.ones(3).expand(2, 4)  # FAILS


def integer_requires_grad_at_creation(lib):  # lesson 01
    lib.tensor([1, 2, 3], requires_grad=True)  # FAILS


def integer_like_requires_grad(lib):
    lib.zeros_like(lib.tensor([1, 2]), requires_grad=True)  # FAILS


def integer_arange_requires_grad(lib):
    lib.arange(3, requires_grad=True)  # FAILS


def saved_tensor_after_backward(lib):  # lesson 02
    x = lib.ones(3, requires_grad=True)
    m = x * x
    m.sum().backward()
    m.grad_fn._saved_self  # FAILS


def saved_tensor_modified(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    exp_node = y.grad_fn
    y.add_(1)
    exp_node._saved_result  # FAILS


def float_of_many(lib):
    float(lib.ones(3))  # FAILS


def custom_backward_reads_modified(lib):  # lesson 12: the learner's Function
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors  # THEIR BACKWARD
            return g * 2 * x

    b = lib.ones(2, requires_grad=True) * 1
    y = Square.apply(b)
    b.mul_(10)
    y.sum().backward()  # FAILS


def hook_that_raises(lib):
    x = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: g.reshape(5))  # THEIR HOOK
    (x * 2).sum().backward()  # FAILS


def piece_changed_in_place(lib):
    x = lib.ones(2, 2, requires_grad=True)
    a, b = x.unbind()
    b.mul_(2)  # FAILS


def grad_of_wrong_dtype(lib):
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.ones(3, dtype=lib.int64)  # FAILS


def second_backward_through_indexing(lib):
    x = lib.ones(3, requires_grad=True)
    y = x[[0, 2]].sum()
    y.backward()
    y.backward()  # FAILS


def gradient_of_wrong_type(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).backward(gradient="abc")  # FAILS


def dirty_leaf(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    Double.apply(lib.ones(3, requires_grad=True))  # FAILS


CASES = [backward_twice, grad_twice, modified_saved, modified_saved_grad, leaf_inplace,
         leaf_augmented_assignment, leaf_setitem, view_of_leaf_inplace, non_scalar_backward,
         non_scalar_grad, backward_without_grad_fn, grad_without_grad_fn, grad_unused_input,
         grad_input_without_grad, gradient_of_wrong_shape, add_shapes, mul_shapes, sub_shapes,
         div_shapes, matmul_shapes, inplace_shapes, inplace_cast, setitem_shapes,
         numpy_of_requires_grad, item_of_many, bool_of_many, requires_grad_on_non_leaf,
         integer_requires_grad, retain_grad_without_grad, hook_without_grad,
         deepcopy_of_non_leaf, grad_of_wrong_size, expand_shapes,
         integer_requires_grad_at_creation, integer_like_requires_grad,
         integer_arange_requires_grad, saved_tensor_after_backward, saved_tensor_modified,
         float_of_many, custom_backward_reads_modified, hook_that_raises,
         piece_changed_in_place, grad_of_wrong_dtype, second_backward_through_indexing,
         gradient_of_wrong_type, dirty_leaf]
# (Some cases run code of the learner's below the kit: their backward, their hook.
# Those frames stay, with the kit frame that called them, as in PyTorch.)


def failure(case, lib):
    with pytest.raises(Exception) as info:
        case(lib)
    return info.value


def frames_in(err, package_dir):
    return [f for f in traceback.extract_tb(err.__traceback__)
            if f.filename.startswith(package_dir)]


def torch_frames(case):
    """How many of its own frames PyTorch shows for the same mistake (None: no torch)."""
    try:
        import torch
    except ImportError:
        return None
    return len(frames_in(failure(case, torch), os.path.dirname(torch.__file__) + os.sep))


def own_bound(case):
    """The kit's own limit, the same with or without PyTorch installed: the public
    call (one frame), plus, for each stretch of the learner's code the kit runs
    (a line marked ``# THEIR ...``), the kit frame that called it and the one kit
    call it made when it failed."""
    return 1 + 2 * inspect.getsource(case).count("# THEIR")


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_no_more_kit_frames_than_pytorch_shows(case):
    ours = frames_in(failure(case, ak), KIT)
    shown = [f"{f.filename}:{f.lineno} {f.name}" for f in ours]
    assert 1 <= len(ours) <= own_bound(case), shown
    theirs = torch_frames(case)
    if theirs is not None:  # (1: the public call itself)
        assert len(ours) <= max(theirs, 1), shown


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_the_learners_line_is_shown_and_nothing_is_chained(case):
    err = failure(case, ak)
    mine = [f for f in traceback.extract_tb(err.__traceback__)
            if f.filename == __file__ and f.name == case.__name__]
    assert mine and mine[-1].line.endswith("# FAILS")
    # no "During handling of the above exception, another exception occurred"
    assert err.__context__ is None or err.__suppress_context__
    assert err.__cause__ is None


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_no_frame_is_shown_twice(case):
    # (``raise err`` in an except block adds its frame again, at the raise line)
    tb, frames = failure(case, ak).__traceback__, []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    assert len({id(f) for f in frames}) == len(frames), [f.f_code.co_name for f in frames]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_the_error_is_the_kind_pytorch_raises(case):
    torch = pytest.importorskip("torch")
    theirs = type(failure(case, torch)).__mro__
    assert isinstance(failure(case, ak), next(c for c in theirs if c.__module__ == "builtins"))


@pytest.mark.parametrize("case, marker", [(custom_backward_reads_modified, "# THEIR BACKWARD"),
                                          (hook_that_raises, "# THEIR HOOK")])
def test_the_learners_code_below_the_kit_is_shown(case, marker):
    shown = traceback.extract_tb(failure(case, ak).__traceback__)
    theirs = [i for i, f in enumerate(shown) if f.line.endswith(marker)]
    assert theirs, [f.line for f in shown]
    caller = shown[theirs[0] - 1]  # the kit frame that called their code
    assert caller.filename.startswith(KIT)


def test_the_message_is_unchanged():
    err = failure(modified_saved, ak)
    assert str(err).startswith("one of the variables needed for gradient computation has "
                               "been modified by an inplace operation")
    assert isinstance(err, ak.errors.ModifiedSavedTensorError)


def test_the_step_generator_shows_one_frame_too():
    x = ak.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    steps = ak.autograd.backward_steps(y)  # as the step-by-step widget walks it
    with pytest.raises(RuntimeError, match="a second time") as info:
        for _ in steps:
            pass
    ours = frames_in(info.value, KIT)
    assert [f.name for f in ours] == ["backward_steps"]


def test_errors_in_the_learners_own_backward_keep_their_frames():
    class Broken(ak.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("my backward is broken")  # USER BACKWARD

    x = ak.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="my backward is broken") as info:
        Broken.apply(x).sum().backward()
    lines = [f.line for f in traceback.extract_tb(info.value.__traceback__)]
    assert any(line.endswith("# USER BACKWARD") for line in lines)


def test_a_hook_that_raises_keeps_its_frame():
    x = ak.ones(2, requires_grad=True)

    def hook(g):
        raise ValueError("hook says no")  # USER HOOK

    x.register_hook(hook)
    with pytest.raises(ValueError) as info:
        (x * 2).sum().backward()
    lines = [f.line for f in traceback.extract_tb(info.value.__traceback__)]
    assert any(line.endswith("# USER HOOK") for line in lines)


def test_ipython_shows_a_short_traceback():
    from IPython.utils.capture import capture_output
    shell = make_shell("import autograd_kit as torch\n")
    try:
        with capture_output() as cap:
            result = shell.run_cell("x = torch.ones(3, requires_grad=True)\n"
                                    "y = (x * x).sum()\n"
                                    "y.backward()\n"
                                    "y.backward()\n")
        shown = ANSI.sub("", cap.stdout + cap.stderr)
    finally:
        close_shell(shell, ["x", "y"])
    assert isinstance(result.error_in_exec, ak.errors.GraphFreedError)
    assert "----> 4 y.backward()" in shown  # the learner's line
    kit_files = [line for line in shown.splitlines()
                 if line.startswith("File ") and KIT in line]
    assert kit_files == []  # (with the extension loaded: the learner's frames only)
    assert "Trying to backward through the graph a second time" in shown
    assert len(shown.strip().splitlines()) <= 8
