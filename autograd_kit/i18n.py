"""The kit's own words in the learner's language, from gettext catalogs.

Widget labels, explanations and the card's field names are written in English
in the code, wrapped in ``_()``; ``autograd_kit/locale/<lang>/LC_MESSAGES/
autograd_kit.po`` holds each language's translations (compiled to ``.mo``, the
form Python's :mod:`gettext` reads).  A message missing from a catalog comes
out in English, never blank.

The language is, in order: the last :func:`set_language` call, else the
locale (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``), else English.
PyTorch's own error text is never translated: it stays as PyTorch prints it.

In the code a message is written whole, with named places for the values:
``_("Step {n} of {total}").format(n=..., total=...)``, so that a translation
may put the values where its grammar wants them.  ``python -m
autograd_kit.locale extract|update|compile`` keeps the catalogs in step with the
code (see :mod:`autograd_kit.locale`).
"""
from __future__ import annotations

import gettext as _gettext
import os
from contextlib import contextmanager
from pathlib import Path

DOMAIN = "autograd_kit"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "zh", "ru")
_state: dict = {"chosen": None, "lang": None, "catalog": None}


def _from_locale() -> str:
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        for part in os.environ.get(var, "").split(":"):
            code = part.split(".")[0].split("_")[0].lower()
            if code in LANGUAGES:
                return code
    return "en"


def language_code(lang: str) -> str:
    """``"zh_CN"``, ``"ru-RU"``, ``"en"`` -> ``"zh"``, ``"ru"``, ``"en"``; a language
    the kit does not speak is a one-line ValueError."""
    code = str(lang).replace("-", "_").split("_")[0].lower()
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: choose one of {', '.join(LANGUAGES)}")
    return code


def set_language(lang: str | None) -> None:
    """Speak ``lang`` (``"en"``, ``"zh"``, ``"ru"``; ``"zh_CN"``, ``"ru-RU"`` work
    too) from now on; ``None`` goes back to the locale's choice."""
    _state["chosen"] = None if lang is None else language_code(lang)
    _state["lang"] = _state["catalog"] = None
    if _state["chosen"] is not None:
        from . import chart_font
        chart_font.follow(_state["chosen"])  # Chinese charts: a font with CJK glyphs


def get_language() -> str:
    """The language the kit speaks now."""
    return _state["chosen"] or _from_locale()


@contextmanager
def language(lang: str | None):
    """``with language("ru"): ...`` speaks ``lang`` inside the block only."""
    before = _state["chosen"]
    set_language(lang)
    try:
        yield
    finally:
        _state["chosen"], _state["lang"], _state["catalog"] = before, None, None


def _catalog():
    lang = get_language()
    if _state["lang"] != lang:
        _state["catalog"] = _gettext.translation(DOMAIN, str(LOCALE_DIR), languages=[lang],
                                                 fallback=True)
        _state["lang"] = lang
    return _state["catalog"]


def _(message: str) -> str:
    """``message`` in the current language (English when no translation exists)."""
    return _catalog().gettext(message) or message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form for ``n`` (``"1 step"``, ``"3 steps"``), in the current language:
    each catalog says how many forms it has and which one ``n`` takes (Russian
    has three: 1 шаг, 2 шага, 5 шагов; Chinese one)."""
    return _catalog().ngettext(singular, plural, n) or (singular if n == 1 else plural)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogs without translating it yet: for words
    kept in a table at import time and translated where they are shown
    (``_(WORDS[kind])``), in the language of that moment."""
    return message
