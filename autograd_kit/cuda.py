"""``autograd_kit.cuda``: is a GPU usable (through cupy)?"""
from __future__ import annotations

from . import backend


def is_available() -> bool:
    """True when cupy is installed and sees an NVIDIA GPU."""
    return backend.cuda_is_available()


def device_count() -> int:
    return backend.cuda_device_count()


def synchronize() -> None:
    backend.cuda_synchronize()


def manual_seed(seed) -> None:
    """Seed the GPU's generator (it makes numbers only for GPU tensors)."""
    from . import random
    random.seed_device(seed)


manual_seed_all = manual_seed
