"""The Chinese and Russian editions of the lessons, built from the English ones.

    python lessons/editions.py                 # build lessons/zh/ and lessons/ru/
    python lessons/editions.py --extract       # add what is new in English to the
                                               # translation files (nothing is lost)
    python lessons/editions.py --status        # what is missing or stale, per file

The English notebook is the one source of the code.  An edition is the English
notebook with

* each markdown cell replaced by its translation, from
  ``translations/<lang>/<lesson>.json`` under ``"cells"``, keyed by cell id;
  each entry also keeps the English text it was translated from (``"en"``), so
  a changed English cell shows up as *stale* instead of silently keeping an old
  translation;
* in code cells, only comments and string literals replaced (``"code"`` maps the
  exact English token, quotes and ``#`` included, to its translation); every
  other token is the English one, which ``tests/test_editions.py`` checks;
* a first code cell that makes the kit's widgets and explanations speak the
  edition's language, and a line of links to the lesson in the other languages.

Outputs are not copied: ``lessons/regenerate.py`` executes every edition, so what
is stored is what that edition prints.
"""
from __future__ import annotations

import io
import json
import re
import sys
import tokenize
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
EDITIONS = ("zh", "ru")
LANGUAGE_NAMES = {"en": "English", "zh": "中文", "ru": "Русский"}
#: the comment of the first cell of each edition
SETUP_COMMENT = {
    "zh": "# 本版中，工具包的组件与错误解释都使用中文",
    "ru": "# в этом издании виджеты и пояснения набора говорят по-русски",
}
SETUP_TAG = "edition-setup"
LANGUAGES_CELL = "languages"


def english_lessons() -> list[Path]:
    return sorted(HERE.glob("[0-9][0-9]_*.ipynb"))


def translation_file(lang: str, lesson: Path) -> Path:
    return HERE / "translations" / lang / (lesson.stem + ".json")


# -- code cells: comments and string literals ------------------------------------
def literal_spans(source: str) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` character spans of the comments and string literals
    of ``source`` (an f-string is one span on every Python version)."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(pos):
        row, col = pos
        return offsets[row - 1] + col

    spans, fstring_start = [], None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    for tok in tokens:
        name = tokenize.tok_name[tok.type]
        if name == "FSTRING_START":
            if fstring_start is None:
                fstring_start = tok.start
        elif name == "FSTRING_END":
            if fstring_start is not None:
                start = at(fstring_start)
                spans.append((start, at(tok.end), source[start:at(tok.end)]))
                fstring_start = None
        elif fstring_start is None and tok.type in (tokenize.COMMENT, tokenize.STRING):
            spans.append((at(tok.start), at(tok.end), tok.string))
    return spans


def is_prose(text: str) -> bool:
    """Comments, and string literals with a space in them, are worth translating."""
    return text.startswith("#") or (" " in text and re.search(r"[A-Za-z]", text) is not None)


def translate_code(source: str, table: dict[str, str | None]) -> str:
    """``source`` with each comment and string literal found in ``table`` replaced."""
    out, last = [], 0
    for start, end, text in literal_spans(source):
        new = table.get(text)
        if new is not None:
            out.append(source[last:start])
            out.append(new)
            last = end
    out.append(source[last:])
    return "".join(out)


# -- the translation files ----------------------------------------------------------
def load(lang: str, lesson: Path) -> dict:
    path = translation_file(lang, lesson)
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"lesson": lesson.name, "language": lang, "cells": {}, "code": {}}


def save(lang: str, lesson: Path, data: dict) -> None:
    path = translation_file(lang, lesson)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def extract(lang: str, lesson: Path) -> dict:
    """The translation file of ``lesson``, with an entry (``"text": null``) for
    every English markdown cell and prose literal it lacks; existing entries are
    kept, and a changed English cell keeps its old ``"en"`` so it reads as stale."""
    data = load(lang, lesson)
    nb = nbformat.read(lesson, as_version=4)
    cells, code = data.setdefault("cells", {}), data.setdefault("code", {})
    for cell in nb.cells:
        if cell.get("id") == LANGUAGES_CELL:
            continue
        if cell.cell_type == "markdown":
            cells.setdefault(cell.id, {"en": cell.source, "text": None})
        elif cell.cell_type == "code":
            for _s, _e, text in literal_spans(cell.source):
                if is_prose(text):
                    code.setdefault(text, None)
    return data


def problems(lang: str, lesson: Path) -> list[str]:
    """What keeps the edition of ``lesson`` from being complete and current."""
    data = load(lang, lesson)
    nb = nbformat.read(lesson, as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type != "markdown" or cell.get("id") == LANGUAGES_CELL:
            continue
        entry = data.get("cells", {}).get(cell.id)
        if not entry or not entry.get("text"):
            out.append(f"cell {cell.id}: not translated")
        elif entry.get("en") != cell.source:
            out.append(f"cell {cell.id}: stale (the English cell changed since)")
    return out


# -- building an edition --------------------------------------------------------------
def languages_line(lesson_name: str, lang: str) -> str:
    """``English · **中文** · [Русский](...)``: the same lesson in each language."""
    parts = []
    for other in ("en",) + EDITIONS:
        label = LANGUAGE_NAMES[other]
        if other == lang:
            parts.append(f"**{label}**")
            continue
        if lang == "en":
            target = f"{other}/{lesson_name}"
        else:
            target = f"../{lesson_name}" if other == "en" else f"../{other}/{lesson_name}"
        parts.append(f"[{label}]({target})")
    return " · ".join(parts)


def _relink(markdown: str) -> str:
    """Links to files beside the English lessons (pictures), seen from one folder down."""
    return re.sub(r"(\]\(|src=\")(images/)", r"\1../\2", markdown)


def build(lang: str, lesson: Path) -> nbformat.NotebookNode:
    data = load(lang, lesson)
    english = nbformat.read(lesson, as_version=4)
    nb = nbformat.v4.new_notebook(metadata=dict(english.metadata))
    nb.metadata["autograd_kit"] = {"edition": lang, "source": f"../{lesson.name}"}
    table = {k: v for k, v in data.get("code", {}).items() if v is not None}
    setup = nbformat.v4.new_code_cell(
        f"{SETUP_COMMENT[lang]}\nimport autograd_kit\nautograd_kit.set_language(\"{lang}\")")
    setup.id, setup.metadata = "edition-setup", {"tags": [SETUP_TAG]}
    cells = []
    for cell in english.cells:
        if cell.get("id") == LANGUAGES_CELL:
            new = nbformat.v4.new_markdown_cell(languages_line(lesson.name, lang))
        elif cell.cell_type == "markdown":
            entry = data.get("cells", {}).get(cell.id) or {}
            new = nbformat.v4.new_markdown_cell(_relink(entry.get("text") or cell.source))
        elif cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(translate_code(cell.source, table))
        else:
            new = nbformat.v4.new_raw_cell(cell.source)
        new.id, new.metadata = cell.id, dict(cell.metadata)
        cells.append(new)
    # the setup cell goes right after the title (and the languages line)
    at = next((i + 1 for i, c in enumerate(cells) if c.cell_type == "markdown"
               and c.source.lstrip().startswith("# ")), 0)
    if at < len(cells) and cells[at].get("id") == LANGUAGES_CELL:
        at += 1
    nb.cells = cells[:at] + [setup] + cells[at:]
    return nb


def edition_path(lang: str, lesson: Path) -> Path:
    return HERE / lang / lesson.name


def build_all(prefixes: list[str] | None = None) -> list[Path]:
    """Write every edition notebook (keeping stored outputs of cells whose source
    did not change, so a rebuild alone does not erase a run); return their paths."""
    written = []
    for lesson in english_lessons():
        if prefixes and not any(lesson.name.startswith(p) for p in prefixes):
            continue
        for lang in EDITIONS:
            if not translation_file(lang, lesson).exists():
                continue
            nb = build(lang, lesson)
            path = edition_path(lang, lesson)
            if path.exists():
                old = {c.get("id"): c for c in nbformat.read(path, as_version=4).cells}
                for cell in nb.cells:
                    prev = old.get(cell.get("id"))
                    if cell.cell_type == "code" and prev is not None and \
                            prev.source == cell.source:
                        cell.outputs = prev.get("outputs", [])
                        cell.execution_count = prev.get("execution_count")
            path.parent.mkdir(exist_ok=True)
            nbformat.write(nb, path)
            written.append(path)
    return written


def main(argv: list[str]) -> int:
    if "--extract" in argv:
        for lang in EDITIONS:
            for lesson in english_lessons():
                save(lang, lesson, extract(lang, lesson))
        print("translation files updated")
        return 0
    if "--status" in argv:
        bad = 0
        for lang in EDITIONS:
            for lesson in english_lessons():
                found = problems(lang, lesson)
                bad += len(found)
                print(f"{lang}/{lesson.stem}: " + ("complete" if not found else
                                                   f"{len(found)} to do"))
        return 1 if bad else 0
    paths = build_all([a for a in argv if not a.startswith("-")])
    print(f"{len(paths)} edition notebook(s) built")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
