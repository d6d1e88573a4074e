"""``python -m autograd_kit.course nbgrader OUTDIR [--lang en|zh|ru] [--lessons 3,6,8]``

Writes an nbgrader course directory from the lesson notebooks: one assignment per
lesson that has exercises, graded automatically by the lesson's own checks.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .lessons import DEFAULT_SOURCE, LANGUAGES, find_lessons
from .nbgrader import write_course


def _numbers(text: str) -> list[int]:
    try:
        return sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--lessons takes lesson numbers separated by commas (3,6,8), not {text!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograd_kit.course",
                                     description=__doc__.split("\n\n")[1])
    sub = parser.add_subparsers(dest="command", required=True)
    nbg = sub.add_parser("nbgrader", help="write an nbgrader course directory")
    nbg.add_argument("outdir", type=Path, help="the course directory (created if missing)")
    nbg.add_argument("--lang", choices=LANGUAGES, default="en", help="which edition")
    nbg.add_argument("--lessons", type=_numbers, default=None,
                     help="lesson numbers, e.g. 3,6,8 (default: every lesson with exercises)")
    nbg.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                     help="the lessons folder (default: the repository's lessons/)")
    nbg.add_argument("--course-id", default="autograd_kit", help="nbgrader's course id")
    args = parser.parse_args(argv)
    try:
        lessons = find_lessons(args.source, args.lang, args.lessons)
        names = write_course(args.outdir, lessons, args.course_id)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {len(names)} assignments to {args.outdir / 'source'}: {', '.join(names)}")
    print(f"next: cd {args.outdir} && nbgrader generate_assignment {names[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
