"""Reading tensors and graph nodes by duck typing.

The picture code never imports an array library or an autograd engine.  It reads
the public autograd graph that autograd_kit and PyTorch share (a root must be a
tensor or a node of one of the two; :func:`require_tensor` refuses anything else
in one line):

* a tensor has ``grad_fn`` (None for a leaf), ``requires_grad``, ``is_leaf``,
  ``shape`` and ``grad``;
* a node has ``name()`` and ``next_functions``, a tuple of ``(node or None,
  input_nr)`` pairs; the ``AccumulateGrad`` node of a leaf has ``.variable``;
* what a node kept for the backward pass is readable as ``node._saved_self``,
  ``node._saved_other``...  Reading one after ``backward()`` freed it raises
  ``RuntimeError``; this module turns that into an :class:`Unavailable` marker so
  the picture can say "(freed)" instead of failing.

So the same functions read autograd_kit's tensors and real PyTorch tensors.

A third kind of graph is read too: micrograd's scalar ``Value`` (and any class
of the same shape, such as the one written in Karpathy's lecture), known by its
attributes ``data``, ``grad``, ``_prev`` (its inputs), ``_op`` and
``_backward`` (:func:`is_value`).  A Value is both the number and the node that
made it, so it stands for itself in a picture: :func:`next_edges` gives its
inputs and :func:`node_name` its operation.  micrograd is never imported here.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .messages import error_kind

SAVED_PREFIX = "_saved_"
#: what a micrograd ``Value`` has (see :func:`is_value`); the rare names first, so
#: that asking a tensor costs one failed lookup (a tensor's ``.data`` makes a tensor)
VALUE_ATTRS = ("_prev", "_backward", "_op", "data", "grad")
#: modules whose objects are never Values: the engines' own tensors and nodes
#: answer at once, without the lookups (a picture asks for every node)
NOT_VALUES = frozenset({"autograd_kit", "torch", "builtins", "numpy"})


@dataclass(frozen=True)
class Unavailable:
    """A saved value that cannot be read any more; ``reason`` is shown in the label."""

    reason: str  # "freed", "modified" or "unavailable"


def is_tensor(obj) -> bool:
    """True for anything that looks like a tensor of an autograd engine (an
    instance, not the ``Tensor`` class itself, which has the same attributes)."""
    if isinstance(obj, type):
        return False
    try:
        return (hasattr(obj, "grad_fn") and hasattr(obj, "requires_grad")
                and hasattr(obj, "shape"))
    except Exception:  # odd objects in a namespace such as globals()
        return False


def engine_name(t) -> str:
    """Which autograd engine made ``t``: ``"autograd_kit"``, ``"torch"``, or ``""``
    for anything that is not a tensor of either.  Read from the class's module, so
    PyTorch is never imported here."""
    if not is_tensor(t):
        return ""
    root = type(t).__module__.split(".", 1)[0]
    return root if root in ("autograd_kit", "torch") else ""


def _type_name(cls: type) -> str:
    """``"int"`` for a builtin class, ``"numpy.ndarray"`` for any other."""
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if cls.__module__ == "builtins" else f"{cls.__module__}.{name}"


def _engine_node(obj) -> bool:
    """True for a ``grad_fn`` node of autograd_kit or PyTorch (not a class).
    PyTorch's nodes are C++ classes of module ``builtins``: they are known by
    PyTorch's own ``torch.autograd.graph.Node``, asked only when PyTorch is
    already imported."""
    import sys
    if isinstance(obj, type) or not is_node(obj):
        return False
    if type(obj).__module__.split(".", 1)[0] == "autograd_kit":
        return True
    graph = getattr(getattr(sys.modules.get("torch"), "autograd", None), "graph", None)
    node_class = getattr(graph, "Node", None)
    return isinstance(node_class, type) and isinstance(obj, node_class)


def require_tensor(obj, what: str, *, many: bool = False, nodes: bool = False,
                   values: bool = False):
    """``obj`` if it is a tensor of autograd_kit or PyTorch, else a one-line
    ``TypeError`` that names what ``what`` (a tool's name) accepts.

    Every tool that takes a tensor checks it here, so a learner meets the same
    sentence whatever the tool.  An object that merely has a tensor's attributes
    (``grad_fn``, ``shape``...) is refused too: the tool would fail later, deep
    inside.  ``nodes``: a ``grad_fn`` node of either engine is accepted as well;
    ``many``: so is a non-empty list or tuple of what is accepted (``make_dot``
    draws several roots); ``values``: so is a micrograd ``Value`` (:func:`is_value`),
    for the tools that read its graph (the sentence is unchanged: it names the
    engines most learners use)."""
    from ..i18n import _

    def accepted(item) -> bool:
        return (bool(engine_name(item)) or (nodes and _engine_node(item))
                or (values and is_value(item)))

    def given(item, inside: bool = False) -> str:
        if isinstance(item, type):
            return _("the class {name}").format(name=item.__name__)
        name = _type_name(type(item))
        if many and not inside and isinstance(item, (tuple, list)):
            if not item:
                return _("an empty {type}").format(type=name)
            wrong = next(x for x in item if not accepted(x))
            return _("a {type} holding {item}").format(type=name, item=given(wrong, True))
        article = _("an {type}") if name[0].lower() in "aeiou" else _("a {type}")
        return article.format(type=name)

    if accepted(obj) or (many and isinstance(obj, (tuple, list)) and obj
                         and all(accepted(x) for x in obj)):
        return obj
    raise TypeError(_("{what} takes a tensor of autograd_kit or PyTorch (autograd_kit.Tensor "
                      "or torch.Tensor); it was given {given}.").format(what=what,
                                                                       given=given(obj)))


def is_node(obj) -> bool:
    """True for a backward node (a ``grad_fn``)."""
    return hasattr(obj, "next_functions") and callable(getattr(obj, "name", None))


def node_name(fn) -> str:
    """``"MulBackward0"``.  PyTorch's C++ nodes answer names such as
    ``"torch::autograd::AccumulateGrad"``; their namespace is dropped (only
    ``torch::``'s: a Function class whose own name holds ``::`` keeps it).  A
    micrograd Value answers its operation (``"*"``, ``"tanh"``), a leaf its
    class's name."""
    if is_value(fn):
        return value_op(fn) or type(fn).__name__
    try:
        name = str(fn.name())
    except Exception:  # a node whose name() fails still gets drawn
        name = type(fn).__name__
    return _CPP_NAMESPACE.sub("", name)


_CPP_NAMESPACE = re.compile(r"^torch::(?:\w+::)*")


def next_edges(fn) -> list[tuple[object, int]]:
    """The ``(node, input_nr)`` pairs of ``fn`` that lead somewhere (None dropped);
    for a micrograd Value, its inputs (see :func:`value_edges`)."""
    if is_value(fn):
        return value_edges([fn])(fn)
    return [(n, nr) for n, nr in getattr(fn, "next_functions", ()) if n is not None]


def leaf_variable(fn):
    """The leaf tensor of an ``AccumulateGrad`` node, else None."""
    return getattr(fn, "variable", None)


def saved_names(fn) -> list[str]:
    """Names of the values ``fn`` saved, in alphabetical order: ``["other", "self"]``.

    autograd_kit's nodes list them with ``saved_names()``; for PyTorch's nodes
    they are discovered as torchviz does, from the ``_saved_*`` attributes.  The
    same (sorted) order for both keeps their pictures identical."""
    method = getattr(fn, "saved_names", None)
    if callable(method):
        try:
            return sorted(str(n) for n in method())
        except Exception:
            pass
    try:
        attrs = dir(fn)
    except Exception:
        return []
    return [a[len(SAVED_PREFIX):] for a in attrs if a.startswith(SAVED_PREFIX)]


def saved_value(fn, name: str):
    """The saved value ``name`` of ``fn``, or :class:`Unavailable` with the reason,
    told by the error that reading it raised (:mod:`.messages` reads both
    engines' errors)."""
    try:
        return getattr(fn, SAVED_PREFIX + name)
    except RuntimeError as err:
        kind = error_kind(err)
        return Unavailable({"graph_freed": "freed", "saved_modified": "modified"}
                           .get(kind, "unavailable"))
    except Exception:
        return Unavailable("unavailable")


def shape_of(t) -> tuple[int, ...]:
    """The shape as a tuple of ints (``()`` for a micrograd Value: one number)."""
    if is_value(t):
        return ()
    return tuple(int(s) for s in t.shape)


def output_nr(t) -> int:
    """Which output of its ``grad_fn`` the tensor is (0 for single-output ops)."""
    try:
        return int(getattr(t, "output_nr", 0))
    except Exception:
        return 0


def grad_of(t):
    """``t.grad``, read only where it can exist.

    PyTorch warns when the ``.grad`` of a non-leaf tensor is read, since it is
    never filled unless ``retain_grad()`` was called; such tensors answer None."""
    if not getattr(t, "is_leaf", True) and not getattr(t, "retains_grad", False):
        return None
    return getattr(t, "grad", None)


def host_array(t):
    """The values of ``t`` as a host (numpy) array, or None if they can't be read.

    ``numpy(force=True)`` detaches and copies to the host in one call (PyTorch and
    autograd_kit both have it); older engines need ``detach().cpu().numpy()``; dtypes
    numpy lacks (bfloat16) are widened to float first."""
    attempts = (
        lambda: t.numpy(force=True),
        lambda: t.detach().cpu().numpy(),
        lambda: t.detach().float().cpu().numpy(),
    )
    for attempt in attempts:
        try:
            return attempt()
        except Exception:
            continue
    return None


def _kit_rule(fn):
    """autograd_kit's node class for ``fn``'s name (``"MulBackward0"``), or None.
    PyTorch's nodes carry no formulas, but the kit's rule tables use the same
    names, so a PyTorch ``MulBackward0`` is explained by the kit's ``MulBackward0``."""
    try:
        from autograd_kit.ops._rules import NODE_CLASSES
    except Exception:
        return None
    return NODE_CLASSES.get(node_name(fn))


def formula_text(fn) -> dict:
    """``{"self": "g * other", "other": "g * self"}``: the node's backward formula
    per input, from the node itself or from the kit's table for its name; ``{}``
    when no table knows it (custom Functions, PyTorch-only ops)."""
    texts = getattr(fn, "formula_text", None)
    if texts is None:
        texts = getattr(_kit_rule(fn), "formula_text", None)
    return dict(texts or {})


def input_names(fn) -> tuple:
    """The names of the node's inputs (``("self", "other")``), one per entry of
    ``next_functions``, or ``()`` when they are not known.  A table whose inputs
    do not line up with ``fn``'s edges is not used."""
    names = getattr(fn, "input_names", None)
    if names is None:
        names = tuple(getattr(_kit_rule(fn), "input_names", ()) or ())
        if len(names) != len(getattr(fn, "next_functions", ())):
            return ()
    return tuple(names)


def has_graph(root) -> bool:
    """Whether ``root`` (a tensor or a micrograd Value) is part of a graph that
    can be drawn: a tensor with a ``grad_fn`` or that requires grad; any Value."""
    if is_value(root):
        return True
    return getattr(root, "grad_fn", None) is not None or bool(
        getattr(root, "requires_grad", False))


# -- micrograd's Value ----------------------------------------------------------------
def is_value(obj) -> bool:
    """True for a scalar ``Value`` of micrograd, or of any class of the same shape
    (the one written in Karpathy's lecture): ``data``, ``grad``, ``_prev`` (the
    set of its inputs), ``_op`` (a string, empty for a leaf) and ``_backward``
    (the closure that sends its ``grad`` to its inputs).  Read by duck typing, so
    micrograd is never imported; a class is not a Value."""
    if isinstance(obj, type) or type(obj).__module__.partition(".")[0] in NOT_VALUES:
        return False
    try:
        return all(hasattr(obj, a) for a in VALUE_ATTRS) and callable(obj._backward)
    except Exception:  # odd objects in a namespace such as globals()
        return False


def value_op(v) -> str:
    """The operation that made the Value (``"*"``, ``"tanh"``), ``""`` for a leaf."""
    op = getattr(v, "_op", "")
    return "" if op is None else str(op)


def value_label(v) -> str:
    """The Value's own ``label`` (the lecture's Values carry one), or ``""``."""
    label = getattr(v, "label", "")
    return label if isinstance(label, str) else ""


def value_inputs(v) -> list:
    """The Values in ``v._prev``, as they come (a set's order: micrograd's own)."""
    try:
        return [c for c in (v._prev or ()) if is_value(c)]
    except Exception:  # a _prev that cannot be iterated: no inputs
        return []


def _value_key(v) -> bytes:
    """What a Value holds, as bytes: operation, number, label."""
    try:
        data = repr(v.data)
    except Exception:
        data = "?"
    text = "\x1f".join((value_op(v), data, value_label(v)))
    return text.encode("utf-8", "backslashreplace")


def value_edges(roots):
    """A function ``v -> [(input, 0), ...]`` for the Values below ``roots``, each
    Value's inputs in one fixed order (other nodes: :func:`next_edges`).  A list
    or tuple ``_prev`` keeps its own order; a set (micrograd's ``_prev``) has
    none but where its members sit in memory, so they are sorted by a digest of
    what they hold and of what their inputs hold, all the way down: the same
    code draws the same picture (inputs that hold the very same all the way
    down keep the set's order).  One iterative pass, each Value's digest
    computed once, inputs first."""
    digests: dict[int, bytes] = {}
    ordered: dict[int, list] = {}
    entered: set[int] = set()
    stack = [(v, False) for v in roots if is_value(v)]
    while stack:
        v, inputs_done = stack.pop()
        if id(v) in digests or (not inputs_done and id(v) in entered):
            continue  # done, or met again on a cycle
        kids = value_inputs(v)
        if not inputs_done:
            entered.add(id(v))
            stack.append((v, True))
            stack.extend((c, False) for c in kids if id(c) not in digests)
            continue
        if not isinstance(v._prev, (list, tuple)):
            kids.sort(key=lambda c: digests.get(id(c), b""))
        ordered[id(v)] = kids
        h = hashlib.blake2b(_value_key(v), digest_size=16)
        for c in kids:
            h.update(digests.get(id(c), b""))
        digests[id(v)] = h.digest()

    def edges(fn) -> list[tuple[object, int]]:
        if id(fn) in ordered:
            return [(c, 0) for c in ordered[id(fn)]]
        return [] if is_value(fn) else next_edges(fn)  # a tensor's node among the roots
    return edges
