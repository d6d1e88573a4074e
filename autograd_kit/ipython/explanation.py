"""What the explainer shows: an :class:`Explanation` (a title, a few paragraphs,
a picture with the culprit outlined) and how its sentences name things.

Every explainer of :mod:`.explain`, :mod:`.usage` and :mod:`.growing` returns
one.  In a notebook it shows as HTML (``code`` between backticks as
``<code>``), in a terminal as plain text: one line per paragraph, so that the
terminal (or the notebook's output area) wraps it at its own width and no
sentence is ever broken by a fixed width.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from ..i18n import N_, _, get_language
from . import culprits
from .display import name_of

HEADER = N_("autograd_kit explains (%autograd_explain off to hide this):")


def rich(text: str) -> str:
    """HTML for a sentence: `code` between backticks as <code>, the rest escaped."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd backtick: show the text as it is
        return html.escape(text)
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p)
                   for i, p in enumerate(parts))


@dataclass
class Explanation:
    """What went wrong, in words, and what to draw: the graph below ``root``,
    with ``culprit`` (a tensor or node) outlined.  Shown once, after the cell:
    as HTML in a notebook (text and picture), as plain text in a terminal."""

    title: str
    paragraphs: list[str]
    root: object = None
    culprit: object = None
    culprit_name: str = ""
    show_saved: bool = False
    names: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if get_language() == "zh":  # sentences joined with spaces, as in English
            self.title, self.paragraphs = tidy(self.title), [tidy(p) for p in self.paragraphs]

    @property
    def caption(self) -> str:
        return _("[the graph below: {culprit} outlined in red]").format(
            culprit=self.culprit_name)

    def text(self) -> str:
        """The explanation as plain text (backticks kept), a paragraph per line."""
        out = [_(HEADER), ""]
        for text in [self.title, *self.paragraphs]:
            out += ["  " + " ".join(text.split()), ""]
        if self.root is not None:
            out.append("  " + self.caption)
        return "\n".join(out).rstrip()

    def picture(self):
        """The graph as a :class:`autograd_kit.viz.Graph`, culprit highlighted."""
        from ..viz import make_dot
        return make_dot(self.root, names=self.names, show_saved=self.show_saved,
                        highlight=self.culprit, max_nodes=40)

    def html(self, svg: str = "") -> str:
        body = "".join(f"<p style='margin:4px 0'>{rich(p)}</p>" for p in self.paragraphs)
        return ("<div class='autograd-kit-explain' style='border-left:3px solid #d62728;"
                "padding:2px 8px;margin:4px 0'>"
                f"<p style='margin:4px 0'><b>{rich(self.title)}</b></p>{body}{svg}</div>")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        svg, note = "", ""
        if self.root is not None:
            try:
                svg = self.picture().html()  # an <img>: shows in untrusted notebooks
            except Exception as err:  # no renderer: the words still help
                note = _("(no picture: {error})").format(error=err)
        text = self.text() + (f"\n  {note}" if note else "")
        extra = f"<p style='margin:4px 0;opacity:.7'>{html.escape(note)}</p>" if note else ""
        return {"text/plain": text, "text/html": self.html(svg + extra)}


_SPACE_AFTER_FULL_WIDTH = re.compile(r"(?<=[。，：；！？）])[ ]+|[ ]+(?=[（])")


def tidy(text: str) -> str:
    """Chinese text put together from sentences: no space after a full-width
    stop, comma, colon or bracket (or before an opening one), where an English
    sentence would have one."""
    return _SPACE_AFTER_FULL_WIDTH.sub("", text)


def name(t, names) -> str | None:
    """``"x"`` when ``t`` is bound to ``x`` in the namespace, ``"grads[0]"`` when
    it is an item of a tuple or list ``grads`` there; else None."""
    if t is None:
        return None
    return name_of(t, names) or culprits.held_in(t, names)


def called(t, names, default: str) -> str:
    """```x``` when ``t`` has a name in the namespace (:func:`name`), else ``default``."""
    found = name(t, names)
    return f"`{found}`" if found else default
