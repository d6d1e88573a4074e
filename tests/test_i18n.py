"""The kit in the learner's language: catalogs, the .mo compiler, choosing the
language, and every widget, explanation and check speaking it.

Part 1 checks the catalogs against the code (every ``_()`` message is in the
template and translated in each language, with the same ``{placeholders}``),
and the committed ``.mo`` files against the compiler (and against GNU
``msgfmt`` where it is installed).  Part 2 checks how the language is chosen.
Part 3 renders the widgets, the explainer, the card and the checker in each
language: the words change, the values and the escaping do not, and the
engine's and PyTorch's own error messages stay in English.
"""
from __future__ import annotations

import gettext
import html
import io
import re
import shutil
import subprocess

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_kit as ak
from autograd_kit import i18n
from autograd_kit.i18n import _, get_language, language, ngettext, set_language
from autograd_kit.locale import catalogs
from shell_support import ANSI, make_shell

LANGS = ("zh", "ru")
PLACEHOLDER = re.compile(r"\{(\w*)\}")

# a few words per language, straight from the catalogs' intent (the glossary)
BUTTONS = {"en": ["Step", "Back", "Run", "Reset"], "zh": ["单步", "后退", "运行", "重置"],
           "ru": ["Шаг", "Назад", "Выполнить", "Сброс"]}


@pytest.fixture(autouse=True)
def keep_language():
    """Every test starts from, and leaves, the language chosen before it."""
    before = i18n._state["chosen"]
    yield
    set_language(before)


def text(markup: str) -> str:
    """What a reader sees of some HTML: tags dropped, entities decoded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", markup)).split())


def po(lang: str) -> list[catalogs.Entry]:
    path = catalogs.LOCALE / lang / "LC_MESSAGES" / "autograd_kit.po"
    return catalogs.read_po(path.read_text(encoding="utf-8"))


# -- part 1: the catalogs -----------------------------------------------------------
def test_the_template_holds_exactly_the_messages_of_the_code():
    in_code = {(e.msgid, e.plural) for e in catalogs.extract()}
    template = catalogs.read_po(catalogs.POT.read_text(encoding="utf-8"))
    assert template[0].msgid == "" and "Plural-Forms" in template[0].msgstr
    in_template = {(e.msgid, e.plural) for e in template[1:]}
    assert in_code == in_template, (
        f"run `python -m autograd_kit.locale extract`: new {in_code - in_template}, "
        f"gone {in_template - in_code}")
    assert len(in_code) > 200  # the widgets, magics, explanations and checker


def test_marked_messages_are_found_by_reading_the_code_not_running_it():
    source = ('x = _("one {a}")\ny = N_("two")\nz = ngettext("{n} cat", "{n} cats", n)\n'
              'w = _(f"not {x}")\nv = other("no")\n')
    assert catalogs.messages_in(source) == [("one {a}", None, 1), ("two", None, 2),
                                            ("{n} cat", "{n} cats", 3)]


def test_no_module_that_translates_rebinds_the_underscore():
    """``_, cell = ...`` or ``for _ in ...`` inside a function makes ``_`` a local
    there, and every ``_("...")`` in that function then fails."""
    import ast
    for path, shown in catalogs.source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        uses = any(isinstance(n, ast.ImportFrom) and any(a.name == "_" for a in n.names)
                   for n in ast.walk(tree))
        bound = [n.lineno for n in ast.walk(tree)
                 if isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store)]
        assert not (uses and bound), f"{shown}: `_` rebound on line(s) {bound}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_is_translated_with_its_placeholders(lang):
    template = {(e.msgid, e.plural) for e in catalogs.extract()}
    entries = po(lang)
    assert {(e.msgid, e.plural) for e in entries[1:]} == template
    nplurals = int(re.search(r"nplurals=(\d)", entries[0].msgstr).group(1))
    for e in entries[1:]:
        forms = e.translations()
        assert all(f.strip() for f in forms), f"{lang}: no translation for {e.msgid!r}"
        assert "fuzzy" not in e.flags
        if e.plural is not None:
            assert len(forms) == nplurals, e.msgid
        for form in forms:
            assert set(PLACEHOLDER.findall(form)) == set(PLACEHOLDER.findall(e.msgid)), (
                f"{lang}: {form!r} does not keep the placeholders of {e.msgid!r}")
            words = PLACEHOLDER.sub("", e.msgid)
            assert form != e.msgid or not re.search(r"[a-z]{3}", words) or \
                e.msgid == "x={x}, {label}, clicks={clicks}, x.grad={grad}", \
                f"{lang}: {e.msgid!r} is left in English"


@pytest.mark.parametrize("lang", LANGS)
def test_the_committed_mo_files_are_what_the_compiler_makes(lang):
    path = catalogs.LOCALE / lang / "LC_MESSAGES" / "autograd_kit.mo"
    assert path.read_bytes() == catalogs.mo_bytes(po(lang)), \
        "run `python -m autograd_kit.locale compile`"


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext not installed")
@pytest.mark.parametrize("lang", LANGS)
def test_the_compiler_agrees_with_gnu_msgfmt(tmp_path, lang):
    source = catalogs.LOCALE / lang / "LC_MESSAGES" / "autograd_kit.po"
    out = tmp_path / "gnu.mo"
    subprocess.run(["msgfmt", "--check", "--no-hash", "-o", str(out), str(source)],
                   check=True, capture_output=True)
    assert out.read_bytes() == catalogs.mo_bytes(po(lang))


def test_po_text_survives_reading_and_writing():
    for path in [catalogs.POT, *catalogs.po_paths()]:
        original = path.read_text(encoding="utf-8")
        assert catalogs.write_po(catalogs.read_po(original)) == original


SMALL_PO = r'''msgid ""
msgstr ""
"Language: ru\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && "
"n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\n"

msgid "Step"
msgstr "Шаг"

msgctxt "button"
msgid "Run"
msgstr "Выполнить"

msgid "{n} step"
msgid_plural "{n} steps"
msgstr[0] "{n} шаг"
msgstr[1] "{n} шага"
msgstr[2] "{n} шагов"

msgid "a \"quoted\"\n"
"two-line message"
msgstr "«в кавычках»\n"
"на двух строках"

msgid "untranslated"
msgstr ""

#, fuzzy
msgid "Back"
msgstr "Назад?"
'''


def test_the_mo_format_carries_contexts_plurals_and_escapes():
    catalog = gettext.GNUTranslations(io.BytesIO(catalogs.mo_bytes(
        catalogs.read_po(SMALL_PO))))
    assert catalog.gettext("Step") == "Шаг"
    assert catalog.pgettext("button", "Run") == "Выполнить"
    assert catalog.gettext("Run") == "Run"  # the context is part of the key
    assert [catalog.ngettext("{n} step", "{n} steps", n) for n in (1, 3, 5, 21)] == \
        ["{n} шаг", "{n} шага", "{n} шагов", "{n} шаг"]
    assert catalog.gettext('a "quoted"\ntwo-line message') == \
        "«в кавычках»\nна двух строках"
    # untranslated and fuzzy entries are left out: they fall back to English
    assert catalog.gettext("untranslated") == "untranslated"
    assert catalog.gettext("Back") == "Back"


def test_po_syntax_errors_are_reported_with_the_line():
    with pytest.raises(ValueError, match="line 2"):
        catalogs.read_po('msgid "a"\nmsgstrr "b"\n')


def test_update_keeps_translations_adds_new_and_drops_gone_messages():
    template = [catalogs.header(), catalogs.Entry("kept"), catalogs.Entry("new")]
    old = [catalogs.header("zh"), catalogs.Entry("kept", "保留"), catalogs.Entry("gone", "走")]
    merged = catalogs.update(old, template, "zh")
    assert [(e.msgid, e.msgstr) for e in merged[1:]] == [("kept", "保留"), ("new", "")]
    assert "Language: zh" in merged[0].msgstr
    plural = [catalogs.header(), catalogs.Entry("{n} cat", plural="{n} cats", forms=["", ""])]
    new_ru = catalogs.update([catalogs.header("ru")], plural, "ru")
    assert new_ru[1].forms == ["", "", ""]  # as many forms as Russian has


# -- part 2: choosing the language -------------------------------------------------
def test_set_language_and_the_context_choose_the_language():
    set_language("ru")
    assert get_language() == "ru" and _("Step") == "Шаг"
    with language("zh_CN"):
        assert get_language() == "zh" and _("Step") == "单步"
        with language("en"):
            assert _("Step") == "Step"
        assert _("Reset") == "重置"
    assert get_language() == "ru" and _("Reset") == "Сброс"
    set_language("ru-RU")
    assert get_language() == "ru"


@pytest.mark.parametrize("env, expected", [
    ({"LANGUAGE": "ru_RU:en"}, "ru"), ({"LC_ALL": "zh_CN.UTF-8"}, "zh"),
    ({"LC_MESSAGES": "ru_RU.UTF-8"}, "ru"), ({"LANG": "zh_TW.UTF-8"}, "zh"),
    ({"LANG": "de_DE.UTF-8"}, "en"), ({}, "en"),
    ({"LANGUAGE": "fr:zh", "LANG": "ru_RU"}, "zh")])
def test_without_a_choice_the_locale_decides(monkeypatch, env, expected):
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    set_language(None)
    assert get_language() == expected
    assert _("Step") == dict(zip(("en", "zh", "ru"), ("Step", "单步", "Шаг")))[expected]
    set_language("en")  # a choice beats the locale
    assert _("Step") == "Step"


def test_an_unknown_language_is_a_one_line_error():
    with pytest.raises(ValueError) as err:
        set_language("fr")
    message = str(err.value)
    assert "\n" not in message and "'fr'" in message and "en, zh, ru" in message
    with pytest.raises(ValueError):
        with language("klingon"):
            pass  # pragma: no cover


def test_a_message_missing_from_a_catalog_falls_back_to_english(tmp_path, monkeypatch):
    folder = tmp_path / "ru" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    entries = catalogs.read_po(SMALL_PO)  # has "Step", not "Back" (fuzzy) or "Reset"
    (folder / "autograd_kit.mo").write_bytes(catalogs.mo_bytes(entries))
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    with language("ru"):
        assert _("Step") == "Шаг"
        assert _("Back") == "Back" and _("Reset") == "Reset" and _("untranslated")
        assert ngettext("{n} step", "{n} steps", 5) == "{n} шагов"
        assert ngettext("{n} cat", "{n} cats", 1) == "{n} cat"
        assert ngettext("{n} cat", "{n} cats", 2) == "{n} cats"
    with language("zh"):  # no catalog at all for zh here: English
        assert _("Step") == "Step"


def test_a_message_no_catalog_has_stays_english_in_every_language():
    for lang in ("zh", "ru"):
        with language(lang):
            assert _("a sentence nobody translated") == "a sentence nobody translated"


# -- part 3: everything speaks it --------------------------------------------------
def _kit_stepper(lang):
    from autograd_kit.widgets import BackwardStepper
    with language(lang):
        x = ak.tensor([1., 2.], requires_grad=True)
        w = ak.tensor([3., 4.], requires_grad=True)
        loss = (x * w).sum()
        return BackwardStepper(loss, names={"<script>": x, "w": w})


@pytest.mark.parametrize("lang", ["en", *LANGS])
def test_the_stepper_speaks_the_language_and_keeps_values_and_escaping(lang):
    s = _kit_stepper(lang)
    buttons = [b.description for b in (s.step_button, s.back_button, s.run_button,
                                       s.reset_button)]
    assert buttons == BUTTONS[lang]
    with language(lang):
        ready = ngettext("Ready: {n} step to go", "Ready: {n} steps to go", 4).format(n=4)
        step = _("Step {n} of {total}: {node}").format(n=2, total=4, node="MulBackward0")
        sent, done = _("Sent along each edge:"), _("Backward pass complete; press Step "
                                                   "again for a second pass. Gradients: "
                                                   "{grads}")
    assert ready in text(s.panel.value)
    s.go_to(2)
    panel = s.panel.value
    assert step in text(panel) and sent in text(panel)
    assert "[1., 1.] × [3., 4.] = [3., 4.]" in text(panel)  # the numbers, unchanged
    s.run()
    status = s.status.value
    assert done.split("{grads}")[0].strip() in text(status)
    assert "&lt;script&gt;.grad = [3., 4.]" in status and "<script>" not in status
    assert "<script>" not in s.still_html()
    if lang != "en":
        assert "Step" not in text(panel) and "Sent along" not in text(panel)


@pytest.mark.parametrize("lang", LANGS)
def test_a_stepper_keeps_its_language_when_the_notebook_changes(lang):
    s = _kit_stepper(lang)
    set_language("en")
    s.step()
    with language(lang):
        now = _("Step {n} of {total}: {node}.").format(n=1, total=4, node="SumBackward0")
        note = _("A still copy of the widget as it was displayed; run the notebook to use "
                 "its buttons.")
    assert now in text(s.status.value) and "Step 1 of 4" not in text(s.status.value)
    assert note in s.still_html() and "A still copy" not in s.still_html()


@pytest.mark.parametrize("lang", LANGS)
def test_the_stepper_over_pytorch_speaks_the_language(lang):
    torch = pytest.importorskip("torch")
    from autograd_kit.widgets import BackwardStepper
    x = torch.tensor([1., 2.], requires_grad=True)
    loss = (x * 3).sum()
    with language(lang):
        s = BackwardStepper(loss, names={"<script>": x})
        replayed = _("{who}'s own backward pass, replayed: {who} cannot be paused, so its "
                     "real pass ran once, with hooks on every node, when this view was made; "
                     "each step shows what {who} did at that node.").format(who="PyTorch")
    assert [b.description for b in (s.step_button, s.run_button)] == \
        [BUTTONS[lang][0], BUTTONS[lang][2]]
    assert replayed in text(s.status.value) and "replayed" not in s.status.value
    s.run()
    assert "<script>.grad = [3., 3.]" in text(s.status.value)
    assert "&lt;script&gt;" in s.status.value and "<script>" not in s.status.value


@pytest.mark.parametrize("lang", LANGS)
def test_an_engine_error_is_explained_in_the_language_but_its_message_stays_english(lang):
    s = _kit_stepper(lang)
    s.run()
    s.step()  # a second pass without retain_graph: the engine refuses
    note = text(s.status.value)
    assert "Trying to backward through the graph a second time" in note
    with language(lang):
        assert _("Engine message ({kind}):").format(kind="GraphFreedError") in note
    assert "This graph was already used" not in note


@pytest.mark.parametrize("lang", ["en", *LANGS])
def test_the_benches_speak_the_language(lang):
    from autograd_kit.widgets import AccumulationDemo, DetachDemo, InplaceDemo
    with language(lang):
        acc = AccumulationDemo(label="loss = <script>")
        acc.backward()
        acc.backward()  # refused: the graph was freed
        detach = DetachDemo()
        inplace = InplaceDemo("leaf")
        inplace.attempt("leaf")
        words = {"zero": _("zero grad"), "refused": _("engine refused"),
                 "same": _("the same tensor"), "leaf": _("on a leaf"),
                 "nothing": _("Nothing was changed by the refused line: values, versions "
                              "and grads are the same before and after.")}
    assert acc.zero_button.description == words["zero"]
    assert words["refused"] in text(acc.table.value)
    assert "&lt;script&gt;" in acc.code.value and "<script>" not in acc.code.value
    assert "Trying to backward through the graph a second time" in text(acc.status.value)
    assert [r["x_grad"] for r in detach.results] == ["2.", "4.", "2.", "2.", "4."]
    assert words["same"] in detach.tabs.titles
    assert words["leaf"] in [label for label, _key in inplace.chooser.options]
    assert words["nothing"] in text(inplace.report.value)
    assert "a leaf Variable that requires grad" in text(inplace.report.value)
    if lang != "en":
        assert "zero grad" not in acc.zero_button.description
        assert "the same tensor" not in detach.tabs.titles


@pytest.mark.parametrize("lang", LANGS)
def test_the_pictures_key_and_text_alternative_speak_the_language(lang):
    from autograd_kit.viz import make_dot
    x = ak.tensor([1., 2.], requires_grad=True)
    w = ak.tensor([3., 4.], requires_grad=True)
    loss = (x * w).sum()
    english = make_dot(loss, names={"x": x, "<script>": w}, show_saved=True, legend=True)
    with language(lang):
        graph = make_dot(loss, names={"x": x, "<script>": w}, show_saved=True, legend=True)
        head = ngettext("Computational graph of {n} node", "Computational graph of {n} nodes",
                        7).format(n=7)
        key = [_("leaf tensor (gets .grad)"), _("saved for backward"), _("legend")]
    assert english.alt.startswith("Computational graph of 7 nodes: MulBackward0 takes x and")
    assert graph.alt.startswith(head) and "takes" not in graph.alt
    assert "<script>" in graph.alt  # plain text here; escaped where it goes into SVG
    assert all(f'label="{k}"' in graph.source for k in key)
    assert "leaf tensor" not in graph.source



def _freed_graph():
    """``(x * x + 2).sum()`` after backward: two freed saved tensors, a constant
    whose value was not kept, eight values summarised as min / mean / max."""
    x = ak.arange(8.).requires_grad_()
    y = (x * x + 2).sum()
    y.backward()
    return x, y


def picture_words(source: str) -> str:
    """The text of every label in a DOT source (boxes, arrows), names and code
    (node names, saved slots, attribute names) taken out: the words a learner reads."""
    found = re.findall(r'label="((?:[^"\\]|\\.)*)"', source)
    words = " ".join(found).replace("\\n", " ")
    return re.sub(r"\b(\w*Backward\d*|AccumulateGrad|Mul|Add|Sum|self_sym_sizes|self|other|"
                  r"alpha|x|grad)\b", " ", words)


ENGLISH_IN_PICTURES = re.compile(r"[A-Za-z]{3,}")


@pytest.mark.parametrize("lang", LANGS)
def test_graph_pictures_write_their_words_in_the_language(lang):
    x, y = _freed_graph()
    kinds = dict(view="forward", show_saved=True, show_attrs=True, show_values=True,
                 names={"x": x})
    from autograd_kit.viz import make_dot
    english = make_dot(y, **kinds).source
    with language(lang):
        source = make_dot(y, **kinds).source
        again = make_dot(y, **kinds).source
        backward = make_dot(y, show_saved=True, show_attrs=True).source
        words = [_("(freed)"), _("constant"), _("saved as {slot}").format(slot="self"),
                 _("min {min}  mean {mean}  max {max}").format(min="0.", mean="3.5",
                                                               max="7.")]
    # the English picture has the English words (so the check below can fail)...
    for word in ("(freed)", 'label="constant"', "saved as self", "min 0.  mean 3.5  max 7."):
        assert word in english
    assert ENGLISH_IN_PICTURES.search(picture_words(english))
    # ...the learner's language has its own, and no English but names and code
    assert all(w != e for w, e in zip(words, ("(freed)", "constant", "saved as self")))
    for word in words:
        assert word in source, word
    assert f'label="{words[1]}"' in source
    for drawn in (source, backward):
        assert not ENGLISH_IN_PICTURES.search(picture_words(drawn)), picture_words(drawn)
    assert "MulBackward0" in backward and "AccumulateGrad" in backward  # names stay
    assert source == again != english  # the same picture for the same language


@pytest.mark.parametrize("lang", LANGS)
def test_folded_chains_are_counted_in_the_language(lang):
    from autograd_kit.viz import make_dot
    x = ak.tensor([1.0], requires_grad=True)
    y = x
    for _k in range(60):
        y = y * 1.01 + 0.5
    english = make_dot(y, max_nodes=20)
    with language(lang):
        graph = make_dot(y, max_nodes=20)
        count = len(graph.folds["f0"])
        head = _("… {nodes} ({parts}) …").format(
            nodes=ngettext("{n} node", "{n} nodes", count).format(n=count),
            parts="MulBackward0 ×58, AddBackward0 ×58")
        box = _("fold {id}").format(id="f0")
        chain = _("a folded chain ({nodes})").format(
            nodes=ngettext("{n} node", "{n} nodes", count).format(n=count))
    assert count == 116
    fold = next(n for n in english.nodes if n.kind == "fold")
    assert fold.lines == ["… 116 nodes (MulBackward0 ×58, AddBackward0 ×58) …", "fold f0"]
    assert "a folded chain (116 nodes)" in english.alt
    assert next(n for n in graph.nodes if n.kind == "fold").lines == [head, box]
    assert chain in graph.alt and "nodes" not in graph.alt
    assert not ENGLISH_IN_PICTURES.search(picture_words(graph.source))


def test_saved_values_line_up_in_columns_in_every_language():
    """The table of what an op saved is padded by the width a character takes in a
    monospaced font: a Chinese character takes two columns."""
    from autograd_kit.viz import labels, make_dot
    x, y = _freed_graph()
    for lang in ("en", *LANGS):
        with language(lang):
            box = next(n for n in make_dot(y, show_attrs=True).nodes
                       if n.title == "MulBackward0")
        title, rule, *rows = box.lines
        assert len(rows) == 2 and rows[0].startswith("other: ")
        assert {labels.width(r) for r in rows} == {len(rule)}, (lang, box.lines)
    assert labels.width("（已释放）") == 10 and labels.width("(freed)") == 7


@pytest.mark.parametrize("lang", LANGS)
def test_what_to_install_is_said_in_the_language(monkeypatch, lang):
    from autograd_kit.viz import make_dot, render
    monkeypatch.setattr(render, "dot_available", lambda: False)
    monkeypatch.setattr(render, "wasm_available", lambda: False)
    monkeypatch.setattr(render, "_forced", None)
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    x = ak.tensor([1., 2.], requires_grad=True)
    graph = make_dot((x * 2).sum())
    with language(lang):
        advice = _(render.ADVICE)
        shown = graph._repr_mimebundle_()[0]["text/plain"]
        with pytest.raises(render.RenderError) as err:
            render.render("digraph {}", "ps")
        needs = _("Writing {format} needs the Graphviz `dot` program; without it, svg, png "
                  "and pdf can be written. Install Graphviz (e.g. "
                  "`apt-get install graphviz`).").format(format="ps")
    assert advice != render.ADVICE and "apt-get install graphviz" in advice
    assert shown.startswith(advice) and "Install Graphviz" not in shown
    assert str(err.value) == needs and "needs the Graphviz" not in needs


# -- the magics, the card and the explanations ---------------------------------------
@pytest.fixture
def ip():
    shell = make_shell("import autograd_kit as torch\n"
                       "x = torch.tensor([1., 2.], requires_grad=True)\n"
                       "w = torch.tensor([3., 4.], requires_grad=True)\n"
                       "loss = (x * w).sum()")
    yield shell
    shell.run_line_magic("unload_ext", "autograd_kit")
    for name in ("x", "w", "loss", "<script>", "y"):
        shell.user_ns.pop(name, None)


def run(shell, code):
    with capture_output() as cap:
        result = shell.run_cell(code)
    return result, ANSI.sub("", cap.stdout + cap.stderr), cap.outputs


@pytest.mark.parametrize("lang", LANGS)
def test_lang_chooses_the_language_of_one_magic_call(ip, lang):
    from autograd_kit.widgets import BackwardStepper
    set_language("en")
    _r, _out, outputs = run(ip, f"%autograd_step loss --lang {lang}")
    stepper = next(o for o in outputs if "BackwardStepper" in o.data["text/plain"])
    assert BUTTONS[lang][0] in stepper.data["text/html"]
    assert get_language() == "en"  # only that call
    with pytest.raises(UsageError) as err:
        ip.run_line_magic("autograd_step", f"x --lang {lang}")
    with language(lang):
        leaf = _("{expr} is a leaf: it has no grad_fn, so there is nothing to step "
                 "through (backward() would only add to its .grad); step through a "
                 "tensor computed from it, such as a loss").format(expr="x")
    assert leaf in str(err.value)
    assert isinstance(BackwardStepper, type)


@pytest.mark.parametrize("lang", LANGS)
def test_lang_works_for_every_magic(ip, lang):
    before = i18n._state["chosen"]
    _r, out, _o = run(ip, f"%%autograd_graph --lang {lang}\nn = 1 + 1")
    ip.user_ns.pop("n", None)
    with language(lang):
        nothing = _("the cell built no graph (no tensor with a grad_fn)")
        mode = _("autograd_display is {mode}").format(mode="text")
    assert nothing in out and "built no graph" not in out
    _r, out, _o = run(ip, f"%autograd_display --lang {lang}")
    assert mode in out
    assert i18n._state["chosen"] == before  # each call's language ends with the call


def test_the_catalog_command_line_checks_and_compiles():
    import sys
    done = subprocess.run([sys.executable, "-m", "autograd_kit.locale", "check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    wrong = subprocess.run([sys.executable, "-m", "autograd_kit.locale", "frobnicate"],
                           capture_output=True, text=True)
    assert wrong.returncode == 2 and "extract|update|compile|check" in wrong.stdout


def test_an_unknown_lang_is_a_one_line_usage_error(ip):
    with pytest.raises(UsageError) as err:
        ip.run_line_magic("autograd_step", "loss --lang fr")
    assert "\n" not in str(err.value) and "fr" in str(err.value)


@pytest.mark.parametrize("lang", LANGS)
def test_the_card_names_its_fields_in_the_language(ip, lang):
    ip.run_line_magic("autograd_display", f"card --lang {lang}")
    t = ip.user_ns["<script>"] = ip.user_ns.pop("x")
    set_language("en")  # the card keeps the language --lang gave it
    card = ip.display_formatter.format(t)[0]["text/html"]
    with language(lang):
        assert _("requires_grad") in card and _("shape") in card
    assert "requires_grad" in card  # the attribute name stays beside the words
    assert "&lt;script&gt;" in card and "<script>" not in card
    assert "tensor([1., 2.])" in card  # the value, as it was


@pytest.mark.parametrize("lang", LANGS)
def test_explanations_speak_the_language_and_keep_the_error_in_english(ip, lang):
    ip.run_line_magic("autograd_explain", f"on --lang {lang}")
    result, out, outputs = run(ip, "x.add_(1)")
    assert result.error_in_exec is not None
    shown = outputs[-1].data
    with language(lang):
        title = _("{who} is a leaf tensor that requires grad, so it can't be changed in "
                  "place.").format(who="`x`")
        header = _("autograd_kit explains (%autograd_explain off to hide this):")
    assert " ".join(title.split()) in " ".join(shown["text/plain"].split())
    assert header in shown["text/plain"]
    assert "that requires grad, so it" not in shown["text/plain"]
    assert "a leaf Variable that requires grad is being used in an in-place operation" in out
    result, out, outputs = run(ip, "loss.backward()\nloss.backward()")
    with language(lang):
        freed = _("backward() went through this graph a second time, but its saved "
                  "values were already freed.")
    assert freed in text(outputs[-1].data["text/html"])
    assert "Trying to backward through the graph a second time" in out
    _r, out, _o = run(ip, "%autograd_explain")
    with language(lang):
        assert _("autograd_explain is {state}").format(state=_("on")) in out


EVERY_ERROR = {
    "x.add_(1)": "a leaf Variable that requires grad",
    "v = x[0]\nv.mul_(2)": "a view of a leaf Variable",
    "a = x * 1\nb = a * a\na.mul_(2)\nb.sum().backward()": "modified by an inplace operation",
    "y = x * w\ny.backward()": "grad can be implicitly created only for scalar outputs",
    "z = torch.ones(2).sum()\nz.backward()": "does not require grad and does not have",
    "g, = torch.autograd.grad((x * w).sum(), x)\ng.backward()": "does not require grad",
    "(x * w).sum().backward()\nx.grad.sum().backward()": "does not require grad",
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("code", list(EVERY_ERROR))
def test_every_kind_of_error_is_explained_in_the_language(ip, lang, code):
    ip.run_line_magic("autograd_explain", f"on --lang {lang}")
    result, out, outputs = run(ip, code)
    for name in ("v", "a", "b", "z", "g"):
        ip.user_ns.pop(name, None)
    assert EVERY_ERROR[code] in str(result.error_in_exec)  # the engine's words, in English
    shown, = outputs
    plain = shown.data["text/plain"]
    with language(lang):
        assert plain.startswith(_("autograd_kit explains (%autograd_explain off to hide "
                                  "this):"))
    assert not re.search(r"\b(the|is|was|and|to)\b", plain.replace(
        str(result.error_in_exec), "")), plain  # no English left but code and names


@pytest.mark.parametrize("lang", LANGS)
def test_pytorch_errors_are_explained_in_the_language_with_pytorchs_message(ip, lang):
    pytest.importorskip("torch")
    ip.run_line_magic("autograd_explain", f"on --lang {lang}")
    ip.run_cell("import torch as real\ny = real.tensor([1., 2.], requires_grad=True)")
    result, out, outputs = run(ip, "y.add_(1)")
    assert "a leaf Variable that requires grad is being used in an in-place operation" in \
        str(result.error_in_exec)
    with language(lang):
        fix = _("Fix: to update a parameter, as an optimizer does, switch recording off: "
                "`with torch.no_grad(): {update}` (`{x}` stays a leaf and keeps receiving "
                "gradients). To work on a changed version, start from a copy: "
                "`y = {x}.clone()`; the copy is not a leaf, may be changed in place, and "
                "gradients still flow back through it to `{x}`.").split("`")[0]
    assert fix.strip() in text(outputs[-1].data["text/html"])


# -- the exercise checker ------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", *LANGS])
def test_the_checker_speaks_the_language(capsys, lang):
    from autograd_kit.exercises import check
    with language(lang):
        check("Ex 1", ..., 3.0)
        check("Ex 1", 2.0, 3.0, hint="h")
        check("Ex 1", 3.0, 3.0)
        words = [_("{title}: not answered yet. Replace the ... in the exercise cell with "
                   "your answer, run that cell, then run this one again.").format(
                     title="Ex 1"),
                 _("{title}: not quite: {problem}.").format(
                     title="Ex 1", problem=_("{got} is not the right value").format(
                         got="2.0")) + ("" if lang == "zh" else " ")  # no blank after 。
                 + _("Hint: {hint}").format(hint="h"),
                 _("{title}: correct.").format(title="Ex 1")]
    out = capsys.readouterr().out.splitlines()
    assert out == words
    if lang == "en":
        assert "not answered yet" in out[0] and out[2] == "Ex 1: correct."
    else:
        assert not any(w in " ".join(out) for w in ("not answered", "not quite", "correct"))


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_the_kits_own_gpu_message_speaks_the_learners_language(lang, monkeypatch):
    """"cuda" without a GPU: the kit's own message (not PyTorch's), so it is
    translated; the explainer still recognises it in every language."""
    from autograd_kit import backend
    from autograd_kit.viz.error_facts import error_facts
    monkeypatch.setattr(backend, "cuda_is_available", lambda: False)
    with language(lang):
        with pytest.raises(RuntimeError) as err:
            ak.ones(2).cuda()
        assert str(err.value) == _(backend.CUDA_HELP)
    assert "pip install autograd_kit[gpu]" in str(err.value)
    assert (str(err.value) == backend.CUDA_HELP) == (lang == "en")
    assert error_facts(err.value).kind == "no_gpu"


def test_chinese_charts_get_a_font_with_chinese_glyphs(monkeypatch):
    """set_language("zh") lets matplotlib draw Chinese labels: no "Glyph missing"
    warning, Latin text still from the default font; without the font package
    nothing changes and nothing fails."""
    import sys
    import warnings
    pytest.importorskip("noto_cjk_sans_otc")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from autograd_kit import chart_font
    with matplotlib.rc_context():
        with language("zh"):
            assert plt.rcParams["font.family"][-1] == chart_font.FAMILY
            fig, ax = plt.subplots(figsize=(3, 2))
            ax.set_title("损失 loss")
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                fig.canvas.draw()
            plt.close(fig)
    with matplotlib.rc_context():
        monkeypatch.setitem(sys.modules, "noto_cjk_sans_otc", None)  # not installed
        plt.rcParams["font.family"] = ["sans-serif"]
        assert chart_font.follow("zh") is False
        assert chart_font.FAMILY not in plt.rcParams["font.family"]
    assert chart_font.follow("ru") is True
