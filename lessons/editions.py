"""The Chinese and Russian editions of the lessons, built from the English ones.

    python lessons/editions.py                 # build lessons/zh/ and lessons/ru/
    python lessons/editions.py --extract       # add what is new in English to the
                                               # translation files (nothing is lost)
    python lessons/editions.py --status        # what is missing or stale, per file
    python lessons/editions.py --status -v     # ... and each missing or stale entry

The English notebook is the one source of the code.  An edition is the English
notebook with

* each markdown cell replaced by its translation, from
  ``translations/<lang>/<lesson>.json`` under ``"cells"``, keyed by cell id;
  each entry also keeps the English text it was translated from (``"en"``), so
  a changed English cell shows up as *stale* instead of silently keeping an old
  translation;
* in code cells, only comments and string literals replaced (``"code"`` maps the
  exact English token, quotes and ``#`` included, to its translation); every
  other token is the English one, which ``tests/test_editions.py`` checks.
  A literal that must stay as it is (a name like ``"cpu"`` or ``"x"``, a dict
  key, a colour, a regular expression matched against PyTorch's English
  message) is listed under ``"keep"``.  Every comment and every string literal
  with a letter in its text (for an f-string: in its text outside the ``{...}``
  fields or in a string inside one) is either translated or kept, so a changed
  English comment or message shows up as *untranslated* instead of silently
  printing English (``--status -v`` lists them);
* a first code cell that makes the kit's widgets and explanations speak the
  edition's language, and a line of links to the lesson in the other languages.

Outputs are not copied: ``lessons/regenerate.py`` executes every edition, so what
is stored is what that edition prints.
"""
from __future__ import annotations

import ast
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
    """The English lessons in course order: the index and the main path
    (``NN_topic.ipynb``), then the appendices about the kit (``A_topic.ipynb``)."""
    return sorted(HERE.glob("[0-9][0-9]_*.ipynb")) + sorted(HERE.glob("[A-Z]_*.ipynb"))


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


def readable_text(literal: str) -> str:
    """The words a learner reads in a comment or string literal: the comment, or
    the string's text; for an f-string, its text outside the ``{...}`` fields and
    the strings inside them (``f"{'pieces':>6}"``), not the format specs."""
    if literal.startswith("#"):
        return literal
    try:
        node = ast.parse(literal.strip(), mode="eval").body
    except SyntaxError:
        return literal
    if isinstance(node, ast.JoinedStr):
        words = []
        for part in node.values:
            inner = [part] if isinstance(part, ast.Constant) else ast.walk(part.value)
            words += [n.value for n in inner
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        return " ".join(words)
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        value = node.value
        return value if isinstance(value, str) else value.decode("latin-1")
    return literal


def needs_decision(literal: str) -> bool:
    """Whether a translator must say what becomes of ``literal``: translate it
    (``"code"``) or keep it (``"keep"``).  Literals without a letter in their text
    (``""``, ``" → "``, ``f"{x:.3f}"``) have nothing to translate."""
    return re.search(r"[^\W\d_]", readable_text(literal)) is not None


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
    every English markdown cell and an entry (``null``) for every code literal
    that needs a decision which it lacks; existing entries are kept, and a
    changed English cell keeps its old ``"en"`` so it reads as stale."""
    data = load(lang, lesson)
    nb = nbformat.read(lesson, as_version=4)
    cells, code = data.setdefault("cells", {}), data.setdefault("code", {})
    keep = set(data.get("keep", []))
    for cell in nb.cells:
        if cell.get("id") == LANGUAGES_CELL:
            continue
        if cell.cell_type == "markdown":
            cells.setdefault(cell.id, {"en": cell.source, "text": None})
        elif cell.cell_type == "code":
            for _s, _e, text in literal_spans(cell.source):
                if needs_decision(text) and text not in keep:
                    code.setdefault(text, None)
    return data


def problems(lang: str, lesson: Path) -> list[str]:
    """What keeps the edition of ``lesson`` from being complete and current: a
    markdown cell not translated or stale, a code literal neither translated nor
    kept, and entries that no English code cell holds any more (left behind when
    the English text changed)."""
    data = load(lang, lesson)
    nb = nbformat.read(lesson, as_version=4)
    code = data.get("code", {})
    keep = data.get("keep", [])
    out, seen = [], set()
    for cell in nb.cells:
        if cell.get("id") == LANGUAGES_CELL:
            continue
        if cell.cell_type == "markdown":
            entry = data.get("cells", {}).get(cell.id)
            if not entry or not entry.get("text"):
                out.append(f"cell {cell.id}: not translated")
            elif entry.get("en") != cell.source:
                out.append(f"cell {cell.id}: stale (the English cell changed since)")
        elif cell.cell_type == "code":
            for _s, _e, text in literal_spans(cell.source):
                if text in seen:
                    continue
                seen.add(text)
                if not needs_decision(text):
                    continue
                if text in keep and code.get(text) is not None:
                    out.append(f"cell {cell.id}: code text both translated and kept: {text}")
                elif code.get(text) is None and text not in keep:
                    out.append(f"cell {cell.id}: untranslated code text: {text}")
    for text in list(code) + list(keep):
        if text not in seen:
            out.append(f"no English code cell holds {text} any more: remove or update it")
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
                if "-v" in argv:
                    for problem in found:
                        print("    " + problem)
        return 1 if bad else 0
    paths = build_all([a for a in argv if not a.startswith("-")])
    print(f"{len(paths)} edition notebook(s) built")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
