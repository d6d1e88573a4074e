"""PyTorch's wording of its autograd errors, read back as a kind and facts.

PyTorch raises its autograd errors as plain ``RuntimeError``, but it words each
kind the same way every time; :data:`TORCH_MESSAGES` holds that wording, the one
place in the kit that knows it.  autograd_kit words its errors as PyTorch does
and also names the kind itself (``err.kind``).  :func:`error_kind` is all that
:func:`.access.saved_value` needs to know about an error;
:func:`.error_facts.error_facts` reads the rest of the facts.

>>> read_message("Trying to backward through the graph a second time (or ...)")
{'kind': 'graph_freed'}
>>> error_kind(RuntimeError("something else"))
''
"""
from __future__ import annotations

import re

#: PyTorch's wording of each kind of autograd error the kit explains, as
#: ``(kind, pattern)``; named groups are the facts the message states.
TORCH_MESSAGES = (
    ("leaf_inplace", r"(?P<view>a view of )?a leaf Variable that requires grad is being "
                     r"used in an in-place operation"),
    ("saved_modified", r"has been modified by an inplace operation"
                       r"(?:: \[(?P<type_name>[\w.]+) \[(?P<shape>[\d, ]*)\]\])?"
                       r"(?:, which is output \d+ of (?P<producer>\w+),)?"
                       r"(?: is at version (?P<found>\d+); expected version "
                       r"(?P<expected>\d+) instead)?"),
    ("graph_freed", r"Trying to backward through the graph a second time"),
    ("non_scalar", r"grad can be implicitly created only for scalar outputs"),
    ("no_grad_fn", r"element (?P<index>\d+) of tensors does not require grad and does not "
                   r"have a grad_fn"),
    ("grad_shape", r"Mismatch in shape: grad_output\[(?P<index>\d+)\] has a shape of .*? "
                   r"and output\[\d+\] has a shape of torch\.Size\(\[(?P<shape>[\d, ]*)\]\)"),
    ("unused", r"(?:The differentiated Tensor at index (?P<index>\d+)|One of the differentiated "
               r"Tensors) appears to not have been used in the graph"),
    ("int_grad", r"(?i:only Tensors of floating point (?:and complex )?dtype can require "
                 r"gradients)"),
    ("numpy_grad", r"Can't call numpy\(\) on Tensor that requires grad"),
    ("no_gpu", r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are "
               r"available|pip install autograd_kit\[gpu\]"),  # (the kit's, in any language)
    ("nonleaf_grad", r"The \.grad attribute of a Tensor that is not a leaf Tensor is being "
                     r"accessed"),
)
_PATTERNS = [(kind, re.compile(pattern)) for kind, pattern in TORCH_MESSAGES]


def read_message(message: str) -> dict:
    """The kind and the facts that ``message`` states in PyTorch's wording, as a
    dict of :class:`.error_facts.ErrorFacts` fields (``{}`` for other messages)."""
    for kind, pattern in _PATTERNS:
        match = pattern.search(message)
        if match is None:
            continue
        facts = {"kind": kind}
        for key, value in match.groupdict().items():
            if value is None:
                continue
            if key in ("found", "expected", "index"):
                facts[key] = int(value)
            elif key == "shape":
                facts[key] = tuple(int(s) for s in value.split(",") if s.strip())
            elif key == "view":
                facts[key] = True
            else:
                facts[key] = value
        return facts
    return {}


def is_kit_error(err) -> bool:
    """True for one of autograd_kit's own errors (they name their kind)."""
    from autograd_kit.errors import AutogradError
    return isinstance(err, AutogradError)


def error_kind(err) -> str:
    """The kind of autograd error ``err`` is (``"graph_freed"``, ``"saved_modified"``...),
    as :func:`.error_facts.error_facts` tells it for a ``RuntimeError``: named by a
    kit error itself, read from the wording of PyTorch's; ``""`` for none of them."""
    if is_kit_error(err):
        return str(err.kind)
    return read_message(str(err)).get("kind", "")
