"""The Chinese and Russian editions teach the same code as the English lessons.

An edition is built by ``lessons/editions.py`` from the English notebook and a
translation file.  These tests fail when an edition's code drifts from the
English code (comments and string literals aside), when a translation is missing
or stale (its English cell changed since), or when a stored edition is not what
the build makes from today's English notebook and translations.
"""
from __future__ import annotations

import importlib.util
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
_spec = importlib.util.spec_from_file_location("lesson_editions", LESSONS / "editions.py")
editions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(editions)

ENGLISH = editions.english_lessons()
PAIRS = [pytest.param(lang, p, id=f"{lang}/{p.stem[:2]}")
         for lang in editions.EDITIONS for p in ENGLISH]
_LAYOUT = {"COMMENT", "STRING", "NL", "NEWLINE", "INDENT", "DEDENT", "ENCODING", "ENDMARKER"}
_FENCE = re.compile(r"```python\n(.*?)```", re.S)


def code_tokens(source: str) -> list[tuple[str, str]]:
    """The tokens of ``source`` that carry meaning: comments, string literals
    (f-strings whole) and layout left out."""
    out, depth = [], 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        name = tokenize.tok_name[tok.type]
        if name == "FSTRING_START":
            depth += 1
        elif name == "FSTRING_END":
            depth -= 1
        elif depth == 0 and name not in _LAYOUT:
            out.append((name, tok.string))
    return out


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def test_token_comparison_sees_code_and_ignores_words():
    english = 'print("the gradient is", x.grad)  # as expected\n'
    assert code_tokens(english) == code_tokens('print("梯度是", x.grad)  # 与预期一致\n')
    assert code_tokens(english) != code_tokens('print("the gradient is", x.data)\n')
    assert code_tokens('f"{a} и {b}"') == code_tokens('f"{b} and {a}"')


def test_every_lesson_has_both_editions():
    missing = [f"{lang}/{p.name}" for lang in editions.EDITIONS for p in ENGLISH
               if not editions.edition_path(lang, p).exists()]
    assert not missing, f"editions not built: {missing}"


@pytest.mark.parametrize("lang, lesson", PAIRS)
def test_edition_code_is_the_english_code(lang, lesson):
    path = editions.edition_path(lang, lesson)
    if not path.exists():
        pytest.fail(f"{lang}/{lesson.name} is missing: run python lessons/editions.py")
    english = {c.id: c for c in _read(lesson).cells}
    edition = [c for c in _read(path).cells if c.id != "edition-setup"]
    assert [c.id for c in edition] == list(english), "cells differ from the English ones"
    for cell in edition:
        twin = english[cell.id]
        assert cell.cell_type == twin.cell_type, cell.id
        if cell.cell_type == "code":
            assert code_tokens(cell.source) == code_tokens(twin.source), \
                f"{lang}/{lesson.name} cell {cell.id}: code differs from the English cell"
            assert cell.metadata.get("tags", []) == twin.metadata.get("tags", []), cell.id
        elif "solution" in twin.metadata.get("tags", []):
            ours, theirs = _FENCE.findall(cell.source), _FENCE.findall(twin.source)
            assert len(ours) == len(theirs) == 1, f"{cell.id}: one python fence expected"
            assert code_tokens(ours[0]) == code_tokens(theirs[0]), \
                f"{lang}/{lesson.name} solution {cell.id}: code differs from the English one"


@pytest.mark.parametrize("lang, lesson", PAIRS)
def test_translation_is_complete_and_current(lang, lesson):
    assert editions.problems(lang, lesson) == []


@pytest.mark.parametrize("lang, lesson", PAIRS)
def test_stored_edition_is_what_the_build_makes(lang, lesson):
    path = editions.edition_path(lang, lesson)
    if not path.exists():
        pytest.fail(f"{lang}/{lesson.name} is missing")
    built = editions.build(lang, lesson)
    stored = _read(path)
    assert [(c.id, c.source) for c in stored.cells] == [(c.id, c.source) for c in built.cells], \
        "the stored edition is out of date: run python lessons/regenerate.py " \
        f"{lang}/{lesson.stem[:2]}"
    setup = stored.cells[[c.id for c in stored.cells].index("edition-setup")]
    assert f'set_language("{lang}")' in setup.source
    english = {c.id: c for c in _read(lesson).cells}
    unrun = [c.id for c in stored.cells if c.cell_type == "code" and c.id in english
             and english[c.id].get("outputs") and not c.get("outputs")]
    assert not unrun, f"cells that print in English but have no stored output here: {unrun}"


@pytest.mark.parametrize("lang", ("en",) + editions.EDITIONS)
def test_each_index_links_the_other_languages(lang):
    folder = LESSONS if lang == "en" else LESSONS / lang
    index = _read(folder / "00_index.ipynb")
    links = re.findall(r"\]\(([^)]+\.ipynb)\)",
                       next(c.source for c in index.cells if c.id == "languages"))
    targets = {(folder / link).resolve() for link in links}
    expected = {(LESSONS / "00_index.ipynb").resolve()} | \
        {(LESSONS / other / "00_index.ipynb").resolve() for other in editions.EDITIONS}
    expected.discard((folder / "00_index.ipynb").resolve())
    assert targets == expected
    assert all(t.exists() for t in targets)


def test_translate_code_replaces_only_listed_literals():
    source = 'x = 1  # one\nprint("a b", "keep")\n'
    table = {"# one": "# 一", '"a b"': '"甲 乙"'}
    assert editions.translate_code(source, table) == 'x = 1  # 一\nprint("甲 乙", "keep")\n'


def test_changed_english_cell_reads_as_stale(tmp_path, monkeypatch):
    lesson = tmp_path / "01_x.ipynb"
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("# Title\n\nOld text.")
    cell.id = "c1"
    nb.cells = [cell]
    nbformat.write(nb, lesson)
    monkeypatch.setattr(editions, "HERE", tmp_path)
    editions.save("zh", lesson, editions.extract("zh", lesson))
    assert editions.problems("zh", lesson) == ["cell c1: not translated"]
    data = editions.load("zh", lesson)
    data["cells"]["c1"]["text"] = "# 标题\n\n旧文本。"
    editions.save("zh", lesson, data)
    assert editions.problems("zh", lesson) == []
    cell.source = "# Title\n\nNew text."
    nbformat.write(nb, lesson)
    editions.save("zh", lesson, editions.extract("zh", lesson))
    assert editions.problems("zh", lesson) == ["cell c1: stale (the English cell changed since)"]
