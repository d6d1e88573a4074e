"""Shared by the IPython tests: a shell with the extension loaded, and whether
a Graphviz renderer can run here (SVG checks skip without one)."""
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
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


def run(shell, code, history: bool = False):
    """Run a cell; return (result, stdout + stderr without colours, displays).
    ``history``: the cell is kept in the shell's input history, as a notebook
    keeps every cell it runs (the explainer reads earlier cells there)."""
    with capture_output() as cap:
        result = shell.run_cell(code, store_history=history)
    return result, ANSI.sub("", cap.stdout + cap.stderr), cap.outputs


def flat(text: str) -> str:
    """The text with line breaks and indents folded into single spaces."""
    return " ".join(text.split())


def highlighted_titles(exp) -> list[str]:
    """Labels of the boxes drawn with the highlight style in the DOT source."""
    return [m.group(1) for m in re.finditer(r'label="([^"]*)"[^\]]*color="red" penwidth="3"',
                                            exp.picture().source)]
