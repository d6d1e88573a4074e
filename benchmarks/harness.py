"""Shared machinery for the benchmark scripts: libraries, timing, checks, the table.

A *workload* is one task (a chain of small ops, an MLP training loop, a large
elementwise expression) written once per library.  Each per-library function
receives the library and the workload's data (numpy arrays, generated once, so
every library starts from the very same numbers) and returns a :class:`Case`:

* ``run()``   one timed unit of work (for example: 20 SGD steps);
* ``grads()`` one forward + backward from the initial state, returning the
  gradients as numpy arrays, compared against the hand-written numpy floor
  *before* anything is timed so that a broken workload cannot report a time.

The scripts ``bench_engine.py`` (CPU) and ``bench_gpu.py`` (GPU) choose the
libraries, sizes and workloads; everything else lives here.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]

# Column order in the table.  "floor" is the hand-written array code (numpy on
# the CPU, cupy on the GPU): forward and backward derived by hand.
LIBRARY_ORDER = ("autograd_kit", "torch", "mygrad", "floor")


def ensure_repo_on_path() -> None:
    """Let ``import autograd_kit`` find the checkout this script lives in."""
    root = str(REPO_ROOT)
    if root not in sys.path:
        sys.path.insert(0, root)


# ------------------------------------------------------------------ cases --
@dataclass
class Case:
    """One workload, ready to run on one library."""

    run: Callable[[], object]
    grads: Callable[[], list]


@dataclass
class Library:
    """A library taking part in the comparison (``module`` is None when absent)."""

    key: str            # stable id used in JSON and --libs: autograd_kit, torch, mygrad, floor
    label: str          # what the table prints
    module: object = None
    note: str = ""      # why it is missing, or how it is configured
    sync: Callable[[], None] = field(default=lambda: None)  # wait for the device (GPU)

    @property
    def available(self) -> bool:
        return self.module is not None


@dataclass
class Workload:
    """A task, its sizes, its per-library implementations and its target."""

    name: str                      # used by --only
    title: str                     # printed in the table
    sizes: dict                    # {"full": {...}, "tiny": {...}}
    make_data: Callable[[dict], dict]
    impls: dict                    # library key -> function(module, data) -> Case
    target: tuple | None = None    # (reference library key, max ratio of autograd_kit to it)
    unit: str = ""                 # what one timed run is, for the header


@dataclass
class Result:
    workload: str
    library: str
    times_s: list = field(default_factory=list)
    median_s: float | None = None
    error: str = ""
    skipped: str = ""


# ------------------------------------------------------------ conversions --
def to_host(a) -> np.ndarray:
    """A gradient from any of the libraries (numpy, cupy, torch-style) as a numpy array."""
    if a is None:
        raise AssertionError("gradient is None: backward() did not reach this tensor")
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "detach"):             # torch-style tensors (PyTorch, autograd_kit)
        a = a.detach()
        if hasattr(a, "cpu"):
            a = a.cpu()
        return np.asarray(a.numpy())
    if hasattr(a, "get") and callable(a.get) and type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)


def check_grads(got: list, want: list, rtol: float = 2e-3, atol_frac: float = 1e-3) -> None:
    """Assert that every gradient matches the floor's, loosely (float32, other op orders).

    The absolute tolerance scales with the size of the reference gradient, so
    that tiny entries of a large tensor don't fail on rounding noise.
    """
    assert len(got) == len(want), f"{len(got)} gradients, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = to_host(g), to_host(w)
        assert g.shape == w.shape, f"gradient {i}: shape {g.shape}, expected {w.shape}"
        assert g.dtype == w.dtype, f"gradient {i}: dtype {g.dtype}, expected {w.dtype}"
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        assert scale > 0, f"gradient {i}: reference gradient is all zero (a useless check)"
        if not np.allclose(g, w, rtol=rtol, atol=atol_frac * scale):
            err = float(np.max(np.abs(g.astype(np.float64) - w)))
            raise AssertionError(f"gradient {i} differs from the floor's: max abs error "
                                 f"{err:.3g} (reference scale {scale:.3g})")


# ---------------------------------------------------------------- timing --
def time_once(run: Callable[[], object], sync: Callable[[], None]) -> float:
    """Seconds for one call of ``run``.

    ``sync`` waits for the device (a no-op on the CPU) before each clock read,
    so asynchronous GPU work is counted, and nothing queued earlier is.
    """
    sync()
    start = time.perf_counter()
    run()
    sync()
    return time.perf_counter() - start


def _fail(res: Result, lib: Library, work: Workload, exc: Exception, log) -> None:
    res.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:120]
    log(f"  ! {work.name} / {lib.label} failed:", file=sys.stderr)
    log(traceback.format_exc(), file=sys.stderr)


def run_workload(work: Workload, libs: dict, size: str, repeat: int, warmup: int,
                 log=print) -> list:
    """Check gradients, then time ``work`` on every available library.

    1. the floor computes the reference gradients;
    2. each library builds its case and its gradients are checked against them;
    3. each library runs ``warmup`` times untimed;
    4. ``repeat`` rounds, each timing one run of every library in turn.
       Interleaving the libraries means a burst of load from elsewhere on the
       machine slows all columns alike instead of skewing one of them.
    """
    data = work.make_data(work.sizes[size])
    reference = work.impls["floor"](libs["floor"].module, data).grads()
    results, ready = [], []
    for key in LIBRARY_ORDER:
        lib = libs.get(key)
        res = Result(work.name, key)
        results.append(res)
        if lib is None:
            res.skipped = "not selected"
        elif not lib.available:
            res.skipped = lib.note or "not installed"
        elif key not in work.impls:
            res.skipped = "no implementation for this workload"
        else:
            try:
                case = work.impls[key](lib.module, data)
                check_grads(case.grads(), reference)
                for _ in range(warmup):
                    case.run()
                lib.sync()
                ready.append((lib, res, case))
            except Exception as exc:  # report, and go on with the other libraries
                _fail(res, lib, work, exc, log)
    gc.collect()
    for _ in range(repeat):
        for lib, res, case in ready:
            if res.error:
                continue
            try:
                res.times_s.append(time_once(case.run, lib.sync))
            except Exception as exc:
                _fail(res, lib, work, exc, log)
    for _, res, _ in ready:
        if not res.error:
            res.median_s = statistics.median(res.times_s)
    ready.clear()  # drop the graphs and buffers before the next workload
    gc.collect()
    return results


# ------------------------------------------------------------ reporting --
def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:8.3f} s "
    if seconds >= 1e-3:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds * 1e6:8.1f} us"


def fmt_ratio(r) -> str:
    if r is None:
        return "-"
    if r >= 100:
        return f"{r:6.0f}"
    if r >= 0.01:
        return f"{r:6.2f}"
    return f"{r:6.4f}"


def ratio(res: Result, by_key: dict, ref: str):
    other = by_key.get(ref)
    if res.median_s is None or other is None or other.median_s is None:
        return None
    return res.median_s / other.median_s


def target_status(work: Workload, res: Result, by_key: dict, labels: dict) -> tuple:
    """(target text, PASS/MISS/n/a) for the autograd_kit row; empty for the others."""
    if work.target is None or res.library != "autograd_kit":
        return "", ""
    ref, limit = work.target
    text = f"<= {limit:.2f}x {labels.get(ref, 'PyTorch' if ref == 'torch' else ref)}"
    r = ratio(res, by_key, ref)
    if r is None:
        return text, "n/a"
    return text, "PASS" if r <= limit else "MISS"


def print_table(workloads: list, all_results: dict, libs: dict, out=print) -> list:
    """Print one table for every workload; return rows as dicts (for JSON)."""
    labels = {k: libs[k].label for k in libs}
    floor_label = labels.get("floor", "floor")
    head = ("workload", "library", "median", f"x {floor_label}", "x torch", "target", "")
    rows, json_rows, notes = [], [], []
    for work in workloads:
        results = all_results[work.name]
        by_key = {r.library: r for r in results}
        for res in results:
            if res.skipped == "not selected":
                continue
            label = labels.get(res.library, res.library)
            r_floor = ratio(res, by_key, "floor")
            r_torch = ratio(res, by_key, "torch")
            tgt, status = target_status(work, res, by_key, labels)
            if res.median_s is not None:
                cells = (work.title, label, fmt_time(res.median_s),
                         fmt_ratio(r_floor), fmt_ratio(r_torch), tgt, status)
            else:
                why = f"FAILED: {res.error}" if res.error else f"skipped: {res.skipped}"
                notes.append(f"{work.title} / {label} {why}")
                cells = (work.title, label, "FAILED" if res.error else "skipped",
                         "-", "-", tgt, status if res.error else "")
            rows.append(cells)
            json_rows.append({
                "workload": work.name, "library": res.library, "median_s": res.median_s,
                "times_s": res.times_s, "ratio_to_floor": r_floor, "ratio_to_torch": r_torch,
                "target": ({"reference": work.target[0], "max_ratio": work.target[1]}
                           if (tgt and work.target) else None),
                "status": status or None, "error": res.error or None,
                "skipped": res.skipped or None})
        rows.append(None)  # a rule between workloads
    table = [head] + [r for r in rows if r]
    widths = [max(len(str(c[i])) for c in table) for i in range(len(head))]
    line = "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()
    rule = "-" * len(line)
    out(line)
    out(rule)
    for r in rows[:-1]:
        if r is None:
            out(rule)
        else:
            out("  ".join(str(c).ljust(w) if i != 2 else str(c).rjust(w)
                          for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    out(rule)
    for n in notes:
        out("  note: " + n)
    return json_rows


# ------------------------------------------------------------------ CLI --
def make_parser(description: str, workload_names: list) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--repeat", type=int, default=None,
                   help="timed repeats per library and workload (median reported); default 10")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed runs before timing; default 2 (1 with --quick)")
    p.add_argument("--quick", action="store_true",
                   help="3 repeats and 1 warm-up run: a fast, noisy pass")
    p.add_argument("--tiny", action="store_true",
                   help="shrink every workload to a few elements (for smoke tests; "
                        "the times mean nothing)")
    p.add_argument("--only", default=None, metavar="NAME[,NAME...]",
                   help="run only these workloads: " + ", ".join(workload_names))
    p.add_argument("--libs", default=None, metavar="KEY[,KEY...]",
                   help="compare only these libraries: " + ", ".join(LIBRARY_ORDER))
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results as JSON")
    p.add_argument("--system-allocator", action="store_true",
                   help="leave glibc's malloc as configured (by default it is told to keep "
                        "freed memory; see keep_freed_memory)")
    return p


def finish(args, meta: dict, rows, all_results, libs) -> int:
    """Write the JSON (with ``meta``) when asked; exit status 1 if a library failed
    its gradient check or raised (a broken workload must not report a time)."""
    if args.json:
        meta = {**meta, "repeat": args.repeat, "warmup": args.warmup,
                "versions": {libs[k].label: version_of(libs[k].module) for k in libs},
                "notes": {k: libs[k].note for k in libs if libs[k].note}}
        write_json(args.json, meta, rows)
        print(f"  results written to {args.json}")
    broken = [r for res in all_results.values() for r in res if r.error]
    return 1 if broken else 0


def keep_freed_memory() -> str:
    """Ask glibc's malloc to keep freed memory instead of returning it to the OS.

    Otherwise large arrays freed by one run are handed back and the next run
    touches fresh pages: thousands of page faults that can triple a run's time,
    depending on the order in which the libraries happened to run.  All
    libraries are affected the same way (PyTorch included); this benchmark
    measures computation, so it takes the allocator out of the picture.
    Returns a line for the header."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        m_trim_threshold, m_mmap_threshold = -1, -3
        ok = libc.mallopt(m_trim_threshold, 1 << 30) and libc.mallopt(m_mmap_threshold, 1 << 30)
    except (OSError, AttributeError):
        ok = 0
    return ("allocator: glibc malloc keeps freed memory (mallopt M_TRIM_THRESHOLD and "
            "M_MMAP_THRESHOLD = 1 GiB; --system-allocator to disable)" if ok else
            "allocator: as configured (mallopt unavailable)")


def settle_args(args) -> None:
    if args.repeat is None:
        args.repeat = 3 if args.quick else 10
    if args.warmup is None:
        args.warmup = 1 if args.quick else 2
    if args.repeat < 1 or args.warmup < 0:
        raise SystemExit("--repeat must be at least 1 and --warmup at least 0")


def select(names_arg: str | None, known: list, what: str) -> list:
    if not names_arg:
        return list(known)
    wanted = [n.strip() for n in names_arg.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(known)})")
    return wanted


def import_optional(name: str):
    """(module, note): the module, or None and the reason it could not be imported."""
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # a half-written package may fail with any error
        return None, f"{name} not importable: {type(exc).__name__}: {exc}".splitlines()[0][:150]
    if getattr(module, "__file__", None) is None:  # a folder without __init__.py
        return None, f"{name} not importable: namespace package without __init__.py"
    return module, ""


def version_of(module) -> str:
    return getattr(module, "__version__", "unknown") if module is not None else "-"


def write_json(path: str, meta: dict, rows: list) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=2)
        f.write("\n")


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:  # Linux: the model name is more telling than platform.processor()
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        load = None
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpu": cpu, "cpu_count": os.cpu_count(), "load_average_1min": load}


def load_note() -> str:
    """A warning when other programs keep the CPUs busy (timings get noisy), else ''."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available on this platform
        return ""
    cpus = os.cpu_count() or 1
    if load <= 0.5 * cpus:
        return ""
    return (f"warning: load average {load:.1f} on {cpus} logical CPUs: other programs "
            "are running, so the times are noisy (the ratios less so: the libraries are "
            "timed in turn)")
