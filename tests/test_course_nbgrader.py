"""The course as nbgrader assignments: generated from the lessons, graded by nbgrader.

Part 1 looks at what ``python -m autograd_kit.course nbgrader`` writes.  Part 2 is
the round trip with nbgrader's own API in a temporary course: generate the
assignment, hand in simulated submissions (three students whose answers are
right, wrong and untouched in turn, so every exercise is graded each way),
autograde them, and read the points per exercise from nbgrader's gradebook;
then generate the feedback and find the lesson's own sentences in it.  Every
English lesson goes round; of each edition, every lesson becomes an assignment
and the lesson with the most exercises goes round.
"""
from __future__ import annotations

import copy
import html
import io
import re
import shutil
import tokenize
from pathlib import Path

import nbformat
import pytest

from autograd_kit import exercises, i18n
from autograd_kit.course import find_lessons, read_lesson
from autograd_kit.course.lessons import lesson_files, lesson_key
from autograd_kit.course.__main__ import main
from autograd_kit.course.nbgrader import (GRADED, POINTS, READY, assignment_name, exercise_key,
                                          to_nbgrader)
from autograd_kit.course.release_text import (FOLD_SUMMARY, HELD_NOTE, LESSON_ONLY, SENTENCES,
                                              held_code)

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LANGUAGES = ("en", "zh", "ru")
WRONG_ANSWER = '"not the answer"'


def graded_lessons(lang):
    return [lesson for lesson in find_lessons(LESSONS, lang) if lesson.exercises]


def nbg(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


# --- grading mode of the checker ------------------------------------------------------

def test_grading_mode_raises_the_sentence_the_lesson_prints(capsys):
    exercises.check("Ex", 2.0, 2.5, hint="what multiplies width?")
    printed = capsys.readouterr().out.strip()
    exercises.grading(True)
    try:
        with pytest.raises(exercises.ExerciseNotSolved) as wrong:
            exercises.check("Ex", 2.0, 2.5, hint="what multiplies width?")
        with pytest.raises(exercises.ExerciseNotSolved, match="not answered yet"):
            exercises.check("Ex", ...)
        exercises.check("Ex", 2.5, 2.5, why="It is the height.")
    finally:
        exercises.grading(False)
    assert str(wrong.value) == printed
    assert " ".join(wrong.value._render_traceback_()) == f"ExerciseNotSolved: {printed}"
    assert capsys.readouterr().out == "Ex: correct. It is the height.\n"


def test_grading_mode_speaks_the_learners_language():
    exercises.grading(True)
    try:
        with i18n.language("ru"), pytest.raises(exercises.ExerciseNotSolved) as err:
            exercises.check("Ex", 2.0, 2.5)
    finally:
        exercises.grading(False)
    assert "Ex" in str(err.value) and exercises.WRONG not in str(err.value)


# --- what the generator writes -------------------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_exercise_becomes_an_answer_and_a_graded_test(lang):
    for lesson in graded_lessons(lang):
        nb = to_nbgrader(lesson)
        answers = [c for c in nb.cells if nbg(c).get("solution")]
        tests = [c for c in nb.cells if nbg(c).get("grade")]
        assert len(answers) == len(tests) == len(lesson.exercises), lesson.name
        for ex, answer, test in zip(lesson.exercises, answers, tests):
            learner = lesson.notebook.cells[ex.answer_cell].source
            assert answer.source.startswith(learner.rstrip("\n"))
            assert f"### BEGIN SOLUTION\n{ex.solution.rstrip()}\n### END SOLUTION" in answer.source
            assert nbg(test)["points"] == POINTS and nbg(test)["locked"]
            key = exercise_key(lesson, ex.number)
            check = lesson.notebook.cells[ex.check_cell].source
            assert f"grade({key!r}, globals())".replace("'", '"') in check
            visible, hidden = test.source.split("### BEGIN HIDDEN TESTS\n")
            assert READY.format(key=key) in visible and "grade(" not in visible
            assert hidden == GRADED.format(key=key) + "\n### END HIDDEN TESTS"
        # the folded solutions are not handed out; everything else is read-only
        assert not any("solution" in c.metadata.get("tags", []) for c in nb.cells)
        others = [c for c in nb.cells if not nbg(c).get("solution") and not nbg(c).get("grade")]
        assert all(nbg(c)["locked"] for c in others)
        assert len({nbg(c)["grade_id"] for c in nb.cells}) == len(nb.cells)
        assert all(c.get("outputs", []) == [] for c in nb.cells if c.cell_type == "code")


def test_a_graded_cell_shows_no_answer_and_trusts_nothing_in_the_notebook():
    """The released test cell only asks whether an answer is there; the hidden part
    imports the checks afresh, so a learner's ``grade = ...`` is not what runs."""
    key = "lesson03.ex1"
    ns = {"my_dL_dh": 5.0, "my_w_grad": 7.5, "my_x_grad": 10.0}
    exec(READY.format(key=key), ns)
    exec(GRADED.format(key=key), ns)
    ns.update(my_w_grad=0.0, grade=lambda *a, **k: None)
    exec(READY.format(key=key), ns)                  # answered: Validate passes
    with pytest.raises(AssertionError, match="w.grad"):
        exec(GRADED.format(key=key), ns)
    ns["my_x_grad"] = ...
    with pytest.raises(AssertionError, match="not answered yet"):
        exec(READY.format(key=key), ns)


def test_the_command_writes_a_course(tmp_path, capsys):
    assert main(["nbgrader", str(tmp_path), "--lessons", "3,6", "--source", str(LESSONS)]) == 0
    assert "lesson03, lesson06" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "source").iterdir()) == ["lesson03", "lesson06"]
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert "code_stub" in config and "course_id" in config
    compile(config, "nbgrader_config.py", "exec")


def test_an_appendix_is_named_by_its_letter(tmp_path, capsys):
    """Appendices (``A_topic.ipynb``) come after the main path; ``--lessons`` takes
    their letter, in either case, and their assignments and exercise ids carry it."""
    keys = [lesson.key for lesson in find_lessons(LESSONS, "en")]
    main_path = [k for k in keys if k.isdigit()]
    assert main_path == [f"{n:02d}" for n in range(len(main_path))], "a gap in the main path"
    assert keys[len(main_path):] == sorted(keys[len(main_path):]) and keys[-1].isalpha()
    assert main(["nbgrader", str(tmp_path), "--lessons", "a,3", "--source", str(LESSONS)]) == 0
    assert "lesson03, lessonA" in capsys.readouterr().out
    (appendix,) = find_lessons(LESSONS, "en", ["A"])
    assert appendix.is_appendix and appendix.number is None
    assert (tmp_path / "source" / "lessonA" / appendix.path.name).is_file()
    assert exercise_key(appendix, 1) == "lessonA.ex1" and assignment_name(appendix) == "lessonA"
    assert main(["nbgrader", str(tmp_path / "c"), "--lessons", "Z,99",
                 "--source", str(LESSONS)]) == 2
    assert "no lesson numbered 99 and no appendix Z" in capsys.readouterr().err


def test_only_lesson_file_names_have_a_key():
    assert lesson_key("03_backward_and_chain_rule.ipynb") == "03"
    assert lesson_key("lessons/zh/B_gpu_with_cupy.ipynb") == "B"
    for name in ("3_short.ipynb", "AB_two_letters.ipynb", "a_lower.ipynb", "notes.ipynb",
                 "03_backward_and_chain_rule.json"):
        with pytest.raises(ValueError):
            lesson_key(name)


@pytest.mark.parametrize("args, words", [
    (["--lang", "fr"], "invalid choice"),
    (["--lessons", "three"], "lesson numbers or appendix letters separated by commas"),
])
def test_the_command_refuses_bad_arguments_in_one_line(tmp_path, capsys, args, words):
    with pytest.raises(SystemExit):
        main(["nbgrader", str(tmp_path), *args])
    assert words in capsys.readouterr().err


def test_the_command_says_what_is_missing(tmp_path, capsys):
    assert main(["nbgrader", str(tmp_path), "--lessons", "99", "--source", str(LESSONS)]) == 2
    assert "no lesson numbered 99" in capsys.readouterr().err
    bare = tmp_path / "bare"
    bare.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Lesson 1")])
    nbformat.write(nb, bare / "01_only_prose.ipynb")
    assert main(["nbgrader", str(tmp_path / "c"), "--source", str(bare)]) == 2
    err = capsys.readouterr().err
    assert "nothing to grade" in err and "Traceback" not in err


def test_regenerating_follows_an_edited_lesson(tmp_path):
    source = tmp_path / "lessons"
    source.mkdir()
    lesson = graded_lessons("en")[0]
    nb = nbformat.read(lesson.path, as_version=4)
    solution = nb.cells[lesson.exercises[0].solution_cell]
    solution.source = solution.source.replace("```python\n", "```python\nanswer_was_edited = 1\n")
    nbformat.write(nb, source / lesson.path.name)
    course = tmp_path / "course"
    assert main(["nbgrader", str(course), "--source", str(source)]) == 0
    written = nbformat.read(course / "source" / assignment_name(lesson) / lesson.path.name, 4)
    assert "answer_was_edited = 1" in "".join(c.source for c in written.cells)


# --- what the assignment says, and what it holds back -------------------------------

def markdown_of(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_assignment_says_how_its_checks_work(lang):
    """The released check only asks whether an answer is there, and the folded
    solutions are left out: no assignment says that its check grades on the spot
    or that a solution is folded under it, and every sentence the exporter
    replaces is still found in some lesson (an edited lesson shows up here)."""
    lessons = graded_lessons(lang)
    lesson_text = "\n".join(t for lesson in lessons for t in markdown_of(lesson.notebook))
    for said, _instead in SENTENCES[lang]:
        assert said in lesson_text, f"{lang}: no lesson says {said!r} any more"
    for lesson in lessons:
        text = "\n".join(markdown_of(to_nbgrader(lesson)))
        left = [words for words in LESSON_ONLY[lang] if words in text]
        assert not left, f"{lang}/{lesson.name}: the assignment still says {left}"
    lesson3 = next(lesson for lesson in lessons if lesson.number == 3)
    task = next(c.source for c in to_nbgrader(lesson3).cells if c.get("id") == "cell-09")
    assert SENTENCES[lang][3][1] in task


def cell_by_id(nb, cell_id):
    return next(c for c in nb.cells if c.get("id") == cell_id)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_cell_that_gives_an_answer_away_is_held_or_folded(lang):
    lesson = read_lesson((LESSONS if lang == "en" else LESSONS / lang)
                         / "03_backward_and_chain_rule.ipynb")
    released = to_nbgrader(lesson)
    held = cell_by_id(released, "cell-12").source
    assert held.startswith(HELD_NOTE[lang]) and "with held_until_graded() as show:" in held
    assert held.endswith("    show(h.grad, w.grad, x.grad)")
    spelled = cell_by_id(released, "cell-14").source
    assert spelled.startswith(f"<details><summary>{html.escape(FOLD_SUMMARY[lang])}</summary>")
    assert cell_by_id(lesson.notebook, "cell-14").source.strip() in spelled
    untouched = cell_by_id(released, "l3-once").source
    assert untouched == cell_by_id(lesson.notebook, "l3-once").source


def test_held_cell_shows_the_answer_only_when_graded(monkeypatch, capsys):
    """The released cell runs as nbgrader and a learner would run it: before
    grading it shows nothing (not even whether an answer is right); when
    nbgrader grades, it shows what the lesson's cell showed."""
    import autograd_kit as ak
    lesson = read_lesson(LESSONS / "03_backward_and_chain_rule.ipynb")
    source = cell_by_id(to_nbgrader(lesson), "cell-12").source
    for graded in (False, True):
        if graded:
            monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
        else:
            monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        w = ak.tensor(2.0, requires_grad=True)
        x = ak.tensor(1.5, requires_grad=True)
        h = w * x
        ns = {"w": w, "x": x, "h": h, "L": h ** 2 - h, "my_w_grad": 0.0}
        exec(compile(source, "cell-12", "exec"), ns)
        assert w.grad.item() == 7.5                        # the code ran either way
        out = capsys.readouterr().out
        assert out == ("(tensor(5.), tensor(7.5000), tensor(10.))\n" if graded else "")


@pytest.mark.parametrize("source, words", [
    ("%autograd_step N", "plain Python"),
    ('text = """two\nlines"""\ntext', "spans lines"),
])
def test_a_cell_that_cannot_be_held_is_refused_by_name(source, words):
    with pytest.raises(ValueError, match=words) as err:
        held_code(source, "en", "03_x.ipynb, cell 7")
    assert "cell 7" in str(err.value)


def test_a_held_cell_keeps_what_ipython_would_show():
    assert held_code("a = 1\na;", "en").endswith("    a;")          # ; shows nothing
    assert held_code("(a,\n b)  # pair", "en").endswith("    show((a,\n     b))  # pair")
    assert held_code("for i in []:\n    pass", "en").endswith("    for i in []:\n        pass")


# --- the round trip through nbgrader --------------------------------------------------

def replace_ellipsis(source: str, replacement: str) -> str:
    """The learner's cell with every ``...`` token replaced (not ``"..."`` in strings)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    for tok in reversed(tokens):
        if tok.type == tokenize.OP and tok.string == "...":
            (row, col), (_, end) = tok.start, tok.end
            line = lines[row - 1]
            lines[row - 1] = line[:col] + replacement + line[end:]
    return "".join(lines)


def nbgrader_api(course: Path):
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    config.Execute.timeout = 300
    config.Exchange.root = str(course / "exchange")
    return NbGraderAPI(config=config)


def answered(source: str, exercise, kind: str) -> str:
    """The learner's cell after giving a 'right' or 'wrong' answer ('open': as it is)."""
    if kind == "right":
        return exercise.solution
    if kind == "wrong":
        return replace_ellipsis(source, WRONG_ANSWER)
    return source


def lesson_says(lesson, answers) -> dict[int, str]:
    """What each check of the lesson itself prints, run with the same answers."""
    from nbclient import NotebookClient
    nb = copy.deepcopy(lesson.notebook)
    for ex in lesson.exercises:
        cell = nb.cells[ex.answer_cell]
        cell.source = answered(cell.source, ex, answers[ex.number])
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(lesson.path.parent)}}).execute()
    return {ex.number: said_by(nb.cells[ex.check_cell]) for ex in lesson.exercises}


def said_by(cell) -> str:
    """The sentence a check cell showed (as HTML with a plain-text copy, in a
    notebook) or printed."""
    return "".join("".join(o.get("data", {}).get("text/plain", "")) + o.get("text", "")
                   for o in cell.outputs if o.get("name") == "stdout"
                   or o.get("output_type") == "display_data").strip()


def submit(course: Path, assignment: str, student: str, notebook: str, lesson, answers):
    """Hand in the released notebook with exercise ``k``'s cell set by ``answers[k]``:
    'open' leaves it as released, 'right' puts the folded solution in, 'wrong' an answer
    that is never right."""
    nb = nbformat.read(course / "release" / assignment / notebook, as_version=4)
    for cell in nb.cells:
        meta = nbg(cell)
        if not meta.get("solution"):
            continue
        k = int(meta["grade_id"].split("-")[1])
        cell.source = answered(cell.source, lesson.exercises[k - 1], answers[k])
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / notebook)


def scores(api, assignment: str, student: str, notebook: str) -> dict[int, float]:
    with api.gradebook as gb:
        sub = gb.find_submission_notebook(notebook, assignment, student)
        return {int(g.name.split("-")[1]): g.score for g in sub.grades}


def graded_errors(course: Path, assignment: str, student: str, notebook: str) -> dict[int, str]:
    """The message each failing test cell showed, by exercise number."""
    nb = nbformat.read(course / "autograded" / student / assignment / notebook, as_version=4)
    found = {}
    for cell in nb.cells:
        if nbg(cell).get("grade"):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            if errors:
                found[int(nbg(cell)["grade_id"].split("-")[1])] = errors[0].evalue
    return found


KINDS = ("right", "wrong", "open")


def round_trip_plans(n: int) -> dict[str, dict[int, str]]:
    """Which answer each simulated student gives to exercises 1..n: student j
    answers exercise k with ``KINDS[(k + j) % 3]``, so across the three students
    every exercise is handed in right, wrong and untouched once."""
    return {f"student{j}": {k: KINDS[(k + j) % 3] for k in range(1, n + 1)}
            for j in range(3)}


def _round_trip_cases():
    """Every English lesson goes round; each edition sends the lesson with the
    most exercises round (what differs between editions is the language of the
    text and the sentences, not the grading), and every other lesson of an
    edition is generated as an assignment (``test_every_edition_lesson_becomes
    _an_assignment``)."""
    cases = []
    for lang in LANGUAGES:
        folder = LESSONS if lang == "en" else LESSONS / lang
        paths = lesson_files(folder)
        if lang != "en":
            paths = [max(paths, key=lambda p: len(read_lesson(p).exercises))]
        for path in paths:
            cases.append(pytest.param(lang, path, id=f"{lang}/{lesson_key(path.name)}"))
    return cases


def generated(tmp_path, lang, path):
    """The lesson made into an nbgrader assignment and released: (lesson, course
    folder, nbgrader's API, assignment name, notebook name)."""
    lesson = read_lesson(path)
    course = tmp_path / "course"
    assert main(["nbgrader", str(course), "--lang", lang, "--lessons", lesson.key,
                 "--source", str(LESSONS)]) == 0
    api = nbgrader_api(course)
    assignment, notebook = released(api, course, lesson)
    return lesson, course, api, assignment, notebook


def released(api, course, lesson):
    """Generate the lesson's assignment; check what a learner is handed."""
    assignment, notebook = assignment_name(lesson), lesson.path.name
    result = api.generate_assignment(assignment)
    assert result["success"], f"{lesson.path}: " + str(result["log"])
    handed = nbformat.read(course / "release" / assignment / notebook, as_version=4)
    learner_cells = [c.source.rstrip("\n") for c in handed.cells if nbg(c).get("solution")]
    assert learner_cells == [lesson.notebook.cells[ex.answer_cell].source.rstrip("\n")
                             for ex in lesson.exercises], f"{lesson.path}: the learner's cells"
    assert "BEGIN SOLUTION" not in str(handed) and "BEGIN HIDDEN TESTS" not in str(handed)
    return assignment, notebook


@pytest.mark.nbgrader
@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_edition_lesson_becomes_an_assignment(tmp_path, lang):
    """One course of every lesson of the edition, each generated and released."""
    pytest.importorskip("nbgrader")
    course = tmp_path / "course"
    assert main(["nbgrader", str(course), "--lang", lang, "--source", str(LESSONS)]) == 0
    api = nbgrader_api(course)
    lessons = graded_lessons(lang)
    assert [lesson.key for lesson in lessons] == [lesson.key for lesson in graded_lessons("en")]
    for lesson in lessons:
        released(api, course, lesson)


@pytest.mark.nbgrader
@pytest.mark.parametrize("lang, path", _round_trip_cases())
def test_nbgrader_round_trip(tmp_path, lang, path):
    pytest.importorskip("nbgrader")
    if not read_lesson(path).exercises:
        pytest.skip("this lesson has no exercise")      # the index
    lesson, course, api, assignment, notebook = generated(tmp_path, lang, path)

    plans = round_trip_plans(len(lesson.exercises))
    for student, answers in plans.items():
        submit(course, assignment, student, notebook, lesson, answers)
        result = api.autograde(assignment, student, force=True, create=True)
        assert result["success"], result["log"]
        got = scores(api, assignment, student, notebook.removesuffix(".ipynb"))
        want = {k: POINTS if kind == "right" else 0 for k, kind in answers.items()}
        assert got == want, f"{student}: points per exercise {got}, expected {want}"
        with api.gradebook as gb:
            total = gb.find_submission(assignment, student).score
        assert total == sum(want.values())
        errors = graded_errors(course, assignment, student, notebook)
        assert set(errors) == {k for k, kind in answers.items() if kind != "right"}
        with i18n.language(lang):
            open_words = i18n._("{title}: not answered yet. Replace the ... in the exercise "
                                "cell with your answer, run that cell, then run this one "
                                "again.").split("{title}")[1][:12]
        for k, kind in answers.items():
            if kind == "open":
                assert open_words in errors[k]
            elif kind == "wrong":
                assert open_words not in errors[k] and errors[k].strip()

    shown = "student0"  # (right, wrong, untouched, right...: each kind where there are 3)
    result = api.generate_feedback(assignment, shown)
    assert result["success"], result
    feedback = (course / "feedback" / shown / assignment / notebook.replace(".ipynb", ".html"))
    text = html.unescape(re.sub(r"<[^>]+>", "", feedback.read_text(encoding="utf-8")))
    graded = graded_errors(course, assignment, shown, notebook)
    for message in graded.values():     # shown in lines that fit the page
        assert re.sub(r"\s", "", message.splitlines()[0]) in re.sub(r"\s", "", text)
    # the sentence a wrong answer costs its points with is the one the lesson prints
    printed = lesson_says(lesson, plans[shown])
    for k, kind in plans[shown].items():
        if kind == "right":
            assert k not in graded and printed[k]
        else:
            assert graded[k] == printed[k], f"exercise {k}"
    shutil.rmtree(tmp_path, ignore_errors=True)


# --- handing the assignment out by hand ------------------------------------------------

def nbgrader_cli(course: Path, *args: str) -> str:
    """``nbgrader ARGS`` in the course folder, as a teacher types it; its output."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                 os.environ.get("PATH", "")]))
    env.pop("NBGRADER_EXECUTION", None)
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout + run.stderr


def run_as_a_learner(nb, folder: Path) -> None:
    """Run a notebook top to bottom as a learner would (errors and all)."""
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                   allow_errors=True, resources={"metadata": {"path": str(folder)}}).execute()


@pytest.mark.nbgrader
def test_handing_out_release_by_hand(tmp_path):
    """The README's route without the exchange: hand out ``release/lessonNN``,
    put each returned notebook into ``submitted/<student>/lessonNN/``, autograde,
    generate the feedback and hand back ``feedback/<student>/lessonNN/*.html``
    (``release_feedback`` is the exchange's: it needs the secret that ``nbgrader
    submit`` writes).  On the way: the released notebook run untouched shows no
    answer in the cells held until grading, and the feedback shows them."""
    pytest.importorskip("nbgrader")
    readme = (LESSONS.parent / "README.md").read_text(encoding="utf-8")
    teaching = readme.split("## Teaching a class", 1)[1].split("\n## ", 1)[0]
    assert "submitted/<student>/lesson03/" in teaching
    assert "feedback/<student>/lesson03/" in teaching

    lesson = read_lesson(LESSONS / "03_backward_and_chain_rule.ipynb")
    course = tmp_path / "course"
    assert main(["nbgrader", str(course), "--lessons", "3", "--source", str(LESSONS)]) == 0
    nbgrader_cli(course, "generate_assignment", "lesson03")
    handed_out = course / "release" / "lesson03" / lesson.path.name

    # the learner runs it before answering: the held cells show nothing
    untouched = nbformat.read(handed_out, as_version=4)
    run_as_a_learner(untouched, handed_out.parent)
    held = [c for c in untouched.cells if c.cell_type == "code" and "held_until_graded" in c.source]
    assert len(held) == 2 and all(c.outputs == [] for c in held)

    # ... answers, and hands the notebook back by hand
    answered_nb = nbformat.read(handed_out, as_version=4)
    for cell in answered_nb.cells:
        if nbg(cell).get("solution"):
            k = int(nbg(cell)["grade_id"].split("-")[1])
            cell.source = lesson.exercises[k - 1].solution
    returned = course / "submitted" / "alice" / "lesson03"
    returned.mkdir(parents=True)
    nbformat.write(answered_nb, returned / lesson.path.name)

    nbgrader_cli(course, "autograde", "lesson03")
    nbgrader_cli(course, "generate_feedback", "lesson03")
    feedback = course / "feedback" / "alice" / "lesson03" / lesson.path.with_suffix(".html").name
    page = feedback.read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    n = len(lesson.exercises)
    assert f"{n * POINTS:.1f} / {n * POINTS:.1f}" in text          # full points
    assert "(tensor(5.), tensor(7.5000), tensor(10.))" in text      # held until now
    graded = nbformat.read(course / "autograded" / "alice" / "lesson03" / lesson.path.name, 4)
    for cell in graded.cells:          # the lines the exporter wrote fit the feedback page
        written = [] if "held_until_graded" not in cell.source else \
            [line for line in cell.source.splitlines() if not line.startswith("    ")]
        if nbg(cell).get("grade"):
            written = cell.source.splitlines()
        assert all(len(line) <= 64 for line in written), cell.source
