"""What the picture tests share: the renderer chosen afresh for every test, and a
skip where no Graphviz renderer can run.  (Import both names into a test module:
pytest picks up ``choose_freely`` there and uses it for every test.)"""
from __future__ import annotations

import pytest

from autograd_kit.viz import RenderError, render, set_renderer


@pytest.fixture(autouse=True)
def choose_freely(monkeypatch):
    """No renderer forced by the environment or by an earlier test."""
    monkeypatch.delenv(render.ENV_VAR, raising=False)
    set_renderer(None)
    yield
    set_renderer(None)


def any_renderer():
    try:
        render.choose()
    except RenderError:
        pytest.skip("no Graphviz renderer installed")
