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
    """Seed the GPU's generator (a no-op without a GPU, as in PyTorch)."""
    from . import random
    if random._device_generator is not None:
        random._device_generator.manual_seed(seed)


manual_seed_all = manual_seed
