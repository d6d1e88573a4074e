#!/usr/bin/env python
"""CPU benchmark: autograd_kit next to PyTorch, MyGrad and hand-written numpy.

Runs each workload on every installed library in one process and prints one
table: the median time of ``--repeat`` runs (after warm-up) per library, its
ratio to hand-written numpy (the floor) and to PyTorch, and the project's target
for autograd_kit with a PASS/MISS marker.  The script measures; it does not
judge: missed targets never change the exit status.  It exits 1 only when a
workload is broken (a library raised, or its gradients disagree with numpy's).

Workloads (see workloads.py and README.md):

  chain        2,000 small elementwise ops on a 4-element tensor, forward + backward
  mlp          20 SGD steps of a 128-512-512-10 ReLU MLP, batch 256, MSE loss
  elementwise  tanh(x * w + b) * x on 10^6 elements, sum, forward + backward

Everything is float32 and single-threaded: the BLAS/OpenMP thread variables are
set to 1 below, before numpy is imported, and PyTorch gets torch.set_num_threads(1).

    python benchmarks/bench_engine.py                 # full run, 10 repeats
    python benchmarks/bench_engine.py --only mlp --repeat 20
    python benchmarks/bench_engine.py --quick --tiny  # smoke test: seconds, meaningless times
    python benchmarks/bench_engine.py --json results.json
"""
import os

# One thread for every BLAS/OpenMP pool, set before numpy (or torch) is imported:
# the comparison is of engines, not of how many cores a matmul can grab.
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
for _var in THREAD_VARS:
    os.environ[_var] = "1"

import sys  # noqa: E402

import numpy as np  # noqa: E402

import harness  # noqa: E402
import workloads as W  # noqa: E402
from harness import Library, Workload  # noqa: E402

WORKLOADS = [
    Workload(
        name="chain", title="small-op chain",
        sizes={"full": {"n_ops": 2000, "numel": 4}, "tiny": {"n_ops": 100, "numel": 4}},
        make_data=W.chain_data,
        impls={"floor": W.chain_floor, "torch": W.chain_torchlike,
               "autograd_kit": W.chain_torchlike, "mygrad": W.chain_mygrad},
        target=("torch", 0.80),
        unit="one forward + backward of the whole chain"),
    Workload(
        name="mlp", title="MLP training",
        sizes={"full": {"d_in": 128, "hidden": 512, "d_out": 10, "batch": 256, "steps": 20},
               "tiny": {"d_in": 16, "hidden": 32, "d_out": 4, "batch": 8, "steps": 2}},
        make_data=W.mlp_data,
        impls={"floor": W.mlp_floor, "torch": W.mlp_torchlike,
               "autograd_kit": W.mlp_torchlike, "mygrad": W.mlp_mygrad},
        target=("floor", 1.10),
        unit="all SGD steps (zero_grad, forward, backward, step)"),
    Workload(
        name="elementwise", title="large elementwise",
        sizes={"full": {"numel": 10**6}, "tiny": {"numel": 1000}},
        make_data=W.elementwise_data,
        impls={"floor": W.elementwise_floor, "torch": W.elementwise_torchlike,
               "autograd_kit": W.elementwise_torchlike, "mygrad": W.elementwise_mygrad},
        target=("floor", 1.20),
        unit="one forward + backward"),
]


def load_libraries(keys):
    """The libraries to compare; a missing one keeps its row with the reason."""
    libs = {}
    harness.ensure_repo_on_path()
    if "autograd_kit" in keys:
        mod, note = harness.import_optional("autograd_kit")
        libs["autograd_kit"] = Library("autograd_kit", "autograd_kit", mod, note)
    if "torch" in keys:
        mod, note = harness.import_optional("torch")
        if mod is not None:
            mod.set_num_threads(1)
            note = "torch.set_num_threads(1)"
        libs["torch"] = Library("torch", "PyTorch", mod, note)
    if "mygrad" in keys:
        mod, note = harness.import_optional("mygrad")
        libs["mygrad"] = Library("mygrad", "MyGrad", mod, note)
    libs["floor"] = Library("floor", "numpy", np, "hand-written forward and backward")
    return libs


def describe_sizes(work, size):
    s = work.sizes[size]
    if work.name == "chain":
        return f"{s['n_ops']} ops on {s['numel']} float32 elements"
    if work.name == "mlp":
        return (f"{s['d_in']}-{s['hidden']}-{s['hidden']}-{s['d_out']}, batch {s['batch']}, "
                f"{s['steps']} steps, lr 0.01")
    return f"{s['numel']:,} float32 elements"


def main(argv=None):
    names = [w.name for w in WORKLOADS]
    parser = harness.make_parser(__doc__.splitlines()[1], names)
    args = parser.parse_args(argv)
    harness.settle_args(args)
    chosen = harness.select(args.only, names, "workload")
    lib_keys = harness.select(args.libs, list(harness.LIBRARY_ORDER), "library")
    libs = load_libraries(set(lib_keys) | {"floor"})
    size = "tiny" if args.tiny else "full"
    works = [w for w in WORKLOADS if w.name in chosen]

    allocator = "allocator: as configured" if args.system_allocator else \
        harness.keep_freed_memory()
    info = harness.machine_info()
    print("autograd_kit CPU benchmark")
    print(f"  {info['cpu'] or 'unknown CPU'} ({info['cpu_count']} logical CPUs), "
          f"Python {info['python']}")
    torch_loaded = "torch" in libs and libs["torch"].available
    print("  threads: " + ", ".join(f"{v}=1" for v in THREAD_VARS[:3])
          + " (set before importing numpy)"
          + ("; torch.set_num_threads(1)" if torch_loaded else ""))
    print("  versions: " + ", ".join(
        f"{libs[k].label} {harness.version_of(libs[k].module)}" for k in harness.LIBRARY_ORDER
        if k in libs and libs[k].available))
    for k in harness.LIBRARY_ORDER:
        if k in libs and not libs[k].available:
            print(f"  {libs[k].label}: skipped ({libs[k].note})")
    print("  " + allocator)
    if harness.load_note():
        print("  " + harness.load_note())
    print(f"  median of {args.repeat} runs after {args.warmup} warm-up run(s); float32; "
          f"sizes: {size}" + (" (--tiny: the times mean nothing)" if args.tiny else ""))
    for w in works:
        print(f"  {w.name:<12} {describe_sizes(w, size)}; one run = {w.unit}")
    print()

    all_results = {}
    for w in works:
        print(f"running {w.name} ...", flush=True)
        all_results[w.name] = harness.run_workload(w, libs, size, args.repeat, args.warmup)
    print()
    rows = harness.print_table(works, all_results, libs)
    if harness.load_note():
        print("  " + harness.load_note())
    print("  x numpy / x torch: median time divided by that library's median "
          "(below 1 = faster).  Targets apply to autograd_kit only.")

    meta = {"benchmark": "cpu", "size": size,
            "threads": {v: os.environ[v] for v in THREAD_VARS}, **info}
    return harness.finish(args, meta, rows, all_results, libs)


if __name__ == "__main__":
    sys.exit(main())
