"""``Optimizer``: what every optimizer shares.

An optimizer holds

* ``param_groups``: a list of dicts, each ``{"params": [tensors...], "lr": ...}``.
  One group is usual; several let parts of a model use different settings
  (``SGD([{"params": body}, {"params": head, "lr": 0.1}], lr=0.01)``).  A group
  that leaves a setting out gets the optimizer's default for it.
* ``state``: per parameter, whatever the method remembers between steps
  (SGD's momentum buffer, Adam's running averages), created on the first step.

``step()`` visits every parameter that has a gradient and changes it in place,
under ``no_grad`` (an update is not part of the model's computation, and a leaf
that requires grad may only be changed in place when nothing is recorded).
A subclass writes only ``_update(p, grad, group, state)``: the formula.
"""
from __future__ import annotations

from collections import defaultdict

from ..grad_mode import enable_grad, no_grad
from ..nn.utils import typename, zero_grad_
from ..tensor import Tensor


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``zero_grad``, ``step``."""

    def __init__(self, params, defaults: dict) -> None:
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable "
                            "of Tensors or dicts, but got " + typename(params))
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (e.g. layers unfrozen later); missing settings get the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                "is " + typename(p))
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        taken = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in taken for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        param_group["params"] = params
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (backward adds into ``.grad``)."""
        zero_grad_((p for group in self.param_groups for p in group["params"]), set_to_none)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient.

        ``closure``, if given, recomputes the loss (with gradients) first and
        its value is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is not None:
                    self._update(p, grad, group, self.state[p])
        return loss

    def _update(self, p: Tensor, grad: Tensor, group: dict, state: dict) -> None:
        """Change ``p`` in place from its gradient; subclasses give the formula."""
        raise NotImplementedError

    # -- saving and loading --------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are replaced by their position (counting through all groups),
        so the dict can be loaded into an optimizer built on another copy of the
        same model."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore settings and state saved by ``state_dict()``.

        State tensors are copied (not shared with ``state_dict``) onto each
        parameter's device, floating-point ones in its dtype."""
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        pairs = list(zip(saved, self.param_groups, strict=True))
        if any(len(s["params"]) != len(g["params"]) for s, g in pairs):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_index = {i: p for s, g in pairs for i, p in zip(s["params"], g["params"], strict=True)}
        self.state = defaultdict(dict)
        for i, values in state_dict["state"].items():
            p = by_index[i]
            self.state[p] = {k: _cast(v, p, k) for k, v in values.items()}
        self.param_groups = [{**{k: v for k, v in s.items() if k != "params"},
                              "params": g["params"]} for s, g in pairs]

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast(value, p: Tensor, key: str):
    """A copy of a saved state value, living where ``p`` lives."""
    if not isinstance(value, Tensor):
        return value
    value = value.detach().clone()
    if key == "step":
        return value
    if value.is_floating_point():
        return value.to(device=p.device, dtype=p.dtype)
    return value.to(device=p.device)
