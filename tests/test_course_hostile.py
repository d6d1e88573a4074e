"""The course exporter in hostile places: it never writes outside OUTDIR, never
through a symlink, never destroys the teacher's work, and says why in one line.

Each case builds a setup in ``tmp_path`` (a small copy of the lessons as the
source, a course folder, and real files and folders *outside* the course that a
symlink points at), snapshots the whole tree (contents, symlink targets, modes and
modification times), runs ``python -m autograd_kit.course nbgrader`` in-process,
and checks the exit status, that stderr is one line without a traceback, and that
the snapshot is unchanged: everywhere for a refusal, outside the course folder
(and for the teacher's own files inside) for a run that is allowed.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import autograd_kit
from autograd_kit.course import safe_write
from autograd_kit.course.__main__ import main
from autograd_kit.course.safe_write import MANIFEST

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
NB3 = "03_backward_and_chain_rule.ipynb"
NB6 = "06_accumulation_and_retain_graph.ipynb"
NOTEBOOK = f"source/lesson03/{NB3}"
CONFIG = "nbgrader_config.py"
LONG = "a" * 300

needs_symlinks = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges")


# --- tools of the tests -------------------------------------------------------------------

def snapshot(top: Path, skip: Path | None = None) -> dict:
    """Every entry under ``top``: a symlink's target, a file's bytes, mode and mtime, a
    folder's mode and mtime (a file added or removed changes it).  ``skip``: a
    subtree left out (the course folder of a run that may write)."""
    found = {}
    for here, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(here) / name
            if skip is not None and (path == skip or skip in path.parents):
                continue
            st = os.lstat(path)
            if path.is_symlink():
                found[path] = ("link", os.readlink(path))
            elif path.is_dir():
                stamp = None if skip is not None and skip.parent == path else st.st_mtime_ns
                found[path] = ("dir", st.st_mode, stamp)
            else:
                found[path] = ("file", path.read_bytes(), st.st_mode, st.st_mtime_ns)
    return found


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["nbgrader", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, *words: str) -> None:
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def refused(capsys, top: Path, args, *words: str) -> str:
    """Exit status 2, one line naming ``words``, and nothing under ``top`` changed."""
    before = snapshot(top)
    code, out, err = run(capsys, *args)
    assert code == 2, (out, err)
    one_line(err, *words)
    assert snapshot(top) == before
    return err


def allowed(capsys, top: Path, course: Path, args, keep=()) -> dict:
    """Exit status 0, nothing changed outside ``course`` nor the files ``keep`` in it."""
    outside = snapshot(top, skip=course)
    mine = {path: path.read_bytes() for path in keep}
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert err == "" and "wrote" in out
    assert snapshot(top, skip=course) == outside
    assert {path: path.read_bytes() for path in keep} == mine
    return json.loads((course / MANIFEST).read_text())["files"]


@pytest.fixture
def source(tmp_path) -> Path:
    """A lessons folder with lessons 3 and 6."""
    folder = tmp_path / "lessons"
    folder.mkdir()
    for name in (NB3, NB6):
        shutil.copy2(LESSONS / name, folder / name)
    return folder


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder outside the course with the user's files, for symlinks to point at."""
    folder = tmp_path / "outside"
    (folder / "lesson03").mkdir(parents=True)
    (folder / "keep.txt").write_text("the user's own file\n")
    (folder / "lesson03" / NB3).write_text("the user's notebook, not the exporter's\n")
    (folder / "config.py").write_text("# the user's own settings\n")
    return folder


@pytest.fixture
def course(tmp_path, source, capsys) -> Path:
    """A course written once with lesson 3."""
    folder = tmp_path / "course"
    assert main(["nbgrader", str(folder), "--lessons", "3", "--source", str(source)]) == 0
    capsys.readouterr()
    return folder


def args(course, source, *more):
    return [course, "--lessons", "3", "--source", source, *more]


def swap_for_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


# --- symlinks: never followed out of the course folder ----------------------------------

@needs_symlinks
def test_a_symlinked_source_folder_is_refused(tmp_path, source, outside, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "source").symlink_to(outside)
    refused(capsys, tmp_path, args(course, source), "source is a symlink", str(outside))


@needs_symlinks
@pytest.mark.parametrize("rel, target", [
    ("source/lesson03", "lesson03"),
    ("source", "."),
    (CONFIG, "config.py"),
    (NOTEBOOK, f"lesson03/{NB3}"),
    (MANIFEST, "keep.txt"),
], ids=["lesson-folder", "source", "config", "notebook", "record"])
def test_a_symlink_in_a_written_course_is_refused(tmp_path, source, outside, course, capsys,
                                                  rel, target):
    swap_for_link(course / rel, outside / target)
    err = refused(capsys, tmp_path, args(course, source), f"{rel} is a symlink")
    refused(capsys, tmp_path, args(course, source, "--force"), f"{rel} is a symlink")
    assert "--force" not in err


@needs_symlinks
def test_a_symlink_to_the_record_with_the_exporters_content_is_refused(
        tmp_path, source, outside, course, capsys):
    (outside / "record.json").write_bytes((course / MANIFEST).read_bytes())
    swap_for_link(course / MANIFEST, outside / "record.json")
    refused(capsys, tmp_path, args(course, source), MANIFEST, "symlink")


@needs_symlinks
@pytest.mark.parametrize("kind", ["dangling", "loop", "self"])
def test_a_dangling_or_looping_source_link_is_refused(tmp_path, source, capsys, kind):
    course = tmp_path / "course"
    course.mkdir()
    if kind == "dangling":
        (course / "source").symlink_to(tmp_path / "nowhere")
    elif kind == "loop":
        (course / "source").symlink_to(course / "other")
        (course / "other").symlink_to(course / "source")
    else:
        (course / "source").symlink_to(course / "source")
    refused(capsys, tmp_path, args(course, source), "source is a symlink")
    assert not (tmp_path / "nowhere").exists()


@needs_symlinks
def test_a_dangling_course_link_is_refused(tmp_path, source, capsys):
    (tmp_path / "course").symlink_to(tmp_path / "nowhere")
    refused(capsys, tmp_path, args(tmp_path / "course", source), "which does not exist")
    assert not (tmp_path / "nowhere").exists()


@needs_symlinks
def test_a_course_link_loop_is_refused(tmp_path, source, capsys):
    (tmp_path / "course").symlink_to(tmp_path / "other")
    (tmp_path / "other").symlink_to(tmp_path / "course")
    refused(capsys, tmp_path, args(tmp_path / "course", source), "symlink loop")
    refused(capsys, tmp_path, args(tmp_path / "course" / "sub", source), "symlink loop")


@needs_symlinks
def test_a_course_folder_that_is_itself_a_link_is_the_folder_it_names(tmp_path, source, capsys):
    """OUTDIR given as a link to a real folder (a course on another disk) is that folder."""
    real = tmp_path / "disk" / "course"
    real.mkdir(parents=True)
    (tmp_path / "course").symlink_to(real)
    allowed(capsys, tmp_path, real, args(tmp_path / "course", source))
    assert (real / NOTEBOOK).is_file() and (real / CONFIG).is_file()


@needs_symlinks
def test_a_symlinked_lessons_folder_is_read(tmp_path, source, capsys):
    (tmp_path / "linked").symlink_to(source)
    course = tmp_path / "course"
    allowed(capsys, tmp_path, course, args(course, tmp_path / "linked"))
    assert (course / NOTEBOOK).is_file()


@needs_symlinks
def test_a_link_swapped_in_while_writing_is_not_followed(tmp_path, source, outside, course,
                                                         capsys, monkeypatch):
    """A folder replaced by a link between the checks and the write: the write's own
    check refuses it."""
    (source / NB3).write_text((source / NB3).read_text().replace("chain rule", "chain rules"))
    write = safe_write._write

    def swapping(root, rel, data, shown):
        if rel == NOTEBOOK:
            swap_for_link(course / "source" / "lesson03", outside / "lesson03")
        return write(root, rel, data, shown)

    monkeypatch.setattr(safe_write, "_write", swapping)
    before = snapshot(outside)
    code, _, err = run(capsys, *args(course, source))
    assert code == 2
    one_line(err, "source/lesson03 is a symlink")
    assert snapshot(outside) == before


def test_a_hard_link_to_a_file_outside_is_replaced_not_written_through(
        tmp_path, source, outside, course, capsys):
    """A file is written beside and renamed over the old name: the other name of a
    hard-linked file keeps the old content."""
    os.link(course / NOTEBOOK, outside / "linked.ipynb")
    linked = (outside / "linked.ipynb").read_bytes()
    (source / NB3).write_text((source / NB3).read_text().replace("chain rule", "chain rules"))
    allowed(capsys, tmp_path, course, args(course, source))
    assert (outside / "linked.ipynb").read_bytes() == linked
    assert "chain rules" in (course / NOTEBOOK).read_text()


# --- the teacher's work in the course folder ---------------------------------------------

def test_a_file_the_teacher_added_is_kept_with_and_without_force(tmp_path, source, course,
                                                                 capsys):
    mine = [course / "source" / "lesson03" / "notes.md",
            course / "source" / "lesson03" / "data" / "table.csv",
            course / "release" / "lesson03" / NB3, course / "gradebook.db"]
    for path in mine:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"the teacher's {path.name}\n")
    (source / NB3).write_text((source / NB3).read_text().replace("chain rule", "chain rules"))
    allowed(capsys, tmp_path, course, args(course, source), keep=mine)
    assert "chain rules" in (course / NOTEBOOK).read_text()
    allowed(capsys, tmp_path, course, args(course, source, "--force"), keep=mine)
    assert all(path.is_file() for path in mine)


@pytest.mark.parametrize("rel", [NOTEBOOK, CONFIG])
def test_an_edited_file_is_replaced_only_with_force(tmp_path, source, course, capsys, rel):
    written = (course / rel).read_bytes()
    (course / rel).write_bytes(written + b"\n# the teacher's edit\n")
    (course / "source" / "lesson03" / "notes.md").write_text("the teacher's notes\n")
    err = refused(capsys, tmp_path, args(course, source))
    assert err == (f"error: {rel} was changed since the exporter wrote it; "
                   "rerun with --force to replace it\n")
    files = allowed(capsys, tmp_path, course, args(course, source, "--force"),
                    keep=[course / "source" / "lesson03" / "notes.md"])
    assert (course / rel).read_bytes() == written
    assert files[rel] == safe_write.digest(written)
    allowed(capsys, tmp_path, course, args(course, source))       # in step again


def test_every_edited_file_is_counted(tmp_path, source, course, capsys):
    for rel in (NOTEBOOK, CONFIG):
        (course / rel).write_bytes((course / rel).read_bytes() + b" ")
    refused(capsys, tmp_path, args(course, source), CONFIG, "1 more file", NOTEBOOK)


@pytest.mark.parametrize("rel", [NOTEBOOK, CONFIG])
def test_a_file_the_exporter_did_not_write_is_never_replaced(tmp_path, source, capsys, rel):
    """A course folder without the record (the teacher's own, or an older export):
    what is there is the teacher's, even with --force."""
    course = tmp_path / "course"
    (course / rel).parent.mkdir(parents=True)
    (course / rel).write_text("the teacher's own file\n")
    for more in ([], ["--force"]):
        err = refused(capsys, tmp_path, args(course, source, *more), rel,
                      "not written by the exporter", "even with --force")
    assert not (course / MANIFEST).exists()


def test_a_file_that_already_is_what_would_be_written_is_adopted(tmp_path, source, course,
                                                                 capsys):
    (course / MANIFEST).unlink()
    files = allowed(capsys, tmp_path, course, args(course, source))
    assert sorted(files) == [CONFIG, NOTEBOOK]


def test_a_lesson_file_no_longer_written_is_removed_only_if_unedited(tmp_path, source,
                                                                     capsys):
    course = tmp_path / "course"
    (source / NB3).rename(source / "03_old_name.ipynb")
    old = course / "source" / "lesson03" / "03_old_name.ipynb"
    allowed(capsys, tmp_path, course, args(course, source))
    (source / "03_old_name.ipynb").rename(source / NB3)
    files = allowed(capsys, tmp_path, course, args(course, source))
    assert not old.exists() and (course / NOTEBOOK).is_file()
    assert "source/lesson03/03_old_name.ipynb" not in files
    # written, then edited by the teacher, then no longer written: kept unless --force
    (source / NB3).rename(source / "03_old_name.ipynb")
    allowed(capsys, tmp_path, course, args(course, source))
    (source / "03_old_name.ipynb").rename(source / NB3)
    old.write_text("the teacher's edit\n")
    refused(capsys, tmp_path, args(course, source), "03_old_name.ipynb",
            "rerun with --force to remove it")
    allowed(capsys, tmp_path, course, args(course, source, "--force"))
    assert not old.exists()


def test_support_files_are_copied_checked_and_cleaned(tmp_path, source, outside, capsys):
    """A lesson whose code opens ``pictures/...``: the folder is copied into the
    assignment, a link put in its place is refused, and once the lesson stops using
    it the copy goes (the teacher's file in it stays)."""
    nb = nbformat.read(source / NB3, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell('picture = "pictures/graph.svg"'))
    nbformat.write(nb, source / NB3)
    (source / "pictures" / "deep").mkdir(parents=True)
    (source / "pictures" / "graph.svg").write_text("<svg/>\n")
    (source / "pictures" / "deep" / "more.svg").write_text("<svg/>\n")
    course = tmp_path / "course"
    allowed(capsys, tmp_path, course, args(course, source))
    copied = course / "source" / "lesson03" / "pictures"
    assert (copied / "deep" / "more.svg").read_text() == "<svg/>\n"
    if sys.platform != "win32":
        shutil.move(copied, tmp_path / "moved")
        copied.symlink_to(outside)
        refused(capsys, tmp_path, args(course, source), "source/lesson03/pictures is a symlink")
        copied.unlink()
        shutil.move(tmp_path / "moved", copied)
    (copied / "mine.txt").write_text("the teacher's\n")
    nb.cells.pop(1)
    nbformat.write(nb, source / NB3)
    allowed(capsys, tmp_path, course, args(course, source), keep=[copied / "mine.txt"])
    assert sorted(p.name for p in copied.rglob("*")) == ["mine.txt"]


def test_a_file_the_teacher_removed_is_written_again(tmp_path, source, course, capsys):
    (course / NOTEBOOK).unlink()
    allowed(capsys, tmp_path, course, args(course, source))
    assert (course / NOTEBOOK).is_file()


@pytest.mark.parametrize("record", [
    "not json",
    '{"files": ["source/lesson03"]}',
    '{"files": {"../outside/keep.txt": "sha256:00"}}',
    '{"files": {"/etc/hostname": "sha256:00"}}',
    '{"files": {"source/../../outside/keep.txt": "sha256:00"}}',
], ids=["not-json", "not-a-record", "parent", "absolute", "dotdot-inside"])
def test_a_record_that_is_not_the_exporters_is_refused(tmp_path, source, outside, course,
                                                       capsys, record):
    (course / MANIFEST).write_text(record)
    refused(capsys, tmp_path, args(course, source), MANIFEST, "not a record")


# --- rerunning -------------------------------------------------------------------------

def test_a_rerun_on_an_untouched_course_changes_nothing(tmp_path, source, course, capsys):
    (course / "release" / "lesson03").mkdir(parents=True)
    (course / "gradebook.db").write_bytes(b"nbgrader's")
    before = snapshot(tmp_path)
    code, out, err = run(capsys, *args(course, source))
    assert code == 0 and err == "" and "lesson03" in out
    assert snapshot(tmp_path) == before


def test_a_rerun_with_fewer_lessons_keeps_the_others(tmp_path, source, capsys):
    course = tmp_path / "course"
    allowed(capsys, tmp_path, course, [course, "--lessons", "3,6", "--source", source])
    files = allowed(capsys, tmp_path, course, args(course, source))
    assert f"source/lesson06/{NB6}" in files and (course / "source" / "lesson06" / NB6).is_file()


def test_a_failed_write_is_recorded_as_far_as_it_went(tmp_path, source, capsys, monkeypatch):
    """The disk fills up after the first file: the record lists what was written, and
    the next run finishes the job without calling that file the teacher's."""
    course = tmp_path / "course"
    write = safe_write._write

    def full(root, rel, data, shown):
        if rel == NOTEBOOK:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(root / rel))
        return write(root, rel, data, shown)

    monkeypatch.setattr(safe_write, "_write", full)
    code, _, err = run(capsys, *args(course, source))
    assert code == 2
    one_line(err, "No space left")
    assert list(json.loads((course / MANIFEST).read_text())["files"]) == [CONFIG]
    monkeypatch.undo()
    allowed(capsys, tmp_path, course, args(course, source))
    assert (course / NOTEBOOK).is_file()


# --- where the course may be -------------------------------------------------------------

def test_a_course_inside_the_installed_package_is_refused(tmp_path, source, capsys):
    package = Path(autograd_kit.__file__).resolve().parent
    course = package / f"_course_refused_{os.getpid()}"
    assert not course.exists()
    try:
        refused(capsys, tmp_path, args(course, source), "inside the installed package")
        refused(capsys, tmp_path, args(package, source), "inside the installed package")
        assert not course.exists()
    finally:
        if course.exists():
            shutil.rmtree(course)


def test_a_course_inside_the_lessons_is_refused(tmp_path, source, capsys):
    refused(capsys, tmp_path, args(source / "course", source), "inside the lessons folder")
    refused(capsys, tmp_path, args(source, source), "lessons folder")
    refused(capsys, tmp_path, [source / "course", "--lang", "en", "--lessons", "3",
                               "--source", tmp_path / ".." / tmp_path.name / "lessons"],
            "inside the lessons folder")


def test_a_course_inside_the_repositorys_lessons_is_refused(tmp_path, capsys):
    course = LESSONS / f"_course_refused_{os.getpid()}"
    assert not course.exists()
    try:
        refused(capsys, tmp_path, [course, "--lessons", "3"], "inside the lessons folder")
        assert not course.exists()
    finally:
        if course.exists():
            shutil.rmtree(course)


def test_lessons_inside_the_course_are_refused(tmp_path, source, capsys):
    """--source inside OUTDIR: the lessons are never written over."""
    course = tmp_path
    refused(capsys, tmp_path, args(course, source), "is inside the course folder")
    inner = tmp_path / "course" / "source" / "lesson03"
    inner.mkdir(parents=True)
    shutil.copy2(source / NB3, inner / NB3)
    refused(capsys, tmp_path, args(tmp_path / "course", inner), "is inside the course folder")


@pytest.mark.parametrize("rel, words", [
    (".", "is a file, not a folder"),
    ("source", "source is a file, where the exporter needs a folder"),
    ("source/lesson03", "source/lesson03 is a file"),
], ids=["outdir", "source", "lesson-folder"])
def test_a_file_where_a_folder_goes_is_refused(tmp_path, source, capsys, rel, words):
    course = tmp_path / "course"
    path = (course / rel) if rel != "." else course
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("the teacher's file\n")
    refused(capsys, tmp_path, args(course, source), words)


def test_a_folder_where_a_file_goes_is_refused(tmp_path, source, capsys):
    course = tmp_path / "course"
    (course / NOTEBOOK).mkdir(parents=True)
    (course / NOTEBOOK / "inside.txt").write_text("the teacher's\n")
    refused(capsys, tmp_path, args(course, source), NOTEBOOK, "is a folder")


def test_a_course_under_a_file_is_refused(tmp_path, source, capsys):
    (tmp_path / "plain").write_text("a file\n")
    refused(capsys, tmp_path, args(tmp_path / "plain" / "course", source), "Not a directory")


def test_a_name_too_long_is_one_line(tmp_path, source, capsys):
    refused(capsys, tmp_path, args(tmp_path / LONG, source), LONG, "too long")
    refused(capsys, tmp_path, args(tmp_path / "course" / LONG / "x", source), "too long")


@needs_symlinks
def test_a_name_with_a_newline_is_still_one_line(tmp_path, source, outside, capsys):
    course = tmp_path / "bad\nname"
    course.mkdir()
    (course / "source").symlink_to(outside)
    refused(capsys, tmp_path, args(course, source), "source is a symlink", "bad\\nname")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes regardless of permissions")
def test_an_unwritable_course_folder_is_one_line(tmp_path, source, capsys):
    course = tmp_path / "course"
    course.mkdir()
    course.chmod(0o555)
    try:
        refused(capsys, tmp_path, args(course, source), "Permission denied")
    finally:
        course.chmod(0o755)


def test_permission_denied_is_one_line(tmp_path, source, capsys, monkeypatch):
    """The same refusal as root (who ignores permissions), by a write that is denied."""
    def denied(root, rel, data, shown):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(root / rel))

    monkeypatch.setattr(safe_write, "_write", denied)
    course = tmp_path / "course"
    course.mkdir()
    refused(capsys, tmp_path, args(course, source), "Permission denied", CONFIG)


def test_bad_arguments_still_say_what_is_wrong(tmp_path, source, capsys):
    refused(capsys, tmp_path, [tmp_path / "course", "--lessons", "42", "--source", source],
            "no lesson numbered 42")
    refused(capsys, tmp_path, [tmp_path / "course", "--source", tmp_path / "nothing"],
            "no lesson notebooks")


# --- in a terminal -----------------------------------------------------------------------

@needs_symlinks
def test_no_traceback_reaches_the_terminal(tmp_path, source, outside):
    course = tmp_path / "course"
    course.mkdir()
    (course / "source").symlink_to(outside)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    before = snapshot(tmp_path)
    for target in (course, tmp_path / LONG):
        done = subprocess.run([sys.executable, "-m", "autograd_kit.course", "nbgrader",
                               str(target), "--lessons", "3", "--source", str(source)],
                              capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=300)
        assert done.returncode == 2 and done.stdout == ""
        one_line(done.stderr)
    assert snapshot(tmp_path) == before


def test_the_summary_counts_its_assignments_in_words(tmp_path, source, capsys):
    code, out, _ = run(capsys, tmp_path / "one", "--lessons", "3", "--source", source)
    assert code == 0 and "wrote 1 assignment to" in out
    code, out, _ = run(capsys, tmp_path / "two", "--lessons", "3,6", "--source", source)
    assert code == 0 and "wrote 2 assignments to" in out
