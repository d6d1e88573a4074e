"""Shared by the IPython tests: a shell with the extension loaded, and whether
a Graphviz renderer can run here (SVG checks skip without one)."""
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from autograd_kit.viz import render

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def can_render() -> bool:
    try:
        render.choose()
        return True
    except render.RenderError:
        return False


CAN_RENDER = can_render()
needs_renderer = pytest.mark.skipif(not CAN_RENDER, reason="no Graphviz renderer installed")


def make_shell(setup: str = "") -> InteractiveShell:
    """The shared InteractiveShell, every output format on, ``%load_ext autograd_kit``."""
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.display_formatter.active_types = shell.display_formatter.format_types
    shell.run_line_magic("load_ext", "autograd_kit")
    if setup:
        shell.run_cell(setup)
    return shell


def close_shell(shell: InteractiveShell, names=()) -> None:
    """Unload the extension (if a test did not) and forget the test's variables."""
    if "autograd_kit" in shell.extension_manager.loaded:
        shell.run_line_magic("unload_ext", "autograd_kit")
    for name in names:
        shell.user_ns.pop(name, None)
