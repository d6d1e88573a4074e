"""``import torch`` that gives autograd_kit: PyTorch code run on the kit, unchanged.

``import autograd_kit as torch`` names the kit ``torch`` in your own code only.
A textbook's next line, ``from torch import nn``, asks Python for the *module*
called ``torch``, which Python looks up in ``sys.modules``, not among your
variables, and so gets the real PyTorch.  Its ``nn.Linear`` then refuses the
kit's tensors: ``linear(): argument 'input' (position 1) must be Tensor, not
Tensor`` (two classes, one name).

:func:`alias_torch` makes the module called ``torch`` the kit: it puts the kit's
modules into ``sys.modules`` under PyTorch's names (:data:`ROLES`), so that
``import torch``, ``from torch import nn``, ``import torch.nn.functional as F``,
``from torch.autograd import Function``, ``import torch.optim as optim`` and
``from torch.utils.data import DataLoader`` all reach the kit.  A ``torch.*``
module that the kit has nothing for is refused (``ModuleNotFoundError``) rather
than found in the kit's folder and loaded a second time under a new name, which
would make a second ``Tensor`` class.

Undoing it puts back exactly what was there before: a PyTorch imported
earlier, every submodule of it the same object, or nothing at all.  Names your
code bound meanwhile keep what they were bound to: run the imports again.

>>> import sys
>>> before = sys.modules.get("torch")
>>> with alias_torch():
...     import torch
...     from torch import nn
>>> torch.__name__, nn.__name__
('autograd_kit', 'autograd_kit.nn')
>>> sys.modules.get("torch") is before
True

In a notebook, ``%autograd_alias torch`` and ``%autograd_alias off`` do the same.
"""
from __future__ import annotations

import importlib
import sys

#: PyTorch's module names, and the kit module that plays each one's part
ROLES = {
    "torch": "autograd_kit",
    "torch.autograd": "autograd_kit.autograd",
    "torch.autograd.anomaly_mode": "autograd_kit.autograd.anomaly",
    "torch.autograd.function": "autograd_kit.autograd.function",
    "torch.autograd.functional": "autograd_kit.autograd.functional",
    "torch.autograd.grad_mode": "autograd_kit.grad_mode",
    "torch.autograd.gradcheck": "autograd_kit.gradcheck",
    "torch.autograd.graph": "autograd_kit.autograd.graph",
    "torch.nn": "autograd_kit.nn",
    "torch.nn.functional": "autograd_kit.nn.functional",
    "torch.nn.init": "autograd_kit.nn.init",
    "torch.nn.parameter": "autograd_kit.nn.parameter",
    "torch.nn.utils": "autograd_kit.nn.utils",
    "torch.optim": "autograd_kit.optim",
    "torch.optim.adam": "autograd_kit.optim.adam",
    "torch.optim.optimizer": "autograd_kit.optim.optimizer",
    "torch.optim.rmsprop": "autograd_kit.optim.rmsprop",
    "torch.optim.sgd": "autograd_kit.optim.sgd",
    "torch.utils": "autograd_kit.utils",
    "torch.utils.data": "autograd_kit.utils.data",
    "torch.cuda": "autograd_kit.cuda",
    "torch.accelerator": "autograd_kit.accelerator",
    "torch.random": "autograd_kit.random",
    "torch.serialization": "autograd_kit.serialization",
}

_state: dict = {"on": None}  # the TorchAlias that installed the alias, while it is on


def is_torch(name: str) -> bool:
    """Whether ``name`` is ``torch`` or one of its submodules (not ``torchvision``)."""
    return name == "torch" or name.startswith("torch.")


class _OnlyTheKit:
    """First on ``sys.meta_path`` while the alias is on: a ``torch.*`` module not in
    :data:`ROLES` (``sys.modules`` answers for those) is refused."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if is_torch(name):
            raise ModuleNotFoundError(
                f"No module named {name!r}: `torch` is autograd_kit here (alias_torch()), "
                "and the kit has no module in that role", name=name)
        return None  # anything else: the usual finders


_FINDER = _OnlyTheKit()


class TorchAlias:
    """What :func:`alias_torch` did: ``undo()`` puts ``sys.modules`` back; as a
    context manager, the ``with`` block's end does it."""

    def __init__(self, saved: dict | None) -> None:
        self._saved = saved  # the torch.* entries before; None: someone else's alias

    @property
    def active(self) -> bool:
        """True while this handle's alias is on."""
        return self._saved is not None and _state["on"] is self

    def undo(self) -> None:
        """Every ``torch`` and ``torch.*`` entry of ``sys.modules`` as it was before.
        A second call, or the handle of a nested call, changes nothing."""
        if not self.active:
            return
        for name in [name for name in sys.modules if is_torch(name)]:
            del sys.modules[name]
        sys.modules.update(self._saved)
        sys.meta_path[:] = [f for f in sys.meta_path if f is not _FINDER]
        _state["on"] = None

    def __enter__(self) -> TorchAlias:
        return self

    def __exit__(self, *exc) -> None:
        self.undo()

    def __repr__(self) -> str:
        return f"<TorchAlias {'on' if self.active else 'off'}>"


def alias_torch() -> TorchAlias:
    """From now on ``import torch`` (and ``torch.nn``, ``torch.optim``...) gives
    autograd_kit.  Returns the handle that undoes it (also :func:`unalias_torch`).
    Called while the alias is already on, it changes nothing and returns a handle
    whose ``undo()`` changes nothing either, so ``with`` blocks nest."""
    if _state["on"] is not None:
        return TorchAlias(None)
    modules = {name: importlib.import_module(kit) for name, kit in ROLES.items()}
    saved = {name: module for name, module in sys.modules.items() if is_torch(name)}
    # (everything imported first: from here on nothing can fail halfway)
    for name in saved:
        del sys.modules[name]  # PyTorch's own submodules too: no half of each
    sys.modules.update(modules)
    sys.meta_path.insert(0, _FINDER)
    _state["on"] = handle = TorchAlias(saved)
    return handle


def unalias_torch() -> None:
    """``import torch`` gives what it gave before :func:`alias_torch` (nothing to
    do when the alias is off)."""
    if _state["on"] is not None:
        _state["on"].undo()


def torch_aliased() -> bool:
    """Whether ``import torch`` gives autograd_kit now."""
    return _state["on"] is not None


def still_pytorch(namespace: dict) -> list[str]:
    """The names in ``namespace`` (a notebook's variables) that still hold what
    ``import torch`` gave before the alias: PyTorch's modules (``torch``,
    ``nn``, ``F``), classes and functions (``Linear``, ``relu``).  Those
    imports need to run again."""
    handle = _state["on"]
    before = {id(m) for m in (handle._saved.values() if handle is not None else ())
              if m is not None}
    found = []
    for name, value in namespace.items():
        if not isinstance(name, str) or name.startswith("_"):
            continue
        made_in = getattr(value, "__module__", None) if callable(value) else None
        if id(value) in before or (isinstance(made_in, str) and is_torch(made_in)):
            found.append(name)
    return found
