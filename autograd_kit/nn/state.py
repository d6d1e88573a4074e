"""What a module does with all its tensors at once: move, convert, save, load.

``nn.Module`` inherits these from :class:`StateMixin`; they all walk the
module tree (``children()``, ``named_modules()``) and the three dictionaries
``_parameters``, ``_buffers`` and ``_modules`` that ``module.py`` maintains.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from .. import backend
from ..grad_mode import no_grad
from ..ops.convert import parse_to_args
from ..tensor import Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__



class StateMixin:
    """Moving, converting, saving and loading every tensor of a module tree."""

    # -- moving and converting ------------------------------------------------------
    def _apply(self, fn) -> "StateMixin":
        """Replace every parameter's, gradient's and buffer's data by ``fn(data)``.

        Parameters keep their identity (``p.data = ...``), so an optimizer built
        before ``model.to(device)`` still holds the right objects."""
        for module in self.children():
            module._apply(fn)
        for p in self._parameters.values():
            if p is not None:
                p.data = fn(p.data)
                if p.grad is not None:
                    p.grad.data = fn(p.grad.data)
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "StateMixin":
        """``to(device)``, ``to(dtype)`` or both; dtypes apply to floating-point tensors."""
        dev, dt = parse_to_args(args, kwargs)
        if dt is not None and not (dt.is_floating_point or dt.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dt}")

        def convert(t):
            if dt is not None and t.is_floating_point():
                return t.to(device=dev, dtype=dt)
            return t.to(device=dev)
        return self._apply(convert)

    def cuda(self, device=None) -> "StateMixin":
        return self.to(device if device is not None else "cuda")

    def cpu(self) -> "StateMixin":
        return self.to("cpu")

    def double(self) -> "StateMixin":
        return self.to(backend.float64)

    def float(self) -> "StateMixin":
        return self.to(backend.float32)

    def half(self) -> "StateMixin":
        return self.to(backend.float16)

    # -- saving and loading ------------------------------------------------------
    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict from dotted names to tensors: parameters and persistent
        buffers, detached (same memory, no graph) unless ``keep_vars``."""
        out = OrderedDict() if destination is None else destination
        for name, t in self._local_state().items():
            out[prefix + name] = t if keep_vars else t.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=out, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return out

    def _local_state(self) -> dict:
        state = {k: v for k, v in self._parameters.items() if v is not None}
        state.update((k, v) for k, v in self._buffers.items()
                     if v is not None and k not in self._non_persistent_buffers_set)
        return state

    def load_state_dict(self, state_dict: Mapping, strict: bool = True) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into this model's tensors, in place.

        Every module checks its own keys: a tensor of the model with no entry is
        *missing*; an entry that names nothing in the model is *unexpected*.  With
        ``strict`` either is an error, as is any shape mismatch (always)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        for name, module in self.named_modules(remove_duplicate=False):
            module._load_from_state_dict(state_dict, name + "." if name else "",
                                         missing, unexpected, errors)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, state_dict, prefix, missing, unexpected, errors) -> None:
        """This module's share of ``load_state_dict`` (its own tensors only)."""
        local = self._local_state()
        for name, t in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected '
                              "torch.Tensor or Tensor-like object from checkpoint but "
                              f"received {type(value)}")
            elif value.shape != t.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model "
                              f"is {t.shape}.")
            else:
                with no_grad():
                    t.copy_(value)
        for key in state_dict:
            if key.startswith(prefix):
                head = key[len(prefix):].split(".", 1)[0]
                if head not in self._modules and head not in local:
                    unexpected.append(key)
