"""Why a file cannot be loaded, told so that a learner knows what to do next.

``load`` can fail for four different reasons, and each needs a different
answer from the reader:

* **refused**: the file names a global that is not on the allow-list
  (``os.system``, a whole pickled model).  The message names the global and
  the two ways to load the file anyway: ``weights_only=False`` (trust all of
  it) or ``add_safe_globals`` (trust just that name).
* **damaged**: the bytes are not what a checkpoint would hold -- a text file,
  a numpy ``.npy`` file, a pickle cut short, a tensor whose bytes do not fill
  its shape.
* **archive**: a zip archive that is not a readable ``torch.save`` file.
* **unsupported**: a valid file holding something the kit does not have (a
  bfloat16 tensor, a TorchScript program).

While reading, the code raises :class:`_LoadError` with one of these kinds;
``load`` turns it into the exception PyTorch raises for the same file, with
the file's name in front.  Pickle's own complaints ("invalid load key",
"Ran out of input") describe its stack machine, not the file, so
:func:`_unpickle` replaces them with what the file's first bytes say it is.
"""
from __future__ import annotations

import os
import pickle

_ADMITTED = ("tensors, Parameters, dtypes, devices, Size, OrderedDict, and Python's numbers, "
             "strings, bytes, lists, tuples, dicts and sets")
# Modules whose functions can never be admitted, even on request (as in PyTorch).
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def _refused_message(name: str, note: str = "") -> str:
    module = name.rsplit(".", 1)[0]
    if module in _BLOCKED_MODULES:
        return (f"Weights only load failed. Unsupported global: GLOBAL {name} belongs to the "
                f"module `{module}`, which is never admitted: its functions run programs, "
                "touch files or change Python itself. Loading stopped before anything it "
                "names was called.\n"
                "Only if you trust the source of this file, load it with "
                "`weights_only=False`; that lets the file run any code it contains.")
    if not note and name.startswith(("autograd_kit.nn.", "torch.nn.")):
        note = ("It looks like a whole model object was saved, not its `state_dict()`; "
                "save `model.state_dict()` and restore it with "
                "`model.load_state_dict(load(path))`. ")
    return (f"Weights only load failed. Unsupported global: GLOBAL {name} is not among what "
            f"`load` rebuilds by default ({_ADMITTED}). {note}Loading stopped before "
            "anything it names was called.\n"
            "If you trust the source of this file, you can either\n"
            "  (1) load it with `weights_only=False`, which lets the file run any code it "
            "contains (do it only for a file from a source you trust), or\n"
            "  (2) admit just this global and keep every other check: "
            f"`autograd_kit.serialization.add_safe_globals([{name}])`, or for one load, "
            f"`with autograd_kit.serialization.safe_globals([{name}]): ...`.")


class _LoadError(Exception):
    """Raised while reading; ``load`` turns it into the exception the user sees.

    ``kind`` is "refused", "damaged", "archive" or "unsupported" (see the
    module's docstring)."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind, self.text = kind, text

    def public(self, what: str) -> Exception:
        if self.kind == "refused":
            return pickle.UnpicklingError(self.text)
        if self.kind == "damaged":
            return pickle.UnpicklingError(f"{what} cannot be loaded: {self.text}")
        if self.kind == "archive":  # (PyTorch raises RuntimeError for these too)
            return RuntimeError(f"{what} cannot be loaded: {self.text}")
        return RuntimeError(f"{what} cannot be loaded by autograd_kit: {self.text}")


def _refused(name: str, note: str = "") -> _LoadError:
    return _LoadError("refused", _refused_message(name, note))


def _damaged(text: str) -> _LoadError:
    return _LoadError("damaged", text)


def _unsupported(text: str) -> _LoadError:
    return _LoadError("unsupported", text)


def _broken_archive(text: str) -> _LoadError:
    return _LoadError("archive", text)


def _describe(f) -> str:
    """How the messages name the file: its path, else the object's kind."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, (str, bytes)) else f"the {type(f).__name__} object"


def _as_text(head: bytes):
    """The first bytes as text, or None when they are not text."""
    for cut in range(4):  # (the last character may be cut in the middle)
        try:
            text = head[:len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text and all(c.isprintable() or c in "\t\r\n" for c in text):
            return text
        return None
    return None


def _what_it_is(head: bytes) -> str:
    """Why a file that pickle could not read is not a checkpoint, from its first bytes."""
    if head.startswith(b"\x93NUMPY"):
        return ("it is a numpy `.npy` file, not a checkpoint; read it with `numpy.load` "
                "(then `autograd_kit.from_numpy`).")
    text = _as_text(head)
    if text is not None:
        first = next((line for line in text.splitlines() if line.strip()), "")[:40]
        return (f"it is a text file (it starts with {first!r}), not a checkpoint written by "
                "`save` or `torch.save`.")
    if head[:1] == b"\x80":
        return "it starts like a pickle, but what follows is damaged: it is not a checkpoint."
    return (f"it is not a checkpoint: it starts with the bytes {head[:8]!r}, where a file "
            "written by `save` starts with a pickle header (b'\\x80') and one written by "
            "`torch.save` is a zip archive (b'PK').")


_TRUNCATED = ("the file ends in the middle of its data: it is incomplete (cut short while "
              "being saved, copied or downloaded?).")


def _unpickle(head: bytes, unpickler):
    """``unpickler.load()``, with pickle's own complaints about a file that is
    not a pickle (or not a whole one) told as what the file is."""
    try:
        return unpickler.load()
    except _LoadError:
        raise
    except MemoryError:
        if not getattr(unpickler, "strict", True):
            raise  # (weights_only=False: the file's own code ran out of memory)
        # a length field asked for more memory than there is: a damaged file, not a
        # reason to stop the learner's whole process with a bare MemoryError
        raise _damaged("it declares an object larger than the memory available: the file "
                       "is damaged (or not a checkpoint).") from None
    except Exception as error:
        if not getattr(unpickler, "strict", True) and \
                not isinstance(error, (EOFError, pickle.UnpicklingError)):
            raise  # (weights_only=False: the file's own code failed)
        cut_short = isinstance(error, EOFError) or "truncated" in str(error)
        if cut_short and head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04",
                                                               b"\x05"):
            raise _damaged(_TRUNCATED) from None
        raise _damaged(_what_it_is(head)) from None
