"""Writing the course folder without harming anything that is already there.

The exporter writes into a folder the teacher owns and keeps using: nbgrader's
``release/``, ``submitted/``, the gradebook, the teacher's own notes and edits.
The rules it keeps:

* nothing is written through a symbolic link.  Every folder on the way to a
  file (``source``, ``source/lessonNN``, ...) and the file itself must be a real
  folder or file inside the course folder, or be missing (it is then created).
  Files are written to a new temporary file beside them, opened with
  ``O_CREAT | O_EXCL | O_NOFOLLOW``, then renamed over the old one; the folders
  on the way are checked again just before each write.
* :data:`MANIFEST`, a small JSON file in the course folder, records every file the
  exporter wrote: its path in the folder and the SHA-256 of what was written.
  A rerun replaces or removes a file only if the record lists it; one the
  teacher changed since is replaced (or removed) only with ``force``; a file the
  record does not list is the teacher's and is never replaced or removed, not
  even with ``force``.
* every check is made before anything is written, so a refusal leaves the
  course folder as it was.
* the course folder is neither inside the installed package nor inside the
  lessons, and the lessons are not inside it.

A refusal is a :class:`Refusal`: one line that says what is wrong and what to do.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path, PurePosixPath

MANIFEST = ".autograd_kit_course.json"
_ABOUT = ("The files `python -m autograd_kit.course nbgrader` wrote in this folder, with the "
          "SHA-256 of what it wrote: a rerun replaces or removes only these files, and one "
          "changed since only with --force.")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class Refusal(Exception):
    """Why the course is not written, in one line; the course folder is left as it was."""


def show(path) -> str:
    """A path as one printable line (a name holding a newline is shown escaped)."""
    text = os.fsdecode(path)
    return text if text.isprintable() else ascii(text)


def describe(err: OSError) -> str:
    """An error of the operating system as one line: the file, then the reason."""
    if err.filename is None:
        return " ".join(str(err).splitlines())
    where = show(err.filename)
    if err.filename2 is not None:
        where += f" -> {show(err.filename2)}"
    return f"{where}: {err.strerror or err}"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:              # another drive
        return False


def package_folders() -> list[str]:
    """The installed package's folders (``autograd_kit`` and its ``widgets``)."""
    import importlib.util

    import autograd_kit
    folders = [os.path.dirname(autograd_kit.__file__)]
    with suppress(ImportError, ValueError, AttributeError):
        folders += list(importlib.util.find_spec("autograd_kit.widgets")
                        .submodule_search_locations or [])
    return [os.path.realpath(folder) for folder in folders]


def check_locations(outdir, lesson_folders: Iterable = ()) -> None:
    """Refuse a course folder inside the package or the lessons, or holding the lessons."""
    out = os.path.realpath(os.path.abspath(outdir))
    for package in package_folders():
        if _inside(out, package):
            raise Refusal(f"{show(outdir)} is inside the installed package ({show(package)}): "
                          "choose a course folder outside it")
    for folder in lesson_folders:
        lessons = os.path.realpath(os.path.abspath(folder))
        if _inside(out, lessons):
            raise Refusal(f"{show(outdir)} is inside the lessons folder {show(folder)}: "
                          "choose a course folder outside it")
        if _inside(lessons, out):
            raise Refusal(f"the lessons folder {show(folder)} is inside the course folder "
                          f"{show(outdir)}: keep the lessons outside it")


def read_folder(folder: Path) -> dict[str, bytes]:
    """The files under ``folder`` (a lesson's support files), by relative path with ``/``;
    symlinked folders are not followed."""
    found = {}
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        rel = Path(top).relative_to(folder)
        for name in sorted(files):
            with open(Path(top) / name, "rb") as f:
                found[(rel / name).as_posix()] = f.read()
    return found


# --- looking at what is there --------------------------------------------------------

def _lstat(path: Path):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _link_target(path: Path) -> str:
    try:
        return show(os.readlink(path))
    except OSError:
        return "?"


def _folders_on_the_way(root: Path, rel: str, outdir_shown: str) -> bool:
    """Whether the folders of ``rel`` all exist (as real folders); refuses a symlink or
    a file among them."""
    parts = PurePosixPath(rel).parts[:-1]
    here = root
    for i, part in enumerate(parts):
        here = here / part
        st = _lstat(here)
        if st is None:
            return False
        name = "/".join(parts[:i + 1])
        if stat.S_ISLNK(st.st_mode):
            raise Refusal(f"{name} is a symlink (to {_link_target(here)}): the exporter writes "
                          f"only into real folders inside {outdir_shown}; remove the link "
                          "or choose another course folder")
        if not stat.S_ISDIR(st.st_mode):
            raise Refusal(f"{name} is a file, where the exporter needs a folder: move it "
                          "away or choose another course folder")
    return True


def _file_state(root: Path, rel: str):
    """The ``lstat`` of a file to be written (None when missing); refuses a symlink or
    anything but a regular file there."""
    path = root / rel
    st = _lstat(path)
    if st is None or stat.S_ISREG(st.st_mode):
        return st
    if stat.S_ISLNK(st.st_mode):
        raise Refusal(f"{rel} is a symlink (to {_link_target(path)}): the exporter does not "
                      "write through symlinks; remove the link and rerun")
    what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
    raise Refusal(f"{rel} is {what}, where the exporter writes a file: move it away and rerun")


def _file_digest(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    sha = hashlib.sha256()
    with os.fdopen(fd, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return "sha256:" + sha.hexdigest()


def _stored(path: Path) -> bytes | None:
    """A regular file's content (None when missing); a symlink is not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _safe_rel(rel) -> bool:
    if not isinstance(rel, str) or not rel or "\\" in rel or ":" in rel or rel == MANIFEST:
        return False
    path = PurePosixPath(rel)
    return (not path.is_absolute() and path.as_posix() == rel
            and not any(part in (".", "..") for part in path.parts))


def _course_root(outdir) -> tuple[Path, bool]:
    """The course folder's real path, and whether it exists already."""
    given = show(outdir)
    try:
        st = os.stat(outdir)
    except FileNotFoundError:
        if os.path.islink(outdir):
            raise Refusal(f"{given} is a symlink to {_link_target(Path(outdir))}, which does "
                          "not exist: choose a real folder for the course") from None
        return Path(os.path.realpath(os.path.abspath(outdir))), False
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Refusal(f"{given} leads into a symlink loop: choose a real folder for the "
                          "course") from None
        raise
    if not stat.S_ISDIR(st.st_mode):
        raise Refusal(f"{given} is a file, not a folder: choose a folder for the course")
    return Path(os.path.realpath(outdir)), True


def _read_record(root: Path, outdir_shown: str) -> dict[str, str]:
    st = _file_state(root, MANIFEST)
    if st is None:
        return {}
    bad = Refusal(f"{MANIFEST} in {outdir_shown} is not a record the exporter can read: "
                  "move it away and rerun (the files there are then kept as yours)")
    try:
        files = json.loads(_stored(root / MANIFEST).decode("utf-8"))["files"]
        if not all(_safe_rel(rel) and isinstance(hashed, str) and hashed.startswith("sha256:")
                   for rel, hashed in files.items()):
            raise bad
    except (ValueError, KeyError, TypeError, AttributeError):
        raise bad from None
    return dict(files)


# --- writing ---------------------------------------------------------------------------

def _make_folders(root: Path, rel: str, outdir_shown: str) -> Path:
    """Create the missing folders of ``rel`` one at a time, each checked (again) to be a
    real folder before going into it; the path of the file."""
    parts = PurePosixPath(rel).parts[:-1]
    for i in range(len(parts)):
        here = "/".join(parts[:i + 1])
        if _lstat(root / here) is None:
            with suppress(FileExistsError):
                os.mkdir(root / here)       # mkdir does not follow a link put there
        _folders_on_the_way(root, here + "/x", outdir_shown)
    return root / rel


def _write(root: Path, rel: str, data: bytes, outdir_shown: str) -> None:
    path = _make_folders(root, rel, outdir_shown)
    _file_state(root, rel)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)      # replaces a name: a link put there is not followed
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def _remove(root: Path, rel: str, stop: str, outdir_shown: str) -> None:
    """Remove an exporter's file, then the folders that removal left empty (up to
    ``stop``, which stays)."""
    _folders_on_the_way(root, rel, outdir_shown)
    if _file_state(root, rel) is None:
        return
    os.unlink(root / rel)
    parent = PurePosixPath(rel).parent
    while parent.as_posix() != stop and len(parent.parts) > len(PurePosixPath(stop).parts):
        try:
            os.rmdir(root / parent)     # only an empty, real folder goes
        except OSError:
            break
        parent = parent.parent


def _make_course_folder(outdir) -> None:
    """``os.makedirs``, but a failure (a name too long...) leaves no folder behind."""
    missing, path = [], os.path.abspath(outdir)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        missing.append(path)
        path = os.path.dirname(path)
    created = []
    try:
        for path in reversed(missing):
            os.mkdir(path)
            created.append(path)
    except OSError:
        for path in reversed(created):
            with suppress(OSError):
                os.rmdir(path)
        raise


def _write_record(root: Path, record: dict, kept: dict, files: dict, done: list[str],
                  not_removed: list[str], shown: str) -> None:
    """Record what is there now: the files written (or found as they would be
    written), and the earlier entries still true; rewritten only when it changes."""
    new_record = dict(kept)
    new_record.update((rel, record[rel]) for rel in files if rel in record)   # not reached
    new_record.update((rel, record[rel]) for rel in not_removed)
    new_record.update((rel, digest(files[rel])) for rel in done)
    text = json.dumps({"about": _ABOUT, "files": dict(sorted(new_record.items()))},
                      indent=1) + "\n"
    if _stored(root / MANIFEST) != text.encode("utf-8"):
        _write(root, MANIFEST, text.encode("utf-8"), shown)


def _more(rels: list[str]) -> str:
    n = len(rels) - 1
    return f" ({n} more file{'s' if n > 1 else ''} like it: {', '.join(rels[1:4])}" \
           f"{', ...' if n > 3 else ''})" if n else ""


def write_files(outdir, files: dict[str, bytes], *, regenerate: Iterable[str] = (),
                force: bool = False, lesson_folders: Iterable = ()) -> dict[str, list[str]]:
    """Write ``files`` (relative path with ``/`` -> content) into the course folder.

    ``regenerate``: folders (``source/lesson03``) written afresh: a file the exporter
    wrote there before and does not write now is removed (if unchanged, or with
    ``force``).  Returns the relative paths ``written``, ``unchanged`` and ``removed``.
    Raises :class:`Refusal` (nothing written) or ``OSError``."""
    lesson_folders = list(lesson_folders)
    check_locations(outdir, lesson_folders)
    shown = show(outdir)
    for rel in files:
        if not _safe_rel(rel):
            raise ValueError(f"not a path inside the course folder: {rel!r}")
    root, exists = _course_root(outdir)
    record = _read_record(root, shown) if exists else {}
    regenerate = [folder.rstrip("/") for folder in regenerate]

    # 1. look at everything; refuse before writing anything
    to_write, unchanged, to_remove = {}, [], []
    not_ours, edited, edited_stale = [], [], []
    for rel in sorted(files):
        if not exists or not _folders_on_the_way(root, rel, shown):
            to_write[rel] = files[rel]
            continue
        if _file_state(root, rel) is None:
            to_write[rel] = files[rel]
            continue
        current = _file_digest(root / rel)
        if current == digest(files[rel]):
            unchanged.append(rel)
        elif rel not in record:
            not_ours.append(rel)
        elif current == record[rel] or force:
            to_write[rel] = files[rel]
        else:
            edited.append(rel)
    stale = [rel for rel in sorted(record) if rel not in files
             and any(rel.startswith(folder + "/") for folder in regenerate)]
    for rel in stale:
        if not _folders_on_the_way(root, rel, shown):
            continue
        st = _lstat(root / rel)
        if st is None or not stat.S_ISREG(st.st_mode):
            continue                    # gone, or no longer the exporter's file
        if _file_digest(root / rel) == record[rel] or force:
            to_remove.append(rel)
        else:
            edited_stale.append(rel)
    if not_ours:
        raise Refusal(f"{not_ours[0]} was not written by the exporter (it is not in {MANIFEST}): "
                      f"it is never replaced, even with --force; move it away and rerun"
                      + _more(not_ours))
    if edited:
        raise Refusal(f"{edited[0]} was changed since the exporter wrote it; rerun with --force "
                      "to replace it" + _more(edited))
    if edited_stale:
        raise Refusal(f"{edited_stale[0]} was written by the exporter for a lesson file it no "
                      "longer writes, and changed since; rerun with --force to remove it"
                      + _more(edited_stale))

    # 2. write; the record follows what was done, even when a write fails midway
    if not exists:
        _make_course_folder(outdir)
        root, _ = _course_root(outdir)
        check_locations(outdir, lesson_folders)
    kept = {rel: hashed for rel, hashed in record.items() if rel not in files and rel not in stale}
    written, removed = [], []
    try:
        for rel, data in to_write.items():
            _write(root, rel, data, shown)
            written.append(rel)
        for rel in to_remove:
            stop = next(folder for folder in regenerate if rel.startswith(folder + "/"))
            _remove(root, rel, stop, shown)
            removed.append(rel)
    except BaseException:
        with suppress(OSError, Refusal):     # the first error is the one to tell
            _write_record(root, record, kept, files, unchanged + written,
                          [rel for rel in to_remove if rel not in removed], shown)
        raise
    _write_record(root, record, kept, files, unchanged + written, [], shown)
    return {"written": written, "unchanged": unchanged, "removed": removed}
