"""``AccumulationDemo``: ``.grad`` is a running sum, not a fresh answer.

Each call to ``backward()`` *adds* the new gradient into the leaf's ``.grad``;
that is why training loops zero it.  The bench keeps one leaf ``x`` and one
graph for ``loss``, and gives four buttons:

* ``forward``: build the loss again (a new graph);
* ``backward``: ``loss.backward()``, which frees the graph's saved tensors, so a
  second click on the same graph gets the engine's "second time" error;
* ``backward (retain_graph=True)``: keeps the graph for another call;
* ``zero grad``: ``x.grad.zero_()``.

A table and a small chart show ``x.grad`` after every click, as the engine left it.
``lib=torch`` runs the same bench on PyTorch's tensors and engine instead.
"""
from __future__ import annotations

import ipywidgets as W

import autograd_kit as ak
from autograd_kit.i18n import N_, _
from autograd_kit.viz import access

from ._common import TABLE, box, esc, values
from .error_words import explain
from .notebook import Bench, as_written, button, driving
from .plot import line_chart


#: the actions, as the table and the status line call them
ACTIONS = {"start": N_("start"), "forward (new graph)": N_("forward (new graph)"),
           "backward": N_("backward"),
           "backward (retain_graph=True)": N_("backward (retain_graph=True)"),
           "zero grad": N_("zero grad")}


def _default_loss(x):
    return x ** 2 * 3


class AccumulationDemo(Bench):
    """A leaf ``x``, a loss built from it, and buttons to call backward repeatedly.

    ``loss_fn(x)`` builds the loss (default ``x ** 2 * 3``) and ``label`` is the
    code shown for it.  From Python: ``forward()``, ``backward(retain_graph=False)``,
    ``zero_grad()``; ``history`` lists ``(action, x.grad as float or None, error)``.
    ``lib`` is the module that makes ``x``: autograd_kit (the default) or ``torch``."""

    def __init__(self, x_value: float = 2.0, loss_fn=None,
                 label: str = "loss = x ** 2 * 3", lib=None) -> None:
        super().__init__()
        self.lib = lib if lib is not None else ak
        self.loss_fn = loss_fn or _default_loss
        self.label = label
        self.history: list[tuple[str, float | None, str | None]] = []
        self.problem: str | None = None
        self.x = self.loss = None
        try:
            value = float(x_value)
        except (TypeError, ValueError):
            self.problem = as_written(_(
                "x_value must be a number (it becomes x = torch.tensor(value, "
                "requires_grad=True)); it was given {value}.").format(value=repr(x_value)),
                self.lib)
        else:
            self.x = self.lib.tensor(value, requires_grad=True)
            self._build_loss()
        self._build_view()
        if self.problem is None:
            self.history.append(("start", None, None))
        self._render()

    def _build_loss(self) -> None:
        try:
            loss = self.loss_fn(self.x)
        except Exception as err:  # the user's function failed: say so in words
            self.problem = _("loss_fn(x) failed: {error}").format(
                error=f"{type(err).__name__}: {err}")
            return
        if not (access.engine_name(loss) and loss.grad_fn is not None
                and loss.numel() == 1):
            self.problem = _("loss_fn(x) must return a single-number tensor computed from x "
                             "(with a grad_fn); it returned {value}.").format(value=repr(loss))
            return
        self.loss = loss

    # -- the actions --------------------------------------------------------------
    @driving
    def forward(self) -> None:
        """Build the loss again: a fresh graph (``.grad`` is kept)."""
        self._build_loss()
        self._record("forward (new graph)", None)

    @driving
    def backward(self, retain_graph: bool = False) -> None:
        """``loss.backward(retain_graph=...)``; an engine error is shown in words."""
        action = "backward (retain_graph=True)" if retain_graph else "backward"
        try:
            self.loss.backward(retain_graph=retain_graph)
        except RuntimeError as err:
            return self._record(action, err)
        self._record(action, None)

    @driving
    def zero_grad(self) -> None:
        """``x.grad.zero_()`` (nothing to do while ``x.grad`` is None)."""
        if self.x.grad is not None:
            with self.lib.no_grad():
                self.x.grad.zero_()
        self._record("zero grad", None)

    @property
    def grads(self) -> list[float | None]:
        """``x.grad`` after each action, starting with None."""
        return [g for _action, g, _error in self.history]

    def _record(self, action: str, err) -> None:
        grad = None if self.x.grad is None else float(self.x.grad.item())
        self.history.append((action, grad, None if err is None else str(err)))
        self._last_error = err
        self._render()

    # -- the view ---------------------------------------------------------------
    def _build_view(self) -> None:
        self.forward_button = button(_("forward"), self.forward, _("build the loss again"))
        self.backward_button = button(_("backward"), self.backward, "loss.backward()")
        self.retain_button = button(_("backward (retain_graph=True)"),
                                    lambda: self.backward(True),
                                    "loss.backward(retain_graph=True)")
        self.zero_button = button(_("zero grad"), self.zero_grad, "x.grad.zero_()")
        buttons = [self.forward_button, self.backward_button, self.retain_button,
                   self.zero_button]
        for b in buttons:
            b.disabled = self.problem is not None
        self.code = W.HTML()
        self.status = W.HTML()
        self.table = W.HTML(layout=W.Layout(width="50%"))
        self.chart = W.HTML()
        self._last_error = None
        self.children = [self.code, W.HBox(buttons), self.status,
                         W.HBox([self.table, self.chart])]

    def _render(self) -> None:
        with self.speaking():
            self._render_now()

    def _render_now(self) -> None:
        if self.problem is not None:
            self.code.value = ""
            self.status.value = box(esc(self.problem), "error")
            return
        code = as_written(f"x = torch.tensor({values(self.x)}, requires_grad=True)", self.lib)
        self.code.value = (f"<pre style='margin:2px 0'>{esc(code)}\n{esc(self.label)}"
                           "</pre>")
        action = self.history[-1][0] if self.history else "start"
        if self._last_error is not None:
            self.status.value = box(f"{esc(_(ACTIONS[action]))}: " + explain(self._last_error),
                                    "error")
        else:
            self.status.value = box(esc(_("after {action}: x.grad = {grad}").format(
                action=_(ACTIONS[action]), grad=values(self.x.grad))),
                "ok" if action != "start" else "info")
        refused = _("engine refused")
        rows = "".join(
            f"<tr><td>{i}</td><td>{esc(_(ACTIONS[a]))}</td>"
            f"<td>{esc('None' if g is None else f'{g:.6g}')}"
            f"</td><td>{esc(refused) if e else ''}</td></tr>"
            for i, (a, g, e) in enumerate(self.history))
        self.table.value = (f"{TABLE}<tr><th>{_('click')}</th><th>{_('action')}</th>"
                            f"<th>x.grad</th><th></th></tr>{rows}</table>")
        self.chart.value = line_chart(
            list(enumerate(self.grads)), _("x.grad after each click"),
            _("Line chart of x.grad after each click, for {loss}").format(loss=self.label))

    def describe(self) -> str:
        if self.problem is not None:
            return _("cannot build the loss")
        return _("x={x}, {label}, clicks={clicks}, x.grad={grad}").format(
            x=values(self.x), label=self.label, clicks=len(self.history) - 1,
            grad=values(self.x.grad))
