"""What an assignment says where its lesson says something else.

An assignment is its lesson with two differences a learner must be told about:
the check cell only asks whether an answer is there (whether it is right is
decided when the work is graded), and the folded solutions are left out.  The
lesson's own sentences about checks and solutions are therefore replaced, in each
language, by :data:`SENTENCES`: the lessons stay the one source, and no lesson
is edited to say what only its assignment needs.

A lesson cell tagged :data:`REVEALS` gives an exercise's answer away (the
engine's result right after an exercise that asks to predict it, or text that
spells the answer out).  In the assignment such a code cell still runs, since
later cells may use what it computes, but inside
:func:`autograd_kit.exercises.held_until_graded`, so what it shows appears only
when the work is graded, in the feedback (:func:`held_code`); such a text cell
is folded away under a line that says what it holds (:func:`folded_text`).
"""
from __future__ import annotations

import ast
import html
import io
import tokenize

#: the tag of a lesson cell that gives an exercise's answer away
REVEALS = "reveals-answer"

_EN_ONLY_THERE = (" (in this assignment it only says whether an answer is there; whether "
                  "it is right is checked when your work is graded)")
_ZH_ONLY_THERE = "（在这份作业中，它只告诉你是否已经作答；答案是否正确要在批改作业时检查）"
_RU_ONLY_THERE = (" (в этом задании она говорит только, есть ли ответ; верен ли он, "
                  "проверяется при оценке работы)")

#: ``(what the lessons say, what the assignment says instead)``, per language,
#: replaced in this order in every markdown cell (a longer sentence before a
#: phrase it holds).  ``tests/test_course_nbgrader.py`` checks that each one is
#: still found in some lesson, and that nothing about folded solutions is left.
SENTENCES: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("**Exercises** come in three cells:", "**Exercises** come in two cells:"),
        ("a check cell, which says in a sentence whether the answer is *correct*, *not "
         "quite* (with what is wrong and a hint), or *not answered yet*; and a folded "
         "**Solution** to open once you have tried. Run untouched, a lesson shows its "
         "exercises as not answered yet and carries on.",
         "a check cell, which in this assignment only says whether an answer is there "
         "(whether it is right is checked when your work is graded, and your feedback says "
         "so in a sentence, with a hint when it is not). Run untouched, a check cell says "
         "*not answered yet*."),
        ("then run the check under it. Try a wrong number first to see what the check says.",
         "then run the check under it" + _EN_ONLY_THERE + "."),
        ("and run the check below it.", "and run the check below it" + _EN_ONLY_THERE + "."),
        ("The check says whether the answer is right and, if not, gives a hint.",
         "In this assignment the check only says whether an answer is there; whether it is "
         "right is checked when your work is graded, and your feedback says so, with a hint "
         "when it is not."),
        (" A solution is folded away under each check.", ""),
        ("The check calls your `backward`, runs `gradcheck` on float64 inputs and says in "
         "words what is wrong, if anything. A folded solution follows each check; try first.",
         "When your work is graded, the check calls your `backward`, runs `gradcheck` on "
         "float64 inputs, and your feedback says in words what is wrong, if anything."),
    ],
    "zh": [
        ("**练习**由三个单元格组成：", "**练习**由两个单元格组成："),
        ("一个检查单元格，它会用一句话告诉你答案*正确*、*还不对*（并指出错在哪里、给出提示），"
         "还是*尚未作答*；以及一个折叠起来的**参考答案**，等你尝试过之后再打开。"
         "如果不做任何改动直接运行，课程会把练习显示为尚未作答，然后继续往下执行。",
         "一个检查单元格，在这份作业中它只告诉你是否已经作答（答案是否正确要在批改作业时检查，"
         "你的反馈会用一句话说明，答案不对时还会给出提示）。"
         "如果不做任何改动直接运行，检查单元格会告诉你*尚未作答*。"),
        ("再运行它下面的检查单元格。不妨先故意填一个错误的数，看看检查会说什么。",
         "再运行它下面的检查单元格" + _ZH_ONLY_THERE + "。"),
        ("再运行它下面的检查单元格。", "再运行它下面的检查单元格" + _ZH_ONLY_THERE + "。"),
        ("检查会告诉你答案是否正确，如果不对，还会给出提示。",
         "在这份作业中，检查只告诉你是否已经作答；答案是否正确要在批改作业时检查，"
         "你的反馈会说明这一点，答案不对时还会给出提示。"),
        ("每个检查下方都折叠着一份参考答案。", ""),
        ("每个检查下面都折叠着一份参考答案。", ""),
        ("检查会调用你的 `backward`，在 float64 输入上运行 `gradcheck`，如果有错，"
         "会用文字说明错在哪里。每个检查之后都折叠着一份参考答案；请先自己尝试。",
         "批改作业时，检查会调用你的 `backward`，在 float64 输入上运行 `gradcheck`，"
         "你的反馈会用文字说明错在哪里（如果有错）。"),
    ],
    "ru": [
        ("состоят из трёх ячеек:", "состоят из двух ячеек:"),
        ("ячейка проверки, которая отвечает одной фразой: *верно*, *пока неверно* (с "
         "объяснением, что не так, и подсказкой) или *ответа пока нет*; и свёрнутое "
         "**решение**, которое стоит открыть после своей попытки. Если ничего не трогать, "
         "урок показывает упражнения как ещё не решённые и идёт дальше.",
         "ячейка проверки, которая в этом задании говорит только, есть ли ответ (верен ли "
         "он, проверяется при оценке работы, и ваш отзыв скажет об этом одной фразой, с "
         "подсказкой, если ответ неверен). Если ничего не трогать, проверка скажет, что "
         "*ответа пока нет*."),
        ("а затем — проверку под ней. Сначала попробуйте неверное число, чтобы увидеть, что "
         "скажет проверка.", "а затем — проверку под ней" + _RU_ONLY_THERE + "."),
        ("и выполните проверку под ней.", "и выполните проверку под ней" + _RU_ONLY_THERE + "."),
        ("Проверка скажет, верен ли ответ, а если нет — даст подсказку.",
         "В этом задании проверка говорит только, есть ли ответ; верен ли он, проверяется "
         "при оценке работы, и об этом скажет ваш отзыв — с подсказкой, если ответ неверен."),
        (" Под каждой проверкой спрятано решение.", ""),
        ("Проверка вызывает ваш `backward`, запускает `gradcheck` на входах во float64 и "
         "словами сообщает, что не так, если что-то не так. После каждой проверки спрятано "
         "решение; сначала попробуйте сами.",
         "При оценке работы проверка вызывает ваш `backward`, запускает `gradcheck` на "
         "входах во float64, и ваш отзыв словами сообщит, что не так, если что-то не так."),
    ],
}

#: words that only the lessons may say (a check that grades on the spot, a folded
#: solution): none of them is left in an assignment's text
LESSON_ONLY: dict[str, tuple[str, ...]] = {
    "en": ("come in three cells", "folded away", "folded solution", "folded **Solution**",
           "gives a hint.", "Try a wrong number",
           "shows its exercises as not answered yet"),
    "zh": ("由三个单元格组成", "折叠着一份参考答案", "折叠起来的**参考答案**", "看看检查会说什么",
           "课程会把练习显示为尚未作答", "检查会告诉你答案是否正确"),
    "ru": ("из трёх ячеек", "спрятано решение", "свёрнутое **решение**", "что скажет проверка",
           "показывает упражнения как ещё не решённые", "Проверка скажет, верен ли ответ"),
}

#: the first lines of a held code cell
HELD_NOTE = {
    "en": "# Its output would give an exercise's answer away: the cell\n"
          "# runs, but shows it only in your feedback, after grading.",
    "zh": "# 它的输出会泄露某道练习的答案：单元格照常运行，\n"
          "# 但输出只在作业批改之后的反馈中显示。",
    "ru": "# Вывод этой ячейки выдал бы ответ к упражнению: она\n"
          "# выполняется, но вывод виден только в отзыве после оценки.",
}

#: the line a folded text cell shows
FOLD_SUMMARY = {
    "en": "This text gives an exercise's answer away: open it once you have answered",
    "zh": "这段文字会泄露某道练习的答案：作答之后再打开",
    "ru": "Этот текст выдаёт ответ к упражнению: откройте его, когда ответите",
}


def for_assignment(markdown: str, lang: str) -> str:
    """A lesson's markdown as the assignment says it (:data:`SENTENCES`)."""
    for said, instead in SENTENCES[lang]:
        markdown = markdown.replace(said, instead)
    return markdown


def folded_text(markdown: str, lang: str) -> str:
    """A text cell that gives an answer away, folded under :data:`FOLD_SUMMARY`."""
    return (f"<details><summary>{html.escape(FOLD_SUMMARY[lang])}</summary>\n\n"
            f"{markdown.strip()}\n\n</details>")


def _shown(lines: list[str], last: ast.Expr) -> list[str]:
    """The lines with the cell's last expression ``E`` written ``show(E)``: what
    IPython would show as the cell's result is shown the same way (unless a
    ``;`` after it asked IPython to show nothing)."""
    first, end = last.lineno - 1, last.end_lineno - 1
    head = lines[first].encode()[:last.col_offset].decode()
    tail = lines[end].encode()[last.end_col_offset:].decode()
    if tail.strip().startswith(";"):
        return lines
    expr = ast.get_source_segment("\n".join(lines), last)
    return lines[:first] + f"{head}show({expr}){tail}".split("\n") + lines[end + 1:]


def held_code(source: str, lang: str, where: str = "") -> str:
    """A code cell that gives an answer away, as the assignment runs it: the same
    code inside ``with held_until_graded() as show:``, its last expression shown
    with ``show(...)`` (an expression inside a block is not a cell's result).

    Only plain Python can be held, and no string may span lines (indenting the
    code would change it): anything else is a ValueError naming ``where``."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError) as err:
        raise ValueError(f"{where}: a cell tagged {REVEALS} must be plain Python ({err})") \
            from None
    if any(t.type == tokenize.STRING and t.start[0] != t.end[0] for t in tokens):
        raise ValueError(f"{where}: a cell tagged {REVEALS} may not hold a string that "
                         "spans lines")
    lines = source.rstrip("\n").split("\n")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        lines = _shown(lines, tree.body[-1])
    body = "\n".join(f"    {line}" if line.strip() else "" for line in lines)
    if not tree.body:
        body = "    pass"
    return (f"{HELD_NOTE[lang]}\nfrom autograd_kit.exercises import held_until_graded\n"
            f"with held_until_graded() as show:\n{body}")
