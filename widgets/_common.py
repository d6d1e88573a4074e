"""Small pieces every widget shares: escaping, numbers as text, status boxes,
plain-word explanations of engine errors, and a safe way to pull engine steps.

Nothing here knows how backward works; it only formats what the engine reports.
"""
from __future__ import annotations

import functools
import html
import re

import ipywidgets as W

from autograd_kit.autograd import backward_steps
from autograd_kit.i18n import N_, _, get_language, language
from autograd_kit.viz import access, labels
from autograd_kit.viz.embed import svgs_as_images
from autograd_kit.viz.error_facts import error_facts

TABLE = ("<style>.ak-table td, .ak-table th {padding: 1px 8px; text-align: left; "
         "vertical-align: top}</style><table class='ak-table'>")
COLOURS = {"info": ("#eef4fb", "#4a7ab5"), "ok": ("#edf7ed", "#3c8c3c"),
           "error": ("#fdeeee", "#c0392b"), "warn": ("#fff6e0", "#c98a00")}


def esc(value) -> str:
    """Any value as text that is safe inside HTML (a variable called ``<script>``
    is shown as those eight characters)."""
    return html.escape(str(value), quote=True)


def values(t) -> str:
    """A tensor's numbers, short: ``12.``, ``[1., 2.]``, ``min .. mean .. max ..``;
    ``None`` for a missing gradient."""
    if t is None:
        return "None"
    if isinstance(t, (int, float)):  # a micrograd Value's grad
        return labels.scalar_text(t)
    if not access.is_tensor(t):
        return str(t)
    return labels.values_text(access.host_array(t))[0]


def name_index(names) -> dict[int, str]:
    """``{id(tensor): name}`` from a namespace such as ``globals()`` (names that
    start with ``_`` are skipped, as ``make_dot`` does)."""
    out: dict[int, str] = {}
    for name, obj in dict(names or {}).items():
        if isinstance(name, str) and not name.startswith("_") and (
                access.is_tensor(obj) or access.is_value(obj)):
            out.setdefault(id(obj), name)
    return out


#: what an unnamed tensor is called, with its shape
KINDS = {"leaf": N_("a leaf of shape {shape}"),
         "retained tensor": N_("a retained tensor of shape {shape}")}


def tensor_name(t, index: dict[int, str], kind: str = "leaf") -> str:
    """The variable name of ``t`` if known, else ``a leaf of shape (3)`` (the
    ``kind`` of tensor, from :data:`KINDS`, with its shape)."""
    name = index.get(id(t))
    if name:
        return name
    return _(KINDS[kind]).format(shape=labels.shape_text(access.shape_of(t)))


#: the same, after ".grad of" and "AccumulateGrad of" (whole phrases, so that a
#: translation can put the tensor in the case the phrase needs)
GRAD_OF = {"leaf": N_(".grad of a leaf of shape {shape}"),
           "retained tensor": N_(".grad of a retained tensor of shape {shape}")}
ACCUMULATE_OF = N_("AccumulateGrad of a leaf of shape {shape}")


def grad_label(t, index: dict[int, str], kind: str = "leaf") -> str:
    """``x.grad`` for a named tensor, ``.grad of a leaf of shape (3)`` otherwise."""
    name = index.get(id(t)) or (labels.value_name(t) if access.is_value(t) else "")
    return f"{name}.grad" if name else _(GRAD_OF[kind]).format(
        shape=labels.shape_text(access.shape_of(t)))


def accumulate_label(t, index: dict[int, str]) -> str:
    """``AccumulateGrad of x``, or ``AccumulateGrad of a leaf of shape (3)``."""
    name = index.get(id(t))
    return _("AccumulateGrad of {tensor}").format(tensor=name) if name else \
        _(ACCUMULATE_OF).format(shape=labels.shape_text(access.shape_of(t)))


_LATIN_THEN_HAN = re.compile(r"([A-Za-z0-9_)])([\u4e00-\u9fff])")


def spaced(text: str) -> str:
    """In Chinese, a space between a Latin word and the Chinese text after it
    ("PyTorch 的"), as the catalog writes everywhere else; other languages as they are."""
    return _LATIN_THEN_HAN.sub(r"\1 \2", text) if get_language() == "zh" else text


def box(message_html: str, kind: str = "info") -> str:
    """A coloured message box (``message_html`` must already be escaped)."""
    fill, edge = COLOURS[kind]
    return (f"<div style='background:{fill};border-left:4px solid {edge};"
            f"padding:4px 8px;margin:2px 0'>{message_html}</div>")


ENGINE = N_("The engine")  # who ran a pass, when it is autograd_kit's engine


def who_text(who: str) -> str:
    """The subject of a sentence about the engine: "The engine" translated,
    ``"PyTorch"`` as it is."""
    return _(ENGINE) if who == ENGINE else who


#: an engine error's kind (:func:`autograd_kit.viz.error_facts.error_facts`), in
#: plain words; PyTorch's own message follows them
ERROR_WORDS = {
    "graph_freed": N_("This graph was already used by a backward pass that freed the "
                      "tensors it had saved, so there is nothing left to compute the "
                      "gradients from. Run the forward pass again to build a new graph, "
                      "or give the first backward retain_graph=True."),
    "non_scalar": N_("The root holds more than one number. backward() can start on its "
                     "own only from a single number (the loss); for a tensor, say how "
                     "much each element matters: pass gradient=torch.ones_like(root)."),
    "no_grad_fn": N_("This tensor is not part of any graph: it does not require grad and "
                     "has no grad_fn, so no gradient can flow back from it. It was computed "
                     "while recording was off (under torch.no_grad() or "
                     "torch.inference_mode()), cut off the graph by .detach() (or .data, "
                     ".item()), or from inputs none of which requires grad. Compute it "
                     "again with grad mode on, from tensors that require grad."),
    "grad_shape": N_("The gradient given for the root must have the root's shape."),
    # the words when the versions are not known (see saved_modified_words)
    "saved_modified": N_("A tensor saved for backward was changed in place after it "
                         "was saved, so the gradient would be computed from the wrong "
                         "numbers. The pass stopped instead."),
    "leaf_inplace": N_("A leaf that requires grad cannot be changed in place: recording "
                       "the change would give the leaf a grad_fn, so it would stop being a "
                       "leaf, and its AccumulateGrad node, the one that fills .grad, "
                       "would be lost. The engine refused before touching anything."),
}


def saved_modified_words(facts, who: str = ENGINE) -> str | None:
    """A changed saved tensor, with its versions: by the node that saved it when
    that is known (autograd_kit names it; for PyTorch it is found in the graph),
    else by the tensor's shape, as PyTorch's message gives it.  None when the
    versions are not known."""
    if facts.found is None or facts.expected is None:
        return None
    if facts.node is not None and facts.saved_name:
        return _("{node} saved '{saved}' for backward at version {expected}, but that "
                 "tensor is now at version {found}: an in-place operation changed it "
                 "after it was saved, so the gradient would be computed from the wrong "
                 "numbers. The engine stopped instead.").format(
            node=facts.node_name, saved=facts.saved_name, expected=facts.expected,
            found=facts.found)
    if facts.shape is None:
        return None
    return _("A tensor of shape {shape} was saved for backward at version {expected}, "
             "but it is now at version {found}: an in-place operation changed it after "
             "it was saved, so the gradient would be computed from the wrong numbers. "
             "{who} stopped instead.").format(
        shape=labels.shape_text(facts.shape), expected=facts.expected, found=facts.found,
        who=who_text(who))


def error_words(err: BaseException, who: str = ENGINE, root=None) -> str:
    """An engine error in plain words (plain text), as the widgets say it."""
    facts = error_facts(err, (root,) if root is not None else ())
    words = saved_modified_words(facts, who) if facts.kind == "saved_modified" else None
    if words is None and facts.kind in ERROR_WORDS:
        words = _(ERROR_WORDS[facts.kind])
        if who == ENGINE:  # "torch.no_grad()" as the notebook calls the kit: ak.no_grad()
            words = as_written(words)
    return words or spaced(_("{who} stopped with an error.").format(who=who_text(who)))


def source_line(err: BaseException, who: str = ENGINE) -> str:
    """``PyTorch's message (RuntimeError):`` (plain text; the message follows it)."""
    kind_name = type(err).__name__
    return (_("Engine message ({kind}):").format(kind=kind_name) if who == ENGINE else
            spaced(_("{who}'s message ({kind}):").format(who=who, kind=kind_name)))


def explain_text(err: BaseException, who: str = ENGINE, root=None) -> str:
    """:func:`explain` as plain text, for a magic's one-line message."""
    return f"{error_words(err, who, root)} {source_line(err, who)} {err}"


def explain(err: BaseException, who: str = ENGINE, root=None) -> str:
    """An engine error in plain words, then the engine's own message (HTML), which
    stays as the engine wrote it (PyTorch's wording, in English).
    ``who`` names the engine in the message line: ``"PyTorch"``.  ``root``, the
    tensor the pass started from, lets a PyTorch error name the node that failed
    (PyTorch's message does not)."""
    words, source = error_words(err, who, root), source_line(err, who)
    return (f"{esc(words)}<br><span style='font-size:85%;color:#555'>{esc(source)} "
            f"<code>{esc(err)}</code></span>")


def picture(graph, styles: dict | None = None) -> tuple[str, str | None]:
    """``(svg, None)`` for a :class:`autograd_kit.viz.Graph`, restyled when ``styles``
    is given, or ``("", reason)`` when nothing can draw it."""
    try:
        return (graph.restyle(styles) if styles else graph.svg()), None
    except Exception as err:  # no Graphviz: say so in words, keep the widget usable
        return "", _("The graph could not be drawn: {error}").format(error=err)


def picture_html(graph, styles: dict | None = None) -> str:
    """The picture as HTML (an SVG that, inside a widget with the class
    ``ak-picture``, shrinks to the widget's width instead of hiding its right-hand
    part), or the reason it could not be drawn."""
    svg, problem = picture(graph, styles)
    return box(esc(problem), "warn") if problem else FIT_CSS + svg


#: a wide graph is scaled down to the width of its ``ak-picture`` widget
FIT_CSS = "<style>.ak-picture svg {max-width: 100%; height: auto}</style>"


class EnginePass:
    """One run of the engine's ``backward_steps`` generator, pulled a step at a time.

    (While the generator is paused between steps, the engine leaves the
    caller's grad mode in force, so the notebook keeps recording as usual.)"""

    def __init__(self, root, gradient=None, retain_graph: bool = False) -> None:
        self._gen = backward_steps(root, gradient, retain_graph=retain_graph)

    def next(self):
        """The next :class:`autograd_kit.engine.Step`; StopIteration at the end;
        engine errors (RuntimeError) pass through unchanged."""
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()


STILL_NOTE = N_("A still copy of the widget as it was displayed; run the notebook to "
                "use its buttons.")


def _width(widget) -> str:
    """A CSS width from the widget's layout (``"40%"``), for the still copy."""
    layout = getattr(widget, "layout", None)
    parts = [f"{css}:{esc(getattr(layout, attr))}" for attr, css in
             (("width", "width"), ("min_width", "min-width"), ("max_height", "max-height"),
              ("overflow", "overflow")) if layout is not None and getattr(layout, attr, None)]
    return ";".join(parts)


def still_html(widget) -> str:
    """The widget tree as plain HTML: HTML widgets as they are (already escaped
    by whoever filled them), each inline SVG made an ``<img>`` so that an
    untrusted notebook shows it (:mod:`autograd_kit.viz.embed`), boxes as rows
    or columns, buttons greyed out, sliders as ``steps: 3 / 7``.  This is what a
    page shows without a kernel."""
    if isinstance(widget, W.HTML):
        return f"<div style='{_width(widget)}'>{svgs_as_images(widget.value)}</div>"
    if isinstance(widget, W.Button):
        return (f"<button disabled style='margin:2px'>{esc(widget.description)}"
                "</button>")
    if isinstance(widget, W.Tab):  # every tab, one under the other, with its title
        titles = list(getattr(widget, "titles", ())) or [""] * len(widget.children)
        return "".join(f"<div><b>{esc(t)}</b>{still_html(c)}</div>"
                       for t, c in zip(titles, widget.children))
    if isinstance(widget, W.Box):
        direction = "row" if isinstance(widget, W.HBox) else "column"
        inner = "".join(still_html(c) for c in widget.children)
        return (f"<div style='display:flex;flex-direction:{direction};gap:4px;"
                f"{_width(widget)}'>{inner}</div>")
    if isinstance(widget, (W.IntSlider, W.Play)):
        return (f"<span style='margin:2px 6px'>{esc(widget.description)}: "
                f"{esc(widget.value)} / {esc(widget.max)}</span>")
    value = getattr(widget, "value", None)
    if value is None:
        return ""
    label = getattr(widget, "description", "")
    if isinstance(widget, (W.ToggleButtons, W.Dropdown, W.RadioButtons, W.Select)):
        value = widget.label  # what the learner reads (in their language), not the key
    return f"<span style='margin:2px 6px'>{esc(label)} {esc(value)}</span>"


_UI = {"depth": 0}  # > 0 while a button or slider handler runs


class from_ui:
    """``with from_ui():`` -- what runs inside was asked for by a click or a
    slider, not by a line of Python in a cell (see :func:`driving`)."""

    def __enter__(self):
        _UI["depth"] += 1

    def __exit__(self, *exc):
        _UI["depth"] -= 1


def _kernel_shell():
    """The IPython shell when this runs inside a notebook's kernel, else None
    (a plain Python process, a terminal IPython, the tests)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def as_written(code: str, lib=None) -> str:
    """Code a widget shows (written with ``torch.``), with the library that runs
    it called what the notebook calls it: ``ak.tensor(...)`` after ``import
    autograd_kit as ak``.  ``lib`` is the module whose tensors the widget makes:
    autograd_kit (the default) or the real ``torch`` (``lib=torch``), which stays
    ``torch.`` even in a notebook that also calls the kit ``ak``.  Outside a
    notebook, or when the notebook gave the module no name, the code keeps
    ``torch.``, the spelling the kit mirrors."""
    import autograd_kit
    from autograd_kit.ipython import spelling
    shell = _kernel_shell()
    space = getattr(shell, "user_ns", None) or {}
    return spelling.as_written(code, autograd_kit if lib is None else lib, space)


def _display(obj):
    from IPython.display import display
    return display(obj, display_id=True).display_id


def driving(method):
    """Marks a public method that changes what a bench shows (``step()``,
    ``backward()``, ``attempt()``...).

    Called from a cell, on a bench that was displayed before, it shows the bench
    again in that cell's output, once per cell however many calls the cell makes,
    when the cell ends (a loop of a hundred ``step()`` calls shows one copy, in
    the state the loop left).  So a stored notebook keeps, under
    the cell that drove the bench, a still copy of the state the cell left it
    in; the copy under the cell that first showed the bench keeps the state it
    was shown in.  With a kernel running, the new output is one more live view
    of the same widget.  Clicks and the slider (:class:`from_ui`) show nothing new."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self._driving_depth = getattr(self, "_driving_depth", 0) + 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self._driving_depth -= 1
            if self._driving_depth == 0 and _UI["depth"] == 0:
                self._show_driven()
    return wrapper


def _show_at_cell_end(bench, shell):
    """The post_execute callback that shows ``bench`` once and unregisters itself."""
    def show(*_args) -> None:
        shell.events.unregister("post_execute", show)
        bench._driven_output = None
        try:
            _display(bench)
        except Exception:  # showing is a courtesy: never make the cell fail
            pass
    return show


class Bench(W.VBox):
    """Base of every widget here: a VBox with a deterministic text repr and,
    beside the live view, a still HTML copy for pages read without a kernel
    (GitHub, nbviewer, an HTML export).  Front ends that run widgets rank the
    widget view above ``text/html`` and show the live widget.

    A bench keeps the language it was made in (``self.lang``): a click later
    on, after the notebook switched languages, still answers in it."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lang = get_language()
        self._shown = False              # displayed at least once
        self._driven_output = None       # the showing due when the driving cell ends

    def _show_driven(self) -> None:
        """Show the bench in the output of the cell that just drove it (see
        :func:`driving`): once, when that cell ends, in the state it left.

        Shown then rather than at the first call, so that the stored output is
        the final state without a later ``update_display`` (which notebook
        checkers such as nbval do not replay)."""
        shell = _kernel_shell() if getattr(self, "_shown", False) else None
        if shell is None:
            return
        if self._driven_output is not None:  # already due at the end of this cell
            return
        self._driven_output = show = _show_at_cell_end(self, shell)
        try:
            shell.events.register("post_execute", show)
        except Exception:
            self._driven_output = None

    def speaking(self):
        """``with self.speaking():`` -- the bench's own language."""
        return language(getattr(self, "lang", None) or get_language())

    def describe(self) -> str:
        return ""

    def __repr__(self) -> str:
        with self.speaking():
            return f"{type(self).__name__}({self.describe()})"

    def still_html(self) -> str:
        """The current picture and panel as HTML (no script, names escaped)."""
        with self.speaking():
            note = _(STILL_NOTE)
            body = self._still_body()
        return (f"<div class='ak-still' style='border:1px solid #ddd;padding:4px'>"
                f"<div style='font-size:85%;color:#666'>{note}</div>{body}</div>")

    def _still_body(self) -> str:
        """The widget tree as HTML (:func:`still_html`); a bench whose live view
        hides part of its state behind a choice shows it all here."""
        return still_html(self)

    def _repr_mimebundle_(self, **kwargs):
        self._shown = True
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/plain"] = repr(self)
            bundle["text/html"] = self.still_html()
        return bundle


#: the widget library gives every toggle button and every tab one fixed width
#: (about 150 px), and cuts a longer label with "…" ("on a slice of a sa…",
#: and more often in Russian); these widgets' choices are as wide as their labels
WIDE_TABS = "ak-wide-tabs"
WIDE_TABS_CSS = ("<style>"
                 ".jupyter-widgets.jupyter-widget-tab.ak-wide-tabs > .lm-TabBar .lm-TabBar-tab, "
                 ".jupyter-widgets.widget-tab.ak-wide-tabs > .p-TabBar .p-TabBar-tab "
                 "{flex: 0 0 auto; max-width: none}"
                 ".jupyter-widgets.jupyter-widget-tab.ak-wide-tabs > .lm-TabBar "
                 ".lm-TabBar-content, "
                 ".jupyter-widgets.widget-tab.ak-wide-tabs > .p-TabBar .p-TabBar-content "
                 "{flex-wrap: wrap}</style>")


def choices(options: list, value) -> W.ToggleButtons:
    """Toggle buttons, each as wide as its own label (``options``: ``(label,
    key)`` pairs), so that no label is cut, in any language."""
    return W.ToggleButtons(options=options, value=value, style={"button_width": "auto"})


def wide_tabs(children: list, titles: list[str]) -> W.Tab:
    """A Tab whose titles are shown whole: each tab as wide as its title (they
    wrap onto a second row when the notebook is narrow).  The rule that does it
    is :data:`WIDE_TABS_CSS`, which the bench must show in one of its HTML widgets."""
    tab = W.Tab(children=children)
    for i, title in enumerate(titles):
        tab.set_title(i, title)
    tab.add_class(WIDE_TABS)
    return tab


def button(description: str, handler, tooltip: str = "", width: str = "auto") -> W.Button:
    b = W.Button(description=description, tooltip=tooltip or description,
                 layout=W.Layout(width=width))
    def clicked(_b):
        with from_ui():
            handler()
    b.on_click(clicked)
    return b
