"""Dense GEMMs spelled with a transposed first factor or output, through the CLI a user runs:
`C(i,j) = A(k,i) * B(k,j)` and `C(j,i) = A(i,k) * B(k,j)` (dense_linear, X transposed per call)
against the plain spelling `C(i,j) = A(i,k) * B(k,j)` on the same numbers, the same kernel as
generated code (`--generated-only`, what ran before), and numpy's `A.T @ B` (OpenBLAS) in the same
run. Medians of `--repeat 30` per call, three rounds, median of the rounds.

Usage: OMP_NUM_THREADS=2 .venv/bin/python bench/transposed_gemm.py [--sparseflow BINARY]
"""

from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHAPES = [(512, 512, 512), (2048, 384, 1536), (128, 1024, 4096)]  # m x k x n


def cli(binary, kernel, files, extra=()):
    command = [binary, "run", kernel, "--repeat", "30", *extra]
    for name, path in files.items():
        command += ["--in", f"{name}={path}"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median_ms: ([0-9.]+)", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sparseflow", default=str(ROOT / "build/bin/sparseflow"))
    args = parser.parse_args()
    rng = np.random.default_rng()
    print("| m x k x n | plain ms | A(k,i) ms | C(j,i) ms | generated A(k,i) ms "
          "| numpy A.T @ B ms |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        a_path, at_path, b_path = (pathlib.Path(tmp) / f for f in ("A.npy", "At.npy", "B.npy"))
        for m, k, n in SHAPES:
            a = rng.standard_normal((k, m), dtype=np.float32)  # A(k,i)
            b = rng.standard_normal((k, n), dtype=np.float32)  # B(k,j)
            np.save(a_path, a)
            np.save(at_path, np.ascontiguousarray(a.T))
            np.save(b_path, b)
            plain_files = {"A": at_path, "B": b_path}
            first_files = {"A": a_path, "B": b_path}
            rounds = []
            for _ in range(3):
                r = {"plain": cli(args.sparseflow, "C(i,j) = A(i,k) * B(k,j)", plain_files),
                     "first": cli(args.sparseflow, "C(i,j) = A(k,i) * B(k,j)", first_files),
                     "out": cli(args.sparseflow, "C(j,i) = A(i,k) * B(k,j)", plain_files),
                     "generated": cli(args.sparseflow, "C(i,j) = A(k,i) * B(k,j)", first_files,
                                      ["--generated-only"])}
                times = []
                for _ in range(30):
                    t0 = time.perf_counter()
                    a.T @ b
                    times.append((time.perf_counter() - t0) * 1e3)
                r["numpy"] = statistics.median(times)
                rounds.append(r)
            med = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
            print(f"| {m} x {k} x {n} | {med['plain']:.3f} | {med['first']:.3f} | "
                  f"{med['out']:.3f} | {med['generated']:.2f} | {med['numpy']:.3f} |")


if __name__ == "__main__":
    main()
