#!/usr/bin/env python3
"""scipy peer of bench_formats: COO->CSR, CSR->CSC, CSR->BSR 4x4, Matrix Market reads, same inputs;
numpy's astype for the value type casts.

bench_formats runs it with one --case NAME=ARG per case (ARG: an .npy prefix written by
bench_formats, or an .mtx path) and reads its output: "PEER <name>", then per case
"RESULT <case> <median seconds> <repetitions> nnz=<count>". Run by hand the same way:

  .venv/bin/python bench/peers/scipy_formats.py --case mm_read_coo/west=data/.../west0067.mtx
"""
import argparse
import sys

from peer_timing import median_time

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp


def load_triplets(prefix):
    """The arrays bench_formats wrote: int32 rows and columns, float32 values, int64 shape."""
    rows = np.load(prefix + "_rows.npy")
    cols = np.load(prefix + "_cols.npy")
    vals = np.load(prefix + "_vals.npy")
    shape = tuple(int(x) for x in np.load(prefix + "_shape.npy"))
    return rows, cols, vals, shape


def make_case(name, arg):
    """The timed call of a case (inputs are prepared here, outside the clock)."""
    kind = name.split("/")[0]
    if kind == "coo_to_csr":
        rows, cols, vals, shape = load_triplets(arg)
        return lambda: sp.coo_matrix((vals, (rows, cols)), shape=shape).tocsr()
    if kind == "csr_to_csc":
        rows, cols, vals, shape = load_triplets(arg)
        csr = sp.coo_matrix((vals, (rows, cols)), shape=shape).tocsr()
        return csr.tocsc
    if kind == "csr_to_bsr4x4":
        rows, cols, vals, shape = load_triplets(arg)
        csr = sp.coo_matrix((vals, (rows, cols)), shape=shape).tocsr()
        return lambda: csr.tobsr(blocksize=(4, 4))
    if kind == "mm_read_coo":
        return lambda: scipy.io.mmread(arg)
    if kind == "mm_read_csr":
        return lambda: scipy.io.mmread(arg).tocsr()
    if kind == "cast_f64_to_f32":  # numpy's astype on an array of ARG doubles
        x = np.random.default_rng(1).random(int(arg))
        return lambda: x.astype(np.float32)
    raise SystemExit(f"scipy_formats.py: unknown case {name!r}")


def measure(call, reps, budget_seconds):
    """Median of `reps` timings (at least 3; fewer once `budget_seconds` is spent); calls under
    50 ms are timed in batches of about 50 ms, as Google Benchmark does on the C++ side."""
    return median_time(call, reps, 0.05, budget_seconds,
                       inspect=lambda out: out.nnz if hasattr(out, "nnz") else out.size)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=[], metavar="NAME=ARG")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--budget", type=float, default=30.0,
                        help="seconds per case after which fewer repetitions are enough")
    args = parser.parse_args()
    print(f"PEER scipy {scipy.__version__}", flush=True)
    for spec in args.case:
        name, _, arg = spec.partition("=")
        call = make_case(name, arg)
        seconds, reps, count = measure(call, args.reps, args.budget)
        print(f"RESULT {name} {seconds:.9g} {reps} nnz={count}", flush=True)
        print(f"scipy {name}: {seconds * 1e3:.1f} ms (median of {reps})", file=sys.stderr,
              flush=True)


if __name__ == "__main__":
    main()
