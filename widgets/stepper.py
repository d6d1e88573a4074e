"""``BackwardStepper``: watch a backward pass one node at a time.

The widget holds no autograd logic, and does not care which engine made the
tensor.  It asks :func:`autograd_kit.viz.engines.backward_pass` for the pass as a
list of step records, through one small adapter per engine
(:mod:`autograd_kit.viz.engines`), and draws them:

* autograd_kit's own ``backward_steps()`` generator (the one ``backward()``
  exhausts) is pulled live, one node per Step;
* PyTorch's engine cannot be paused, so its real pass is recorded with hooks
  when the stepper is made and replayed; the widget says so (and, without
  ``retain_graph``, that PyTorch has therefore already freed the saved tensors).

The graph is laid out once; each step only recolours boxes (``Graph.restyle``):
done, current, waiting, leaves updated, saved tensors freed.  Going back is
"restore, then replay": the adapter puts grads (and, for the kit, saved tensors)
back exactly, and the pass is run forward again to the wanted step.
"""
from __future__ import annotations

import ipywidgets as W

from autograd_kit.i18n import _, ngettext
from autograd_kit.viz import access, make_dot
from autograd_kit.viz.engines import backward_pass

from . import marks, panel
from ._common import ENGINE, box, esc, grad_label, name_index, picture_html, spaced, values, \
    who_text
from .error_words import explain
from .notebook import Bench, button, driving, from_ui


#: the most boxes the stepper draws unless told otherwise (``max_nodes=``)
FOLD_ABOVE = 150


class BackwardStepper(Bench):
    """Step through ``root.backward(gradient, retain_graph=...)`` node by node.

    ``root`` is a tensor of autograd_kit or of PyTorch.  Buttons Step / Back /
    Run / Reset and a Play + slider drive it; from Python, ``step()``, ``back()``,
    ``run()``, ``reset()``, ``go_to(n)``, ``run_again()``.
    ``params`` (``dict(model.named_parameters())``, as ``make_dot`` takes it) and
    ``names`` (e.g. ``globals()``) label tensors with their names (and
    tell PyTorch's adapter which tensors may ``retain_grad()``: its nodes do not
    know their output tensors);
    ``show_saved`` draws saved tensors (greyed out as they are freed);
    ``max_nodes`` folds long chains and wide fans of a big graph (a fold is coloured
    as one box); by default a graph of more than :data:`FOLD_ABOVE` boxes is folded
    to that many, so that a 10,000-input ``cat`` draws in a moment."""

    def __init__(self, root, gradient=None, retain_graph: bool = False, names=None, *,
                 params=None, show_saved: bool = True, theme: str = "light",
                 max_nodes: int | None = None) -> None:
        super().__init__()
        max_nodes = FOLD_ABOVE if max_nodes is None else max_nodes
        self.root, self.gradient, self.retain_graph = root, gradient, bool(retain_graph)
        params = dict(params or {})  # dict(model.named_parameters()), as make_dot takes
        self._index = {**name_index(names), **name_index(params)}
        self._steps: list = []
        self._pass = None                            # the iterator of the current pass
        self._source = None                          # the engine's adapter
        self._error: BaseException | None = None   # what stopped the current pass
        self._note = ""                              # result of a second pass
        self._syncing = False
        self.passes = 0                              # passes run after the first
        self._tried_again = False                    # a pass after the first was tried
        self.total, self.problem, self._ahead = 0, None, None
        self._graph = None
        try:
            access.require_tensor(root, "BackwardStepper", values=True)
        except TypeError as err:
            self.problem = str(err)
        else:
            if access.has_graph(root):
                # drawn first: a recorded pass may free the saved values it shows
                self._graph = make_dot(root, params=params, names=names,
                                       show_saved=show_saved, theme=theme,
                                       max_nodes=max_nodes)
                self._saved_boxes = marks.saved_box_owners(self._graph)
            known = [t for t in [*dict(names or {}).values(), *params.values()]
                     if access.is_tensor(t)]
            self._source = backward_pass(root, gradient, self.retain_graph, known)
            self.total, self._ahead = self._source.total, self._source.stopper
            if self.total == 0 and self._ahead is not None:
                self.problem = self._ahead
        self._build()
        self._render()

    # -- the engine, through its adapter -----------------------------------------
    @property
    def engine(self) -> str:
        """``"autograd_kit"`` or ``"torch"`` (``""`` when nothing can be shown)."""
        return self._source.engine if self._source is not None else ""

    def _advance(self, n: int) -> None:
        """Pull ``n`` more steps from the pass (fewer if it stops or fails)."""
        for _count in range(n):
            if self._pass is None:
                self._pass = self._source.steps()
            try:
                self._steps.append(next(self._pass))
            except StopIteration:
                return
            except RuntimeError as err:
                self._error = err
                return

    def _restart(self) -> None:
        if self._pass is not None:
            self._pass.close()
        self._pass, self._steps, self._error = None, [], None
        self._source.restore()
        self.passes, self._tried_again, self._note = 0, False, ""

    # -- public API -----------------------------------------------------------
    @property
    def position(self) -> int:
        """How many steps have been done."""
        return len(self._steps)

    @property
    def steps(self) -> list:
        """The engine's records of the steps done so far."""
        return list(self._steps)

    @property
    def current(self):
        """The last step done (a :class:`autograd_kit.engine.Step`), or None."""
        return self._steps[-1] if self._steps else None

    @property
    def finished(self) -> bool:
        return self.problem is None and self.position == self.total and self._ahead is None

    @driving
    def step(self) -> None:
        """One node further; at the end of a pass, a second full pass."""
        if self.problem is not None:
            return self._render()
        if self.position < self.total or (self._ahead is not None and self._error is None):
            self._advance(1)
            return self._render()
        if self.finished:
            return self.run_again()
        self._render()

    @driving
    def back(self) -> None:
        """One step back (grads and freed buffers restored exactly)."""
        self.go_to(self.position - 1)

    @driving
    def run(self) -> None:
        """To the end of the pass: the same ``.grad`` values as ``root.backward()``."""
        if self.problem is None:
            self._advance(self.total - self.position + (self._ahead is not None))
        self._render()

    @driving
    def reset(self) -> None:
        """Back to the state before the first step."""
        self.go_to(0)

    @driving
    def go_to(self, n: int) -> None:
        """Stand after step ``n`` (0 = before the first)."""
        if self.problem is not None:
            return self._render()
        n = max(0, min(int(n), self.total))
        if n < self.position or self._tried_again or self._error is not None:
            self._restart()
        self._advance(n - self.position)
        self._render()

    @driving
    def run_again(self) -> None:
        """After a finished pass, run backward once more, as a second
        ``root.backward()`` would: without ``retain_graph`` the engine refuses.

        ``passes`` counts the passes that ran: a refused one is not a pass, so
        trying again is refused as the same "Pass 2"."""
        if not self.finished:
            self.run()
            if not self.finished:
                return
        before = self._leaf_grads()
        self._tried_again = True  # even a refused pass may have changed grads: go_to replays
        with self.speaking():
            self._note = self._second_pass(before)
        self._render()

    def _second_pass(self, before: dict) -> str:
        """Run the pass again; the note that says how it went."""
        try:
            self._source.again()
        except RuntimeError as err:
            return box(_("Pass {n}:").format(n=self.passes + 2) + " "
                       + explain(err, self._source.who, self.root), "error")
        self.passes += 1
        after = self._leaf_grads()
        change = "; ".join(f"{n} {before[k][1]} → {v}" for k, (n, v) in after.items())
        return box(esc(_("Pass {n} done: the gradients were added again (accumulated). "
                         "{changes}").format(n=self.passes + 1, changes=change)), "ok")

    def _leaf_grads(self) -> dict:
        """``{id(leaf): (name, its .grad as text now)}`` for the leaves reached."""
        out = {}
        for step in self._steps:
            for t, _old, _new in step.leaves:
                out[id(t)] = (grad_label(t, self._index), values(t.grad))
        return out

    # -- the view ---------------------------------------------------------------
    def _build(self) -> None:
        self.step_button = button(_("Step"), self.step, _("one node further"))
        self.back_button = button(_("Back"), self.back, _("one node back"))
        self.run_button = button(_("Run"), self.run, _("to the end of the pass"))
        self.reset_button = button(_("Reset"), self.reset, _("back to the start"))
        self.slider = W.IntSlider(value=0, min=0, max=max(self.total, 1),
                                  description=_("steps"), continuous_update=False)
        self.play = W.Play(value=0, min=0, max=max(self.total, 1), interval=800,
                           description=_("play"))
        W.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._on_slider, names="value")
        self.status = W.HTML()
        self.panel = W.HTML(layout=W.Layout(width="40%", min_width="280px"))
        self.picture = W.HTML(layout=W.Layout(width="60%", max_height="560px",
                                              overflow="auto"))
        self.picture.add_class("ak-picture")  # a wide graph fits its width
        controls = W.HBox([self.step_button, self.back_button, self.run_button,
                           self.reset_button, self.play, self.slider])
        for w in (self.step_button, self.back_button, self.run_button,
                  self.reset_button, self.play, self.slider):
            w.disabled = self.problem is not None
        self.children = [self.status, controls, W.HTML(marks.legend_html()),
                         W.HBox([self.picture, self.panel])]

    def _on_slider(self, change) -> None:
        if not self._syncing:
            with from_ui():
                self.go_to(change["new"])

    def _render(self) -> None:
        with self.speaking():
            self._render_now()

    def _render_now(self) -> None:
        self.status.value = self._status_html()
        if self._graph is not None:
            self.picture.value = picture_html(self._graph, marks.styles(
                self._graph, self._steps, self._saved_boxes))
        cur = self.current
        if self.problem is not None:
            self.panel.value = ""
        elif cur is None:
            self.panel.value = panel.start_html(self.root, self.gradient, self.total,
                                                self._index, self._source.who)
        else:
            self.panel.value = panel.step_html(cur, self.total,
                                               self._source.local(cur), self._index)
        self._syncing = True
        try:
            self.slider.value = self.play.value = min(self.position, self.slider.max)
        finally:
            self._syncing = False

    def _status_html(self) -> str:
        if self.problem is not None:
            who = self._source.who if self._source is not None else ENGINE
            text = esc(self.problem) if isinstance(self.problem, str) else \
                explain(self.problem, who, self.root)
            return box(text + " " + _("Nothing to step through."), "error")
        who = self._source.who
        if self._error is not None:
            head = spaced(_("{who} stopped at step {n}:").format(who=who_text(who),
                                                                 n=self.position + 1))
            return box(esc(head) + " " + explain(self._error, who, self.root), "error")
        if self.current is not None:
            head = _("Step {n} of {total}: {node}.").format(
                n=self.position, total=self.total, node=access.node_name(self.current.node))
        else:
            head = _("Step {n} of {total}.").format(n=self.position, total=self.total)
        parts = [box(esc(head), "info")]
        if self._source.replayed:
            parts.append(box(esc(_("{who}'s own backward pass, replayed: {who} cannot be "
                                   "paused, so its real pass ran once, with hooks on every "
                                   "node, when this view was made; each step shows what "
                                   "{who} did at that node.").format(who=who))
                         + self._freed_note(), "info"))
        if self._ahead is not None and self.position < self.total:
            stop = ngettext("Warning: this pass will stop after {n} step.",
                            "Warning: this pass will stop after {n} steps.",
                            self.total).format(n=self.total)
            parts.append(box(esc(stop) + " " + explain(self._ahead, who, self.root), "warn"))
        notes = self._source.notes(self.current, self._index)
        parts += [box(esc(note), "warn") for note in notes]
        if self.finished:
            grads = ", ".join(f"<code>{esc(n)} = {esc(g)}</code>"
                              for n, g in self._leaf_grads().values())
            # (the values come last: "k.grad = 4." then a full stop would read "4..")
            parts.append(box(_("Backward pass complete; press Step again for a second "
                               "pass. Gradients: {grads}").format(grads=grads), "ok"))
        if self._note:
            parts.append(self._note)
        return "".join(parts)

    def _freed_note(self) -> str:
        """For a recorded pass without retain_graph: the graph's saved tensors are
        already gone for real, whatever step the replay stands at."""
        if not self._source.freed:
            return ""
        return " " + esc(_("It ran without retain_graph=True, so {who} has already freed "
                           "the saved tensors: a later backward() on this graph raises "
                           "an error.").format(who=self._source.who))

    def describe(self) -> str:
        if self.problem is not None:
            return _("cannot show this root")
        fn = self.root if access.is_value(self.root) else getattr(self.root, "grad_fn", None)
        root = access.node_name(fn) if fn is not None else _("leaf")
        cur = self.current
        if cur is None:
            return _("root={root}, step {n} of {total}, at the start").format(
                root=root, n=self.position, total=self.total)
        return _("root={root}, step {n} of {total}, at {node}").format(
            root=root, n=self.position, total=self.total, node=access.node_name(cur.node))
