"""cupy's real namespace, read without a GPU: which names exist, what they accept.

The ``cupy`` wheel imports on a machine with no GPU (only allocating fails), so
its functions and ``cupy.ndarray``'s methods can be inspected here.  Most of
them are compiled (Cython) and carry their signature as the first line of the
docstring (``_ndarray_base.sum(self, axis=None, dtype=None, out=None,
keepdims=False)``, ``ufunc sqrt(x, /, out=None, *, casting=..., dtype=None)``);
:func:`signature_of` reads that line when :func:`inspect.signature` cannot.

Used by the namespace test (``test_cupy_namespace.py``) and by the stand-in
device (``standin_device.py``), which checks every call the kit makes against
these signatures as it runs.
"""
from __future__ import annotations

import functools
import inspect
import re

try:
    import cupy
except Exception:  # pragma: no cover - the test extra installs it
    cupy = None

_HEAD = re.compile(r"^\s*(?:ufunc\s+)?[\w.]+\((.*)\)\s*(?:->.*)?$")


def _split_top(text: str) -> list[str]:
    """Split a parameter list at the commas that are not inside brackets or quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse_doc_signature(doc: str | None):
    """An :class:`inspect.Signature` from a docstring's first line (``self`` dropped),
    or None when the first line is not a signature."""
    if not doc:
        return None
    match = _HEAD.match(doc.strip().splitlines()[0])
    if match is None:
        return None
    params = []
    for p in _split_top(match.group(1).replace("\\*", "*")):
        if p in ("/", "*") or p.startswith("*"):
            params.append(p.split(":")[0].split("=")[0].strip())
            continue
        name, eq, _default = p.partition("=")
        name = name.split(":")[0].split()[-1]  # drop a C type: "Py_ssize_t axis1"
        params.append(name + ("=None" if eq else ""))
    if params and params[0] == "self":
        params = params[1:]
    if params and params[0] == "/":  # only "self" was positional-only
        params = params[1:]
    namespace: dict = {}
    exec(f"def f({', '.join(params)}): pass", namespace)  # noqa: S102 - our own text
    return inspect.signature(namespace["f"])


@functools.lru_cache(maxsize=None)
def _signature_cached(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return parse_doc_signature(getattr(obj, "__doc__", None))
    params = list(sig.parameters.values())
    if params and params[0].name == "self" and not inspect.ismethod(obj):
        sig = sig.replace(parameters=params[1:])
    return sig


def signature_of(obj):
    """What ``obj`` (a cupy function, ufunc or ndarray method) accepts, or None if unknown."""
    try:
        return _signature_cached(obj)
    except TypeError:  # unhashable
        return None


def accepts(obj, n_positional: int, keywords=(), star_args: bool = False) -> str | None:
    """None when a call with ``n_positional`` arguments and these ``keywords`` binds
    to ``obj``'s signature; otherwise why not.  ``star_args`` (a ``*seq`` in the
    call) means the number of positional arguments is not known: only the
    keywords are checked."""
    sig = signature_of(obj)
    if sig is None:
        return None  # nothing to check against (an attribute, or no signature)
    if star_args:
        n_positional = builtin_min_positional(sig)
    try:
        sig.bind(*([None] * n_positional), **{k: None for k in keywords})
    except TypeError as err:
        return f"{sig}: {err}"
    return None


def builtin_min_positional(sig) -> int:
    return sum(1 for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is p.empty)


def module_has(name: str) -> bool:
    return cupy is not None and hasattr(cupy, name)


def ndarray_has(name: str) -> bool:
    return cupy is not None and hasattr(cupy.ndarray, name)
