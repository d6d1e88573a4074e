"""``accelerator``: the device-neutral spelling newer tutorials use
(``torch.accelerator.is_available()``); here the accelerator is a CUDA GPU via cupy."""
from __future__ import annotations

from . import backend


def is_available() -> bool:
    return backend.cuda_is_available()


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` when a GPU is usable, else None."""
    return backend.device("cuda") if backend.cuda_is_available() else None


def device_count() -> int:
    return backend.cuda_device_count() if backend.cuda_is_available() else 0
