"""Widgets that let a learner watch and poke autograd (``autograd_kit.widgets``).

* :class:`BackwardStepper`: the backward pass, one node at a time;
* :class:`AccumulationDemo`: ``.grad`` adds up over backward calls;
* :class:`DetachDemo`: one expression built five ways, five different graphs;
* :class:`InplaceDemo`: which in-place changes the engine accepts, and why.

Each is a plain ipywidgets composite (no JavaScript build), shows engine errors in
words, and never prints.
"""
from __future__ import annotations

from .accumulation import AccumulationDemo
from .detach import DetachDemo
from .inplace import InplaceDemo
from .stepper import BackwardStepper

__all__ = ["BackwardStepper", "AccumulationDemo", "DetachDemo", "InplaceDemo"]
