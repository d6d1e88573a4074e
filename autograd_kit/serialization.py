"""``save`` and ``load``: write any object that holds tensors (a ``state_dict``,
a model, a dict of tensors) to a file, and read it back, with pickle.

The files are the kit's own (PyTorch's zip format is not reproduced): a model
saved by the kit is loaded by the kit.  ``map_location`` moves the loaded
tensors to a device.  As with any pickle, load only files you trust.
"""
from __future__ import annotations

import os
import pickle


def save(obj, f, pickle_module=pickle, pickle_protocol: int = 2, **ignored) -> None:
    """``save(model.state_dict(), "model.pt")``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            pickle_module.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


def load(f, map_location=None, pickle_module=pickle, *, weights_only=None, **ignored):
    """``model.load_state_dict(load("model.pt"))``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            obj = pickle_module.load(fh)
    else:
        obj = pickle_module.load(f)
    return obj if map_location is None else _to(obj, map_location)


def _to(obj, device):
    from .tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, device)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(v, device) for v in obj)
    return obj
