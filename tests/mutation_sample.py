"""Does the suite catch a bug?  A sample of deliberate one-line bugs (mutants).

    python tests/mutation_sample.py                 # every mutant, with its tests
    python tests/mutation_sample.py --check         # only: each line is found once
    python tests/mutation_sample.py --only 3,7      # some of them
    python tests/mutation_sample.py --root DIR      # another checkout (an older suite)

Each mutant names one line of the kit (found by its text anywhere under
``autograd_kit/`` and ``widgets/``, so a module may move without the sample
changing), the line it becomes, and the tests that should notice.  The script
writes the mutant into the checkout, runs those tests (``-x``, in the files'
order, on every core), puts the line back, and counts the mutants the tests
killed (a failing run) and those that survived.  A survivor is a gap in the
suite; the counts, before and after a change to the suite, tell whether the
change lost anything.

The sample spans the formula tables, the engine's walk, gradient
accumulation, saved tensors, exercise checks, the course exporter, the
loader and the widgets.  It is a script, not a test: one run takes minutes.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Mutant:
    area: str
    line: str        # the exact text of the line (stripped of its indentation)
    becomes: str     # what it becomes (the indentation is kept)
    tests: tuple     # pytest arguments that should kill it
    where: str = ""  # part of the file's path, where the line occurs in several files
    also: str = ""   # the line as an older version of the kit spelt it
    also_becomes: str = ""  # and what that spelling becomes (the same bug)


G = ("tests/test_gradients.py",)
ENGINE = ("tests/test_engine.py", "tests/test_engine_paths_agree.py")
COURSE = ("tests/test_course_nbgrader.py", "-k", "not round_trip and not by_hand")
HOSTILE = ("tests/test_course_hostile.py",)
LOAD = ("tests/test_serialization_safety.py", "tests/test_nn.py")
EX = ("tests/test_exercises.py", "tests/test_exercise_cheats.py",
      "tests/test_exercises_written_code.py", "tests/test_exercises_lesson14.py",
      "tests/test_exercises_lesson15.py")
WIDGETS = ("tests/test_widgets.py",)

MUTANTS = [
    # -- formula tables -------------------------------------------------------------------
    Mutant("formulas", 'MulBackward0 = rule("MulBackward0", "self other", self="g * other", '
           'other="g * self")', 'MulBackward0 = rule("MulBackward0", "self other", '
           'self="g * other", other="g * other")', G),
    Mutant("formulas", 'SinBackward0 = rule("SinBackward0", "self", self="g * cos(self)")',
           'SinBackward0 = rule("SinBackward0", "self", self="g * sin(self)")', G),
    Mutant("formulas", 'CosBackward0 = rule("CosBackward0", "self", self="g * -sin(self)")',
           'CosBackward0 = rule("CosBackward0", "self", self="g * sin(self)")', G),
    Mutant("formulas", 'LogBackward0 = rule("LogBackward0", "self", self="g / self")',
           'LogBackward0 = rule("LogBackward0", "self", self="g * self")', G),
    Mutant("formulas", 'ExpBackward0 = rule("ExpBackward0", "result", self="g * result")',
           'ExpBackward0 = rule("ExpBackward0", "result", self="g")', G),
    Mutant("formulas", 'SqrtBackward0 = rule("SqrtBackward0", "result", '
           'self="g / mul_scalar(result, 2)")', 'SqrtBackward0 = rule("SqrtBackward0", '
           '"result", self="g / mul_scalar(result, 3)")', G),
    Mutant("formulas", 'AbsBackward0 = rule("AbsBackward0", "self", self="g * sgn(self)")',
           'AbsBackward0 = rule("AbsBackward0", "self", self="g")', G),
    Mutant("formulas", 'ReciprocalBackward0 = rule("ReciprocalBackward0", "result", '
           'self="-g * (result * result)")', 'ReciprocalBackward0 = rule("ReciprocalBackward0", '
           '"result", self="g * (result * result)")', G),
    Mutant("formulas", 'NegBackward0 = rule("NegBackward0", "", self="-g")',
           'NegBackward0 = rule("NegBackward0", "", self="g")', G),
    Mutant("formulas", 'RsqrtBackward0 = rule("RsqrtBackward0", "result", '
           'self="mul_scalar(g, -0.5) * result ** 3")', 'RsqrtBackward0 = rule('
           '"RsqrtBackward0", "result", self="mul_scalar(g, 0.5) * result ** 3")', G),
    Mutant("formulas", 'MmBackward0 = rule("MmBackward0", "self mat2", self="g @ t(mat2)",',
           'MmBackward0 = rule("MmBackward0", "self mat2", self="g @ mat2",', G),
    Mutant("formulas", 'DotBackward0 = rule("DotBackward0", "self other", self="g * other", '
           'other="g * self")', 'DotBackward0 = rule("DotBackward0", "self other", '
           'self="g * self", other="g * self")', G),
    # -- the engine's walk ----------------------------------------------------------------
    Mutant("engine", "if left == 0:", "if left <= 1:", ENGINE),
    Mutant("engine", "left = deps[nxt] - 1", "left = deps[nxt] - 2", ENGINE),
    Mutant("engine", "buffers[nxt] = [gi]", "buffers[nxt] = [gi + gi]", ENGINE),
    Mutant("engine", "buf.append(gi)", "pass", ENGINE),
    Mutant("engine", "if became_ready is None:", "if True:", ENGINE),
    Mutant("engine", "push(ready, (-nxt._seq, order, nxt))", "push(ready, (nxt._seq, order, nxt))",
           ENGINE),
    Mutant("engine", "if not retain_graph and node._holds_tensors:",
           "if False and node._holds_tensors:", ENGINE),
    Mutant("engine", "retain_graph = create_graph", "retain_graph = True", ENGINE),
    # -- accumulation and saved tensors ---------------------------------------------------
    Mutant("accumulate", "data += g._data", "data -= g._data", ENGINE + ("tests/test_tensor.py",)),
    Mutant("accumulate", "g += extra", "g -= extra", ENGINE),
    Mutant("accumulate", "extra += g", "extra += g + g", ENGINE),
    Mutant("saved", "if self.counter.value != self.version:",
           "if self.counter.value < self.version:", ("tests/test_inplace.py",)),
    Mutant("saved", "if t._vcounter is not None and t._vcounter.value != self.version:",
           "if t._vcounter is not None and t._vcounter.value < self.version:",
           ("tests/test_inplace.py", "tests/test_saved_tensors_hooks.py")),
    # -- exercise checks ------------------------------------------------------------------
    Mutant("exercises", "return math.isclose(a, b, rel_tol=tol, abs_tol=tol)",
           "return math.isclose(a, b, rel_tol=10 * tol, abs_tol=1e-2)", EX),
    Mutant("exercises", "return a.strip().lower() == b.strip().lower()",
           "return a.strip().lower() in b.strip().lower()", EX),
    Mutant("exercises", "if not near(w_grad, 7.5):", "if not near(w_grad, 7.5, 1.0):", EX,
           also="if not _near(w_grad, 7.5):",  # (its name before the exercises package)
           also_becomes="if not _near(w_grad, 7.5, 1.0):"),
    Mutant("exercises", "if len(pieces) != 2:", "if len(pieces) < 2:", EX),
    Mutant("exercises", "if not got.requires_grad:", "if got.requires_grad is None:", EX),
    Mutant("exercises", "if got.device.type != device:", "if False:", EX),
    Mutant("exercises", "if answer is Ellipsis:", "if answer is None:", EX),
    # -- the course exporter --------------------------------------------------------------
    Mutant("exporter", "return os.path.commonpath([path, folder]) == folder",
           "return True", HOSTILE),
    Mutant("exporter", "and not any(part in (\".\", \"..\") for part in path.parts))",
           "and True)", HOSTILE),
    Mutant("exporter", "if role == \"solution\":", "if role == \"never\":", COURSE),
    Mutant("exporter", "cell.outputs, cell.execution_count = [], None", "pass", COURSE),
    # -- the loader -----------------------------------------------------------------------
    Mutant("loader", "if len(data) < numel * kind.value.itemsize:", "if False:", LOAD),
    Mutant("loader", "or numel < 0:", "or numel < -1:", LOAD),
    Mutant("loader", 'raise _damaged(f"a tensor\'s storage offset is {offset!r}.")', "pass",
           LOAD),
    # -- the widgets ----------------------------------------------------------------------
    Mutant("widgets", "self.go_to(self.position - 1)", "self.go_to(self.position - 2)", WIDGETS),
    Mutant("widgets", "self.x.grad.zero_()", "pass", WIDGETS),
    Mutant("widgets", "self.loss.backward(retain_graph=retain_graph)",
           "self.loss.backward(retain_graph=True)", WIDGETS),
    Mutant("widgets", "self._advance(self.total - self.position + (self._ahead is not None))",
           "self._advance(self.total - self.position)", WIDGETS),
]


def sources(root: Path) -> list[Path]:
    return sorted(p for folder in ("autograd_kit", "widgets")
                  for p in (root / folder).rglob("*.py"))


def locate(root: Path, mutant: Mutant) -> tuple[Path, int, str]:
    """The one file and line index holding the mutant's line, and what it becomes
    (an error unless exactly one line matches)."""
    found = []
    for path in sources(root):
        if mutant.where not in path.as_posix():
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip() == mutant.line:
                found.append((path, i, mutant.becomes))
            elif mutant.also and line.strip() == mutant.also:
                found.append((path, i, mutant.also_becomes))
    if len(found) != 1:
        raise LookupError(f"{mutant.line!r} is found {len(found)} times")
    return found[0]


def run_one(root: Path, mutant: Mutant, timeout: float) -> tuple[str, float]:
    path, i, becomes = locate(root, mutant)
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = indent + becomes + "\n"
    start = time.perf_counter()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # (killed: restore too)
    try:
        path.write_text("".join(lines), encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(root), str(root / "tests"), os.environ.get("PYTHONPATH", "")]))
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly",
               "-p", "no:cacheprovider", "-o", "addopts=", "-n", "auto", *mutant.tests]
        try:
            rc = subprocess.run(cmd, cwd=root, env=env, capture_output=True,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return "timeout", time.perf_counter() - start
    finally:
        path.write_text(original, encoding="utf-8")
    # 1: a test failed; 2: stopped at the first failure (pytest-xdist's -x) or a
    # collection error the mutant caused; 0: every test passed
    return ("killed" if rc in (1, 2) else "survived" if rc == 0 else f"error {rc}",
            time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE.parent)
    parser.add_argument("--only", default="")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args(argv)
    chosen = [int(n) for n in args.only.split(",") if n] or range(len(MUTANTS))
    if args.check:
        bad = 0
        for n in chosen:
            try:
                path, i, _ = locate(args.root, MUTANTS[n])
                print(f"{n:3} {MUTANTS[n].area:10} {path.relative_to(args.root)}:{i + 1}")
            except LookupError as err:
                bad += 1
                print(f"{n:3} {MUTANTS[n].area:10} {err}")
        return 1 if bad else 0
    counts: dict[str, int] = {}
    # installed, widgets/ is autograd_kit.widgets: in another checkout, a link for
    # the run makes its own widgets/ the ones imported (not an installed copy)
    link = args.root / "autograd_kit" / "widgets"
    made = not link.exists()
    if made:
        link.symlink_to(Path("..") / "widgets", target_is_directory=True)
    try:
        for n in chosen:
            m = MUTANTS[n]
            outcome, seconds = run_one(args.root, m, args.timeout)
            counts[outcome] = counts.get(outcome, 0) + 1
            print(f"{n:3} {m.area:10} {outcome:9} {seconds:6.1f}s  {m.line[:60]}", flush=True)
    finally:
        if made:
            link.unlink()
    print(", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return 0 if set(counts) <= {"killed"} else 1


if __name__ == "__main__":
    sys.exit(main())
