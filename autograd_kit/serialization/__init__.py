"""``save`` and ``load``: write tensors (a ``state_dict``, a dict or list of
tensors) to a file, and read them back safely.

Why loading needs care
----------------------
``save`` writes with Python's :mod:`pickle`.  A pickle is not plain data: it is
a small program for a stack machine.  Most of its instructions push numbers,
strings and lists, but two of them are powerful: ``GLOBAL`` imports *any*
function or class by its name (``os.system``, ``builtins.eval``), and
``REDUCE`` calls what was imported with arguments from the file.  An object
decides how it is pickled through ``__reduce__``, so a file made by someone
else can say "import ``os.system`` and call it with ``'rm -rf ~'``", and a
plain ``pickle.load`` does exactly that, before you see any result.  Renaming a
file ``model.pt`` changes nothing.

So, as PyTorch does since 2.6, ``load`` reads with ``weights_only=True`` by
default: an unpickler whose ``find_class`` (the step that resolves ``GLOBAL``)
answers only from a short allow-list, and refuses everything else with
``pickle.UnpicklingError("Weights only load failed. ...")``, naming the global
it refused.  Nothing named by the file is ever imported.  The list admits:

* the kit's tensors and ``nn.Parameter`` (the functions their pickles call to
  rebuild them), ``dtype`` objects (``torch.float32``), ``device`` and ``Size``;
* the numpy pieces a tensor's values travel in (``numpy.ndarray``,
  ``numpy.dtype`` and numpy's two array-rebuilding functions), and only as the
  values of a tensor: a numpy array or dtype on its own is refused;
* ``collections.OrderedDict`` (what ``state_dict()`` returns) and Python's
  plain values: numbers, ``str``, ``bytes``, ``bool``, ``None``, and lists,
  tuples, dicts and sets of them.

Even the admitted names are not the real functions: each is a stand-in that
checks its arguments (a tensor's bytes must fill its shape, its dtype must be
one of the kit's) and only records what the file described.  The real tensors
are built after the whole file was read, so an instruction cannot reach into
one of the kit's objects (``BUILD`` sets attributes) and change it.

To load something else -- a whole pickled model (``save(model)``), an object
of your own class -- either admit just the classes you trust, for every load
(:func:`add_safe_globals`) or for one block (:class:`safe_globals`), or pass
``weights_only=False``, which is plain pickle again: only for files from a
source you trust.  Saving ``model.state_dict()`` instead of the model avoids
the question altogether.

PyTorch's own files
-------------------
``torch.save`` writes a zip archive: ``<name>/data.pkl`` is the pickle, whose
tensors point (through "persistent ids") at raw storages ``<name>/data/0``,
``<name>/data/1``...  ``load`` reads those too, for tensors, Parameters,
dtypes, devices and containers (a ``state_dict`` saved by PyTorch loads into
the kit's model), with the same allow-list; see ``zip_checkpoint.py``.

``map_location`` (a device, a string, a dict from saved to new location, or a
function ``(tensor, location)``) says where the loaded tensors go.

Where the pieces are
--------------------
This package's ``__init__.py`` holds what a user calls, and the order in
which ``load`` works.  The reading itself is in the package's other modules,
imported by ``load`` when it first runs (``import autograd_kit`` never pays
for them):

* ``safe_unpickle.py``: the allow-list, and the unpickler that answers from it;
* ``pickle_records.py``: the checked records the stand-ins return;
* ``rebuild.py``: turning those records into tensors, after the whole file was read;
* ``zip_checkpoint.py``: the archives ``torch.save`` writes;
* ``load_errors.py``: recognising what a malformed file is, and saying so.
"""
from __future__ import annotations

import io
import os
import pickle
import warnings

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]


def save(obj, f, pickle_module=pickle, pickle_protocol: int = 2, **ignored) -> None:
    """``save(model.state_dict(), "model.pt")``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            pickle_module.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


# ------------------------------------------------------------- safe globals --
_user_globals: set = set()


def _entry(item):
    """(the dotted name a pickle uses for ``item``, the object)."""
    if isinstance(item, tuple):
        if len(item) != 2:
            raise ValueError("a safe global given as a tuple must be (object, 'module.name'), "
                             f"not a tuple of length {len(item)}")
        if type(item[1]) is not str:
            raise TypeError("the second item of a (object, name) safe global must be a str, "
                            f"not {type(item[1]).__name__}")
        return item[1], item[0]
    return f"{item.__module__}.{item.__qualname__}", item


def add_safe_globals(safe_globals: list) -> None:
    """Admit these classes or functions in every ``weights_only`` load from now on.

    Each item is the object itself (found in the file under its
    ``__module__.__qualname__``) or a pair ``(object, "module.name")``.  A file
    may then call it and set attributes on what it returns, so admit only code
    you have read."""
    for item in safe_globals:
        _entry(item)
    _user_globals.update(safe_globals)


def get_safe_globals() -> list:
    """What :func:`add_safe_globals` admitted so far."""
    return list(_user_globals)


def clear_safe_globals() -> None:
    """Forget everything :func:`add_safe_globals` admitted."""
    _user_globals.clear()


class safe_globals:
    """``with safe_globals([MyClass]): load(path)``: admit for the block only.

    On leaving, the list is as it was before (what the block itself added with
    :func:`add_safe_globals` stays)."""

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = list(safe_globals)
        self._added: list = []

    def __enter__(self) -> None:
        self._added = [g for g in self.safe_globals if g not in _user_globals]
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        _user_globals.difference_update(self._added)


def _user_table() -> dict:
    """What the user admitted, by the name a pickle uses for it."""
    return dict(_entry(item) for item in _user_globals)


# ---------------------------------------------------------------- loading --
_ZIP_MAGIC = b"PK\x03\x04"
_TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """``model.load_state_dict(load("model.pt"))``.

    ``weights_only=True`` (the default, as in PyTorch) rebuilds only tensors,
    dtypes, devices, sizes and plain containers, and refuses any other global
    the file names (see the module's docstring).  ``weights_only=False`` is
    plain pickle, for files you trust.  ``f`` is a path or a binary file
    object; files written by ``torch.save`` are read too.  ``mmap`` is
    accepted for PyTorch's signature; the whole file is read into memory."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("load cannot read safely with a pickle_module of your own; pass "
                           "weights_only=False to use it (only for a file you trust).")
    if weights_only and pickle_load_args:
        warnings.warn("load: the extra pickle arguments "
                      f"({', '.join(sorted(pickle_load_args))}) are used only with "
                      "weights_only=False; they are ignored here.", stacklevel=2)
    from .load_errors import _describe
    what = _describe(f)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_from(fh, what, map_location, pickle_module, weights_only,
                              pickle_load_args)
    return _load_from(f, what, map_location, pickle_module, weights_only, pickle_load_args)


def _peek(fh, n: int = 64):
    """The first ``n`` bytes, left unread; a stream that cannot seek is read whole."""
    try:
        start = fh.tell()
    except (AttributeError, OSError, ValueError):
        data = fh.read()
        return data[:n], io.BytesIO(data)
    head = fh.read(n)
    try:
        fh.seek(start)
    except (AttributeError, OSError, ValueError):
        data = head + fh.read()
        return data[:n], io.BytesIO(data)
    return head, fh


def _load_from(fh, what, map_location, pickle_module, weights_only, pickle_load_args):
    """Look at the first bytes, then read as a zip archive, safely or trustingly."""
    from .load_errors import _LoadError, _unpickle, _unsupported
    head, fh = _peek(fh)
    if isinstance(head, str):
        raise TypeError(f"load needs a file opened in binary mode ('rb'); {what} gives str")
    if not head:
        raise EOFError(f"{what} is empty: there is nothing to load (was the saving cut short, "
                       "or is the file position already at its end?).")
    try:
        if head.startswith(_ZIP_MAGIC):
            from .zip_checkpoint import load_zip
            return load_zip(fh, map_location, weights_only, _user_table())
        if weights_only:
            from .rebuild import _build
            from .safe_unpickle import _KIT_FILES, _Unpickler
            raw = _unpickle(head, _Unpickler(fh, _KIT_FILES, _user_table()))
            if type(raw) is int and raw == _TORCH_LEGACY_MAGIC:
                raise _unsupported("it is in PyTorch's old format (saved with "
                                   "_use_new_zipfile_serialization=False), which the kit does "
                                   "not read; save it again with torch.save's default.")
            return _build(raw, map_location)
        trusting = _trusting_unpickler(fh, map_location, pickle_module or pickle,
                                       pickle_load_args)
        return _unpickle(head, trusting)
    except _LoadError as error:
        raise error.public(what) from None


def _trusting_unpickler(fh, map_location, pickle_module, pickle_load_args):
    """Plain pickle (``weights_only=False``), with the kit's tensors put where
    ``map_location`` says as they are rebuilt."""

    class Trusting(pickle_module.Unpickler):
        strict = False

        def find_class(self, module, name):
            found = super().find_class(module, name)
            if map_location is None:
                return found
            from ..nn.parameter import _rebuild_parameter
            from ..tensor import _rebuild
            if found is _rebuild or found is _rebuild_parameter:
                parameter = found is _rebuild_parameter

                def placed(data, requires_grad, device="cpu"):
                    from .pickle_records import _Tensor
                    from .rebuild import _Builder
                    record = _Tensor(data, requires_grad, device, parameter)
                    return _Builder(map_location).tensor(record)
                return placed
            return found

    return Trusting(fh, **pickle_load_args)
