"""The exercise checker, and the exercises of every lesson.

Part 1 tests ``autograd_kit.exercises`` itself: what ``check`` prints for an open,
a wrong and a right answer, and what ``backward_problem`` says about a custom
Function's backward.  Part 2 reads the lesson notebooks, English and the Chinese
and Russian editions: the three-cell convention holds (the check cell's source
folded away), an untouched run shows every exercise open, and the folded
solutions, swapped into their exercise cells, make every check answer "correct".
"""
from __future__ import annotations

import contextlib
import io
import math
import re
from pathlib import Path

import nbformat
import pytest

import autograd_kit as ak
from autograd_kit import exercises, i18n
from autograd_kit.autograd import Function
from autograd_kit.course.lessons import lesson_files, lesson_key
from autograd_kit.exercises import backward_problem, check, mismatch

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_PATHS = lesson_files(LESSONS)
LANGUAGES = ("en", "zh", "ru")
#: every lesson in every language: the English ones, then each edition's
ALL_LESSON_PATHS = LESSON_PATHS + [p for lang in LANGUAGES[1:]
                                   for p in lesson_files(LESSONS / lang)]
FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


def said(capsys, *args, **kwargs) -> str:
    """What ``check(*args, **kwargs)`` prints (it must return None and never raise)."""
    assert check(*args, **kwargs) is None
    return capsys.readouterr().out


# --- check: open, wrong, right --------------------------------------------------------

@pytest.mark.parametrize("answer", [..., [1.0, ...], (..., 2), {"a": ...}])
def test_an_answer_holding_ellipsis_is_open(capsys, answer):
    out = said(capsys, "Ex", answer, 3.0, hint="never shown")
    assert out.startswith(f"Ex: {exercises.OPEN}.")
    assert "Replace the ..." in out and "never shown" not in out


def test_a_wrong_number_is_named_with_the_hint(capsys):
    out = said(capsys, "Ex", 2.0, 2.5, hint="what multiplies width?")
    assert out.startswith(f"Ex: {exercises.WRONG}:")
    assert "2.0 is not the right value" in out and "Hint: what multiplies width?" in out
    assert exercises.RIGHT + "." not in out.replace(exercises.WRONG, "")


def test_a_right_number_says_correct_and_why(capsys):
    out = said(capsys, "Ex", 2.5 + 1e-9, 2.5, why="It is the height.", hint="never shown")
    assert out == f"Ex: {exercises.RIGHT}. It is the height.\n"


def test_tolerance_is_relative_or_absolute():
    assert mismatch(1000.0005, 1000.0) is None                 # relative
    assert mismatch(1e-7, 0.0) is None                         # absolute
    assert mismatch(1.01, 1.0) is not None
    assert mismatch(1.01, 1.0, tol=0.1) is None


def test_tensors_compare_element_by_element(capsys):
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert "correct" in said(capsys, "Ex", x.grad, [2.0, 4.0])
    assert "correct" in said(capsys, "Ex", [2.0, 4.0], x.grad)
    out = said(capsys, "Ex", x.grad, [2.0, 5.0])
    assert exercises.WRONG in out and "[2.0, 4.0] is not the right value" in out


def test_tensors_compare_against_pytorch_values(capsys):
    torch = pytest.importorskip("torch")
    xt = torch.tensor([[0.5, -1.0], [2.0, 3.0]], requires_grad=True)
    (xt.tanh() * xt).sum().backward()
    xa = ak.tensor([[0.5, -1.0], [2.0, 3.0]], requires_grad=True)
    (xa.tanh() * xa).sum().backward()
    assert "correct" in said(capsys, "Ex", xa.grad, xt.grad.numpy(), tol=1e-5)


@pytest.mark.parametrize("answer, expected, words", [
    ([1.0, 2.0, 3.0], [[1.0, 2.0, 3.0]], "the shape is (3,), but it should be (1, 3)"),
    (5.0, [1.0, 2.0], "a single value (5.0) was given where 2 values were expected"),
    ([1.0, 2.0], 3.0, "2 values were given where one value was expected"),
    (1, True, "the answer should be True or False, not 1"),
])
def test_shapes_and_kinds_are_said_in_words(capsys, answer, expected, words):
    out = said(capsys, "Ex", answer, expected)
    assert exercises.WRONG in out and words in out


def test_a_wrong_tensor_shape_names_both_shapes(capsys):
    out = said(capsys, "Ex", ak.ones(2, 3), ak.ones(3, 2).tolist())
    assert "the shape is (2, 3), but it should be (3, 2)" in out


def test_strings_ignore_case_and_blanks(capsys):
    assert "correct" in said(capsys, "Ex", "  MulBackward0 ", "mulbackward0")
    assert exercises.WRONG in said(capsys, "Ex", "AddBackward0", "MulBackward0")


def test_a_test_function_decides(capsys):
    def even(n):
        return None if n % 2 == 0 else f"{n} is odd"
    assert said(capsys, "Ex", 4, test=even) == f"Ex: {exercises.RIGHT}.\n"
    out = said(capsys, "Ex", 3, test=even, hint="try 4")
    assert out == f"Ex: {exercises.WRONG}: 3 is odd. Hint: try 4\n"


def test_a_test_function_can_say_open(capsys):
    out = said(capsys, "Ex", 3, test=lambda n: exercises.OPEN)
    assert out.startswith(f"Ex: {exercises.OPEN}.")


def test_a_test_function_that_raises_is_reported_not_raised(capsys):
    def fragile(answer):
        return answer.no_such_attribute
    out = said(capsys, "Ex", 3, test=fragile)
    assert exercises.WRONG in out
    assert "checking it raised AttributeError" in out and "no_such_attribute" in out


# --- backward_problem: a custom Function's backward, in words ------------------------

def exp_function(backward, save=True):
    class MyExp(Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            if save:
                ctx.save_for_backward(result)
            return result
    MyExp.backward = staticmethod(backward)
    return MyExp


def saved(ctx):
    (result,) = ctx.saved_tensors
    return result


X = [-1.0, 0.5, 2.0]


def x64():
    return ak.tensor(X, dtype=ak.float64, requires_grad=True)


@pytest.mark.parametrize("backward, words", [
    (lambda ctx, g: (saved(ctx), ...)[1], exercises.OPEN),
    (lambda ctx, g: g * saved(ctx), None),
    (lambda ctx, g: (g * saved(ctx)).sum(),
     "the gradient for input 0 has shape [], but input 0 has shape [3]"),
    (lambda ctx, g: 2.0, "the gradient for input 0 is a float, not a tensor"),
    (lambda ctx, g: (g, g), "backward returned 2 gradient(s), but forward takes 1 input(s)"),
    (lambda ctx, g: None, "backward returned None for input 0, which requires a gradient"),
    (lambda ctx, g: 1 / 0, "calling backward raised ZeroDivisionError"),
])
def test_backward_problem_says_what_is_wrong(backward, words):
    problem = backward_problem(exp_function(backward), (x64(),))
    if words is None:
        assert problem is None
    else:
        assert problem is not None and words in problem


def test_forgetting_to_save_is_named():
    problem = backward_problem(exp_function(lambda ctx, g: g * saved(ctx), save=False), (x64(),))
    assert "forward saved nothing" in problem and "save_for_backward" in problem


def test_a_wrong_formula_is_located_with_both_numbers():
    # backward forgot to multiply by e^x: at x = 2 the Jacobian entry is off most
    problem = backward_problem(exp_function(lambda ctx, g: g * 1), (x64(),))
    assert "input 0" in problem and "at element [2] of input 0 (value 2)" in problem
    assert "d out[2] / d input0[2]" in problem
    numbers = [float(s) for s in re.findall(r"is (-?[\d.]+) by central differences, "
                                            r"but your backward gives (-?[\d.]+)", problem)[0]]
    assert numbers[0] == pytest.approx(math.exp(2.0), rel=1e-5)
    assert numbers[1] == pytest.approx(1.0)
    assert "3 of 9 Jacobian entries differ" in problem


def test_a_wrong_formula_for_the_second_input_names_it():
    class Div(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a / b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g / b, g * a / b ** 2          # sign slip in the second gradient
    a = ak.tensor([1.0, 2.0], dtype=ak.float64, requires_grad=True)
    b = ak.tensor([0.5, 4.0], dtype=ak.float64, requires_grad=True)
    problem = backward_problem(Div, (a, b))
    assert problem.startswith("gradcheck disagrees for input 1")
    # the worst entry is at b = 0.5: d(a/b)/db = -a / b**2 = -4
    # the argument (input 1) and the element ([0]) are named apart: "input1[0]"
    assert "at element [0] of input 1 (value 0.5)" in problem and "d input1[0]" in problem
    assert "is -4 by central" in problem and "gives 4" in problem


def test_backward_problem_through_check(capsys):
    fn = exp_function(lambda ctx, g: g * saved(ctx))
    out = said(capsys, "Ex", fn, test=lambda f: backward_problem(f, (x64(),)), why="Yes.")
    assert out == f"Ex: {exercises.RIGHT}. Yes.\n"
    fn = exp_function(lambda ctx, g: (saved(ctx), ...)[1])
    assert exercises.OPEN in said(capsys, "Ex", fn, test=lambda f: backward_problem(f, (x64(),)))


# --- how a sentence is shown -----------------------------------------------------------

def test_a_sentence_is_html_that_wraps_between_words_and_is_escaped():
    html = exercises.sentence_html("Ex: not quite: '<b>&' is not the right value. Hint: help")
    assert "white-space: pre-wrap" in html and "overflow-wrap: break-word" in html
    assert "word-break: normal" in html and "break-all" not in html
    assert "&#x27;&lt;b&gt;&amp;&#x27;" in html and "<b>" not in html


class FakeKernelShell:
    kernel = object()


def test_in_a_notebook_a_sentence_is_shown_as_html_with_the_same_plain_text(monkeypatch,
                                                                            capsys):
    import IPython
    import IPython.display
    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: FakeKernelShell())
    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, raw=False: shown.append((obj, raw)))
    check("Ex", 2.0, 2.5, hint="h")
    assert capsys.readouterr().out == ""
    (bundle, raw), = shown
    assert raw and bundle["text/plain"] == "Ex: not quite: 2.0 is not the right value. Hint: h"
    assert bundle["text/html"] == exercises.sentence_html(bundle["text/plain"])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_graded_sentence_is_raised_in_lines_that_fit(lang):
    """An error's text is shown as it is: a notebook breaks a long line anywhere,
    the feedback page cuts it at its edge.  So it comes in lines of at most 76
    columns, broken between words (or Chinese characters), nothing lost."""
    answers = {"my_dL_dh": 1.0, "my_w_grad": 2.0, "my_x_grad": 3.0}
    with i18n.language(lang), pytest.raises(exercises.ExerciseNotSolved) as err:
        exercises.grade("lesson03.ex1", answers, graded=True)
    lines = err.value._render_traceback_()
    assert len(lines) > 1 and all(exercises._columns(line) <= 76 for line in lines)
    assert all(line == line.strip() for line in lines)
    joined = "".join(lines) if lang == "zh" else " ".join(lines)
    assert re.sub(r"\s", "", joined) == re.sub(r"\s", "", f"ExerciseNotSolved: {err.value}")
    if lang != "zh":
        assert joined == f"ExerciseNotSolved: {err.value}"     # broken at blanks only


def test_wrapping_keeps_line_breaks_and_long_words():
    assert exercises.wrap_lines("a\n\nb") == ["a", "", "b"]
    assert exercises.wrap_lines("x" * 90 + " y", width=76) == ["x" * 90, "y"]
    assert exercises.wrap_lines("词" * 50 + "。", width=20)[0] == "词" * 10
    assert all(not line.startswith("。") for line in exercises.wrap_lines("词" * 10 + "。" * 2,
                                                                         width=20))


def held_cell(namespace):
    """What a lesson cell prints and shows inside ``held_until_graded``."""
    with exercises.held_until_graded() as show:
        print("the answer is", namespace["answer"])
        show(namespace["answer"], 2)


def test_held_output_is_shown_only_when_nbgrader_grades(monkeypatch, capsys):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    namespace = {"answer": 7.5}
    held_cell(namespace)
    assert capsys.readouterr().out == ""
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")      # nbgrader's Validate
    held_cell(namespace)
    assert capsys.readouterr().out == ""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    held_cell(namespace)
    assert capsys.readouterr().out == "the answer is 7.5\n(7.5, 2)\n"


def test_held_code_still_runs_and_raises(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ran = []
    with pytest.raises(ZeroDivisionError):
        with exercises.held_until_graded() as show:
            ran.append(1)
            show(None)
            raise ZeroDivisionError("the cell failed")
    assert ran == [1]


# --- the lessons: convention, stored outputs, solutions -----------------------------

def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def exercise_triples(nb):
    """(exercise, check, solution) cells, in order; asserts the convention."""
    cells = nb.cells
    triples = []
    for i, cell in enumerate(cells):
        if "exercise" not in tags(cell):
            continue
        assert cell.cell_type == "code", f"cell {i}: an exercise cell must be a code cell"
        assert i + 2 < len(cells), \
            f"cell {i}: an exercise must be followed by a check and a solution"
        chk, sol = cells[i + 1], cells[i + 2]
        assert chk.cell_type == "code" and "exercise-check" in tags(chk), \
            f"cell {i + 1} must be the exercise-check code cell of the exercise in cell {i}"
        assert sol.cell_type == "markdown" and "solution" in tags(sol), \
            f"cell {i + 2} must be the solution markdown cell of the exercise in cell {i}"
        triples.append((i, cell, chk, sol))
    return triples


def read(path):
    return nbformat.read(path, as_version=4)


def language_of(path) -> str:
    return path.parent.name if path.parent != LESSONS else "en"


def lesson_id(path):
    return f"{language_of(path)}/{lesson_key(path.name)}"


def solution_code(sol) -> str:
    fences = FENCE.findall(sol.source)
    assert len(fences) == 1, f"a solution holds exactly one python fence, found {len(fences)}"
    return fences[0]


def stdout_of(cell) -> str:
    """What a check cell said: its printed text, or the plain text of the sentence
    it showed as HTML (in a notebook, :func:`exercises.show_sentence`)."""
    said = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream" and o.get("name") == "stdout":
            said.append(o.get("text", ""))
        elif o.get("output_type") == "display_data" and "ak-check" in str(
                o.get("data", {}).get("text/html", "")):
            said.append("".join(o["data"]["text/plain"]) + "\n")
    return "".join(said)


@pytest.mark.parametrize("path", ALL_LESSON_PATHS, ids=lesson_id)
def test_exercise_convention_holds(path):
    nb = read(path)
    for k, (i, ex, chk, sol) in enumerate(exercise_triples(nb), 1):
        assert "..." in ex.source, f"{path.name} cell {i}: the exercise cell has no ... to replace"
        # the check lives in the package, named by lesson and exercise: the cell
        # holds no reference value and nothing a learner's code could redefine
        key = f"lesson{lesson_key(path.name)}.ex{k}"
        assert f'grade("{key}", globals())' in chk.source, \
            f"{path.name} cell {i + 1}: the check cell does not call grade({key!r}, globals())"
        # what a right answer prints (why) is the worked answer: the check's
        # source starts folded away in JupyterLab, so the learner sees the verdict
        assert chk.metadata.get("jupyter", {}).get("source_hidden") is True, \
            f"{lesson_id(path)} cell {i + 1}: the check cell's source is not collapsed"
        code = solution_code(sol)
        assert "..." not in code.replace('"..."', ""), \
            f"{path.name} cell {i + 2}: the solution still has ..."
        assert "<details>" in sol.source, f"{path.name} cell {i + 2}: the solution is not folded"
    # every tagged check and solution belongs to an exercise
    n = len(exercise_triples(nb))
    assert sum("exercise-check" in tags(c) for c in nb.cells) == n
    assert sum("solution" in tags(c) for c in nb.cells) == n


def open_words(lang: str) -> str:
    """How ``check`` says, in ``lang``, that an exercise is open: the first
    sentence after the exercise's title (``": not answered yet."``)."""
    marker = "\x00TITLE\x00"
    printed = io.StringIO()
    with i18n.language(lang), contextlib.redirect_stdout(printed):
        exercises.check(marker, ...)
    after_title = printed.getvalue().split(marker, 1)[1]
    return re.match(r"[^.。]*[.。]", after_title).group(0)


def test_open_words_are_in_each_language():
    assert open_words("en") == f": {exercises.OPEN}."
    assert len({open_words(lang) for lang in LANGUAGES}) == len(LANGUAGES)


@pytest.mark.parametrize("path", ALL_LESSON_PATHS, ids=lesson_id)
def test_stored_checks_show_the_exercises_open(path):
    lang = language_of(path)
    for i, _ex, chk, _sol in exercise_triples(read(path)):
        out = stdout_of(chk)
        assert open_words(lang) in out, (
            f"{lesson_id(path)} cell {i + 1}: the stored check output should say the exercise "
            f"is open, in {lang} (regenerate the lesson with its exercises untouched), got {out!r}")


WITH_EXERCISES = [p for p in LESSON_PATHS if exercise_triples(read(p))]


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=lesson_id)
@pytest.mark.slow  # (runs lessons in kernels: left out of the quick loop)
def test_solutions_make_every_check_correct(path):
    """Swap each folded solution into its exercise cell, run the lesson in a fresh
    kernel (this environment, from ``lessons/``) and read every check's answer.

    English lessons only: an edition's code cells and solution fences are the
    English ones token for token, comments and strings aside
    (``tests/test_editions.py``), so running them again would prove nothing new."""
    from nbclient import NotebookClient
    nb = read(path)
    triples = exercise_triples(nb)
    for _i, ex, _chk, sol in triples:
        ex.source = solution_code(sol)
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(LESSONS)}}).execute()
    for i, _ex, chk, _sol in triples:
        out = stdout_of(chk)
        assert f": {exercises.RIGHT}." in out and exercises.WRONG not in out, (
            f"{path.name} cell {i + 1}: with the solution in place the check says {out!r}")


# every lesson but the index has at least one exercise
@pytest.mark.parametrize("path", [p for p in LESSON_PATHS if not p.name.startswith("00")],
                         ids=lesson_id)
def test_every_lesson_has_an_exercise(path):
    assert exercise_triples(read(path)), (
        f"{path.name} has no exercise in the convention of autograd_kit/exercises "
        "(cells tagged exercise, exercise-check, solution)")


def test_a_chinese_hint_follows_the_full_stop_without_a_blank(capsys):
    with i18n.language("zh"):
        out = said(capsys, "Ex", 2.0, 2.5, hint="h")
    assert "。" in out and "。 " not in out
