"""What `sparseflow tune` costs a user, per kernel and matrix: with a cold kernel cache (every
configuration it times is JIT-compiled first), with a warm one (the same search again: compiled
kernels come from the cache), and a tuning-database hit (no timing at all), each as the wall time
of the command a user runs, against `sparseflow run` of the search's default configuration (A in
csr; cold: its kernel compiled first; then again from the cache).

Usage: .venv/bin/python bench/tune_cost.py [--sparseflow build/bin/sparseflow]
       [--matrices A.mtx ...] [--budget 16]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
MATRICES = ["data/suitesparse/ParU/Matrix/bayer10.mtx",
            "data/dlmc/rn50/magnitude_pruning/0.9/bottleneck_2_block_group3_1_1.smtx",
            "data/suitesparse/LAGraph/data/pushpull.mtx"]
# kernel, its dense operands' shapes, and formats pinned for both run and tune (SDDMM's output in
# A's pattern, as the shipped model's corpus pins it).
KERNELS = {
    "SpMM": ("C(i,j) = A(i,k) * B(k,j)", lambda rows, cols: {"B": (cols, 64)}, []),
    "SpMV": ("y(i) = A(i,j) * x(j)", lambda rows, cols: {"x": (cols,)}, []),
    "SDDMM": ("C(i,j) = A(i,j) * sum(k, X(i,k) * Y(j,k))",
              lambda rows, cols: {"X": (rows, 32), "Y": (cols, 32)}, ["--format", "C=csr"]),
}


def shape_of(path: pathlib.Path):
    """(rows, cols) from a Matrix Market or DLMC header."""
    with open(path) as f:
        if path.suffix == ".smtx":
            rows, cols, _ = (int(v) for v in f.readline().split(","))
            return rows, cols
        for line in f:
            if not line.startswith("%"):
                rows, cols = (int(v) for v in line.split()[:2])
                return rows, cols
    raise ValueError(f"{path}: no size line")


def timed(command, env) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    return took, done.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparseflow", default=str(ROOT / "build" / "bin" / "sparseflow"))
    ap.add_argument("--matrices", nargs="*", default=MATRICES)
    ap.add_argument("--budget", type=int, default=16)
    args = ap.parse_args()
    print("| kernel | matrix | run, cold cache (s) | run (s) | tune, cold cache (s) | tune, warm "
          "cache (s) | database hit (s) | timed | JIT compiles (cold) | chosen vs default |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for kernel_name, (kernel, operands, pinned) in KERNELS.items():
        for matrix in args.matrices:
            path = ROOT / matrix
            rows, cols = shape_of(path)
            with tempfile.TemporaryDirectory() as tmp:
                tmp = pathlib.Path(tmp)
                ins = ["--in", f"A={path}", *pinned]
                for name, shape in operands(rows, cols).items():
                    np.save(tmp / f"{name}.npy", rng.standard_normal(shape).astype(np.float32))
                    ins += ["--in", f"{name}={tmp / (name + '.npy')}"]
                env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "2",
                       "SPARSEFLOW_CACHE_DIR": str(tmp / "cache")}
                output = kernel.split("(")[0]
                suffix = ".sft" if pinned else ".npy"  # a csr output is written as .sft
                # The search's default configuration: A in csr.
                run = [args.sparseflow, "run", kernel, *ins, "--format", "A=csr", "--out",
                       f"{output}={tmp / ('out' + suffix)}"]
                run_cold_s, _ = timed(run, env)
                run_s, _ = timed(run, env)
                # The default's kernel is compiled by `run`: a fresh cache for the cold search.
                env["SPARSEFLOW_CACHE_DIR"] = str(tmp / "cold")
                tune = [args.sparseflow, "tune", kernel, *ins, "--budget", str(args.budget)]
                cold_s, _ = timed(tune + ["--no-db", "--json", str(tmp / "cold.json")], env)
                compiles = sum(1 for _ in (tmp / "cold").rglob("*.so"))
                warm_s, _ = timed(tune + ["--no-db", "--json", str(tmp / "warm.json")], env)
                db = ["--db", str(tmp / "db.jsonl")]
                timed(tune + db, env)
                hit_s, _ = timed(tune + db + ["--json", str(tmp / "hit.json")], env)
                record = json.loads((tmp / "warm.json").read_text())
                hit = json.loads((tmp / "hit.json").read_text())
                assert hit.get("from_database"), hit
                speedup = record["default_ms"] / record["median_ms"]
            print(f"| {kernel_name} | {pathlib.Path(matrix).name} | {run_cold_s:.2f} | "
                  f"{run_s:.2f} | {cold_s:.2f} | "
                  f"{warm_s:.2f} | {hit_s:.2f} | {record['measured']} of {record['space']} | "
                  f"{compiles} | {speedup:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
