"""A widget's life in a notebook.

Every widget here is a :class:`Bench`: beside its live view it carries a still
HTML copy for pages read without a kernel (:func:`still_html`), and a cell that
drives it from code shows it again, once, in the state the cell left it in
(:func:`driving`); clicks do not (:func:`from_ui`, :func:`button`).  Code a
widget shows calls the kit what the notebook calls it (:func:`as_written`).
"""
from __future__ import annotations

import functools

import ipywidgets as W

from autograd_kit.i18n import N_, _, get_language, language
from autograd_kit.viz.embed import svgs_as_images

from ._common import esc


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


def button(description: str, handler, tooltip: str = "", width: str = "auto") -> W.Button:
    b = W.Button(description=description, tooltip=tooltip or description,
                 layout=W.Layout(width=width))
    def clicked(_b):
        with from_ui():
            handler()
    b.on_click(clicked)
    return b
