"""An engine's error, read as facts: what kind, which node, which versions.

The explainer (``%autograd_explain``) and the widgets say in plain words what
stopped a backward pass.  Both need the same facts, whichever engine raised the
error, and both get them from :func:`error_facts`, as an :class:`ErrorFacts`:

* autograd_kit's errors (:mod:`autograd_kit.errors`) carry their facts as
  attributes: ``err.kind``, ``err.node``, ``err.saved_name``, ``err.found``...
* PyTorch's are plain ``RuntimeError``, but PyTorch words each kind the same way
  every time, so the facts are read back from the message with the patterns of
  :data:`.messages.TORCH_MESSAGES`: the one place in the kit that knows PyTorch's
  wording.
  (autograd_kit words its errors as PyTorch does, so the same patterns also give
  what a kit error does not keep as an attribute, such as the changed tensor's
  type and shape.)

A message never names the node that needed a changed or freed value, so for a
PyTorch error :func:`find_saved` looks for it in the graph below the tensors the
pass started from: the node whose saved value can no longer be read, for that
reason (:func:`autograd_kit.viz.access.saved_value`).

>>> facts = error_facts(RuntimeError(
...     "one of the variables needed for gradient computation has been modified by an "
...     "inplace operation: [torch.FloatTensor [2, 3]], which is output 0 of Mul, is at "
...     "version 1; expected version 0 instead. Hint: ..."))
>>> facts.kind, facts.engine, facts.found, facts.expected, facts.shape, facts.producer
('saved_modified', 'torch', 1, 0, (2, 3), 'Mul')
>>> error_facts(RuntimeError("element 1 of tensors does not require grad and does "
...                          "not have a grad_fn")).index
1
>>> error_facts(ValueError("something else")).kind
''
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from . import access
from .messages import TORCH_MESSAGES, is_kit_error, read_message  # noqa: F401


#: facts that autograd_kit's errors keep as attributes
ATTRIBUTES = ("tensor", "node", "saved_name", "view", "producer", "found", "expected")
#: the kinds whose node is found in the graph, and the reason its saved value
#: can't be read (as :class:`autograd_kit.viz.access.Unavailable` says it)
SAVED_REASONS = {"saved_modified": "modified", "graph_freed": "freed"}
MAX_NODES = 5000
#: the exception classes read here: PyTorch raises its autograd errors as
#: RuntimeError, and "Torch not compiled with CUDA enabled" as AssertionError
ERRORS = (RuntimeError, AssertionError)  # nodes searched for a freed or changed saved value


@dataclass
class ErrorFacts:
    """What an autograd error says, for either engine; a fact that is not known
    stays None (the words shown then say less; they never guess)."""

    kind: str = ""              # "saved_modified", "graph_freed"... ("": none of these)
    engine: str = ""            # "autograd_kit" or "torch"
    message: str = ""           # the error's own message, as the engine wrote it
    tensor: object = None       # the tensor involved: the root, the leaf changed...
    node: object = None         # the node that needed a changed or freed saved value
    saved_name: str | None = None  # the name it saved that value under: "self"...
    view: bool = False          # leaf_inplace: a view of the leaf was changed
    producer: str | None = None    # the op that made the changed tensor
    found: int | None = None       # the changed tensor's version now...
    expected: int | None = None    # ...and when it was saved
    type_name: str | None = None   # "torch.FloatTensor"
    shape: tuple | None = None     # the changed tensor's (or the root's) shape
    index: int | None = None       # which of backward()'s tensors it is about
    traceback: object = None       # where it was raised
    history: list = field(default_factory=list, repr=False)  # the notebook's earlier
    # cells, newest first, where the explainer knows them (where a name came from)

    @property
    def node_name(self) -> str:
        """``"MulBackward0"``, or ``""`` when the node is not known."""
        return access.node_name(self.node) if self.node is not None else ""


def error_facts(err, roots=()) -> ErrorFacts:
    """The facts of ``err``: from its attributes for autograd_kit's errors, from
    its wording for PyTorch's.  ``roots`` (the tensors a backward pass started
    from) are searched for the node, where the error does not name it."""
    facts = ErrorFacts(message=str(err), traceback=getattr(err, "__traceback__", None))
    if not isinstance(err, ERRORS):
        return facts
    for key, value in read_message(facts.message).items():
        setattr(facts, key, value)
    if is_kit_error(err):
        facts.engine, facts.kind = "autograd_kit", str(err.kind)
        for key in ATTRIBUTES:
            value = getattr(err, key, None)
            if value is not None:
                setattr(facts, key, value)
    elif facts.kind:
        facts.engine = "torch"
    if facts.node is None and facts.kind in SAVED_REASONS and roots:
        facts.node, facts.saved_name = find_saved(roots, SAVED_REASONS[facts.kind])
    if facts.shape is None and access.is_tensor(facts.tensor):
        facts.shape = access.shape_of(facts.tensor)
    return facts


# -- what the message does not say: the node, from the graph ------------------------------
def nodes_below(roots) -> list:
    """Every node below the tensors or nodes ``roots``, each once, nearest first."""
    todo = deque(getattr(r, "grad_fn", r) for r in roots)
    seen, order = set(), []
    while todo and len(order) < MAX_NODES:
        node = todo.popleft()
        if node is None or id(node) in seen or not access.is_node(node):
            continue
        seen.add(id(node))
        order.append(node)
        todo.extend(n for n, _ in access.next_edges(node))
    return order


def find_saved(roots, reason: str):
    """``(node, saved name)`` of the first node below ``roots`` whose saved value
    can't be read for ``reason`` ("freed" or "modified"), or ``(None, None)``."""
    for node in nodes_below(roots):
        for name in access.saved_names(node):
            value = access.saved_value(node, name)
            if isinstance(value, access.Unavailable) and value.reason == reason:
                return node, name
    return None, None
