"""How an operation joins the graph: rules, nodes and ``record``.

Every op family (``arith.py``, ``unary.py``...) writes its forward code with
plain arrays, then calls ``record(Node, out, inputs, **saved)``.  Its backward
formulas sit in one table of ``rule(...)`` rows, one formula per input, in the
style of PyTorch's ``derivatives.yaml``::

    rule("MulBackward0", saves="self other", self="g * other", other="g * self")

reads: *the node called MulBackward0 keeps ``self`` and ``other``; the gradient
for ``self`` is the incoming gradient ``g`` times ``other``...*  The formula
strings are compiled once, at import, into functions that work on Tensors *or*
on plain arrays (``formula_env`` supplies the words they use):

* ``apply`` runs them on Tensors, under ``backward(create_graph=True)``, so
  the gradients are recorded and second derivatives come for free;
* ``apply_array`` runs the same formulas on arrays, for an ordinary
  ``backward()``, where nobody will differentiate the gradients again.

Broadcasting is undone here, in one place (``_fit``): a gradient that comes out
bigger than its input is summed down to the input's shape, never inside a
formula.
"""
from __future__ import annotations

import ast
import re
import sys
import threading

from .. import backend, errors
from ..graph import NUMBER_FREED, Node, SavedTensor, next_node, raise_freed, refresh_view
from ..grad_mode import _anomaly, _state
from ..refcounts import EXACT
from ..tensor import Tensor
from .formula_env import OPS  # (``full``, ``sum_to``, ``CloneBackward0``: put there by ops/)

_make = Tensor._make
RESULT = object()  # ``record(..., result=RESULT)`` saves the op's own output
NODE_CLASSES: dict[str, type] = {}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


class OpNode(Node):
    """A node built from a rule: its formulas turn ``g`` into input gradients."""

    __slots__ = ("_meta", "_need")
    _formulas_only = True  # formulas read g, never write it or hand it out
    # _meta, flat: shape0, dtype0, shape1, dtype1... the gradients must have
    # _need: per input, does it need a gradient (has an edge)?
    formula_text: dict = {}
    input_names: tuple = ()
    n_inputs = 0          # how many formulas (0 for a variadic rule)
    variadic = None
    uses: tuple = ()      # per input: the saved names its formula reads
    times_g = None        # per input: X where the formula is "g * X" (else None)
    g_times = None        # per input: the formula written into g itself (else None)
    _keep: dict = {}      # which inputs need a gradient -> the saved names to keep

    @staticmethod
    def gradients(g, need, saved) -> tuple:
        """All input gradients at once: ``(formula0 if need[0] else None, ...)``,
        compiled from the rule's formulas."""
        raise NotImplementedError

    @classmethod
    def keep_for(cls, mask) -> frozenset:
        """The saved names the needed formulas read (PyTorch saves nothing else)."""
        keep = cls._keep.get(mask)
        if keep is None:
            keep = frozenset().union(*(u for u, m in zip(cls.uses, mask) if m)) \
                if cls.variadic is None else frozenset(cls.saves_all)
            cls._keep[mask] = keep
        return keep

    def _which(self, needed):
        """Which inputs get a gradient: those with an edge (and, for
        ``autograd.grad``, only edges leading to a requested input)."""
        if needed is None:
            return self._need
        return tuple(n and fn in needed for n, fn in zip(self._need, self._next)) \
            + self._need[len(self._next):]

    def apply(self, g, needed=None):
        """The input gradients as Tensors (recorded when ``create_graph=True``)."""
        if self._holds_tensors == NUMBER_FREED:
            raise_freed(self)
        kw = {k: (v.unpack(self, k) if v.__class__ is SavedTensor else v)
              for k, v in self._saved.items()}
        raw = self.gradients(g, self._which(needed), kw)
        meta = self._meta
        return tuple(None if gi is None else self._fitted(i, gi, _fit(gi, meta[2 * i],
                                                                        meta[2 * i + 1]))
                     for i, gi in enumerate(raw))

    def _fitted(self, i, raw, fitted):
        """``fitted``, a formula's gradient summed down to input i's shape, if
        that shape came out; else PyTorch's error (a gradient that does not
        broadcast with its input: a scatter's src bigger than its index)."""
        want = self._meta[2 * i]
        if tuple(fitted.shape) != want:
            raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                               f"{i} - got {list(raw.shape)} but expected shape compatible "
                               f"with {list(want)}")
        return fitted

    def apply_array(self, g, needed=None, borrowed=None):
        """``apply`` on plain arrays, for an ordinary backward: the same formulas,
        no Tensors built.  (Written for speed: this runs once per node.)

        ``borrowed``: a set from a plain ``backward()`` pass that lets a gradient
        be a saved array itself (see ``_times_one``); the ids of such arrays are
        added to it, and the engine copies them before user code could see them."""
        kw = self._saved
        holds = self._holds_tensors
        if holds:
            if holds is True:  # unpack (version-checked) into a fresh dict
                kw = {k: (v.unpack_data(self, k) if v.__class__ is SavedTensor else v)
                      for k, v in kw.items()}
            elif holds == NUMBER_FREED:
                raise_freed(self)
        need = self._need if needed is None else self._which(needed)
        meta = self._meta
        if g.base is None:
            # g held only by the engine's loop and by us (+ getrefcount's argument):
            # a formula "g * R" for the one input that needs it may write into g
            # (worth it for big arrays only, as numpy's own rule for temporaries)
            if self.g_times is not None and g.nbytes >= _REUSE_BYTES and EXACT and \
                    sys.getrefcount(g) == 3 and need.count(True) == 1:
                i = need.index(True)
                if self.g_times[i] is not None and g.shape == meta[2 * i] and \
                        g.dtype == meta[2 * i + 1]:
                    out = [None] * len(need)
                    out[i] = self.g_times[i](g, kw)
                    return tuple(out)
            out = self.gradients(g, need, kw)
        elif self.times_g is not None and backend.is_broadcast_one(g):
            out = self._times_one(g, need, kw, borrowed)  # (a broadcast has a base)
        else:
            out = self.gradients(g, need, kw)
        i = 0
        for gi in out:
            if gi is not None and (gi.__class__ not in _ARRAYS or gi.shape != meta[i]
                                   or gi.dtype != meta[i + 1]):
                return tuple(None if gi is None else
                             self._fitted(i, gi, backend.fit_array(gi, meta[2 * i],
                                                                   meta[2 * i + 1], g))
                             for i, gi in enumerate(out))
            i += 2
        return out

    def _times_one(self, g, need, kw, borrowed):
        """g is the broadcast 1 that ``sum()`` sends back: a formula "g * x"
        gives x (when x has g's shape and dtype), without multiplying.

        x is a saved forward value (a parameter, an input), and a gradient that
        reaches user code (a hook, ``.grad``, ``autograd.grad``, a custom
        backward, a Step) is the caller's to change in place.  So x itself is
        given only to a plain ``backward()`` pass that keeps a ``borrowed`` set:
        it copies such an array before any user code can see it, and a leaf's
        ``.grad`` that still shares it is copied at the end of the pass
        (``accumulate.settle``).  Everyone else gets a copy here."""
        direct = [n and name is not None and kw[name].__class__ is g.__class__
                  and kw[name].shape == g.shape and kw[name].dtype == g.dtype
                  for n, name in zip(need, self.times_g)]
        rest = self.gradients(g, tuple(n and not d for n, d in zip(need, direct)), kw)
        if borrowed is None:
            return tuple(kw[name].copy() if d else gi
                         for d, name, gi in zip(direct, self.times_g, rest))
        out = []
        for d, name, gi in zip(direct, self.times_g, rest):
            if d:
                gi = kw[name]
                borrowed.add(id(gi))
            out.append(gi)
        return tuple(out)


_ARRAYS = backend.ARRAY_TYPES
_REUSE_BYTES = 256 * 1024  # numpy reuses temporaries from this size up, too


def _fit(grad, shape, dtype):
    """Make a gradient match its input: sum out broadcast dims, cast the dtype."""
    if grad is None:
        return None
    if grad.__class__ is not Tensor:  # a Python number from a formula such as "0"
        return OPS.full(shape, grad, dtype=backend.to_dtype(dtype))
    if grad._data.shape != shape:
        grad = OPS.sum_to(grad, shape)
    if grad._data.dtype != dtype:
        grad = grad.to(backend.to_dtype(dtype))
    return grad


def rule(name: str, saves: str = "", variadic: str | None = None, *,
         common: str | None = None, **formulas):
    """Declare a node class ``name`` whose gradients are the given formula strings.

    ``saves`` names what forward keeps (inputs, ``result``, or plain attributes such
    as ``dim``); each keyword names one input, in order, with its formula in ``g``.
    ``variadic`` is one formula returning the gradients of all inputs at once (for
    ``cat`` and ``stack``, which take any number of tensors).  ``common`` is one
    assignment, ``"name = expression"``, computed once before the formulas that
    use ``name`` (PyTorch's ``atan2_backward`` shares one reciprocal between its
    two gradients, and so does the graph ``create_graph=True`` records).
    """
    from . import formula_env
    names = saves.split()
    params = ", ".join(["g"] + names)
    words = lambda text: set(_IDENTIFIER.findall(text)) & set(names)  # noqa: E731
    all_at_once = eval(f"lambda {params}: {variadic}", formula_env.ENV) if variadic else None
    times_g, g_times = _products_of_g(formulas.values(), names)
    shown = dict(formulas)
    uses = [frozenset(words(text)) for text in formulas.values()]
    if common is not None:
        shared, expression = (part.strip() for part in common.split("=", 1))
        for i, (key, text) in enumerate(formulas.items()):
            if shared in _IDENTIFIER.findall(text):  # (shown with the expression in place)
                shown[key] = re.sub(rf"\b{shared}\b", expression, text)
                uses[i] = uses[i] | words(expression)
    attrs = {
        "__slots__": (),
        "formula_text": shown if variadic is None else {"*inputs": variadic},
        "input_names": tuple(formulas),
        "n_inputs": len(formulas),
        "variadic": staticmethod(all_at_once) if variadic else None,
        "gradients": staticmethod(_all_gradients(all_at_once) if variadic else
                                  _gradients_function(formulas.values(), names, common)),
        "uses": tuple(uses),
        "saves_all": tuple(names),
        "_keep": {},
        "times_g": times_g,  # per input: X when the formula is just "g * X"
        "g_times": g_times,  # per input: the formula computed into g (see _products_of_g)
    }
    cls = type(name, (OpNode,), attrs)
    NODE_CLASSES[name] = cls
    return cls


def _gradients_function(texts, names, common=None):
    """Compile a rule's formulas into one function ``gradients(g, need, saved)``
    returning ``(formula0 if need[0] else None, ...)``, where each saved name
    in a formula reads ``saved["name"]`` (a dict lookup is cheaper than
    passing the dict as keyword arguments, and this runs once per node).

    The formulas run last input first.  The first input is usually the one
    whose gradient travels on (the activations of ``x @ W``, not the weight),
    so its gradient is the freshest in the processor's cache when the next
    node reads it -- the order a hand-written backward uses."""
    from . import formula_env
    lines = ["def gradients(g, need, saved):"]
    read = _ReadSaved(set(names))
    if common is not None:  # ("name = expression", once for every formula)
        lines.append("    " + ast.unparse(read.visit(ast.parse(common.strip()))))
    for i, text in reversed(list(enumerate(texts))):
        tree = read.visit(ast.parse(text.strip(), mode="eval"))
        lines.append(f"    r{i} = ({ast.unparse(tree)}) if need[{i}] else None")
    lines.append("    return (" + "".join(f"r{i}, " for i in range(len(texts))) + ")")
    made: dict = {}
    exec("\n".join(lines), formula_env.ENV, made)  # (the source is our own formula table)
    return made["gradients"]


class _ReadSaved(ast.NodeTransformer):
    """Rewrite each saved name ``x`` in a formula as ``saved["x"]``."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Subscript(ast.Name("saved", ast.Load()),
                                                   ast.Constant(node.id), ast.Load()), node)
        return node


def _all_gradients(variadic):
    """``gradients`` for a variadic rule: its one formula gives every input's
    gradient; those not needed are dropped."""
    def gradients(g, need, saved):
        return tuple(gi if n else None for gi, n in zip(variadic(g, **saved), need))
    return gradients


def _products_of_g(texts, names):
    """Which formulas the engine may compute *into* an incoming gradient that
    nobody else holds (``g_times``: a function of g and the saved values that
    returns the gradient, written into g where it fits), and which are just
    ``g * x`` for a saved x (``times_g``: that name).

    Two forms qualify: ``g * R`` (g is multiplied by R in place), and a call
    ``F(g, ...)`` of a formula word that has an in-place twin ``F.into`` (relu's
    ``threshold_backward``: zeros written where the output is not positive, which
    a product cannot do when g holds an infinity).  Each is None when no formula
    of the rule has such a form."""
    from . import formula_env
    times_g, g_times = [], []
    read = _ReadSaved(set(names))
    for text in texts:
        tree = ast.parse(text.strip(), mode="eval").body
        if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Mult) and \
                isinstance(tree.left, ast.Name) and tree.left.id == "g":
            right = tree.right
            times_g.append(right.id if isinstance(right, ast.Name) and right.id in names
                           else None)
            right = read.visit(right)
            # (the live namespace, not a copy: words are added to it after
            # some tables are compiled, and are looked up when the formula runs)
            g_times.append(eval(f"lambda g, saved: multiply_into(g, {ast.unparse(right)})",
                                formula_env.ENV))
        elif isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.args and \
                isinstance(tree.args[0], ast.Name) and tree.args[0].id == "g" and \
                hasattr(getattr(formula_env, tree.func.id, None), "into"):
            times_g.append(None)
            call = read.visit(tree)
            call.func = ast.Attribute(call.func, "into", ast.Load())
            g_times.append(eval(f"lambda g, saved: {ast.unparse(call)}", formula_env.ENV))
        else:
            times_g.append(None)
            g_times.append(None)
    return (tuple(times_g) if any(times_g) else None,
            tuple(g_times) if any(f is not None for f in g_times) else None)


_new = object.__new__


def record(cls, data, inputs, **saved):
    """Wrap ``data`` as the op's output and, if needed, add a node to the graph.

    A node is made only when grad mode is on and some input requires grad; then
    the output is a non-leaf that requires grad, with ``grad_fn`` set to the node.
    """
    if not _state.enabled:
        return _make(data)
    if len(inputs) == 1:
        return record_one(cls, data, inputs[0], saved)
    for t in inputs:
        if t._base is not None:
            refresh_view(t)  # a view of a base changed in place may now require grad
        if t._rg:
            break
    else:
        return _make(data)
    meta = []
    for t in inputs:
        meta += (t._data.shape, t._data.dtype)
    nexts = tuple([next_node(t) for t in inputs])
    return _node_and_output(cls, data, nexts, tuple(meta),
                            tuple([fn is not None for fn in nexts]), saved)


def _node_and_output(cls, data, nexts, meta, mask, saved):
    """Make the node and its output tensor; keep only the saved values that the
    needed gradients read (the kwargs dict becomes the node's store)."""
    node = _new(cls)
    node._next = nexts
    node._seq = _next_seq()
    node._extra = None
    if _anomaly.enabled:  # debugging: remember the forward line that made the node
        from ..autograd.anomaly import remember_forward
        remember_forward(node)
    shared = _SHAPES.get(meta)  # one shared copy of each
    if shared is None:
        if len(_SHAPES) > 4096:
            _SHAPES.clear()
        shared = _SHAPES[meta] = meta
    node._meta = shared
    node._need = mask if len(mask) >= cls.n_inputs else \
        mask + (False,) * (cls.n_inputs - len(mask))  # an optional input not given
    out = _make(data, True, node)
    keep = cls._keep.get(mask)
    if keep is None:
        keep = cls.keep_for(mask)
    holds = False
    for k, v in saved.items():
        if v.__class__ is Tensor or v is RESULT or (v.__class__ not in _PLAIN
                                                    and isinstance(v, Tensor)):
            if k not in keep:
                saved[k] = None  # no needed gradient reads it: not kept (as in PyTorch)
            else:
                if v is RESULT:
                    saved[k] = SavedTensor(out, is_output=True)
                elif k == "self" and v is ORIGINAL.old:
                    saved[k] = SavedTensor(_original_clone())
                else:
                    saved[k] = SavedTensor(v)
                holds = True
    node._saved = saved
    node._holds_tensors = holds
    return out


# While an in-place op computes its new value, ORIGINAL.old is the alias of the
# tensor's old value (per thread: ops of two threads do not see each other's).
# A node that saves that old value as ``self`` saves a clone of it instead, made
# once (ORIGINAL.clone): PyTorch's generated code does ``original_self =
# self.clone()`` for in-place ops, so the saved tensor's own history starts with
# a CloneBackward0 (seen under ``create_graph=True``).
class _Original(threading.local):
    old = None
    clone = None


ORIGINAL = _Original()


def _original_clone():
    if ORIGINAL.clone is None:
        old = ORIGINAL.old
        ORIGINAL.clone = record_one(OPS.CloneBackward0, old._data, old, {})  # (old is private)
    return ORIGINAL.clone


_PLAIN = {int, float, bool, str, tuple, type(None)}  # saved values that are never Tensors
# Nodes share their (shape, dtype...) tuples: a graph of thousands of same-shaped
# steps then holds a handful of tuples, not thousands that Python's cycle
# collector must keep examining while the graph lives.
_SHAPES: dict = {}


def record_one(cls, data, a, saved, and_number=False):
    """``record`` for one tensor input (most ops).  With ``and_number``, the op
    also took a Python number (``tensor * 2.0``): a constant input without an
    edge, ``(None, 0)`` in next_functions, as in PyTorch."""
    if a._base is not None:
        refresh_view(a)
    if not a._rg or not _state.enabled:
        return _make(data)
    fn = a._grad_fn
    if fn is None:
        fn = next_node(a)
    d = a._data
    if and_number:
        return _node_and_output(cls, data, (fn, None), (d.shape, d.dtype), _FIRST_ONLY, saved)
    return _node_and_output(cls, data, (fn,), (d.shape, d.dtype), _ONLY, saved)


_FIRST_ONLY, _ONLY = (True, False), (True,)


from ..graph import _next_seq  # noqa: E402  (shared sequence numbers)


def as_tensor_pair(a, b):
    """Both operands as tensors (a Python number becomes a 0-d "wrapped number"),
    plus their arrays cast to the common dtype, ready for the forward computation.

    The cast is not recorded in the graph (as in PyTorch); ``_fit`` casts each
    gradient back to its input's dtype."""
    if a.__class__ is not Tensor and not isinstance(a, Tensor):
        a = _make(a if backend.is_array(a) else backend.scalar_array(a, b._data))
    elif b.__class__ is not Tensor and not isinstance(b, Tensor):
        b = _make(b if backend.is_array(b) else backend.scalar_array(b, a._data))
    da, db = a._data, b._data
    if da.dtype != db.dtype:
        dt = backend.promote(da, db)
        da, db = da.astype(dt, copy=False), db.astype(dt, copy=False)
    if da.__class__ is not db.__class__:  # a CPU and a GPU array
        if not backend.same_device(da, db):
            raise errors.DeviceMismatchError(a.device, b.device)
        # a 0-d CPU tensor may meet a GPU tensor (as in PyTorch): it is copied over
        if da.ndim == 0 and backend.device_of(da).type == "cpu":
            da = backend.move(da, backend.device_of(db))
        else:
            db = backend.move(db, backend.device_of(da))
    return a, b, da, db


def check_broadcast(a, b) -> None:
    """PyTorch's wording when two shapes cannot broadcast."""
    sa, sb = a.shape, b.shape
    for i in range(1, min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {max(len(sa), len(sb)) - i}"
                               ) from None  # (numpy's ValueError is not the learner's concern)
