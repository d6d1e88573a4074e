"""Lesson 15's exercise (``safe_sqrt``): right answers pass, the open cell says
open, and every cheap wrong answer a learner would try gets "not quite" with the
misconception it shows.

Each answer is checked a few times, because the check draws new random inputs
on every call (exact zeros and negatives are always among them, tiny positives
and huge numbers too, in float32 and float64)."""
from __future__ import annotations

import pytest

import autograd_kit as ak
from autograd_kit import exercises
from autograd_kit.autograd import Function

KEY = "lesson15.ex1"
RUNS = 3


def said(capsys, answer) -> str:
    exercises.grade(KEY, {"safe_sqrt": answer})
    return capsys.readouterr().out


# --- right answers ---------------------------------------------------------------------------
def double_where(x):
    positive = x > 0
    harmless = ak.where(positive, x, 1.0)
    return ak.where(positive, harmless.sqrt(), 0.0)


def relu_then_root(x):
    # relu's backward writes 0 where x <= 0 (it does not multiply by 0),
    # so the infinite slope of the root at 0 never reaches x
    return x.relu().sqrt()


def harmless_root_times_mask(x):
    positive = x > 0
    return ak.where(positive, x, 1.0).sqrt() * positive


def inner_where_with_zero(x):
    # sqrt(0) has an infinite slope, so the inner result's gradient is NaN where
    # x <= 0, but the inner where sends it to the constant 0.0, never to x
    positive = x > 0
    return ak.where(positive, ak.where(positive, x, 0.0).sqrt(), 0.0)


@pytest.mark.parametrize("answer", [double_where, relu_then_root, harmless_root_times_mask,
                                    inner_where_with_zero])
def test_right_answers_are_correct(capsys, answer):
    for _run in range(RUNS):
        out = said(capsys, answer)
        assert f": {exercises.RIGHT}." in out, out
        assert exercises.solved(KEY, {"safe_sqrt": answer})


# --- the cell left as it is -----------------------------------------------------------------
def test_the_untouched_cell_is_open(capsys):
    def safe_sqrt(x):
        positive = x > 0
        harmless = ...
        return ...
    out = said(capsys, safe_sqrt)
    assert exercises.OPEN in out and exercises.WRONG not in out


def test_a_missing_answer_is_open(capsys):
    exercises.grade(KEY, {})
    assert exercises.OPEN in capsys.readouterr().out


# --- cheap wrong answers ----------------------------------------------------------------------
class _RightForward(Function):
    """safe_sqrt's right values; each subclass gets its backward wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ak.where(x > 0, ak.where(x > 0, x, 1.0).sqrt(), 0.0)


class IgnoresUpstream(_RightForward):
    """A hand-written backward that forgets to multiply by g."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return ak.where(x > 0, 0.5 / ak.where(x > 0, x, 1.0).sqrt(), 0.0)


class WrongSlope(_RightForward):
    """A hand-written backward with 1 / sqrt(x) instead of 1 / (2 sqrt(x))."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ak.where(x > 0, 1.0 / ak.where(x > 0, x, 1.0).sqrt(), 0.0)


def nan_replaced_after(x):          # what nan_to_num would do: the value is fine
    y = x.sqrt()
    return ak.where(ak.isnan(y), 0.0, y)


WRONG = {
    # the single where: the root is taken of every element, 0 * NaN and 0 * inf are NaN
    "single where": (lambda x: ak.where(x > 0, x.sqrt(), 0.0), "NaN where x <= 0"),
    "masked_fill afterwards": (lambda x: x.sqrt().masked_fill(x <= 0, 0.0),
                               "NaN where x <= 0"),
    "NaN replaced afterwards": (nan_replaced_after, "NaN where x <= 0"),
    # clamp's slope at its boundary is 1, so the infinite slope at 0 gets through
    "clamp then root": (lambda x: x.clamp(min=0).sqrt(), "infinite at x = 0"),
    "abs then root": (lambda x: x.abs().sqrt(), "for some x <= 0 the result is not 0"),
    "epsilon added": (lambda x: (x + 1e-8).sqrt(), "NaN for some x <= 0"),
    "clamp plus epsilon": (lambda x: (x.clamp(min=0) + 1e-8).sqrt(),
                           "at x = 0 the result is not exactly 0"),
    "relu plus tiny epsilon": (lambda x: (x.relu() + 1e-30).sqrt(),
                               "at x = 0 the result is not exactly 0"),
    "detached": (lambda x: x.detach().relu().sqrt(), "not connected to x"),
    "plain root": (lambda x: x.sqrt(), "NaN for some x <= 0"),
    "hard-coded tensor": (lambda x: ak.tensor([0.0, 0.0, 2.0]), "shape of x"),
    "hard-coded, right shape": (lambda x: ak.ones(x.shape), "square root of x"),
    "input ignored": (lambda x: ak.zeros(x.shape, requires_grad=True), "square root of x"),
    "a number": (lambda *a, **k: 123.0, "should return a tensor"),
    "upstream gradient ignored": (IgnoresUpstream.apply, "upstream gradient"),
    "wrong slope": (WrongSlope.apply, "1 / (2 sqrt(x))"),
}


@pytest.mark.parametrize("name", list(WRONG))
def test_cheap_wrong_answers_are_not_quite(capsys, name):
    answer, words = WRONG[name]
    for _run in range(RUNS):
        out = said(capsys, answer)
        assert f": {exercises.WRONG}: " in out, f"{name}: {out}"
        assert words in out, f"{name}: expected {words!r} in {out}"
        assert not exercises.solved(KEY, {"safe_sqrt": answer})


def test_not_a_function_is_named(capsys):
    out = said(capsys, 1.5)
    assert exercises.WRONG not in out or "function" in out
    assert not exercises.solved(KEY, {"safe_sqrt": 1.5})


def test_a_graded_cell_raises_for_a_wrong_answer_and_not_for_a_right_one():
    with pytest.raises(exercises.ExerciseNotSolved):
        exercises.grade(KEY, {"safe_sqrt": WRONG["single where"][0]}, graded=True)
    exercises.grade(KEY, {"safe_sqrt": double_where}, graded=True)


def test_the_check_leaves_its_own_inputs_alone_and_the_answer_in_place():
    ns = {"safe_sqrt": double_where}
    exercises.grade(KEY, ns)
    assert ns == {"safe_sqrt": double_where}


def test_feedback_never_shows_the_answer(capsys):
    """The sentences name the misconception; none of them holds the fix's code."""
    from autograd_kit.exercises import lesson15 as checks
    import inspect
    source = inspect.getsource(checks)
    sentences = [s for s in source.split('N_("')[1:]]
    assert sentences
    for s in sentences:
        assert "where(" not in s and "relu(" not in s, s
