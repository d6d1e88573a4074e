"""Random numbers that are PyTorch's: after ``manual_seed(s)`` every random
function of the kit gives, on the CPU, the numbers PyTorch gives for the same
calls -- bit for bit (``torch.manual_seed(0); torch.randn(3)`` prints
``tensor([ 1.5410, -0.2934, -2.1788])`` here too).

Three modules, read in this order:

* ``generator.py`` -- the stream: a Mersenne Twister (mt19937) seeded as
  PyTorch seeds it, handing out 32-bit words; its state in PyTorch's format;
* ``sampling.py``  -- how words become uniforms, normals, integers,
  permutations, Bernoulli and exponential draws, and in which order;
* ``kernels.py``   -- the float arithmetic of PyTorch's C++ kernels (fused
  multiply-adds, the polynomial log/sin/cos of its vectorised Box–Muller),
  reproduced with numpy so the last bit agrees too.

Every random function consumes the stream exactly as PyTorch does, so calls
can be interleaved freely.  Tensors on a GPU (cupy) get their numbers from a
second generator of the same kind, made on the host and copied over; it is
seeded by ``manual_seed`` too, but PyTorch's CUDA numbers (Philox) differ.

Unlike PyTorch, whose global generator starts from a random seed, the kit's
starts from ``generator.DEFAULT_SEED`` (the seed of a fresh
``torch.Generator()``), so a notebook that never seeds still repeats itself.
"""
from __future__ import annotations

import contextlib

from .generator import DEFAULT_SEED, Generator, as_seed

default_generator = Generator()
_device_generator = None      # made on the first GPU draw (no GPU query at import)
_device_seed = DEFAULT_SEED

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "DEFAULT_SEED"]


def manual_seed(seed) -> Generator:
    """Seed every generator the kit uses by default; returns the CPU one."""
    default_generator.manual_seed(seed)
    seed_device(seed)
    return default_generator


def seed_device(seed) -> None:
    """Seed the GPU's generator (``cuda.manual_seed``), now or when it is made."""
    global _device_seed
    _device_seed = as_seed(seed)
    if _device_generator is not None:
        _device_generator.manual_seed(seed)


def seed() -> int:
    """Seed from the operating system's entropy; returns the seed."""
    value = default_generator.seed()
    seed_device(value)
    return value


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state: a uint8 tensor of 5056 bytes, PyTorch's layout."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, **_ignored):
    """Inside the block, draw freely: the CPU generator's state comes back after it."""
    if not enabled:
        yield
        return
    saved = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(saved)


def generator_for(generator, device) -> Generator:
    """The generator a random function uses: ``generator=`` if given, else the
    default one of the tensor's device."""
    if generator is not None:
        if generator.device.type != device.type:
            raise RuntimeError(f"Expected a '{device.type}' device type for generator but "
                               f"found '{generator.device.type}'")
        return generator
    if device.type != "cuda":
        return default_generator
    global _device_generator
    if _device_generator is None:
        _device_generator = Generator("cuda").manual_seed(_device_seed)
    return _device_generator
