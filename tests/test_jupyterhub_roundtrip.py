"""A class on JupyterHub: one lesson from the exporter to the students' feedback.

Real components on one machine, all on 127.0.0.1: JupyterHub behind
``configurable-http-proxy``, the dummy authenticator with a class password, the
simple local spawner (every user's server runs as this Unix user, in its own home
folder under a temporary folder), nbgrader's exchange in that folder.  A teacher
and three students log in on the hub's login form, get a token and their server
from the hub's REST API, and do everything in their own server, through the proxy:
commands run in a kernel of that server (over its websocket), and a student's
answers are typed into the fetched notebook and saved through the server's contents
API, as JupyterLab saves it.

One student answers everything right, one everything wrong, one hands the notebook
in untouched.  What each answer is worth comes from the course itself (the points of
its graded cells), and the right and wrong answers are made as the course's own
round-trip test makes them (``test_course_nbgrader``): a lesson's graded checks may
change without this test changing.
"""
from __future__ import annotations

import html
import re
import stat
import textwrap
import time
from types import SimpleNamespace

import nbformat
import pytest

from autograd_kit.course import find_lessons
from autograd_kit.course.nbgrader import assignment_name
from hub_support import Hub, HubUser, missing_components
from test_course_nbgrader import LESSONS, answered, graded_errors, nbg, scores

pytestmark = [pytest.mark.nbgrader,
              pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

LESSON = 3
COURSE_ID = "autograd_kit"
TEACHER = "teacher"
STUDENTS = {"ada": "right", "boris": "wrong", "chen": "open"}   # "open": handed in untouched


def nbgrader_config(exchange, student: str | None = None) -> str:
    """What a user's ``~/.jupyter/nbgrader_config.py`` says on this hub."""
    text = f"""\
        c = get_config()  # noqa: F821
        c.Exchange.root = {str(exchange)!r}
        c.CourseDirectory.course_id = {COURSE_ID!r}
        """
    if student:
        # nbgrader names a submission after the Unix user; every server here runs as
        # the same one, so each student says who they are (a real hub needs no line)
        text += f"c.CourseDirectory.student_id = {student!r}\n"
    else:
        text += "c.CourseDirectory.root = __import__('os').path.expanduser('~/course')\n"
    return textwrap.dedent(text)


def answer_cells(nb: dict):
    """(exercise number, cell) for each answer cell of a notebook in JSON form."""
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            yield int(meta["grade_id"].split("-")[1]), cell


def test_a_class_on_jupyterhub(tmp_path):
    pytest.importorskip("nbgrader")
    reason = missing_components()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()

    def phase(what):            # shown with -s, or with the output of a failure
        print(f"{time.monotonic() - started:6.1f} s  {what}", flush=True)

    (lesson,) = find_lessons(LESSONS, "en", [LESSON])
    assignment, notebook = assignment_name(lesson), lesson.path.name
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO)   # as on a real hub: 777

    hub = Hub(tmp_path / "hub", [TEACHER, *STUDENTS])
    for user in [TEACHER, *STUDENTS]:          # what the hub's admin puts in every home
        config = hub.home(user) / ".jupyter" / "nbgrader_config.py"
        config.parent.mkdir(parents=True)
        config.write_text(nbgrader_config(exchange, None if user == TEACHER else user))
    people: dict[str, HubUser] = {}
    kernels = {}
    try:
        hub.start()
        for name in [TEACHER, *STUDENTS]:
            people[name] = HubUser(hub, name)
            people[name].log_in()
            people[name].start_server()
        for person in people.values():
            person.wait_ready()
        phase("hub up, everyone logged in, servers ready")

        # the teacher: the course from the lessons, then the assignment out to the class
        teacher = people[TEACHER].start_kernel()
        teacher.shell("python", "-m", "autograd_kit.course", "nbgrader", "course", "--lang", "en",
                      "--lessons", str(LESSON), "--source", str(LESSONS))
        teacher.shell("nbgrader", "generate_assignment", assignment, cwd="course")
        teacher.shell("nbgrader", "release_assignment", assignment, cwd="course")
        phase("course written, assignment generated and released")

        # the students: fetch, answer in the notebook, save, submit
        for name, kind in STUDENTS.items():
            kernel = kernels[name] = people[name].start_kernel()
            kernel.shell("nbgrader", "fetch_assignment", assignment)
            path = f"{assignment}/{notebook}"
            nb = people[name].get_notebook(path)
            if kind != "open":
                for k, cell in answer_cells(nb):
                    cell["source"] = answered(cell["source"], lesson.exercises[k - 1], kind)
                people[name].save_notebook(path, nb)
            kernel.shell("nbgrader", "submit", assignment)
            phase(f"{name} fetched, answered ({kind}) and submitted")

        # the teacher: collect, grade, feedback out
        for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
            teacher.shell("nbgrader", step, assignment, cwd="course", timeout=500)
            phase(step)

        # what each answer is worth, as the course itself says
        course = hub.home(TEACHER) / "course"
        source = nbformat.read(course / "source" / assignment / notebook, as_version=4)
        worth = {int(nbg(c)["grade_id"].split("-")[1]): nbg(c)["points"]
                 for c in source.cells if nbg(c).get("grade")}
        assert sorted(worth) == [ex.number for ex in lesson.exercises]
        from nbgrader.api import Gradebook
        gradebook = SimpleNamespace(gradebook=Gradebook(f"sqlite:///{course / 'gradebook.db'}"))
        for name, kind in STUDENTS.items():
            got = scores(gradebook, assignment, name, notebook.removesuffix(".ipynb"))
            want = {k: (points if kind == "right" else 0) for k, points in worth.items()}
            assert got == want, (
                f"{name} ({kind}): points per exercise {got}, expected {want}; the graded "
                f"checks said {graded_errors(course, assignment, name, notebook)}")

        # the students: their feedback, in their own home, through their own server
        for name, kind in STUDENTS.items():
            kernels[name].shell("nbgrader", "fetch_feedback", assignment)
            (stamp,) = people[name].listdir(f"{assignment}/feedback")
            page = f"{assignment}/feedback/{stamp}/{notebook.replace('.ipynb', '.html')}"
            text = people[name].http.get(f"{people[name].server}/files/{page}", timeout=30)
            assert text.ok, f"{name}: no feedback at {page}"
            words = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text.text)).split())
            total = sum(worth.values()) if kind == "right" else 0
            shown = f"(Score: {round(float(total), 2)} / {round(float(sum(worth.values())), 2)})"
            assert shown in words, f"{name}: the feedback does not show {shown}"
        phase("feedback fetched and read by every student")
    finally:
        hub.stop()       # the hub stops every server (and so their kernels), then the proxy
