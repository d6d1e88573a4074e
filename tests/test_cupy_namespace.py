"""Everything the kit asks of its array module exists in cupy, with that signature.

The list is read from the code, not written by hand:

* a static pass over every module of the kit (``autograd_kit/`` and
  ``widgets/``) finds each ``xp.NAME(...)`` -- where ``xp`` is any expression
  that gives the array module (``backend.xp_of(a)``, ``xp_for(dev)``, a local
  ``xp``, a helper that returns one) -- and each attribute or method used on an
  expression that is an array (``t._data``, what an ``xp`` function returns,
  names assigned from those, ...), with the number of positional arguments and
  the keywords of the call;
* the names that are only known at run time -- the elementwise words of
  ``formula_env`` (``getattr(xp, "cos")``) and the ufuncs of the in-place fast
  path -- are read from the objects the kit builds; a new ``getattr`` on the
  array module anywhere else fails :func:`test_every_runtime_lookup_is_enumerated`.

Each name must exist in the installed cupy (``cupy`` or ``cupy.ndarray``) and
accept the call, by ``inspect``: no GPU is needed, nothing is allocated.  The
stand-in device (``standin_device.py``) checks the same signatures again while
the GPU cases run, which covers the calls the static pass cannot type.
"""
from __future__ import annotations

import ast
import functools
import inspect
import pathlib
from dataclasses import dataclass

import pytest

import cupy_api

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "autograd_kit").rglob("*.py")) + sorted((ROOT / "widgets").glob("*.py"))
XP_GETTERS = {"xp_of", "xp_for", "get_array_module"}   # backend's: they give numpy or cupy
XP_NAMES = {"_cupy", "xp"}     # backend's handle on cupy; ``xp`` is the module by convention
ARRAY_ATTRS = {"T", "mT", "real", "imag"}               # attributes that are arrays again
NOT_ARRAYS = {"tolist", "item", "get"}                  # methods that leave the device


@dataclass(frozen=True)
class Use:
    """One thing the kit asks of cupy: ``cupy.<path>`` or ``cupy.ndarray.<path>``."""
    owner: str            # "cupy" or "cupy.ndarray"
    path: str             # "exp", "add.at", "cuda.Device", "reshape"
    call: tuple | None    # (positional count, keywords, has *args) when called
    where: str            # "autograd_kit/ops/unary.py:25"


# ----------------------------------------------------------- static pass ---
class _Scope:
    def __init__(self, parent=None):
        self.xp = set(parent.xp) if parent else set()
        self.arrays = set(parent.arrays) if parent else set()


class Collector(ast.NodeVisitor):
    """Walks one module: which expressions are the array module, which are arrays."""

    def __init__(self, where: str):
        self.where, self.uses, self.dynamic = where, [], []
        self.xp_funcs, self.array_funcs = set(XP_GETTERS), {"_raw"}
        self.scope, self.func, self.classes = _Scope(), [], []

    # what an expression is
    def is_xp(self, node) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.scope.xp or node.id in XP_NAMES
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            return name in self.xp_funcs
        return False

    def is_array(self, node) -> bool:
        if isinstance(node, ast.Attribute):
            if node.attr == "_data":  # a tensor's array (``self._data`` of other classes is not)
                return not (isinstance(node.value, ast.Name) and node.value.id == "self"
                            and not self.in_tensor_class())
            return node.attr in ARRAY_ATTRS and self.is_array(node.value)
        if isinstance(node, ast.Name):
            return node.id in self.scope.arrays
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name):
                return f.id in self.array_funcs
            if isinstance(f, ast.Attribute):
                return self.is_xp(f.value) or (self.is_array(f.value) and f.attr not in NOT_ARRAYS)
            return False
        if isinstance(node, ast.Subscript):
            return self.is_array(node.value)
        if isinstance(node, ast.BinOp):
            return self.is_array(node.left) or self.is_array(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.is_array(node.operand)
        if isinstance(node, ast.IfExp):
            return self.is_array(node.body) or self.is_array(node.orelse)
        if isinstance(node, ast.Compare):
            return self.is_array(node.left) or any(self.is_array(c) for c in node.comparators)
        return False

    def in_tensor_class(self) -> bool:
        return bool(self.classes) and self.classes[-1]

    def visit_ClassDef(self, node):
        bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
        self.classes.append(node.name == "Tensor" or bool(bases & {"Tensor", "Parameter"}))
        self.generic_visit(node)
        self.classes.pop()

    # names: what each assignment makes of them (flow-insensitive, to a fixed point)
    def _learn(self, body_nodes) -> None:
        for _ in range(3):
            for node in body_nodes:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Assign):
                        for target in sub.targets:
                            self._bind(target, sub.value)

    def _bind(self, target, value) -> None:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            for t, v in zip(target.elts, value.elts):
                self._bind(t, v)
        elif isinstance(target, ast.Name):
            if self.is_xp(value):
                self.scope.xp.add(target.id)
            elif self.is_array(value):
                self.scope.arrays.add(target.id)

    def learn_module(self, tree) -> None:
        """Module-level helpers that hand out the array module, or arrays."""
        for _ in range(3):
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    returns = [n.value for n in ast.walk(node)
                               if isinstance(n, ast.Return) and n.value is not None]
                    saved, self.scope = self.scope, _Scope(self.scope)
                    self._learn(node.body)
                    if returns and all(self.is_xp(r) for r in returns):
                        self.xp_funcs.add(node.name)
                    elif returns and all(self.is_array(r) for r in returns):
                        self.array_funcs.add(node.name)
                    self.scope = saved
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                        and isinstance(node.targets[0], ast.Name):
                    v = node.value
                    if isinstance(v, (ast.Name, ast.Attribute)) and \
                            (getattr(v, "id", None) or getattr(v, "attr", None)) in self.xp_funcs:
                        self.xp_funcs.add(node.targets[0].id)   # _xp = backend.xp_of
        self._learn([n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))])

    # visiting
    def visit_FunctionDef(self, node):
        saved, self.scope = self.scope, _Scope(self.scope)
        self.func.append(node.name)
        self._learn(node.body)
        self.generic_visit(node)
        self.func.pop()
        self.scope = saved

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = ast.NodeVisitor.generic_visit

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id == "getattr" and node.args \
                and self.is_xp(node.args[0]) and not isinstance(node.args[1], ast.Constant):
            self.dynamic.append((self.where, ".".join(self.func)))
        if isinstance(f, ast.Attribute) and self._record(f, _call_of(node)):
            for sub in [*node.args, *(k.value for k in node.keywords)]:
                self.visit(sub)
            return
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if not self._record(node, None):
            self.generic_visit(node)

    def _record(self, node, call) -> bool:
        """Record ``node`` (an attribute, perhaps called) if it is asked of cupy."""
        root, path = _chain_root(node), _chain_path(node)
        line = f"{self.where}:{node.lineno}"
        if self.is_xp(root) and path:
            self.uses.append(Use("cupy", ".".join(path), call, line))
            self.visit(root)
            return True
        if self.is_array(node.value) and not node.attr.startswith("_"):  # not the kit's own
            self.uses.append(Use("cupy.ndarray", node.attr, call, line))
            self.visit(node.value)
            return True
        return False


def _chain_root(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _chain_path(node) -> list[str]:
    path = []
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    return path[::-1]


def _call_of(node: ast.Call):
    star = any(isinstance(a, ast.Starred) for a in node.args)
    n = sum(1 for a in node.args if not isinstance(a, ast.Starred))
    return (n, tuple(k.arg for k in node.keywords if k.arg is not None), star)


def collect(source: str, where: str):
    """The uses of cupy in one module's source, and its run-time ``getattr`` sites."""
    tree = ast.parse(source)
    c = Collector(where)
    c.learn_module(tree)
    c.visit(tree)
    return c.uses, c.dynamic


@functools.lru_cache(maxsize=1)
def static_uses():
    uses, dynamic = [], []
    for path in SOURCES:
        u, d = collect(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
        uses += u
        dynamic += d
    return uses, dynamic


# ---------------------------------------------------------- run-time names ---
def formula_words(env, elementwise):
    """``formula_env``'s words that call ``getattr(xp, name)(x)``: one array argument."""
    code = elementwise("probe").__code__
    return [Use("cupy", fn.__name__, (1, (), False), f"formula_env word {key!r}")
            for key, fn in env.items() if getattr(fn, "__code__", None) is code]


def inplace_ufuncs(cls, make_inplace):
    """The in-place fast path: ``xp.<ufunc>(data, other, out=data)`` for each method."""
    code = make_inplace(lambda x: x, "add").__code__
    found = []
    for name, fn in vars(cls).items():
        if getattr(fn, "__code__", None) is code:
            ufunc = inspect.getclosurevars(fn).nonlocals.get("ufunc")
            if ufunc is not None:
                found.append(Use("cupy", ufunc, (2, ("out",), False), f"Tensor.{name}"))
    return found


RUNTIME_RESOLVERS = {  # where the kit looks a name up on xp at run time -> who lists them
    ("autograd_kit/ops/formula_env.py", "_elementwise.fn"): "formula_words",
    ("autograd_kit/ops/inplace.py", "_direct"): "inplace_ufuncs",
}


def runtime_uses():
    from autograd_kit import Tensor
    from autograd_kit.ops import formula_env, inplace
    return (formula_words(formula_env.ENV, formula_env._elementwise)
            + inplace_ufuncs(Tensor, inplace.make_inplace))


# ---------------------------------------------------------------- checking --
def problems(uses, cupy):
    """What cupy lacks or would refuse, one line per use."""
    found = []
    for use in uses:
        obj = cupy if use.owner == "cupy" else cupy.ndarray
        for part in use.path.split("."):
            if not hasattr(obj, part):
                found.append(f"{use.where}: {use.owner}.{use.path} does not exist in cupy "
                             f"{cupy.__version__}")
                break
            obj = getattr(obj, part)
        else:
            if use.call is not None:
                n, keywords, star = use.call
                why = cupy_api.accepts(obj, n, keywords, star_args=star)
                if why is not None:
                    found.append(f"{use.where}: {use.owner}.{use.path} called with {n} "
                                 f"positional and {list(keywords)}: {why}")
    return found


def _cupy():
    if cupy_api.cupy is None:
        pytest.fail("cupy is not installed: `pip install -e .[test]` brings cupy-cuda12x, "
                    "which imports without a GPU")
    return cupy_api.cupy


# ------------------------------------------------------------------- tests --
def test_every_name_the_kit_asks_of_cupy_exists_and_accepts_the_call():
    cupy = _cupy()
    uses = static_uses()[0] + runtime_uses()
    module_names = {u.path for u in uses if u.owner == "cupy"}
    array_names = {u.path for u in uses if u.owner == "cupy.ndarray"}
    # the pass must see the kit's real traffic, or it checks nothing
    assert {"exp", "where", "asarray", "broadcast_to", "add.at", "multiply"} <= module_names
    assert {"reshape", "astype", "sum", "copy"} <= array_names
    assert len(uses) > 150
    found = problems(uses, cupy)
    assert not found, "\n".join(found)


def test_every_runtime_lookup_is_enumerated():
    """A ``getattr(xp, name)`` the static pass cannot read must have a lister here."""
    dynamic = static_uses()[1]
    assert set(dynamic) <= set(RUNTIME_RESOLVERS), (
        f"new run-time lookups on the array module: {set(dynamic) - set(RUNTIME_RESOLVERS)}; "
        "list their names in test_cupy_namespace.py")
    assert set(dynamic) == set(RUNTIME_RESOLVERS), "a lister whose lookup is gone"
    names = {u.path for u in runtime_uses()}
    assert {"cos", "sin", "exp", "log", "add", "subtract", "multiply", "divide"} <= names


# -- the check can fail: fake uses of what cupy lacks ------------------------------
def _missing_function(cupy):
    import numpy as np
    return sorted(n for n in dir(np) if not n.startswith("_") and callable(getattr(np, n))
                  and not hasattr(cupy, n))[0]


def test_a_formula_using_a_function_cupy_lacks_fails():
    cupy = _cupy()
    missing = _missing_function(cupy)
    source = (
        "from .. import backend\n"
        "def _xp(t):\n"
        "    return backend.xp_of(t._data)\n"
        "def new_op(x):\n"
        f"    return _xp(x).{missing}(x._data)\n"
        "def new_formula(g, self):\n"
        "    a = _raw(self)\n"
        "    xp = backend.xp_of(a)\n"
        f"    return g * xp.{missing}(a, axis=0)\n")
    uses, _ = collect(source, "fake.py")
    assert [u.path for u in uses] == [missing, missing]
    found = problems(uses, cupy)
    assert len(found) == 2 and all(f"cupy.{missing} does not exist" in f for f in found)


def test_array_methods_and_signatures_cupy_lacks_fail():
    cupy = _cupy()
    source = (
        "def f(t, dev):\n"
        "    a = t._data.reshape(-1)\n"
        "    a.resize(3)\n"                                   # numpy only
        "    b = a.max(initial=0)\n"                          # numpy's keyword, not cupy's
        "    c = backend.xp_for(dev).clip(a, a_min=0, max=1)\n"  # numpy 2's 'max'
        "    return b.sum(axis=0, keepdims=True) + c.astype('f', copy=False)\n")
    uses, _ = collect(source, "fake.py")
    assert {u.path for u in uses} == {"reshape", "resize", "max", "clip", "sum", "astype"}
    found = problems(uses, cupy)
    assert len(found) == 3, found
    assert any("cupy.ndarray.resize does not exist" in f for f in found)
    assert any("cupy.ndarray.max called" in f and "initial" in f for f in found)
    assert any("cupy.clip called" in f for f in found)


def test_a_runtime_word_cupy_lacks_fails():
    """A new elementwise word in formula_env, or a new in-place ufunc, is checked too."""
    from autograd_kit.ops import formula_env, inplace
    cupy = _cupy()
    missing = _missing_function(cupy)
    env = {"cos": formula_env._elementwise("cos"), "odd": formula_env._elementwise(missing)}
    words = formula_words(env, formula_env._elementwise)
    assert [u.path for u in words] == ["cos", missing]
    assert len(problems(words, cupy)) == 1

    class Fake:
        odd_ = inplace.make_inplace(lambda x, y: x, missing)
    assert [f.split(":")[0] for f in problems(inplace_ufuncs(Fake, inplace.make_inplace),
                                               cupy)] == ["Tensor.odd_"]


def test_a_new_runtime_lookup_is_noticed():
    source = ("def f(x, name):\n"
              "    return getattr(backend.xp_of(x), name)(x)\n")
    assert collect(source, "fake.py")[1] == [("fake.py", "f")]
