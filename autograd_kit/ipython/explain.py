"""Autograd errors that explain themselves (``%autograd_explain on``).

PyTorch's autograd errors are exact but terse: *"one of the variables needed
for gradient computation has been modified by an inplace operation"* -- which
variable?  Why does it matter?  With the switch on, an autograd_kit error
shows a few plain sentences (what happened, why autograd cares, how to fix
it) above its usual traceback, and after the cell a picture of the graph with
the culprit outlined in red.

Nothing here catches the error: the cell still fails, a notebook run still
stops there, and other extensions' error handling is untouched.  Two hooks:

* ``autograd_kit.errors.set_explainer(fn)``: IPython asks an exception for
  ``_render_traceback_()``, and autograd errors answer with ``fn(error)``:
  the explanation, then the stock traceback;
* a ``post_run_cell`` event that displays the picture when the cell ended in
  an autograd error.  (IPython renders a traceback more than once -- to show
  it and to store it in the history -- so the rendering hook itself must not
  display anything.)
"""
from __future__ import annotations

import html
import textwrap
import traceback
from dataclasses import dataclass, field

from .. import errors
from .display import name_of

WIDTH = 88
_state = {"shell": None, "on": False}


@dataclass
class Explanation:
    """What went wrong, in words, and what to draw: the graph below ``root``,
    with ``culprit`` (a tensor or node) outlined."""

    title: str
    paragraphs: list[str]
    root: object = None
    culprit: object = None
    culprit_name: str = ""
    show_saved: bool = False
    names: dict = field(default_factory=dict, repr=False)

    def lines(self) -> list[str]:
        """The explanation as plain-text lines, for the traceback."""
        out = ["autograd_kit explains (%autograd_explain off to hide this):", ""]
        for text in [self.title, *self.paragraphs]:
            out += textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="  ",
                                 break_on_hyphens=False, break_long_words=False)
            out.append("")
        if self.root is not None:
            out += [f"  The graph is drawn below, {self.culprit_name} outlined in red.", ""]
        return out

    def picture(self):
        """The graph as a :class:`autograd_kit.viz.Graph`, culprit highlighted."""
        from ..viz import make_dot
        return make_dot(self.root, names=self.names, show_saved=self.show_saved,
                        highlight=self.culprit, max_nodes=40)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        caption = f"[graph of the error above: {self.culprit_name} outlined in red]"
        try:
            svg = self.picture().svg()
        except Exception as err:  # no renderer: say so, the text is in the traceback
            return {"text/plain": f"{caption}\n{err}"}
        esc = html.escape
        body = "".join(f"<p style='margin:4px 0'>{esc(p)}</p>" for p in self.paragraphs)
        return {"text/plain": caption,
                "text/html": (f"<div class='autograd-kit-explain'><b>{esc(self.title)}</b>"
                              f"{body}{svg}</div>")}


# -- one explainer per kind of error -----------------------------------------------
def _called(t, names, default: str) -> str:
    """```x``` when ``t`` is bound to ``x`` in the namespace, else ``default``."""
    name = name_of(t, names) if t is not None else None
    return f"`{name}`" if name else default


def _node_name(node) -> str:
    return node.name().rsplit("::", 1)[-1] if node is not None else "a node"


def _leaf_inplace(err, names) -> Explanation:
    t = err.tensor
    base = t._base[0] if err.view and t is not None and t._base is not None else t
    leaf = name_of(base, names) if base is not None else None
    x = leaf or "x"
    what = f"`{leaf}`, a leaf tensor" if leaf else "a leaf tensor"
    title = (f"{_called(t, names, 'This tensor')} is a view of {what} that requires grad, "
             "so it can't be changed in place." if err.view else
             f"{_called(t, names, 'This tensor')} is a leaf tensor that requires grad, so "
             "it can't be changed in place.")
    return Explanation(
        title,
        [f"A leaf is a tensor you made yourself with requires_grad=True; backward() puts "
         f"the gradient with respect to it into `{x}.grad`. Changing it in place "
         f"(`{x} += 1`, `{x}.add_(1)`, `{x}[0] = 0`) while autograd is recording would "
         "overwrite the very value that gradient is about, so autograd refuses. A view "
         f"(`{x}[0]`, `{x}.view(...)`) shares the leaf's memory, so the same holds for it.",
         "Fix: to update a parameter, as an optimizer does, do it inside "
         f"`with torch.no_grad():`; otherwise compute a new tensor: `{x} = {x} + 1`."],
        root=t, culprit=t, culprit_name=_called(t, names, "the tensor"), names=names)


def _name_by_memory(t, names) -> str | None:
    """The user's name for the tensor holding ``t``'s memory (an op's saved output
    is kept as data only, so identity of the tensor object cannot find it)."""
    from ..tensor import Tensor
    if t is None:
        return None
    found = name_of(t, names)
    if found:
        return found
    for key, value in (names or {}).items():
        if isinstance(key, str) and not key.startswith("_") and isinstance(value, Tensor) \
                and value._data is t._data:
            return key
    return None


def _saved_modified(err, names) -> Explanation:
    node, name = err.node, _node_name(err.node)
    a = _name_by_memory(err.tensor, names)
    what = f"`{a}`" if a else f"the value it saved as `{err.saved_name}`"
    made_by = f" (an output of {err.producer})" if err.producer else ""
    changes = (f"`{a} += 1`, `{a}.mul_(2)`, `{a}[0] = 0`" if a else
               "`+= 1`, `.mul_(2)`, `[0] = 0`")
    fixes = (f"write the change out of place (`{a} = {a} * 2` instead of `{a} *= 2`), "
             f"change a copy (`{a}.clone()`), or make the change after backward()." if a
             else "write the change out of place (`y = y * 2` rather than `y *= 2`), change "
                  "a copy made with `.clone()`, or make the change after backward().")
    return Explanation(
        f"{name} needs {what} to compute its gradient, but it was changed in place "
        "after it was saved.",
        [f"When the forward pass ran, {name} saved {what}{made_by} at version "
         f"{err.expected}. An in-place operation ({changes}...) has changed it since: it "
         f"is now at version {err.found}. Every in-place change adds 1 to a tensor's "
         "`._version`; backward compares the two numbers so that it never computes a "
         "gradient from values that are gone.",
         "Fix: " + fixes],
        root=node, culprit=node, culprit_name=name, show_saved=True, names=names)


def _graph_freed(err, names) -> Explanation:
    node, name = err.node, _node_name(err.node)
    return Explanation(
        "backward() went through this graph a second time, but its saved values were "
        "already freed.",
        ["To save memory, the first backward() frees the values that the graph's nodes "
         f"kept for it (marked 'freed' in the picture). {name} needed one of them again.",
         "Fix: usually, build the graph again by running the forward computation again "
         "(compute the loss inside the loop). If you really need two backward passes "
         "through one graph, call the first with `backward(retain_graph=True)`."],
        root=node, culprit=node, culprit_name=name, show_saved=True, names=names)


def _non_scalar(err, names) -> Explanation:
    t = err.tensor
    who = _called(t, names, "the tensor")
    y = name_of(t, names) or "y"
    size = f" has shape {tuple(t.shape)}: {t.numel()} numbers" if t is not None else " is not"
    return Explanation(
        f"backward() without an argument needs a single number, but {who}{size}.",
        ["A gradient is defined for one number, such as a loss: how does it change when "
         f"each input changes? For {who}, backward() would need to know how much each of "
         "its numbers counts.",
         f"Fix: reduce it first, `{y}.sum().backward()` or `{y}.mean().backward()`, or pass "
         f"the weights yourself: `{y}.backward(torch.ones_like({y}))`."],
        root=t, culprit=t, culprit_name=who, names=names)


def _no_grad_fn(err, names) -> Explanation:
    t = err.tensor
    who = _called(t, names, "This tensor")
    return Explanation(
        f"{who} has no grad_fn and does not require grad: there is no graph behind it "
        "for backward() to go through.",
        ["A tensor gets a grad_fn only when it is computed, with grad mode on, from "
         "tensors that require grad. Usual causes: the inputs were made without "
         "`requires_grad=True`; the computation ran under `torch.no_grad()`; or "
         "`.detach()`, `.data` or `.item()` cut the graph.",
         "Fix: create the inputs with `requires_grad=True` (or call `x.requires_grad_()`) "
         "before computing from them."],
        root=t, culprit=t, culprit_name=_called(t, names, "the tensor"), names=names)


def _grad_shape(err, names) -> Explanation:
    t = err.tensor
    who = _called(t, names, "the output")
    return Explanation(
        f"The gradient given to backward() must have the shape of {who}.",
        [f"{err} The gradient passed to `y.backward(g)` says how much each number of `y` "
         "counts, so `g` needs exactly one entry per number of `y`.",
         "Fix: pass a gradient shaped like the output, e.g. `torch.ones_like(y)`."],
        root=t, culprit=t, culprit_name=who, names=names)


EXPLAINERS = {"leaf_inplace": _leaf_inplace, "saved_modified": _saved_modified,
              "graph_freed": _graph_freed, "non_scalar": _non_scalar,
              "no_grad_fn": _no_grad_fn, "grad_shape": _grad_shape}


def explain(err, names=None) -> Explanation:
    """The explanation of an autograd error; ``names`` (a namespace) names tensors."""
    names = names if names is not None else _namespace()
    explainer = EXPLAINERS.get(getattr(err, "kind", ""))
    if explainer is not None:
        try:
            return explainer(err, names)
        except Exception:  # a detail missing from the error: fall back to its message
            pass
    return Explanation(str(err).split(". ")[0] + ".", [], names=names)


# -- the hooks ------------------------------------------------------------------------
def _namespace() -> dict:
    shell = _state["shell"]
    return shell.user_ns if shell is not None else {}


def render_traceback(err) -> list[str]:
    """What IPython shows for an autograd error: the explanation, then the stock
    traceback.  Never raises (IPython would print a second error instead)."""
    try:  # one entry: IPython joins entries with "\n" or "" depending on %xmode
        head = ["\n".join(explain(err).lines())]
    except Exception:
        head = []
    shell = _state["shell"]
    try:
        stock = shell.InteractiveTB.structured_traceback(type(err), err, err.__traceback__)
    except Exception:
        stock = traceback.format_exception(type(err), err, err.__traceback__)
    return head + list(stock)


def after_cell(result) -> None:
    """``post_run_cell`` event: draw the graph of the error the cell ended with."""
    err = getattr(result, "error_in_exec", None)
    if not (_state["on"] and isinstance(err, errors.AutogradError)):
        return
    try:
        exp = explain(err)
        if exp.root is not None:
            from IPython.display import display
            display(exp)
    except Exception:  # never turn an explained error into a second one
        pass


def enable(shell) -> None:
    """Turn explanations on for ``shell``."""
    if not hasattr(errors, "set_explainer"):
        from IPython.core.error import UsageError
        raise UsageError("autograd_explain: autograd_kit.errors has no set_explainer hook")
    _state["shell"] = shell
    errors.set_explainer(render_traceback)
    if not _state["on"]:
        shell.events.register("post_run_cell", after_cell)
    _state["on"] = True


def disable(shell) -> None:
    """Turn explanations off: IPython's usual tracebacks again."""
    if hasattr(errors, "set_explainer"):
        errors.set_explainer(None)
    if _state["on"]:
        try:
            shell.events.unregister("post_run_cell", after_cell)
        except ValueError:
            pass
    _state["on"] = False


def is_on() -> bool:
    return _state["on"]
