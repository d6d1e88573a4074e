"""``InplaceDemo``: which in-place changes does the engine accept?

Four attempts at ``+= 1``, each a few lines of ordinary code run line by line:

* on a **leaf** that requires grad: refused at once (recording the change would
  give the leaf a ``grad_fn``: it would stop being a leaf, and its
  ``AccumulateGrad`` node, where ``.grad`` is filled, would be lost);
* on a **non-leaf** nobody saved: accepted; backward works;
* on a **slice of a tensor saved for backward**: the change itself is accepted
  (the version counter goes up), but backward refuses: the saved value is stale;
* on a **clone()** of it: accepted, and backward works, because the saved
  tensor was never touched.

For every line the bench shows the version counters before and after; for a
refused line, the error in words, the graph with the culprit outlined, and the
values, versions and grads just before and just after it, to show that the
refusal changed nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import ipywidgets as W

import autograd_kit as ak
from autograd_kit.i18n import N_, _
from autograd_kit.viz import make_dot

from ._common import TABLE, box, choices, esc, picture_html, values
from .error_words import explain
from .notebook import Bench, as_written, button, driving, still_html

_SETUP = ("x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
          "y = x * 2\n"
          "z = y.sin()        # sin saves y for its backward")

#: the comments of the cases' code, shown in the current language
COMMENTS = (N_("sin saves y for its backward"), N_("changes part of the saved y"),
            N_("a copy with its own memory"))


def spoken(code: str) -> str:
    """A case's code as shown: its comments in the current language, the kit
    under the notebook's own name for it."""
    for comment in COMMENTS:
        code = code.replace("# " + comment, "# " + _(comment))
    return as_written(code)


CASES = {
    "leaf": (N_("on a leaf"), "x = torch.tensor([1., 2., 3.], requires_grad=True)",
             "x += 1", ["x"], "x"),
    "non-leaf": (N_("on a non-leaf"), "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
                 "y = x * 2", "y += 1\ny.sum().backward()", ["x", "y"], "y"),
    "saved slice": (N_("on a slice of a saved tensor"), _SETUP,
                    "y[1:] += 1         # changes part of the saved y\nz.sum().backward()",
                    ["x", "y", "z"], "z"),
    "clone": (N_("on a clone()"), _SETUP,
              "c = y.clone()      # a copy with its own memory\nc[1:] += 1\n"
              "z.sum().backward()", ["x", "y", "c", "z"], "z"),
}


@dataclass
class Attempt:
    """What happened when one case was run."""

    key: str
    lines: list = field(default_factory=list)   # (code, accepted, versions before, after)
    error: BaseException | None = None
    refused_line: str | None = None
    before: dict = field(default_factory=dict)  # name -> state, just before the last line
    after: dict = field(default_factory=dict)   # name -> state, after it
    graph: object = None

    @property
    def accepted(self) -> bool:
        return self.error is None


def _state(ns: dict, names: list[str]) -> dict:
    """``name -> (values, version, grad)`` for the watched tensors that exist."""
    out = {}
    for n in names:
        t = ns.get(n)
        if isinstance(t, ak.Tensor):
            grad = values(t.grad) if t.is_leaf else "—"
            out[n] = (values(t), t._version, grad)
    return out


def run_case(key: str) -> Attempt:
    """Run one case line by line, in a fresh namespace, and record everything."""
    _title, setup, attempt, watch, root = CASES[key]
    ns = {"torch": ak}
    exec(setup, ns)  # noqa: S102 (fixed teaching code from CASES, shown to the user)
    result = Attempt(key)
    for line in attempt.splitlines():
        before = _state(ns, watch)
        try:
            exec(line, ns)  # noqa: S102
        except RuntimeError as err:
            result.error, result.refused_line = err, line
            result.before, result.after = before, _state(ns, watch)
            result.lines.append((line, False, before, result.after))
            break
        result.lines.append((line, True, before, _state(ns, watch)))
    if result.accepted:
        result.before, result.after = result.lines[0][2], result.lines[-1][3]
    culprit = getattr(result.error, "node", None) or getattr(result.error, "tensor", None)
    names = {n: ns[n] for n in watch if isinstance(ns.get(n), ak.Tensor)}
    result.graph = make_dot(ns[root], names=names, show_saved=True, highlight=culprit)
    return result


def _versions(state: dict) -> str:
    return ", ".join(f"{n}: v{v}" for n, (_values, v, _grad) in state.items()) or "—"


def attempt_html(a: Attempt) -> str:
    """The report of one attempt: lines, verdict, proof table, picture."""
    _title, setup, attempt, *_rest = CASES[a.key]
    code = esc(spoken(setup)) + "\n<b>" + esc(spoken(attempt)) + "</b>"
    rows = []
    for line, ok, before, after in a.lines:
        mark = f"<span style='color:#3c8c3c'>{_('accepted')}</span>" if ok else \
            f"<span style='color:#c0392b'>{_('refused')}</span>"
        rows.append(f"<tr><td><code>{esc(spoken(line))}</code></td><td>{mark}</td>"
                    f"<td>{esc(_versions(before))}</td><td>{esc(_versions(after))}</td></tr>")
    lines = (f"{TABLE}<tr><th>{_('line')}</th><th>{_('engine')}</th>"
             f"<th>{_('versions before')}</th><th>{_('versions after')}</th></tr>"
             f"{''.join(rows)}</table>")
    if a.accepted:
        verdict = box(_("Accepted: every line ran."), "ok")
    else:
        verdict = box(_("Refused at {line}:").format(
            line=f"<code>{esc(spoken(a.refused_line))}</code>") + " " + explain(a.error),
            "error")
    return (f"<pre style='margin:2px 0'>{code}</pre>{verdict}{lines}{_proof(a)}"
            f"{picture_html(a.graph)}")


def _proof(a: Attempt) -> str:
    """Values, versions and grads before and after (the refused line, or the attempt)."""
    rows, same = [], True
    for n in sorted(set(a.before) | set(a.after), key=list(CASES[a.key][3]).index):
        b, f = a.before.get(n), a.after.get(n)
        same = same and b == f
        cells = "".join(f"<td>{esc(s[0])}</td><td>v{s[1]}</td><td>{esc(s[2])}</td>"
                        if s else "<td colspan='3'>—</td>" for s in (b, f))
        rows.append(f"<tr><td><b>{esc(n)}</b></td>{cells}</tr>")
    before = _("before the refused line") if not a.accepted else _("before the attempt")
    head = (f"<tr><th></th><th colspan='3'>{before}</th><th colspan='3'>{_('after')}</th>"
            f"</tr><tr><th>{_('tensor')}</th>"
            + f"<th>{_('values')}</th><th>{_('version')}</th><th>{_('grad')}</th>" * 2
            + "</tr>")
    note = ""
    if not a.accepted:
        note = box(_("Nothing was changed by the refused line: values, versions and grads "
                     "are the same before and after.") if same else
                   _("Warning: the refused line changed something (see the table)."),
                   "ok" if same else "warn")
    return f"{note}{TABLE}{head}{''.join(rows)}</table>"


class InplaceDemo(Bench):
    """Pick a case, press "try it"; ``attempt(key)`` does the same from Python
    (keys: ``"leaf"``, ``"non-leaf"``, ``"saved slice"``, ``"clone"``)."""

    def __init__(self, case: str = "leaf") -> None:
        super().__init__()
        self.results: dict[str, Attempt] = {}
        self.chooser = choices([(_(v[0]), k) for k, v in CASES.items()],
                               case if case in CASES else "leaf")
        self.try_button = button(_("try it"), lambda: self.attempt(self.chooser.value))
        self.try_button.layout.align_self = "flex-start"  # its own width, not the bench's
        self.report = W.HTML()
        self.chooser.observe(lambda _c: self._show(), names="value")
        problem = "" if case in CASES else box(esc(
            _("There is no case {case}; the cases are {cases}.").format(
                case=repr(case), cases=", ".join(CASES))), "warn")
        self.children = [W.HTML(problem), self.chooser, self.try_button, self.report]
        self._show()

    @driving
    def attempt(self, key: str) -> Attempt:
        """Run case ``key`` (fresh tensors each time) and show the result."""
        if key not in CASES:
            raise ValueError(f"unknown case {key!r}; choose one of {', '.join(CASES)}")
        self.results[key] = run_case(key)
        if self.chooser.value != key:
            self.chooser.value = key  # shows the result through the observer
        else:
            self._show()
        return self.results[key]

    def _show(self) -> None:
        with self.speaking():
            self._show_now()

    def _show_now(self) -> None:
        key = self.chooser.value
        if key in self.results:
            self.report.value = attempt_html(self.results[key])
        else:
            _title, setup, attempt, *_rest = CASES[key]
            press = _("Press {button} to run the bold lines.").format(
                button=f"<b>{_('try it')}</b>")
            self.report.value = (f"<pre style='margin:2px 0'>{esc(spoken(setup))}\n<b>"
                                 f"{esc(spoken(attempt))}"
                                 f"</b></pre><div>{press}</div>")

    def _still_body(self) -> str:
        """Without a kernel the cases can't be switched: the still copy shows the
        report of every case tried so far, in the chooser's order, under its title."""
        if len(self.results) < 2:
            return still_html(self)
        head = "".join(still_html(w) for w in self.children if w is not self.report)
        reports = "".join(
            f"<div style='margin-top:6px'><b>{esc(_(CASES[k][0]))}</b>"
            f"{still_html(W.HTML(attempt_html(self.results[k])))}</div>"
            for k in CASES if k in self.results)
        return head + reports

    def describe(self) -> str:
        done = ", ".join(f"{k}: {_('accepted') if a.accepted else _('refused')}"
                         for k, a in self.results.items())
        return f"case={self.chooser.value}" + (f"; {done}" if done else "")
