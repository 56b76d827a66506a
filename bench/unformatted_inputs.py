"""SpMM as a user first spells it, without a format: `sparseflow run` on a Matrix Market file and
`sf.compile(...)` called with a scipy.sparse matrix. Both now run in the input's own format (csr);
before, the operand was densified (what `--format A=dense` / `formats={"A": "dense"}` still do,
timed here as the old behaviour). scipy's `A @ B` is the peer, in the same run.

CLI: wall time of the whole command (read, compile from the cache, run, write) and its kernel
median (`--repeat`). Python: median per call, conversions and allocation included.

Usage: .venv/bin/python bench/unformatted_inputs.py [--sparseflow build/bin/sparseflow]
       [--matrices A.mtx ...] [--columns 64] [--runs 20]
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
import scipy.io
import scipy.sparse as sp

import sparseflow as sf

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Held out of every tuning and kernel choice made on this machine (none of them is in the tune
# corpus's training split or the SpMM table's tuned set).
MATRICES = ["data/suitesparse/ParU/Matrix/bayer10.mtx",
            "data/suitesparse/LAGraph/data/pushpull.mtx",
            "data/suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx"]
KERNEL = "C(i,j) = A(i,k) * B(k,j)"


def cli(args, extra, a_path, b_path, out_path):
    command = [args.sparseflow, "run", KERNEL, "--in", f"A={a_path}", "--in", f"B={b_path}",
               "--out", f"C={out_path}", "--repeat", str(args.runs), *extra]
    subprocess.run(command, capture_output=True, check=True)  # the kernel compiled and cached
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    kernel_ms = float(re.search(r"median_ms: ([0-9.]+)", done.stdout).group(1))
    return wall, kernel_ms


def per_call_ms(fn, runs):
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sparseflow", default=str(ROOT / "build" / "bin" / "sparseflow"))
    ap.add_argument("--matrices", nargs="*", default=MATRICES)
    ap.add_argument("--columns", type=int, default=64)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"SpMM with B {args.columns} columns, f32, 2 threads; medians of {args.runs}\n")
    print("| matrix | CLI, no --format: wall (s) / kernel (ms) | CLI, A dense (old): wall (s) / "
          "kernel (ms) | Python, no formats (ms) | Python, A dense (old) (ms) | scipy A @ B (ms) | "
          "no format vs old (Python) | vs scipy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    plain = sf.compile(KERNEL)
    dense = sf.compile(KERNEL, formats={"A": "dense"})
    for matrix in args.matrices:
        path = ROOT / matrix
        a = sp.csr_matrix(scipy.io.mmread(str(path)), dtype=np.float32)
        b = rng.standard_normal((a.shape[1], args.columns)).astype(np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            b_path = pathlib.Path(tmp) / "b.npy"
            np.save(b_path, b)
            out = pathlib.Path(tmp) / "c.npy"
            new_wall, new_kernel = cli(args, [], path, b_path, out)
            old_wall, old_kernel = cli(args, ["--format", "A=dense"], path, b_path, out)
        want = a.astype(np.float64) @ b.astype(np.float64)
        got = plain(A=a, B=b)
        assert plain.formats_used == {"A": "csr"}, plain.formats_used
        assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())
        new_ms = per_call_ms(lambda: plain(A=a, B=b), args.runs)
        old_ms = per_call_ms(lambda: dense(A=a, B=b), max(3, args.runs // 4))
        scipy_ms = per_call_ms(lambda: a @ b, args.runs)
        print(f"| {path.name} {a.shape[0]}x{a.shape[1]}, {a.nnz} nnz | {new_wall:.2f} / "
              f"{new_kernel:.3f} | {old_wall:.2f} / {old_kernel:.1f} | {new_ms:.3f} | "
              f"{old_ms:.1f} | {scipy_ms:.3f} | {old_ms / new_ms:.0f}x | "
              f"{scipy_ms / new_ms:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
