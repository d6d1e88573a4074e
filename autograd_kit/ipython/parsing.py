"""Reading a magic's line and running code in the notebook's namespace.

A magic line mixes a Python expression with options::

    %autograd_graph (x * w).sum() --values --theme dark

IPython's usual argument splitter treats the line like a shell command, which
breaks expressions such as ``torch.ones(2, 3)`` apart at the space.  Here the
line is split only on spaces *outside* brackets and quotes, and everything
before the first ``--option`` is kept, untouched, as the expression.

>>> split_options("(x * w).sum() --values --theme dark")
('(x * w).sum()', '--values --theme dark')
>>> tokens("--gradient torch.ones(2, 3) --retain-graph")
['--gradient', 'torch.ones(2, 3)', '--retain-graph']
"""
from __future__ import annotations

import ast

from IPython.core.error import UsageError

from ..i18n import _

_OPEN, _CLOSE = "([{", ")]}"


def _scan(line: str):
    """Yield ``(index, char, depth)`` for characters outside string literals."""
    depth, quote, i = 0, None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        else:
            depth += (c in _OPEN) - (c in _CLOSE)
            yield i, c, depth
        i += 1


def split_options(line: str) -> tuple[str, str]:
    """``(expression, options)``: options start at the first ``--name`` that
    stands at the start of a word, outside brackets and quotes."""
    for i, c, depth in _scan(line):
        if (c == "-" and depth == 0 and line.startswith("--", i)
                and (i == 0 or line[i - 1].isspace())
                and line[i + 2:i + 3].isalpha()):
            return line[:i].strip(), line[i:].strip()
    return line.strip(), ""


def tokens(text: str) -> list[str]:
    """Split at spaces outside brackets and quotes (quotes are kept)."""
    cuts = [i for i, c, depth in _scan(text) if c.isspace() and depth == 0]
    pieces, start = [], 0
    for cut in cuts + [len(text)]:
        pieces.append(text[start:cut])
        start = cut + 1
    return [p for p in pieces if p]


def parse(magic_func, line: str, name: str, expression: bool = True):
    """Parse ``line`` for a magic declared with ``magic_arguments``.

    With ``expression``, the text before the options (plus any words left
    after them) is returned joined as ``args.expression``.  Bad options raise
    ``UsageError`` with a one-line message naming the magic."""
    head, options = split_options(line) if expression else ("", line)
    try:
        args = magic_func.parser.parse_args(tokens(options))
    except UsageError as err:
        raise UsageError(f"{name}: {err}") from None
    if expression:
        args.expression = " ".join([head] * bool(head) + list(args.expression or []))
    return args


def evaluate(shell, source: str, name: str):
    """The value of ``source`` in the notebook's namespace.

    Any error becomes a one-line ``UsageError`` such as
    ``autograd_graph: NameError: name 'q' is not defined``."""
    try:
        return shell.ev(source)
    except Exception as err:  # a typo in a magic line deserves one line, not a traceback
        raise UsageError(f"{name}: {type(err).__name__}: {err}") from None


def run_cell_body(shell, cell: str, name: str = "autograd_graph"):
    """Run a cell's code in the notebook's namespace, as IPython would; return
    the value of its last line when that line is an expression, else None.

    Code that does not parse gives a one-line ``UsageError`` naming the line.
    Errors in the cell are raised as usual, so the cell fails like any other;
    their traceback starts at the cell's own lines (see :func:`from_the_cell`)."""
    source = shell.transform_cell(cell)
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise UsageError(f"{name}: " + _("SyntaxError in the cell, line {line}: {message}")
                         .format(line=err.lineno, message=err.msg)) from None
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    filename = shell.compile.cache(source, shell.execution_count, raw_code=cell)
    namespaces = (shell.user_global_ns, shell.user_ns)
    try:
        exec(compile(tree, filename, "exec"), *namespaces)
        if last is None:
            return None
        expression = ast.Expression(last.value)
        return eval(compile(expression, filename, "eval"), *namespaces)
    except Exception as err:
        from_the_cell(shell, err, filename)
        raise


def from_the_cell(shell, err: BaseException, filename: str) -> None:
    """Make IPython show ``err``'s traceback from the cell's code on, without
    the frames of the magic that ran it.

    The traceback entries before the cell's first frame are cut off by giving
    the error a ``_render_traceback_`` (what IPython asks an error for first).
    autograd_kit's errors define that hook themselves; they keep the cut
    traceback as ``_autograd_kit_cell_tb`` for it."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:
        return
    try:
        err._autograd_kit_cell_tb = tb
    except AttributeError:  # an error type without attributes: leave it as it is
        return

    def render():
        return shell.InteractiveTB.structured_traceback(type(err), err, tb, tb_offset=0)

    try:
        err._render_traceback_ = render
    except AttributeError:  # the hook is a property (autograd_kit's errors)
        pass
