"""The handle ``register_hook`` returns: ``handle.remove()`` takes the hook away
(also as a ``with`` block).  Used by tensors and by graph nodes alike."""
from __future__ import annotations


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` takes the hook away."""

    __slots__ = ("_container", "_key")

    def __init__(self, container, key):
        self._container, self._key = container, key

    def remove(self) -> None:
        c = self._container
        if isinstance(c, dict):
            c.pop(self._key, None)
        elif self._key in c:
            c.remove(self._key)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
