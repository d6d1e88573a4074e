"""What every engine's adapter offers: the questions a backward pass answers.

The adapters (:mod:`.kit`, :mod:`.pytorch`, :mod:`.micrograd`) subclass
:class:`BackwardPass`; the package's docstring says what each question means.
"""
from __future__ import annotations


class BackwardPass:
    """What every adapter offers (see the package's docstring)."""

    engine = ""          # "autograd_kit", "torch" or "micrograd"
    replayed = False     # True when the steps are a recording of a finished pass
    who = "The engine"   # who ran the pass, as the subject of a sentence
    about = ""           # one line for a learner: whose pass this is, and how it is shown
    total = 0
    stopper: BaseException | None = None
    freed = False

    def steps(self):
        raise NotImplementedError

    def restore(self) -> None:
        raise NotImplementedError

    def local(self, step) -> tuple | None:
        return None

    def again(self) -> None:
        raise NotImplementedError

    def notes(self, step=None, names=None) -> list[str]:
        return []

    def _dry_run(self, dry, on_step=None) -> tuple[int, BaseException | None]:
        """``(total, stopper)``: the pass ``dry`` run to its end (``on_step`` sees
        each step), then everything it changed put back (``restore()``)."""
        count, error = 0, None
        try:
            for step in dry:
                if on_step is not None:
                    on_step(step)
                count += 1
        except RuntimeError as err:
            error = err
        finally:
            dry.close()
            self.restore()
        return count, error
