"""Every error and warning message of the engine, worded as PyTorch words them.

They are all ``RuntimeError`` subclasses, so ``except RuntimeError`` code from
PyTorch tutorials keeps working; the subclasses carry the facts (the node, the
versions) that the notebook explanations and widgets show.
"""
from __future__ import annotations

import os
from types import TracebackType

from .grad_mode import is_anomaly_enabled

_explainer = None
_KIT = os.path.dirname(os.path.abspath(__file__)) + os.sep


def short(err: BaseException) -> BaseException:
    """``err``, ready to be raised again from a public entry point with a short
    traceback: the learner's line and the public call, not the kit's insides.

    Used as ``except Exception as err: raise errors.short(err)`` in
    ``Tensor.backward``, ``autograd.grad``, the in-place methods...  PyTorch's
    own traceback for the same mistake stops at its C++ boundary; this is the
    pure-Python equivalent.  An error that began inside the kit loses every
    frame below the public call.  If some frames below are someone else's (a
    hook, a custom ``Function.backward``), those stay, each with its two kit
    neighbours: the kit frame that called it and the first kit call it made
    (``ctx.saved_tensors``); the kit frames in between go.  A "During handling of
    the above exception" chain from inside the kit (a numpy ``ValueError`` turned
    into PyTorch's message) is hidden too."""
    ctx = err.__context__
    if ctx is not None and _began_in_kit(ctx):
        err.__suppress_context__ = True
    render = _explainer
    if render is not None and not hasattr(err, "_render_traceback_"):
        try:  # in IPython: rendered as AutogradError is, ending at the learner's line
            err._render_traceback_ = lambda: render(err)
        except AttributeError:  # (a class that takes no new attributes)
            pass
    entries = []
    tb = err.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    theirs = [not _in_kit(entry) for entry in entries]
    if not any(theirs):
        return err.with_traceback(None)  # ``raise`` adds back the public call's frame
    kept = None
    for i in range(len(entries) - 1, 0, -1):  # (entries[0]: the frame raising it again)
        if theirs[i] or theirs[i - 1] or (i + 1 < len(entries) and theirs[i + 1]):
            entry = entries[i]
            kept = TracebackType(kept, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return err.with_traceback(kept)


def _in_kit(entry: TracebackType) -> bool:
    return entry.tb_frame.f_code.co_filename.startswith(_KIT)


def _began_in_kit(err: BaseException) -> bool:
    tb = err.__traceback__
    return tb is None or _in_kit(tb)


def op_name(node) -> str:
    """The op's name as PyTorch's messages give it: ``Unbind`` for UnbindBackward0."""
    import re
    return re.sub(r"Backward\d*$", "", node.name())


def type_path(value) -> str:
    """A value's type as PyTorch's messages name it: ``float``, ``numpy.ndarray``."""
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                   "int64": "long int", "int32": "int", "int16": "short int",
                   "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def cpp_type_name(np_dtype) -> str:
    """The C++ name of a dtype, which some of PyTorch's messages print: ``long int``."""
    return _CPP_TYPE_NAMES.get(str(np_dtype), str(np_dtype))


def set_explainer(fn) -> None:
    """Register ``fn(error) -> list of lines`` to render, in IPython, autograd
    errors and the errors :func:`short` passes on (set while the extension is
    loaded); ``None`` restores IPython's usual traceback."""
    global _explainer
    _explainer = fn


class AutogradError(RuntimeError):
    """Base class: a RuntimeError with PyTorch's message and structured details."""

    kind = "autograd"
    tensor = None  # the tensor involved, when there is one (for pictures)
    root = None    # the tensors backward started from, when raised during backward

    @property
    def _render_traceback_(self):
        # IPython calls ``err._render_traceback_()`` when the attribute exists; it
        # only exists while an explainer is registered.
        if _explainer is None:
            raise AttributeError("_render_traceback_")
        return lambda: _explainer(self)


class NonScalarBackwardError(AutogradError):
    kind = "non_scalar"

    def __init__(self, tensor=None) -> None:
        self.tensor = tensor
        super().__init__("grad can be implicitly created only for scalar outputs")


class GraphFreedError(AutogradError):
    kind = "graph_freed"

    def __init__(self, node=None) -> None:
        self.node = node
        super().__init__(
            "Trying to backward through the graph a second time (or directly access saved "
            "tensors after they have already been freed). Saved intermediate values of the "
            "graph are freed when you call .backward() or autograd.grad(). Specify "
            "retain_graph=True if you need to backward through the graph a second time or "
            "if you need to access saved tensors after calling backward.")


class LeafInplaceError(AutogradError):
    kind = "leaf_inplace"

    def __init__(self, tensor=None, view: bool = False) -> None:
        self.tensor = tensor
        self.view = view
        what = "a view of a leaf Variable" if view else "a leaf Variable"
        super().__init__(f"{what} that requires grad is being used in an in-place operation.")


NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked).")


class ModifiedSavedTensorError(AutogradError):
    kind = "saved_modified"

    def __init__(self, node, saved_name: str, type_desc: str, producer: str | None,
                 found: int, expected: int) -> None:
        self.node, self.saved_name = node, saved_name
        self.found, self.expected = found, expected
        self.producer = producer
        which = f", which is output 0 of {producer}," if producer else ""
        hint = ANOMALY_ON_HINT if is_anomaly_enabled() else ANOMALY_OFF_HINT
        super().__init__(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {type_desc}{which} is at version {found}; expected version "
            f"{expected} instead. Hint: {hint}")


# The end of the message above: what to do next, depending on anomaly detection.
ANOMALY_OFF_HINT = ("enable anomaly detection to find the operation that failed to compute "
                    "its gradient, with torch.autograd.set_detect_anomaly(True, "
                    "check_nan=False).")
ANOMALY_ON_HINT = ("the backtrace further above shows the operation that failed to compute "
                   "its gradient. The variable in question was changed in there or anywhere "
                   "later. Good luck!")


class NoGradFnError(AutogradError):
    kind = "no_grad_fn"

    def __init__(self, index: int = 0, tensor=None) -> None:
        self.tensor = tensor
        super().__init__(
            f"element {index} of tensors does not require grad and does not have a grad_fn")


class GradShapeError(AutogradError):
    kind = "grad_shape"

    def __init__(self, index: int, got, expected, tensor=None) -> None:
        self.tensor = tensor
        super().__init__(
            f"Mismatch in shape: grad_output[{index}] has a shape of {got} and "
            f"output[{index}] has a shape of {expected}.")


class DeviceMismatchError(AutogradError):
    kind = "device"

    def __init__(self, a, b) -> None:
        first, second = (a, b) if str(a) != "cpu" else (b, a)  # PyTorch names the GPU first
        super().__init__("Expected all tensors to be on the same device, but found at "
                         f"least two devices, {first} and {second}!")


NON_LEAF_REQUIRES_GRAD = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach().")
NON_LEAF_REQUIRES_GRAD_SHORT = "you can only change requires_grad flags of leaf variables."
# PyTorch words the integer case three ways, depending on how it was asked:
INT_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
INT_REQUIRES_GRAD_ATTR = "only Tensors of floating point and complex dtype can require gradients"
INT_REQUIRES_GRAD_METHOD = "only Tensors of floating point dtype can require gradients"
LEGACY_FUNCTION = ("Legacy autograd function with non-static forward method is deprecated. "
                   "Please use new-style autograd function with static forward method. "
                   "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd."
                   "Function)")
DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_NOT_RETURNED = ("Some elements marked as dirty during the forward method were not "
                      "returned as output. The inputs that are modified inplace must all be "
                      "outputs of the Function.")
ONCE_DIFFERENTIABLE = ("trying to differentiate twice a function that was marked with "
                       "@once_differentiable")
# An in-place change of a view that autograd cannot follow: made by a Function
# ("custom") or one of several views made at once ("multi"), as PyTorch says it.
VIEW_INPLACE = "Output {k} of {name} is a view and is being modified inplace. "
VIEW_INPLACE_WHY = {
    "custom": ("This view was created inside a custom Function (or because an input was "
               "returned as-is) and the autograd logic to handle view+inplace would override "
               "the custom backward associated with the custom Function, leading to "
               "incorrect gradients. This behavior is forbidden. You can fix this by cloning "
               "the output of the custom Function."),
    "multi": ("This view is the output of a function that returns multiple views. Such "
              "functions do not allow the output views to be modified inplace. You should "
              "replace the inplace operation by an out-of-place one."),
}
GRAD_TYPE = "assigned grad expected to be a Tensor or None but got grad of type {got}"
GRAD_IS_SELF = "can't assign Variable as its own grad"
GRAD_DTYPE = (
    "attempting to assign a gradient with dtype '{got}' to a tensor with grad_dtype '{want}'. "
    "The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You "
    "can set the tensor's grad_dtype attribute with a specific dtype, or None to allow any "
    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
    "may break downstream systems that assume they match.")
GRAD_SIZE = ("attempting to assign a gradient of size '{got}' to a tensor of size '{want}'. "
             "Please ensure that the gradient and the tensor are the same size")
NUMPY_REQUIRES_GRAD = ("Can't call numpy() on Tensor that requires grad. "
                       "Use tensor.detach().numpy() instead.")
NUMPY_ON_CUDA = ("can't convert {dev} device type tensor to numpy. Use Tensor.cpu() to copy "
                 "the tensor to host memory first.")
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")
RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
HOOK_CHANGED_SIZE = "hook '{name}' has changed the size of value"
HOOK_CHANGED_TYPE = "hook '{name}' has changed the type of value (was {was} got {got})"
ONE_ELEMENT_ITEM = "a Tensor with {n} elements cannot be converted to Scalar"
ONE_ELEMENT_SCALAR = "only one element tensors can be converted to Python scalars"  # float(t)
CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")
GRADCHECK_NOT_DOUBLE = (
    "Input #{index} requires gradient and is not a double precision floating point or "
    "complex. This check will likely fail if all the inputs are not of double precision "
    "floating point or complex. ")
UNUSED_INPUT = ("The differentiated Tensor at index {index} appears to not have been used "
                "in the graph. Set allow_unused=True if this is the desired behavior.")

# -- PyTorch 2's autograd contract: inference mode, hooks, saved tensors, views ---------
INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed."
                     "You can make a clone to get a normal tensor before doing inplace update."
                     "See https://github.com/pytorch/rfcs/pull/17 for more details.")
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead "
    "of `torch.inference_mode()`.")
INFERENCE_REQUIRES_GRAD = ("Setting requires_grad=True on inference tensor outside "
                           "InferenceMode is not allowed.")
INFERENCE_VERSION = "Inference tensors do not track version counter."
POST_ACC_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
POST_ACC_RETURNED = "Tensor post accumulate grad hooks should return None."
BACKWARD_INPUTS_EMPTY = "`inputs` argument to `{fn}()` cannot be empty."
MATERIALIZE_UNUSED = ("Expected allow_unused to be True or not passed when materialize_grads="
                      "True, but got: allow_unused=False.")
DETACH_VIEW_INPLACE = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.")
DETACHED_SAVED = ("Trying to use a saved tensor that has been detached in-place, i.e. with "
                  ".detach_().This is not supported, please use out-of-place `.detach()` "
                  "instead")
HOOKS_ALREADY_SET = ("Calling register_hooks on a saved tensor whose hooks have already been "
                     "set. Hint: only one pair of hooks is allowed at a time.")
HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward.")
UNPACK_NOT_TENSOR = ("Output of saved tensor unpack_hook expected to be a Tensor but got "
                     "result of type {got}")
# A view made where autograd was off (no_grad, inference mode), or a view of such a
# view, changed in place where it is on: PyTorch refuses, saying how it was made.
VIEW_MADE_IN = {"no_grad": " no_grad mode and is being modified inplace with grad mode enabled.",
                "inference": " inference mode and is being modified inplace in normal mode."}
VIEW_MADE_IN_WHY = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the {block} block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked).")
MARK_DIRTY_NOT_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input "
                        "Tensors that have been mutated should be passed to ctx.mark_dirty().")
SAVE_NOT_TENSOR = "save_for_backward can only save variables, but argument {i} is of type {got}"
NO_BACKWARD = ("You must implement either the backward or vjp method for your custom "
               "autograd.Function to use it with backward mode AD.")
NO_FORWARD = "You must implement the forward function for custom autograd.Function."
EXPAND_SIZE = ("The expanded size of the tensor ({target}) must match the existing size "
               "({existing}) at non-singleton dimension {dim}.  Target sizes: {tsizes}.  "
               "Tensor sizes: {sizes}")
INDEX_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                 "tensor refer to a single memory location. Please clone() the tensor before "
                 "performing the operation.")
INDEX_PUT_SHAPE = ("shape mismatch: value tensor of shape {value} cannot be broadcast to "
                   "indexing result of shape {result}")
INPLACE_CAST = "result type {src} can't be cast to the desired output type {dst}"
INPLACE_SHAPE = "output with shape {out} doesn't match the broadcast shape {bshape}"
INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location. Please clone() the tensor before "
                    "performing the operation.")

# -- values PyTorch refuses (reductions, losses, shapes) ----------------------------------
MEAN_DTYPE = ("mean(): could not infer output dtype. {what} dtype must be either a floating "
              "point or complex dtype. Got: {got}")
EMPTY_REDUCTION = "{name}(): Expected reduction dim to be specified for input.numel() == 0."
EMPTY_REDUCTION_HINT = " Specify the reduction dim with the 'dim' argument."
EMPTY_REDUCTION_DIM = "{name}(): Expected reduction dim {dim} to have non-zero size."
NORM_INF_EMPTY = ("linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                  "the operation does not have an identity")
NORM_INF_EMPTY_DIM = ("linalg.vector_norm cannot compute the {ord} norm on the dimension {dim}"
                      "because this dimension is empty and the operation does not have an "
                      "identity")
