"""The Chinese and Russian editions teach the same code as the English lessons.

An edition is built by ``lessons/editions.py`` from the English notebook and a
translation file.  These tests fail when an edition's code drifts from the
English code (comments, string literals and the text of f-strings aside; the
``{...}`` fields of f-strings and python code shown in markdown count as code),
when a translation is missing or stale (its English cell changed since, or a
comment or message of an English code cell is neither translated nor listed as
kept), or when a stored edition is not what the build makes from today's
English notebook and translations.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from autograd_kit.course.lessons import lesson_key

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
_spec = importlib.util.spec_from_file_location("lesson_editions", LESSONS / "editions.py")
editions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(editions)

ENGLISH = editions.english_lessons()
PAIRS = [pytest.param(lang, p, id=f"{lang}/{lesson_key(p.name)}")
         for lang in editions.EDITIONS for p in ENGLISH]
_LAYOUT = {"COMMENT", "STRING", "NL", "NEWLINE", "INDENT", "DEDENT", "ENCODING", "ENDMARKER"}
_FENCE = re.compile(r"```python\n(.*?)```", re.S)


def code_tokens(source: str) -> list[tuple[str, str]]:
    """The tokens of ``source`` that carry meaning: comments, string literals and
    layout left out, but of an f-string the ``{...}`` fields kept (their
    expressions as tokens, then any ``!conversion`` and ``:format``), in order;
    only its text between the fields counts as words."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(pos):
        return offsets[pos[0] - 1] + pos[1]

    out, fstring_start = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        name = tokenize.tok_name[tok.type]
        if name == "FSTRING_START":                    # Python 3.12 and later
            if fstring_start is None:
                fstring_start, depth = tok.start, 0
            depth += 1
        elif name == "FSTRING_END":
            depth -= 1
            if depth == 0:
                out += _fstring_fields(source[at(fstring_start):at(tok.end)])
                fstring_start = None
        elif fstring_start is not None:
            continue
        elif name == "STRING" and "f" in re.match(r"[A-Za-z]*", tok.string).group().lower():
            out += _fstring_fields(tok.string)          # Python 3.11: one STRING token
        elif name not in _LAYOUT:
            out.append((name, tok.string))
    return out


def _fstring_fields(literal: str) -> list[tuple[str, str]]:
    """The ``{...}`` fields of one f-string literal, as tokens."""
    return _fields(ast.parse(literal, mode="eval").body)


def _fields(joined: ast.JoinedStr) -> list[tuple[str, str]]:
    out = []
    for part in joined.values:
        if not isinstance(part, ast.FormattedValue):
            continue                                    # the text between fields: words
        out.append(("OP", "{"))
        out += code_tokens(ast.unparse(part.value))
        if part.conversion != -1:
            out.append(("CONVERSION", "!" + chr(part.conversion)))
        if part.format_spec is not None:
            out.append(("OP", ":"))
            for spec in part.format_spec.values:
                if isinstance(spec, ast.Constant):
                    out.append(("FORMAT_SPEC", spec.value))
                else:
                    out += _fields(ast.JoinedStr(values=[spec]))
        out.append(("OP", "}"))
    return out


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def test_token_comparison_sees_code_and_ignores_words():
    english = 'print("the gradient is", x.grad)  # as expected\n'
    assert code_tokens(english) == code_tokens('print("梯度是", x.grad)  # 与预期一致\n')
    assert code_tokens(english) != code_tokens('print("the gradient is", x.data)\n')
    # an f-string's text is words, its fields are code
    assert code_tokens('f"{a} и {b}"') == code_tokens('f"{a} and {b}"')
    assert code_tokens('f"{a} и {b}"') != code_tokens('f"{b} and {a}"')
    assert code_tokens('f"{x.grad:.3f}"') != code_tokens('f"{x.data:.3f}"')
    assert code_tokens('f"{x!r:>5}"') != code_tokens('f"{x!s:>5}"')
    assert code_tokens('f"{x:>5}"') != code_tokens('f"{x:>6}"')
    assert code_tokens('f"{x:{w}}"') != code_tokens('f"{x:{v}}"')
    # strings inside a field are words too (a table header like {'b is':20})
    assert code_tokens("f\"{'b is':20} | {n:>3}\"") == code_tokens("f\"{'b 的来历':20} | {n:>3}\"")
    assert code_tokens('print(f"{a}")') == [("NAME", "print"), ("OP", "("), ("OP", "{"),
                                            ("NAME", "a"), ("OP", "}"), ("OP", ")")]


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
            # a collapsed input (the exercise checks) is collapsed in the edition too
            assert cell.metadata.get("jupyter", {}) == twin.metadata.get("jupyter", {}), cell.id
        elif cell.cell_type == "markdown" and cell.id != editions.LANGUAGES_CELL:
            # python code shown in the text (a folded solution, a task to copy)
            ours, theirs = _FENCE.findall(cell.source), _FENCE.findall(twin.source)
            assert len(ours) == len(theirs), \
                f"{lang}/{lesson.name} cell {cell.id}: {len(ours)} python fence(s), " \
                f"the English cell has {len(theirs)}"
            if "solution" in twin.metadata.get("tags", []):
                assert len(ours) == 1, f"{cell.id}: one python fence expected"
            for mine, english_code in zip(ours, theirs):
                assert code_tokens(mine) == code_tokens(english_code), \
                    f"{lang}/{lesson.name} cell {cell.id}: python code differs from the English one"


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
        f"{lang}/{lesson_key(lesson.name)}"
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


def test_every_code_literal_is_translated_or_kept(tmp_path, monkeypatch):
    """A comment or message in a code cell is translated or listed as kept; when
    the English one changes, the new text reads as untranslated and the old entry
    as left behind (instead of the edition quietly printing the new English)."""
    lesson = tmp_path / "01_x.ipynb"
    title, code = nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell(
        'x = ak.tensor(1.0, device="cpu")  # move it\nprint(f"{x.item():>4} done", "::")\n')
    title.id, code.id = "c1", "c2"
    nb = nbformat.v4.new_notebook(cells=[title, code])
    nbformat.write(nb, lesson)
    monkeypatch.setattr(editions, "HERE", tmp_path)
    data = editions.extract("zh", lesson)
    assert data["code"] == {'"cpu"': None, "# move it": None, 'f"{x.item():>4} done"': None}
    data["cells"]["c1"]["text"] = "# 标题"
    editions.save("zh", lesson, data)
    assert editions.problems("zh", lesson) == [
        'cell c2: untranslated code text: "cpu"', "cell c2: untranslated code text: # move it",
        'cell c2: untranslated code text: f"{x.item():>4} done"']
    data["code"] = {"# move it": "# 移过去", 'f"{x.item():>4} done"': 'f"{x.item():>4} 完成"'}
    data["keep"] = ['"cpu"']
    editions.save("zh", lesson, data)
    assert editions.problems("zh", lesson) == []
    built = editions.build("zh", lesson)
    assert built.cells[-1].source == \
        'x = ak.tensor(1.0, device="cpu")  # 移过去\nprint(f"{x.item():>4} 完成", "::")\n'
    data["code"]['"cpu"'] = '"中央处理器"'
    editions.save("zh", lesson, data)
    assert editions.problems("zh", lesson) == [
        'cell c2: code text both translated and kept: "cpu"']
    del data["code"]['"cpu"']
    editions.save("zh", lesson, data)
    code.source = code.source.replace("# move it", "# move it there")
    nbformat.write(nb, lesson)
    assert editions.problems("zh", lesson) == [
        "cell c2: untranslated code text: # move it there",
        "no English code cell holds # move it any more: remove or update it"]
    editions.save("zh", lesson, editions.extract("zh", lesson))
    assert editions.load("zh", lesson)["code"]["# move it there"] is None


def test_needs_decision_skips_literals_without_words():
    for nothing in ('""', '" → "', '"::"', 'f"{x:.3f}"', 'f"{a} | {b}"', '"\\n"', '"..."'):
        assert not editions.needs_decision(nothing), nothing
    for words in ('"cpu"', "# float32", 'f"{a} and {b}"', 'r"is at version (\\d+)"', '"梯度"',
                  "f\"{'b is':20} {n:>5}\""):
        assert editions.needs_decision(words), words
