"""The magics of ``%load_ext autograd_kit``.

Each magic is thin: read the line, evaluate the expression in the notebook's
namespace, call the library, display the result.  ``%magic?`` shows the usage.
A bad option or a bad expression gives a one-line ``UsageError`` (the cell
stops there, without a traceback).  Tensors may come from autograd_kit or from
PyTorch itself: both engines' graphs are read the same way (:mod:`..viz.access`);
``%autograd_graph`` and ``%autograd_step`` also take micrograd's scalar ``Value``.

===============================  ==============================================
``%autograd_graph EXPR [opts]``  draw the graph of an expression
``%%autograd_graph [opts]``      run the cell, then draw the graph it built
``%autograd_step EXPR``          step through backward() with a widget
``%autograd_explain on|off``     autograd errors explain themselves
``%autograd_display card|text``  tensors shown as HTML cards, or as text
``%autograd_alias torch|off``    ``import torch`` gives autograd_kit, or PyTorch
===============================  ==============================================

Every magic takes ``--lang zh|ru|en``: its words (messages, the stepper's
buttons and panel, the card's field names, the explanations) in that language,
whatever :func:`autograd_kit.set_language` chose for the rest of the notebook.
PyTorch's own error messages are never translated.
"""
from __future__ import annotations

from contextlib import nullcontext

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..i18n import LANGUAGES, _, get_language, language, ngettext
from . import display as display_hooks
from . import explain, graph_errors, steppers
from .parsing import evaluate, parse, run_cell_body


LANG_HELP = "the language of this call's words: " + ", ".join(LANGUAGES)


def _speaking(lang: str | None):
    """``with _speaking(args.lang):`` -- the call's language, or the notebook's."""
    return language(lang) if lang else nullcontext()


def _require(value, magic: str, drawing: bool = False):
    """``value`` if ``magic`` can take it: a tensor of autograd_kit or PyTorch, or
    a micrograd Value (for drawing also a grad_fn node, or a non-empty tuple/list
    of them); else a
    one-line ``UsageError`` in the words every tool uses for a wrong input
    (:func:`autograd_kit.viz.access.require_tensor`)."""
    from ..viz import access
    try:
        return access.require_tensor(value, magic, many=drawing, nodes=drawing,
                                     values=True)
    except TypeError as err:
        raise UsageError(str(err)) from None


def _drawable(value) -> bool:
    """Whether ``%autograd_graph`` can draw ``value`` (see :func:`_require`)."""
    try:
        _require(value, "autograd_graph", drawing=True)
    except UsageError:
        return False
    return True


def _new_graph_tensors(before: dict, namespace: dict) -> list:
    """Tensors (of either engine) with a grad_fn, and micrograd Values with
    inputs, bound to a public name that is new or rebound."""
    from ..viz import access

    def made(v) -> bool:
        if access.is_value(v):
            return bool(access.value_inputs(v))
        return bool(access.engine_name(v)) and v.grad_fn is not None
    return [v for k, v in namespace.items()
            if isinstance(k, str) and not k.startswith("_") and made(v)
            and before.get(k, None) is not v]


def _why_not_steppable(root, expression: str, gradient) -> str | None:
    """Why backward() can't be stepped through from ``root``, in words; None if it can."""
    from ..viz import access
    if access.is_value(root):
        return _why_not_steppable_value(root, expression, gradient)
    if root.grad_fn is None:
        if root.requires_grad:
            return _("{expr} is a leaf: it has no grad_fn, so there is nothing to step "
                     "through (backward() would only add to its .grad); step through a "
                     "tensor computed from it, such as a loss").format(expr=expression)
        if graph_errors.inference(root):
            return _("{expr} was made under torch.inference_mode(): an inference tensor "
                     "has no grad_fn and never records a graph, so there is nothing to step "
                     "through; compute it again outside inference_mode").format(
                expr=expression)
        return _("{expr} has no grad_fn and does not require grad: no graph leads to it, "
                 "so there is nothing to step through. It was computed while recording was "
                 "off (under torch.no_grad() or torch.inference_mode()), cut off the graph by "
                 ".detach() (or .data, .item()), or from inputs none of which requires grad; "
                 "compute it again with grad mode on").format(expr=expression)
    if gradient is None and root.numel() != 1:
        return _("{expr} has shape {shape}, not a single number: backward() needs a "
                 "starting gradient for it (its gradient= argument); pass --gradient, e.g. "
                 "--gradient torch.ones_like({expr}), or step through ({expr}).sum()").format(
            expr=expression, shape=tuple(root.shape))
    return None


def _why_not_steppable_value(root, expression: str, gradient) -> str | None:
    """:func:`_why_not_steppable` for a micrograd Value."""
    from ..viz import access
    if not access.value_inputs(root):
        return _("{expr} is a leaf Value: its _prev is empty, so no _backward has anything "
                 "to send and there is nothing to step through; step through a Value "
                 "computed from it, such as a loss").format(expr=expression)
    if gradient is not None and (isinstance(gradient, bool)
                                 or not isinstance(gradient, (int, float))):
        return _("--gradient for a micrograd Value is the number its grad starts from "
                 "(backward() uses 1), not a {type}").format(type=type(gradient).__name__)
    return None


@magics_class
class AutogradMagics(Magics):
    """Magics that draw autograd graphs, step through backward() and explain errors."""

    @magic_arguments()
    @argument("expression", nargs="*",
              help="a tensor (or grad_fn, or tuple of tensors) to draw, e.g. loss")
    @argument("--values", action="store_true", help="show the numbers in tensor boxes")
    @argument("--grads", action="store_true", help="show .grad in tensor boxes")
    @argument("--saved", action="store_true", help="draw the tensors saved for backward")
    @argument("--attrs", action="store_true", help="list each op's saved non-tensor values")
    @argument("--theme", choices=["light", "dark", "print"], default="light",
              help="colours of the picture (default: light)")
    @argument("--view", choices=["backward", "forward"], default="backward",
              help="backward: grad_fn nodes, as torchviz; forward: tensors and ops")
    @argument("--max-nodes", type=int, default=None, metavar="N",
              help="fold long chains so that about N boxes remain")
    @argument("--lang", choices=LANGUAGES, default=None, help=LANG_HELP)
    @line_cell_magic
    def autograd_graph(self, line: str, cell: str | None = None):
        """Draw the autograd graph of an expression.

        Line magic: ``%autograd_graph loss --values`` draws the graph that
        produced ``loss``.  Boxes of tensors bound to a variable carry its name.

        Cell magic: ``%%autograd_graph [--options]`` runs the cell, then draws
        what it built: the value of the last line if it is a tensor, else
        every tensor with a grad_fn that the cell bound to a name.  An
        expression on the ``%%`` line is drawn instead (``%%autograd_graph loss``).

        Options go after the expression (or before it).  Tensors of autograd_kit
        and of PyTorch are both drawn.  If the cell's code fails, its error shows
        with the cell's own lines only.  ``--lang zh`` (or ``ru``, ``en``): this
        call's messages in that language."""
        args = parse(self.autograd_graph, line, "autograd_graph")
        with _speaking(args.lang):
            self._graph(args, cell)

    def _graph(self, args, cell: str | None) -> None:
        if args.max_nodes is not None and args.max_nodes < 1:
            raise UsageError("autograd_graph: " + _("--max-nodes must be at least 1"))
        if cell is not None:
            root = self._run_and_collect(cell, args.expression)
            if root is None:
                print("autograd_graph: " + _("the cell built no graph (no tensor with a "
                                             "grad_fn)"))
                return
        elif not args.expression:
            raise UsageError("autograd_graph: " + _("give an expression, e.g. {example}")
                             .format(example="%autograd_graph loss"))
        else:
            root = evaluate(self.shell, args.expression, "autograd_graph")
        _require(root, "autograd_graph", drawing=True)
        from ..viz import make_dot
        display(make_dot(root, show_attrs=args.attrs, show_saved=args.saved,
                         show_values=args.values, show_grads=args.grads,
                         names=self.shell.user_ns, view=args.view,
                         max_nodes=args.max_nodes, theme=args.theme))

    def _run_and_collect(self, cell: str, expression: str):
        """Run the cell; return what to draw (see ``autograd_graph``), or None."""
        before = dict(self.shell.user_ns)
        value = run_cell_body(self.shell, cell)
        if expression:
            return evaluate(self.shell, expression, "autograd_graph")
        if _drawable(value):
            return value
        found = _new_graph_tensors(before, self.shell.user_ns)
        if not found:
            return None
        return found[0] if len(found) == 1 else found

    @magic_arguments()
    @argument("expression", nargs="*", help="the tensor to call backward() on, e.g. loss")
    @argument("--gradient", nargs="+", metavar="EXPR",
              help="the gradient to start from (for a non-scalar output)")
    @argument("--retain-graph", action="store_true",
              help="keep the saved tensors, so backward() can run again afterwards")
    @argument("--lang", choices=LANGUAGES, default=None, help=LANG_HELP)
    @line_magic
    def autograd_step(self, line: str):
        """Step through ``backward()`` one node at a time, with a widget.

        ``%autograd_step loss`` shows the graph of ``loss`` and buttons to run
        the backward pass node by node: the gradient arriving at each node, the
        gradients it sends on, the leaves' ``.grad`` filling up.
        ``--gradient EXPR`` starts from a given gradient (needed when the output
        is not a single number); ``--retain-graph`` keeps the graph usable.
        Works on autograd_kit's tensors, on PyTorch's and on micrograd's Values
        (whose own ``_backward`` closures run, one per step).  A root that can't be
        stepped through (a leaf; a non-scalar without ``--gradient``) gets one
        line saying why.  ``--lang zh`` (or ``ru``, ``en``): the widget's buttons,
        panel and messages in that language (it keeps it when clicked later)."""
        args = parse(self.autograd_step, line, "autograd_step")
        with _speaking(args.lang):
            self._step(args)

    def _step(self, args) -> None:
        if not args.expression:
            raise UsageError("autograd_step: " + _("give an expression, e.g. {example}")
                             .format(example="%autograd_step loss"))
        root = _require(evaluate(self.shell, args.expression, "autograd_step"),
                        "autograd_step")
        gradient = None
        if args.gradient:
            gradient = evaluate(self.shell, " ".join(args.gradient), "autograd_step")
        reason = _why_not_steppable(root, args.expression, gradient)
        if reason:
            raise UsageError(f"autograd_step: {reason}.")
        try:
            from ..widgets import BackwardStepper
        except ImportError as err:
            raise UsageError("autograd_step: " + _("the step-by-step widget is not available "
                                                   "({error}); it needs ipywidgets 8").format(
                error=err)) from None
        try:
            stepper = BackwardStepper(root, gradient=gradient,
                                      retain_graph=args.retain_graph,
                                      names=self.shell.user_ns)
        except Exception as err:  # one line, not the widget's insides
            raise UsageError("autograd_step: " + _("the stepper could not open {expr}: "
                                                   "{error}").format(
                expr=args.expression, error=f"{type(err).__name__}: {err}")) from None
        problem = getattr(stepper, "problem", None)
        if problem is not None:  # the widget would only say "cannot show this root"
            if isinstance(problem, BaseException):  # in the words the widget uses
                from ..widgets.error_words import explain_text
                source = getattr(stepper, "_source", None)
                problem = explain_text(problem, getattr(source, "who", "PyTorch"), root)
            raise UsageError("autograd_step: " + _("cannot step through {expr}: {problem}")
                             .format(expr=args.expression, problem=problem))
        steppers.remember(root, args.expression, stepper)
        display(stepper)

    @magic_arguments()
    @argument("state", nargs="?", choices=["on", "off"],
              help="on: autograd errors explain themselves; off: plain tracebacks")
    @argument("--lang", choices=LANGUAGES, default=None,
              help="the language of the explanations: " + ", ".join(LANGUAGES))
    @line_magic
    def autograd_explain(self, line: str):
        """Make autograd errors explain themselves: ``%autograd_explain on``.

        An autograd error (a leaf changed in place, a saved tensor changed in
        place, a graph used twice, backward() on a non-scalar or on a tensor
        without grad_fn, an unused input of grad(), an integer tensor that
        requires grad, .numpy() or .cuda() refused) -- autograd_kit's or real
        PyTorch's -- then shows,
        after its usual traceback, a few plain sentences (what went wrong, why,
        how to fix it) and a picture of the graph with the culprit outlined in
        red.  The error is still raised: the cell fails as before.  A cell that
        reads a non-leaf's ``.grad``, or whose loop keeps adding gradients up
        without ``zero_grad()``, gets a word too, and so does one that called
        ``.backward()`` on a micrograd ``Value`` whose backward code has a
        lecture mistake (``=`` for ``+=``, a ``_backward`` never set).  Without
        an argument, says whether it is on.

        ``%autograd_explain on --lang ru`` (or ``zh``, ``en``) explains in that
        language from now on, whatever the notebook's language; ``--lang``
        alone changes only the language.  The error's own message, PyTorch's
        wording, stays as it is."""
        args = parse(self.autograd_explain, line, "autograd_explain", expression=False)
        if args.lang:
            explain.set_explain_language(args.lang)
        if args.state is None:
            with _speaking(explain.explain_language()):
                state = _("on") if explain.is_on() else _("off")
                print(_("autograd_explain is {state}").format(state=state)
                      + (f" ({get_language()})" if args.lang else ""))
        elif args.state == "on":
            explain.enable(self.shell)
        else:
            explain.disable(self.shell)

    @magic_arguments()
    @argument("mode", nargs="?", choices=list(display_hooks.MODES),
              help="card: tensors also show as an HTML card; text: PyTorch's text only")
    @argument("--lang", choices=LANGUAGES, default=None,
              help="the language of the card's field names: " + ", ".join(LANGUAGES))
    @line_magic
    def autograd_display(self, line: str):
        """Choose how tensors display: ``%autograd_display card`` or ``text``.

        ``card`` adds a small HTML card to every displayed tensor: its value,
        shape, dtype, device, whether it is a leaf, requires_grad, grad_fn and
        grad.  The text is still there (stored notebooks compare the same).
        ``text`` (the default) shows PyTorch's text only.  Without an
        argument, says which mode is on.  ``--lang zh`` (or ``ru``, ``en``): the
        cards' field names in that language from now on."""
        args = parse(self.autograd_display, line, "autograd_display", expression=False)
        if args.lang:
            display_hooks.set_card_language(args.lang)
        if args.mode is None:
            with _speaking(display_hooks.card_language()):
                print(_("autograd_display is {mode}").format(mode=display_hooks.get_mode()))
        else:
            display_hooks.set_mode(args.mode)

    @magic_arguments()
    @argument("state", nargs="?", choices=["torch", "off"],
              help="torch: `import torch` gives autograd_kit from now on; off: PyTorch again")
    @argument("--lang", choices=LANGUAGES, default=None, help=LANG_HELP)
    @line_magic
    def autograd_alias(self, line: str):
        """Run unchanged PyTorch code on autograd_kit: ``%autograd_alias torch``.

        From then on ``import torch``, ``from torch import nn``, ``import
        torch.nn.functional as F``, ``import torch.optim as optim``, ``from
        torch.utils.data import DataLoader`` and ``from torch.autograd import
        Function`` all give the kit (:func:`autograd_kit.alias_torch`).  Run the
        imports after it: names bound before keep what they were bound to (it
        says which).  ``%autograd_alias off`` puts back what ``import torch``
        gave before (PyTorch, or nothing); without an argument, says whether
        it is on.  ``--lang zh`` (or ``ru``, ``en``): its messages in that
        language."""
        args = parse(self.autograd_alias, line, "autograd_alias", expression=False)
        with _speaking(args.lang):
            print(self._alias(args.state))

    def _alias(self, state: str | None) -> str:
        from .. import alias
        if state is None:
            on = alias.torch_aliased()
            return _("autograd_alias is {state}").format(state=_("on") if on else _("off"))
        if state == "off":
            alias.unalias_torch()
            return _("`import torch` gives PyTorch again; names imported while the alias was "
                     "on still refer to autograd_kit.")
        alias.alias_torch()
        said = _("`import torch` now gives autograd_kit (torch.nn, torch.optim, "
                 "torch.utils.data... too); %autograd_alias off undoes it.")
        stale = [f"`{name}`" for name in alias.still_pytorch(self.shell.user_ns)]
        if stale:
            said += " " + ngettext("Run your imports again: {names} still refers to PyTorch.",
                                   "Run your imports again: {names} still refer to PyTorch.",
                                   len(stale)).format(names=", ".join(stale))
        return said
