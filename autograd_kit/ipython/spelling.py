"""Code in the kit's sentences, spelled the way the notebook spells it.

The kit writes code the way PyTorch's documentation does, ``torch.no_grad()``.
A notebook that did ``import autograd_kit as ak`` calls the same function
``ak.no_grad()``, so advice shown there should say that.  Only module names
followed by a lower-case name are respelled (``torch.no_grad``,
``torch.autograd.grad``): ``torch.FloatTensor``, a type name that the kit's
messages share with PyTorch's, stays as it is.
"""
from __future__ import annotations

import re

from .display import name_of

#: ``torch.`` where it starts the name of a function or a submodule
TORCH_CALL = re.compile(r"\btorch\.(?=[a-z_])")


def as_written(text: str, module, namespace) -> str:
    """``text`` with ``torch.`` calls respelled as ``namespace`` calls ``module``."""
    name = name_of(module, namespace)  # (None when the notebook gave it no name)
    if name is None or name == "torch" or not name.isidentifier():
        return text
    return TORCH_CALL.sub(name + ".", text)
