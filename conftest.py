"""How the suite is laid out across cores (pytest loads this for any path it runs).

The suite runs in parallel (``-n auto`` in setup.cfg: pytest-xdist) and in a new
random order each time (pytest-randomly).  Some tests cannot be spread or
shuffled: a notebook's cells share one kernel and run top to bottom, and the
tests that start servers and a browser (JupyterLab, JupyterHub) each take a
machine's worth of processes.  Each such set is one unit of work, run by one
worker in order (``_unit``); everything else is spread test by test.  The long
units go first, so that no worker is left with one at the end: the servers,
the nbgrader round trips and the other tests marked ``slow`` in their files
(they run lessons in kernels), then the notebooks, longest first.

These units, with the nbgrader round trips, are marked ``slow`` too: the quick
loop (``python -m pytest -m "not slow"``) leaves them out.
"""
from collections import Counter

import pytest

SERVER_FILES = ("test_browser.py", "test_jupyterhub_roundtrip.py")


def _unit(nodeid: str) -> str:
    """The unit of work a test belongs to, from its id alone (what the scheduler sees)."""
    if "ipynb" in nodeid and "::Cell " in nodeid:
        return nodeid.split("::Cell ")[0]           # a notebook
    if nodeid.split("::")[0].rsplit("/", 1)[-1] in SERVER_FILES:
        return "servers"
    return nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        """xdist's scope scheduling, with ``_unit`` as the scope, in collection order."""
        def _split_scope(self, nodeid):
            return _unit(nodeid)

    config.option.loadscopereorder = False  # (the order is set below, at collection)
    return Units(config, log)


def _is_cell(item) -> bool:
    return hasattr(item, "cell_num")  # an nbval cell


@pytest.hookimpl(tryfirst=True)  # (after pytest-randomly's shuffle: it wraps this hook)
def pytest_collection_modifyitems(config, items):
    cells = Counter(str(item.path) for item in items if _is_cell(item))

    def rank(item):
        if item.path.name in SERVER_FILES:
            return (0,)
        if item.get_closest_marker("nbgrader") is not None or \
                item.get_closest_marker("slow") is not None:  # (marked so in its file)
            return (1,)
        if _is_cell(item):
            return (2, -cells[str(item.path)], str(item.path), item.cell_num)
        return (3,)

    ranks = {id(item): rank(item) for item in items}  # (before "slow" is added below)
    items.sort(key=lambda item: ranks[id(item)])  # (stable: the rest keeps its shuffled order)
    for item in items:
        if ranks[id(item)][0] < 3:
            item.add_marker("slow")
