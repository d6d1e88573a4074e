"""``DetachDemo``: the same expression ``y = x * c``, built five ways.

Every way gives the same number for ``y``, but not the same graph, so not the
same gradients (``x`` and ``c`` both worth 2):

* a separate leaf, ``c = torch.tensor(2., requires_grad=True)``: ``x.grad = c``,
  and ``c.grad = x``;
* the same tensor, ``c = x``: ``y = x * x``, ``x.grad = 2x``;
* a constant, ``c = torch.tensor(2.)``: ``x.grad = c``;
* ``c = x.detach().clone()``: ``x.grad = c``: the path through ``c`` is cut;
* ``c = x.clone()``: ``x.grad = 2x``: CloneBackward0 passes the gradient on.

The pictures are drawn by ``make_dot`` with saved tensors shown: a value that
``MulBackward0`` uses but that has no gradient edge (a cut) is outlined in red
and dashed.
"""
from __future__ import annotations

import ipywidgets as W

import autograd_kit as ak
from autograd_kit.i18n import N_, _
from autograd_kit.viz import make_dot

from ._common import TABLE, WIDE_TABS_CSS, box, esc, picture_html, values, wide_tabs
from .notebook import Bench, as_written

CUT = {"color": "#d62728", "style": "filled,dashed", "penwidth": "2"}

WAYS = (
    (N_("a separate leaf"), "c = torch.tensor({v}, requires_grad=True)",
     lambda lib, x, v: lib.tensor(v, requires_grad=True)),
    (N_("the same tensor"), "c = x", lambda lib, x, v: x),
    (N_("a constant"), "c = torch.tensor({v})", lambda lib, x, v: lib.tensor(v)),
    ("detach().clone()", "c = x.detach().clone()", lambda lib, x, v: x.detach().clone()),
    ("clone()", "c = x.clone()", lambda lib, x, v: x.clone()),
)


def _grad_text(t, x) -> str:
    if t is x:
        return _("— (c is x)")
    if not t.requires_grad:
        return _("— (does not require grad)")
    if not t.is_leaf:
        return _("— (not a leaf)")
    return values(t.grad)


class DetachDemo(Bench):
    """``y = x * c`` with ``c`` made five ways; graphs and a table of gradients.

    ``x_value`` is the value of ``x`` (``c`` gets the same value, so ``y`` is the
    same number every time).  ``results`` holds one dict per way.  ``lib`` is the
    module that makes the tensors: autograd_kit (the default) or ``torch``."""

    def __init__(self, x_value: float = 2.0, lib=None) -> None:
        super().__init__()
        self.lib = lib if lib is not None else ak
        self.results: list[dict] = []
        try:
            self.x_value = float(x_value)
        except (TypeError, ValueError):
            self.problem = _("x_value must be a number; it was given {value}.").format(
                value=repr(x_value))
            self.children = [W.HTML(box(esc(self.problem), "error"))]
            return
        self.problem = None
        for title, code, make in WAYS:
            self.results.append(self._build(
                title, as_written(code.format(v=self._v()), self.lib), make))
        self.table = W.HTML(self._table())
        self.tabs = wide_tabs([W.HTML(self._card(r)) for r in self.results],
                              [_(r["way"]) for r in self.results])
        self.children = [W.HTML(WIDE_TABS_CSS + self._intro()), self.table, self.tabs]

    def _v(self) -> str:
        return values(self.lib.tensor(self.x_value))

    def _build(self, way: str, code: str, make) -> dict:
        x = self.lib.tensor(self.x_value, requires_grad=True)
        c = make(self.lib, x, self.x_value)
        y = x * c
        node = y.grad_fn
        edges = [n is not None for n, _nr in node.next_functions]
        cut = c if not edges[1] else None
        graph_before = make_dot(y, names={"x": x, "c": c, "y": y}, show_saved=True,
                                node_styles={cut: CUT} if cut is not None else None)
        y.backward(retain_graph=True)
        return {"way": way, "code": code, "x": x, "c": c, "y": y,
                "y_value": values(y), "x_grad": values(x.grad), "c_grad": _grad_text(c, x),
                "edges": edges, "graph": graph_before}

    def _intro(self) -> str:
        v = self._v()
        x = as_written(f"x = torch.tensor({v}, requires_grad=True)", self.lib)
        red = f"<span style='border:2px dashed #d62728;padding:0 3px'>{_('Red dashed')}</span>"
        return "<div>" + _(
            "Five ways to build {y} with {x} and {c} worth {v}, then {backward}. Same value "
            "of y, different graphs, different gradients. {red} = a value MulBackward0 "
            "uses but sends no gradient to (a cut edge).").format(
            y="<code>y = x * c</code>",
            x=f"<code>{esc(x)}</code>",
            c="<code>c</code>", v=esc(v), backward="<code>y.backward()</code>",
            red=red) + "</div>"

    def _table(self) -> str:
        rows = []
        for r in self.results:
            kept = sum(r["edges"])
            edges = (_("{kept} of 2").format(kept=kept) if kept == 2 else
                     _("{kept} of 2 (edge to c cut)").format(kept=kept))
            rows.append(f"<tr><td>{esc(_(r['way']))}</td><td><code>{esc(r['code'])}</code></td>"
                        f"<td>{esc(r['y_value'])}</td><td><b>{esc(r['x_grad'])}</b></td>"
                        f"<td>{esc(r['c_grad'])}</td><td>{esc(edges)}</td></tr>")
        return (f"{TABLE}<tr><th>{_('way')}</th><th>{_('code')}</th><th>y</th><th>x.grad</th>"
                f"<th>c.grad</th><th>{_('gradient edges into MulBackward0')}</th></tr>"
                + "".join(rows) + "</table>")

    def _card(self, r: dict) -> str:
        where = ["x" if i == 0 else "c" for i, kept in enumerate(r["edges"]) if kept]
        cut = [] if r["edges"][1] else ["c"]
        code = f"<code>{esc(r['code'])}</code>; <code>y = x * c</code>."
        sends = _("MulBackward0 sends gradients to: {inputs}").format(
            inputs=esc(", ".join(where)))
        cuts = "; " + _("cut: {inputs}").format(inputs=esc(", ".join(cut))) if cut else ""
        result = _("Result: {grad}").format(grad=f"<code>x.grad = {esc(r['x_grad'])}</code>")
        text = f"{code} {sends}{cuts}. {result}"
        return f"<div>{text}</div>{picture_html(r['graph'])}"

    def describe(self) -> str:
        if self.problem is not None:
            return _("cannot build the examples")
        grads = ", ".join(f"{_(r['way'])}: {r['x_grad']}" for r in self.results)
        return _("y = x * c with x = {x}; x.grad by way: {grads}").format(x=self._v(),
                                                                          grads=grads)
