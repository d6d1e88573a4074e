"""``Generator``: PyTorch's CPU random stream, a 32-bit Mersenne Twister (mt19937).

The engine.  mt19937 keeps 624 words of 32 bits.  ``manual_seed(s)`` fills them
with the classic recurrence (Matsumoto and Nishimura's ``init_genrand``, on the
low 32 bits of ``s``)::

    w[0] = s mod 2^32,   w[i] = 1812433253 · (w[i-1] xor (w[i-1] >> 30)) + i   (mod 2^32)

Each draw hands out the next word, "tempered" by a few shifts and xors; after
624 draws the whole block is "twisted" into the next 624.  numpy's ``MT19937``
bit generator is the same machine (same twist, same tempering), so it produces
the words here, in C, a million in about 4 ms; this module only seeds it and
reads and writes its state the way PyTorch does.

PyTorch asks the engine for numbers in two sizes, and every sampler in
``sampling.py`` is built on them:

* ``random()``   -- one 32-bit word;
* ``random64()`` -- two words, the first one as the high half.

Besides the words, a generator remembers one number: Box–Muller makes normals
in pairs, and the small-tensor path of ``normal_`` keeps the second of a pair
for the next call (``_normal_cache``).  ``manual_seed`` forgets it.

The state.  ``get_state()`` returns PyTorch's own layout, a ``uint8`` tensor of
5056 bytes, so a state saved by one library can be loaded by the other::

    bytes 0-7        initial seed (uint64)
    8-11, 12-15      words left before the next twist, "seeded" flag (int32)
    16-23            index of the next word (uint64)
    24-5015          the 624 words, each stored in a uint64
    5016-5039        three float64 fields of the old format; the middle one holds
    5040-5043        the cached normal, and this int32 says whether there is one
    5048-5055        a float32 cached normal and its flag (unused on the CPU)
"""
from __future__ import annotations

import os

from .. import backend

np = backend.np

DEFAULT_SEED = 67280421310721    # the seed of a fresh torch.Generator()
_N = 624                         # words in the state
_STATE_LAYOUT = np.dtype({
    "names": ["seed", "left", "seeded", "next", "words", "normal_x", "normal_y",
              "normal_rho", "normal_is_valid", "float_normal", "float_normal_is_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _N), "<f8", "<f8", "<f8", "<i4", "<f4",
                "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": 5056})
STATE_SIZE = _STATE_LAYOUT.itemsize


def init_genrand(seed: int):
    """The 624 words that seed ``seed`` (its low 32 bits) gives, as uint32."""
    words = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        prev = words[-1]
        words.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(words, dtype=np.uint32)


def as_seed(seed) -> int:
    """``int(seed)`` as PyTorch stores it: a uint64 (negative seeds wrap around)."""
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


class Generator:
    """A random number generator with its own state, as ``torch.Generator``.

    ``Generator().manual_seed(0)`` gives the numbers ``torch.manual_seed(0)``
    gives: pass it as ``generator=`` to keep a stream apart from the global one.
    ``device='cuda'`` is accepted; its numbers are made by the same engine on
    the host and then copied to the GPU (PyTorch's CUDA generator, Philox, makes
    other numbers anyway)."""

    def __init__(self, device="cpu") -> None:
        self._device = backend.device(device)
        self._engine = backend.random.MT19937(0)
        self.manual_seed(DEFAULT_SEED)

    @property
    def device(self):
        return self._device

    # -- seeding -------------------------------------------------------------------
    def manual_seed(self, seed) -> Generator:
        """Start the stream again from ``seed``; returns the generator."""
        seed = as_seed(seed)
        self._load(init_genrand(seed), pos=_N)
        self._seed, self._fresh = seed, True
        self._normal_cache = self._float_cache = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed used."""
        seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    # -- drawing -------------------------------------------------------------------
    def random32(self, n: int):
        """The next ``n`` words, as a uint64 array of values below 2^32."""
        if n:
            self._fresh = False
        return self._engine.random_raw(n)

    def random64(self, n: int):
        """``n`` 64-bit numbers, each made of two words (the first is the high half)."""
        words = self.random32(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    # -- state -----------------------------------------------------------------------
    def _load(self, words, pos: int) -> None:
        self._engine.state = {"bit_generator": "MT19937",
                              "state": {"key": words, "pos": pos}}

    def get_state(self):
        """PyTorch's 5056-byte state (a uint8 tensor): seed, words, cached normal."""
        from ..tensor import Tensor
        inner = self._engine.state["state"]
        pos = int(inner["pos"])
        state = np.zeros((), dtype=_STATE_LAYOUT)
        state["seed"], state["seeded"] = self._seed, 1
        # PyTorch counts the words left (1 means "twist first"); numpy counts the
        # words used.  A freshly seeded engine has used none and twists first.
        state["left"], state["next"] = _N + 1 - pos, (0 if self._fresh else pos)
        state["words"] = inner["key"]
        if self._normal_cache is not None:
            state["normal_y"], state["normal_is_valid"] = self._normal_cache, 1
        if self._float_cache is not None:
            state["float_normal"], state["float_normal_is_valid"] = self._float_cache, 1
        return Tensor._make(state.reshape(1).view(np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Load a state made by ``get_state`` (this kit's or PyTorch's)."""
        data = _state_bytes(new_state)
        if data.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but "
                               f"found the input RNG state size to be {data.size}")
        state = data.copy().view(_STATE_LAYOUT)[0]
        left, nxt = int(state["left"]), int(state["next"])
        if not (state["seeded"] and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        self._load((state["words"] & 0xFFFFFFFF).astype(np.uint32), pos=_N + 1 - left)
        self._seed, self._fresh = int(state["seed"]), left == 1 and nxt == 0
        self._normal_cache = float(state["normal_y"]) if state["normal_is_valid"] else None
        self._float_cache = (float(state["float_normal"]) if state["float_normal_is_valid"]
                             else None)
        return self

    def __repr__(self) -> str:
        return f"<autograd_kit.Generator object at {id(self):#x}>"


def _state_bytes(new_state):
    data = getattr(new_state, "_data", None)
    if data is None or data.dtype != np.uint8 or backend.device_of(data).type != "cpu":
        raise TypeError("RNG state must be a torch.ByteTensor")
    return np.ascontiguousarray(data).reshape(-1)
