#!/usr/bin/env python
"""GPU benchmark: autograd_kit on cupy next to PyTorch CUDA and hand-written cupy.

The same harness and the same workload code as bench_engine.py, scaled up for
a GPU and run with ``device="cuda"``:

  mlp          20 SGD steps of a 1024-4096-4096-10 ReLU MLP, batch 4096, MSE loss
  elementwise  tanh(x * w + b) * x on 10^7 elements, sum, forward + backward

The device is synchronised before every clock read (cupy and torch both), so
queued kernels are counted.  Everything is float32; TF32 is left at each
library's default (off for float32 matmuls in both PyTorch and cupy).

Without cupy or a GPU the script says so and exits 0.  ``--cpu-dry-run`` runs
the same code on the CPU (numpy floor, tiny sizes) to check the code paths on a
machine without a GPU; its times mean nothing.

    python benchmarks/bench_gpu.py
    python benchmarks/bench_gpu.py --only mlp --repeat 20 --json gpu.json
    python benchmarks/bench_gpu.py --cpu-dry-run --quick
"""
import sys

import numpy as np

import harness
import workloads as W
from harness import Library, Workload

WORKLOADS = [
    Workload(
        name="mlp", title="MLP training",
        sizes={"full": {"d_in": 1024, "hidden": 4096, "d_out": 10, "batch": 4096, "steps": 20},
               "tiny": {"d_in": 16, "hidden": 32, "d_out": 4, "batch": 8, "steps": 2}},
        make_data=W.mlp_data,
        impls={"floor": W.mlp_floor, "torch": W.mlp_torchlike, "autograd_kit": W.mlp_torchlike},
        target=("floor", 1.10),
        unit="all SGD steps (zero_grad, forward, backward, step)"),
    Workload(
        name="elementwise", title="large elementwise",
        sizes={"full": {"numel": 10**7}, "tiny": {"numel": 1000}},
        make_data=W.elementwise_data,
        impls={"floor": W.elementwise_floor, "torch": W.elementwise_torchlike,
               "autograd_kit": W.elementwise_torchlike},
        target=("floor", 1.20),
        unit="one forward + backward"),
]


def find_gpu():
    """(cupy, None) when cupy works and sees a GPU, else (None, the reason)."""
    cupy, note = harness.import_optional("cupy")
    if cupy is None:
        return None, "cupy is not installed (pip install cupy-cuda12x)"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "cupy sees no GPU"
        float(cupy.zeros(1).sum())  # a driver problem shows up here, not at import
    except Exception as exc:
        return None, f"cupy cannot use a GPU: {type(exc).__name__}: {exc}".splitlines()[0]
    return cupy, None


def load_gpu_libraries(keys, cupy):
    """autograd_kit on cuda, PyTorch CUDA and the cupy floor, each if it works."""
    def sync():
        cupy.cuda.Device().synchronize()

    libs = {"floor": Library("floor", "cupy", cupy, "hand-written forward and backward",
                             sync=sync)}
    harness.ensure_repo_on_path()
    if "autograd_kit" in keys:
        mod, note = harness.import_optional("autograd_kit")
        if mod is not None:
            try:
                mod.tensor(np.ones(2, np.float32), device="cuda").sum()
            except Exception as exc:
                mod, note = None, f"autograd_kit cannot use cuda: {type(exc).__name__}: {exc}"
        libs["autograd_kit"] = Library("autograd_kit", "autograd_kit", mod,
                                       note.splitlines()[0] if note else "", sync=sync)
    if "torch" in keys:
        mod, note = harness.import_optional("torch")
        if mod is not None and not mod.cuda.is_available():
            mod, note = None, "this PyTorch build has no CUDA (or sees no GPU)"
        libs["torch"] = Library("torch", "PyTorch", mod, note,
                                sync=mod.cuda.synchronize if mod is not None else sync)
    return libs


def load_dry_run_libraries(keys):
    """The same columns on the CPU, for checking the script without a GPU."""
    harness.ensure_repo_on_path()
    libs = {"floor": Library("floor", "numpy", np, "dry run: numpy stands in for cupy")}
    for key, label in (("autograd_kit", "autograd_kit"), ("torch", "PyTorch")):
        if key in keys:
            mod, note = harness.import_optional(key)
            if key == "torch" and mod is not None:
                mod.set_num_threads(1)  # spare a busy CPU the OpenMP spinning
            libs[key] = Library(key, label, mod, note)
    return libs


def main(argv=None):
    names = [w.name for w in WORKLOADS]
    parser = harness.make_parser(__doc__.splitlines()[1], names)
    parser.add_argument("--cpu-dry-run", action="store_true",
                        help="run the GPU script's code on the CPU with tiny sizes "
                             "(checks the code paths; the times mean nothing)")
    args = parser.parse_args(argv)
    harness.settle_args(args)
    chosen = harness.select(args.only, names, "workload")
    lib_keys = set(harness.select(args.libs, list(harness.LIBRARY_ORDER), "library"))

    print("autograd_kit GPU benchmark")
    if args.cpu_dry_run:
        libs, device, size = load_dry_run_libraries(lib_keys), "cpu", "tiny"
        print("  --cpu-dry-run: the GPU workloads on the CPU with tiny sizes; "
              "this checks the code, the times mean nothing")
    else:
        cupy, reason = find_gpu()
        if cupy is None:
            print(f"  no GPU benchmark: {reason}.")
            print("  Nothing was measured.  Run this on a machine with an NVIDIA GPU and "
                  "cupy, or see bench_engine.py for the CPU benchmark.")
            return 0
        libs, device = load_gpu_libraries(lib_keys, cupy), "cuda"
        size = "tiny" if args.tiny else "full"
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        print(f"  GPU: {name}; cupy {cupy.__version__}")

    print("  versions: " + ", ".join(
        f"{libs[k].label} {harness.version_of(libs[k].module)}" for k in harness.LIBRARY_ORDER
        if k in libs and libs[k].available))
    for k in harness.LIBRARY_ORDER:
        if k in libs and not libs[k].available:
            print(f"  {libs[k].label}: skipped ({libs[k].note})")
    print(f"  median of {args.repeat} runs after {args.warmup} warm-up run(s); float32; "
          f"device {device}; sizes: {size}")
    print()

    works = []
    for w in WORKLOADS:
        if w.name in chosen:
            sizes = {k: dict(v, device=device) for k, v in w.sizes.items()}
            works.append(Workload(w.name, w.title, sizes, w.make_data, w.impls, w.target, w.unit))

    all_results = {}
    for w in works:
        print(f"running {w.name} ...", flush=True)
        all_results[w.name] = harness.run_workload(w, libs, size, args.repeat, args.warmup)
    print()
    floor_label = libs["floor"].label
    rows = harness.print_table(works, all_results, libs)
    if harness.load_note():
        print("  " + harness.load_note())
    print(f"  x {floor_label} / x torch: median time divided by that library's median "
          "(below 1 = faster).  Targets apply to autograd_kit only.")

    meta = {"benchmark": "gpu" if device == "cuda" else "gpu-script dry run on cpu",
            "size": size, **harness.machine_info()}
    return harness.finish(args, meta, rows, all_results, libs)


if __name__ == "__main__":
    sys.exit(main())
