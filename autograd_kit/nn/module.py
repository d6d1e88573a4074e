"""``nn.Module``: the base class of every layer and every model.

A module is an object that *owns tensors* and *computes* with them.  Three plain
dictionaries hold what it owns, filled in by ``__setattr__`` as a subclass's
``__init__`` assigns attributes:

* ``_parameters``  the Parameters (``self.weight = nn.Parameter(...)``): the
  numbers training adjusts;
* ``_buffers``     tensors that are state but not trained (``register_buffer``);
* ``_modules``     sub-modules (``self.fc1 = nn.Linear(...)``).

Everything else follows from walking that tree: ``parameters()`` gathers the
Parameters of the module and of all its sub-modules, named by their path
(``"0.weight"``, ``"encoder.fc1.bias"``); ``state_dict()`` is the same walk
returning the values; ``to(device)`` applies one function to every tensor.

Calling the module (``model(x)``) runs ``forward(x)``, which subclasses write.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

from ..tensor import Tensor
from .parameter import Parameter
from .state import StateMixin
from .utils import typename, zero_grad_


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (how nested module reprs line up)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    rest = [" " * spaces + ln if ln.strip() else "" for ln in lines[1:]]
    return "\n".join([lines[0]] + rest)


class Module(StateMixin):
    """Base class for all neural network modules; subclasses define ``forward``."""

    training: bool

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ needs these dicts to exist first
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", OrderedDict())
        set_(self, "_buffers", OrderedDict())
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        """``model(x)`` runs ``model.forward(x)``."""
        return self.forward(*args, **kwargs)

    # -- registration ---------------------------------------------------------
    def _check_name(self, name, kind: str, store: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that belongs to the module's state (saved, moved by ``to``) but is
        not a parameter: optimizers never see it."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        self._check_name(name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value) -> None:
        params, modules = self.__dict__.get("_parameters"), self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Remove ``name`` from every place an attribute can live."""
        for store in (self.__dict__, self._parameters, self._buffers, self._modules):
            store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: parameters, buffers and sub-modules
        # live in their dicts, not in __dict__.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # -- walking the tree ---------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module (named ``prefix``) and every sub-module, depth first."""
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool):
        """(dotted name, tensor) for every tensor in ``store`` of this module (and of
        its sub-modules when ``recurse``); a tensor shared by two modules comes once."""
        seen = set()
        walk = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in walk:
            for name, t in getattr(module, store).items():
                if t is None or id(t) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(t))
                yield module_prefix + ("." if module_prefix else "") + name, t

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``("0.weight", Parameter)`` pairs: each parameter with its path in the tree."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every Parameter of the model, in registration order (what optimizers take)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn) -> Module:
        """Call ``fn(m)`` on every sub-module, then on this one (e.g. custom init)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- training state -------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and in every sub-module (layers such as Dropout
        behave differently when training)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Switch gradient tracking of every parameter on or off (freezing a layer)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every parameter (they accumulate otherwise)."""
        zero_grad_(self.parameters(), set_to_none)

    # -- printing -------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside ``Name(...)``; layers override it (``in_features=2, ...``)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
