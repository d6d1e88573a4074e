"""The checks of a lesson (being written), registered by :mod:`.exercises`."""
from __future__ import annotations

#: name -> (answer names, kinds for the ready test, the test); merged into exercises._EXERCISES
EXERCISES: dict = {}

#: name -> (title, hint, why); merged into exercises._TEXT
TEXT: dict = {}
