"""An engine's error in plain words, as the widgets say it.

The facts come from :func:`autograd_kit.viz.error_facts.error_facts`, the same
for both engines; the words here are the widgets' own (shorter than the
explainer's), followed by the engine's message as the engine wrote it.
"""
from __future__ import annotations

from autograd_kit.i18n import N_, _
from autograd_kit.viz import labels
from autograd_kit.viz.error_facts import error_facts

from ._common import ENGINE, esc, spaced, who_text
from .notebook import as_written


#: an engine error's kind (:func:`autograd_kit.viz.error_facts.error_facts`), in
#: plain words; PyTorch's own message follows them
ERROR_WORDS = {
    "graph_freed": N_("This graph was already used by a backward pass that freed the "
                      "tensors it had saved, so there is nothing left to compute the "
                      "gradients from. Run the forward pass again to build a new graph, "
                      "or give the first backward retain_graph=True."),
    "non_scalar": N_("The root holds more than one number. backward() can start on its "
                     "own only from a single number (the loss); for a tensor, say how "
                     "much each element matters: pass gradient=torch.ones_like(root)."),
    "no_grad_fn": N_("This tensor is not part of any graph: it does not require grad and "
                     "has no grad_fn, so no gradient can flow back from it. It was computed "
                     "while recording was off (under torch.no_grad() or "
                     "torch.inference_mode()), cut off the graph by .detach() (or .data, "
                     ".item()), or from inputs none of which requires grad. Compute it "
                     "again with grad mode on, from tensors that require grad."),
    "grad_shape": N_("The gradient given for the root must have the root's shape."),
    # the words when the versions are not known (see saved_modified_words)
    "saved_modified": N_("A tensor saved for backward was changed in place after it "
                         "was saved, so the gradient would be computed from the wrong "
                         "numbers. The pass stopped instead."),
    "leaf_inplace": N_("A leaf that requires grad cannot be changed in place: recording "
                       "the change would give the leaf a grad_fn, so it would stop being a "
                       "leaf, and its AccumulateGrad node, the one that fills .grad, "
                       "would be lost. The engine refused before touching anything."),
}


def saved_modified_words(facts, who: str = ENGINE) -> str | None:
    """A changed saved tensor, with its versions: by the node that saved it when
    that is known (autograd_kit names it; for PyTorch it is found in the graph),
    else by the tensor's shape, as PyTorch's message gives it.  None when the
    versions are not known."""
    if facts.found is None or facts.expected is None:
        return None
    if facts.node is not None and facts.saved_name:
        return _("{node} saved '{saved}' for backward at version {expected}, but that "
                 "tensor is now at version {found}: an in-place operation changed it "
                 "after it was saved, so the gradient would be computed from the wrong "
                 "numbers. The engine stopped instead.").format(
            node=facts.node_name, saved=facts.saved_name, expected=facts.expected,
            found=facts.found)
    if facts.shape is None:
        return None
    return _("A tensor of shape {shape} was saved for backward at version {expected}, "
             "but it is now at version {found}: an in-place operation changed it after "
             "it was saved, so the gradient would be computed from the wrong numbers. "
             "{who} stopped instead.").format(
        shape=labels.shape_text(facts.shape), expected=facts.expected, found=facts.found,
        who=who_text(who))


def error_words(err: BaseException, who: str = ENGINE, root=None) -> str:
    """An engine error in plain words (plain text), as the widgets say it."""
    facts = error_facts(err, (root,) if root is not None else ())
    words = saved_modified_words(facts, who) if facts.kind == "saved_modified" else None
    if words is None and facts.kind in ERROR_WORDS:
        words = _(ERROR_WORDS[facts.kind])
        if who == ENGINE:  # "torch.no_grad()" as the notebook calls the kit: ak.no_grad()
            words = as_written(words)
    return words or spaced(_("{who} stopped with an error.").format(who=who_text(who)))


def source_line(err: BaseException, who: str = ENGINE) -> str:
    """``PyTorch's message (RuntimeError):`` (plain text; the message follows it)."""
    kind_name = type(err).__name__
    return (_("Engine message ({kind}):").format(kind=kind_name) if who == ENGINE else
            spaced(_("{who}'s message ({kind}):").format(who=who, kind=kind_name)))


def explain_text(err: BaseException, who: str = ENGINE, root=None) -> str:
    """:func:`explain` as plain text, for a magic's one-line message."""
    return f"{error_words(err, who, root)} {source_line(err, who)} {err}"


def explain(err: BaseException, who: str = ENGINE, root=None) -> str:
    """An engine error in plain words, then the engine's own message (HTML), which
    stays as the engine wrote it (PyTorch's wording, in English).
    ``who`` names the engine in the message line: ``"PyTorch"``.  ``root``, the
    tensor the pass started from, lets a PyTorch error name the node that failed
    (PyTorch's message does not)."""
    words, source = error_words(err, who, root), source_line(err, who)
    return (f"{esc(words)}<br><span style='font-size:85%;color:#555'>{esc(source)} "
            f"<code>{esc(err)}</code></span>")
