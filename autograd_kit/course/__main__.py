"""``python -m autograd_kit.course nbgrader OUTDIR [--lang en|zh|ru] [--lessons 3,6,A] [--force]``

Writes an nbgrader course directory from the lesson notebooks: one assignment per
lesson that has exercises, graded automatically by the lesson's own checks.

It writes only into real folders inside OUTDIR (never through a symlink), keeps a
record of the files it wrote, and on a rerun replaces or removes only those, and
only while unedited (--force: edited ones too).  Anything it refuses is one line on
stderr and exit status 2; see autograd_kit.course.safe_write.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .lessons import DEFAULT_SOURCE, LANGUAGES, find_lessons, normalise_key
from .nbgrader import write_course
from .safe_write import Refusal, describe


def _numbers(text: str) -> list[str]:
    """``3,6,a`` -> ``["03", "06", "A"]``: lesson numbers, and appendix letters."""
    try:
        return sorted({normalise_key(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--lessons takes lesson numbers or appendix letters separated by commas "
            f"(3,6,A), not {text!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograd_kit.course",
                                     description=__doc__.split("\n\n")[1])
    sub = parser.add_subparsers(dest="command", required=True)
    nbg = sub.add_parser("nbgrader", help="write an nbgrader course directory")
    nbg.add_argument("outdir", type=Path, help="the course directory (created if missing)")
    nbg.add_argument("--lang", choices=LANGUAGES, default="en", help="which edition")
    nbg.add_argument("--lessons", type=_numbers, default=None,
                     help="lesson numbers and appendix letters, e.g. 3,6,A "
                          "(default: every lesson with exercises)")
    nbg.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                     help="the lessons folder (default: the repository's lessons/)")
    nbg.add_argument("--course-id", default="autograd_kit", help="nbgrader's course id")
    nbg.add_argument("--force", action="store_true",
                     help="also replace files the exporter wrote that were edited since "
                          "(files it did not write are never replaced or removed)")
    args = parser.parse_args(argv)
    try:
        lessons = find_lessons(args.source, args.lang, args.lessons)
        names = write_course(args.outdir, lessons, args.course_id, force=args.force,
                             source=args.source)
    except (Refusal, ValueError) as err:
        print("error: " + " ".join(str(err).splitlines()), file=sys.stderr)
        return 2
    except OSError as err:      # a name too long, a file where a folder is, no permission...
        print(f"error: {describe(err)}", file=sys.stderr)
        return 2
    what = "1 assignment" if len(names) == 1 else f"{len(names)} assignments"
    print(f"wrote {what} to {args.outdir / 'source'}: {', '.join(names)}")
    print(f"next: cd {args.outdir} && nbgrader generate_assignment {names[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
