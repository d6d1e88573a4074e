"""How tensors and ``grad_fn`` nodes show themselves in a notebook.

``%load_ext autograd_kit`` registers these with IPython's display formatters
(unloading takes them away again):

* a ``grad_fn`` node, such as ``y.grad_fn``, shows as a picture of the graph
  below it: an ``<img>`` of the SVG in ``text/html``, which shows even in a
  notebook opened fresh (untrusted, see :mod:`autograd_kit.viz.embed`), beside
  the SVG itself; its text is ``<MulBackward0>`` (PyTorch's repr carries a
  memory address, which changes every run and breaks stored notebook outputs);
* a tensor keeps PyTorch's text.  ``%autograd_display card`` adds a small HTML
  card (value, shape, dtype, leaf / requires_grad / grad_fn, grad) and
  ``%autograd_display text`` removes it.  The text stays in every output, so
  stored notebooks compare the same either way.  Real PyTorch tensors get the
  card too: it is registered for ``torch.Tensor`` by name, so PyTorch is
  never imported here.

Variable names come from the notebook's namespace; everything written into
HTML is escaped.
"""
from __future__ import annotations

import html
from contextlib import nullcontext

from ..graph import Node
from ..i18n import N_, _, language, language_code
from ..tensor import Tensor
from ..viz import access

MODES = ("text", "card")
#: the card's field names (PyTorch's attribute names, in English: the translations
#: keep them beside the words, so a learner can still type them)
FIELDS = {"shape": N_("shape"), "dtype": N_("dtype"), "device": N_("device"),
          "is_leaf": N_("is_leaf"), "requires_grad": N_("requires_grad"),
          "grad_fn": N_("grad_fn"), "grad": N_("grad")}
TORCH_TENSOR = "torch.Tensor"  # IPython looks this class up only once torch is imported
NODE_PICTURE_MAX = 40  # boxes shown for a node's picture before long chains fold

_state = {"mode": "text", "shell": None, "saved": {}, "lang": None}


def name_of(obj, namespace) -> str | None:
    """The first public name bound to ``obj`` (by identity) in ``namespace``."""
    for name, value in list((namespace or {}).items()):  # (a snapshot: the kernel may bind)
        if value is obj and isinstance(name, str) and not name.startswith("_"):
            return name
    return None


def _namespace():
    shell = _state["shell"]
    return shell.user_ns if shell is not None else {}


# -- grad_fn nodes ------------------------------------------------------------
def node_text(node, p, cycle) -> None:
    """Pretty-printer for nodes: ``<MulBackward0>``."""
    p.text(f"<{node.name().rsplit('::', 1)[-1]}>")


def node_graph(node):
    """The picture of the graph below ``node`` (an unrendered
    :class:`autograd_kit.viz.Graph`)."""
    from ..viz import make_dot
    return make_dot(node, names=_namespace(), max_nodes=NODE_PICTURE_MAX)


def node_svg(node) -> str | None:
    """The SVG of the graph below ``node``, or None if it can't be drawn."""
    try:
        return node_graph(node).svg()
    except Exception:  # a display hook must never make a cell fail
        return None


def node_bundle(node, include=None, exclude=None):
    """``(data, metadata)``: the picture as ``text/html`` (an ``<img>``, shown in
    untrusted notebooks too) and ``image/svg+xml``, drawn once; empty when it
    can't be drawn (the text is then shown alone)."""
    try:
        data, metadata = node_graph(node)._repr_mimebundle_(include, exclude)
    except Exception:  # a display hook must never make a cell fail
        return {}, {}
    data.pop("text/plain", None)  # the short text comes from node_text
    if "image/svg+xml" not in data and "text/html" not in data:
        return {}, {}
    return data, metadata


# -- tensors ---------------------------------------------------------------------
def _grad_text(t) -> str:
    if t.grad_fn is not None and not getattr(t, "retains_grad", False):
        return _("None (not a leaf: call retain_grad() to keep it)")
    grad = access.grad_of(t)
    return repr(grad) if grad is not None else "None"


def card_rows(t) -> list[tuple[str, str]]:
    """The facts shown in a tensor's card, as ``(label, text)`` pairs, labels in
    the current language (a tensor of autograd_kit or of PyTorch; anything else
    gets a one-line TypeError)."""
    access.require_tensor(t, _("the tensor card"))
    fn = t.grad_fn
    rows = [("shape", repr(t.shape)), ("dtype", repr(t.dtype)), ("device", str(t.device)),
            ("is_leaf", str(t.is_leaf)), ("requires_grad", str(t.requires_grad)),
            ("grad_fn", f"<{access.node_name(fn)}>" if fn is not None else "None"),
            ("grad", _grad_text(t))]
    return [(_(FIELDS[field]), text) for field, text in rows]


def set_card_language(lang: str | None) -> None:
    """Cards speak ``lang`` from now on (``%autograd_display card --lang zh``);
    None: the notebook's language."""
    _state["lang"] = language_code(lang) if lang else None


def card_language() -> str | None:
    return _state["lang"]


def tensor_card(t) -> str:
    """A compact HTML card for tensor ``t`` (every piece of text escaped), in the
    cards' language (see :func:`set_card_language`)."""
    with language(_state["lang"]) if _state["lang"] else nullcontext():
        return _card(t)


def _card(t) -> str:
    access.require_tensor(t, _("the tensor card"))
    esc = html.escape
    name = name_of(t, _namespace())
    title = f"<b>{esc(name)}</b> " if name else ""
    rows = "".join(f"<tr><td style='text-align:left;opacity:.7;padding:0 8px 0 0'>{esc(k)}"
                   f"</td><td style='text-align:left'><code>{esc(v)}</code></td></tr>"
                   for k, v in card_rows(t))
    value = esc(repr(t.detach()))
    return ("<div class='autograd-kit-card' style='display:inline-block;border:1px solid "
            "rgba(128,128,128,.5);border-radius:4px;padding:4px 8px;font-size:12px'>"
            f"<div>{title}<span style='opacity:.7'>{esc(_('tensor'))}</span></div>"
            f"<pre style='margin:4px 0'>{value}</pre>"
            f"<table style='border-collapse:collapse'>{rows}</table></div>")


# -- registering ------------------------------------------------------------------
MIMEBUNDLE = "mimebundle"  # IPython's formatter of whole bundles, not one mime type


def _formatter(shell, mime: str):
    display = shell.display_formatter
    return display.mimebundle_formatter if mime == MIMEBUNDLE else display.formatters[mime]


def _register(shell, mime: str, cls, func) -> None:
    """Register ``func`` and remember what it replaced, to put it back later.
    ``cls`` is a class or a ``"module.Class"`` name (IPython then finds the
    class when the first instance is shown)."""
    old = _formatter(shell, mime).for_type(cls, func)
    _state["saved"].setdefault((mime, cls), old)


def _unregister(shell, mime: str, cls) -> None:
    if (mime, cls) not in _state["saved"]:
        return  # not ours: leave it alone
    formatter = _formatter(shell, mime)
    old = _state["saved"].pop((mime, cls))
    if old is not None:
        formatter.for_type(cls, old)
    else:
        formatter.pop(cls, None)


def set_mode(mode: str) -> None:
    """``"card"``: tensors also show as an HTML card; ``"text"``: text only."""
    if mode not in MODES:
        raise ValueError(f"display mode must be one of {MODES}, not {mode!r}")
    shell = _state["shell"]
    _state["mode"] = mode
    if shell is None:
        return
    if mode == "card":
        _register(shell, "text/html", Tensor, tensor_card)
        _register(shell, "text/html", TORCH_TENSOR, tensor_card)
    else:
        _unregister(shell, "text/html", Tensor)
        _unregister(shell, "text/html", TORCH_TENSOR)


def get_mode() -> str:
    return _state["mode"]


def install(shell) -> None:
    """Register the node picture, and the tensor card if its mode is on."""
    _state["shell"] = shell
    _register(shell, "text/plain", Node, node_text)
    _register(shell, MIMEBUNDLE, Node, node_bundle)
    from . import torch_nodes  # PyTorch's nodes: one class per kind of node
    torch_nodes.install(shell, lambda sh, cls: (_register(sh, "text/plain", cls, node_text),
                                                 _register(sh, MIMEBUNDLE, cls, node_bundle)))
    set_mode(_state["mode"])


def uninstall(shell) -> None:
    """Remove every formatter that :func:`install` and :func:`set_mode` added."""
    from . import torch_nodes
    torch_nodes.uninstall(shell)
    for mime, cls in list(_state["saved"]):
        _unregister(shell, mime, cls)
    _state["shell"] = None
    _state["mode"] = "text"
    _state["lang"] = None
