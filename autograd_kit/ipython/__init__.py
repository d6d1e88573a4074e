"""The notebook side of autograd_kit: ``%load_ext autograd_kit``.

Loading the extension

* adds the magics of :mod:`.magics` (``%autograd_graph``, ``%%autograd_graph``,
  ``%autograd_step``, ``%autograd_explain``, ``%autograd_display``,
  ``%autograd_alias``);
* registers the display hooks of :mod:`.display`: a ``grad_fn`` node shows as a
  picture of the graph below it, and tensors can show as HTML cards;
* with ``%autograd_explain on``, explains autograd errors -- autograd_kit's and
  PyTorch's -- after their traceback (:mod:`.explain`).

``%unload_ext autograd_kit`` takes all of it away again: the magics, the
display formatters, the traceback hook, the ``post_run_cell`` event and an
``import torch`` alias the magic installed.

This package is imported only by ``load_ipython_extension``, so ``import
autograd_kit`` never needs IPython.
"""
from __future__ import annotations

from . import display, explain
from .magics import AutogradMagics

__all__ = ["load", "unload", "AutogradMagics"]


def load(ip) -> None:
    """Register the magics and display hooks with the IPython shell ``ip``."""
    ip.register_magics(AutogradMagics(ip))
    display.install(ip)
    explain.install(ip)


def unload(ip) -> None:
    """Undo :func:`load`: remove the magics, formatters and event callbacks."""
    from ..alias import unalias_torch
    unalias_torch()
    explain.uninstall(ip)
    display.uninstall(ip)
    for kind, names in AutogradMagics.magics.items():
        table = ip.magics_manager.magics[kind]
        for name in names:
            table.pop(name, None)
    ip.magics_manager.registry.pop(AutogradMagics.__name__, None)
