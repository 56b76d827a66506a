#!/usr/bin/env python3
"""The autoconfigurator's quality on the held-out problems (docs/tune.md, bench/RESULTS.md).

Reads the held-out problems' exhaustive measurements that scripts/tune_corpus.sh wrote
(data/tune/corpus/*.jsonl: every configuration of SpMM (64 columns), SpMV and SDDMM (32 columns)
timed through `sparseflow tune collect`), runs the search as a user does (`sparseflow tune ... --no-db`:
the shipped model ranks, the default and the top min(budget, 5%) are timed, the fastest kept; its
wall time is the tuning cost), and times the peers on the same matrix and shape in this process:
scipy.sparse (csr @ dense or vector, f32, one thread; SDDMM as numpy row gathers and dot
products) and torch.sparse (csr @ dense, sampled_addmm for SDDMM where this torch has it, the
machine's threads) when torch imports, and Eigen 3.4 and SuiteSparse:GraphBLAS through
bench_compiler (the same matrix and widths, its own random operands, 2 threads; every SDDMM
writes its output in A's pattern: the corpus pins C to csr) when it is built. The tuned and default times are the search's own (one run); the
exhaustive best is the corpus run's. Prints one Markdown row per problem and the summary.

    .venv/bin/python bench/tune_quality.py [--corpus data/tune/corpus] [--budget 16]
        [--holdout dlmc/rn50 --holdout suitesparse/LAGraph] [--sparseflow build/bin/sparseflow]
        [--bench-compiler build/bin/bench_compiler]
"""
import argparse
import glob
import json
import math
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import scipy.io
import scipy.sparse as sp


def read_matrix(path):
    if path.endswith(".smtx"):  # DLMC: "rows, cols, nnz", row offsets, column indices
        with open(path) as f:
            rows, cols, _ = (int(v) for v in f.readline().replace(",", " ").split())
            indptr = np.array(f.readline().split(), dtype=np.int64)
            indices = np.array(f.readline().split(), dtype=np.int64)
        rng = np.random.default_rng(0)
        values = rng.uniform(-1, 1, indices.size).astype(np.float32)
        return sp.csr_matrix((values, indices, indptr), shape=(rows, cols))
    return sp.csr_matrix(scipy.io.mmread(path)).astype(np.float32)


def median_ms(call, min_runs=5, target_s=0.2):
    call()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (time.perf_counter() - start < target_s and len(times) < 50):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


KERNELS = {
    "C(i,j) = A(i,k) * B(k,j)": "SpMM",
    "y(i) = A(i,j) * x(j)": "SpMV",
    "C(i,j) = A(i,j) * sum(k, X(i,k) * Y(j,k))": "SDDMM",
}


def dense_operands(kernel, a, rng):
    """The kernel's dense inputs by name, shaped as scripts/tune_corpus.sh shapes them."""
    if kernel == "SpMM":
        return {"B": rng.standard_normal((a.shape[1], 64)).astype(np.float32)}
    if kernel == "SpMV":
        return {"x": rng.standard_normal(a.shape[1]).astype(np.float32)}
    return {"X": rng.standard_normal((a.shape[0], 32)).astype(np.float32),
            "Y": rng.standard_normal((a.shape[1], 32)).astype(np.float32)}


# bench_compiler's kernel names for the corpus's shapes, and the peers it runs in C++.
BENCH_KERNELS = {"SpMM": "spmm64", "SpMV": "spmv", "SDDMM": "sddmm32"}
CPP_PEERS = {"Eigen": r"Eigen [\d.]+ \([^)]*\) ([\d.]+) (us|ms)",
             "GraphBLAS": r"SuiteSparse:GraphBLAS [\d.]+ \([^)]*\) ([\d.]+) (us|ms)"}


def cpp_peers(bench_compiler, kernel, a_path, work):
    """{"Eigen": ms, "GraphBLAS": ms} from one bench_compiler run on the matrix (its rows file:
    case, threads, ours, best peer, ..., and the peers' times in the note), or {} without it."""
    if not bench_compiler or not os.path.exists(bench_compiler):
        return {}
    rows = os.path.join(work, "bench_rows.tsv")
    if os.path.exists(rows):
        os.remove(rows)  # bench_compiler appends to it
    subprocess.run([bench_compiler, f"--matrices={a_path}", f"--kernels={BENCH_KERNELS[kernel]}",
                    "--reps=5", "--python=", f"--rows={rows}"], check=True, capture_output=True)
    with open(rows) as f:
        note = next(line for line in f if "/geomean" not in line)
    out = {}
    for name, pattern in CPP_PEERS.items():
        m = re.search(pattern, note)
        if m:
            out[name] = float(m.group(1)) * (1e-3 if m.group(2) == "us" else 1.0)
    return out


def peer_calls(kernel, a, dense, torch):
    """{peer: call} on the same operands: scipy/numpy on one thread, torch.sparse on all."""
    if kernel == "SpMM":
        calls = {"scipy": lambda: a @ dense["B"]}
    elif kernel == "SpMV":
        calls = {"scipy": lambda: a @ dense["x"]}
    else:
        rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
        x, y = dense["X"], dense["Y"]
        calls = {"scipy": lambda: a.data * np.einsum("ij,ij->i", x[rows], y[a.indices])}
    if torch is None:
        return calls
    ta = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                 torch.from_numpy(a.indices.astype(np.int64)),
                                 torch.from_numpy(a.data), size=a.shape)
    if kernel == "SpMM":
        tb = torch.from_numpy(dense["B"])
        calls["torch"] = lambda: torch.matmul(ta, tb)
    elif kernel == "SpMV":
        tx = torch.from_numpy(dense["x"]).unsqueeze(1)
        calls["torch"] = lambda: torch.matmul(ta, tx)
    else:
        tx, tyt = torch.from_numpy(dense["X"]), torch.from_numpy(dense["Y"]).T.contiguous()
        try:
            torch.sparse.sampled_addmm(ta, tx, tyt, beta=0.0)
            calls["torch"] = lambda: torch.sparse.sampled_addmm(ta, tx, tyt, beta=0.0)
        except (RuntimeError, NotImplementedError):
            pass  # not on this torch's CPU build
    return calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="data/tune/corpus")
    parser.add_argument("--holdout", action="append", default=None)
    parser.add_argument("--sparseflow", default="build/bin/sparseflow")
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--bench-compiler", default="build/bin/bench_compiler",
                        help="for Eigen and GraphBLAS ('' to leave them out)")
    args = parser.parse_args()
    holdout = args.holdout or ["dlmc/rn50", "suitesparse/LAGraph"]
    try:
        import torch
        torch.set_num_threads(os.cpu_count() or 1)
    except ImportError:
        torch = None
    rows = []
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as work:
        # Every search first, then every peer: a search run right after a peer shared the two
        # cores with the peer's still-spinning threads in this process (SpMM on cryg2500 read
        # 0.025 ms against 0.016-0.018 ms alone).
        searches = []
        for path in sorted(glob.glob(os.path.join(args.corpus, "*.jsonl"))):
            with open(path) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            a_path, text = lines[0]["inputs"]["A"], lines[0]["kernel"]
            if not any(h in a_path for h in holdout) or text not in KERNELS:
                continue
            timed = [line["median_ms"] for line in lines if "median_ms" in line]
            if len(timed) < 0.9 * len(lines) or len(lines) < 40:
                continue  # not an exhaustive problem (the held-out ones time every configuration)
            kernel = KERNELS[text]
            best = min(timed)
            a = read_matrix(a_path)
            dense = dense_operands(kernel, a, rng)
            command = [args.sparseflow, "tune", text, "--in", f"A={a_path}", "--tune", "A"]
            # What the corpus pinned (SDDMM's C csr) is pinned in the search too.
            for name, fmt in lines[0].get("formats", {}).items():
                if name != "A":
                    command += ["--format", f"{name}={fmt}"]
            for name, value in dense.items():
                np.save(os.path.join(work, name + ".npy"), value)
                command += ["--in", f"{name}={os.path.join(work, name + '.npy')}"]
            out = os.path.join(work, "tuned.json")
            start = time.perf_counter()
            subprocess.run(command + ["--no-db", "--budget", str(args.budget), "--json", out],
                           check=True, capture_output=True)
            tuning_s = time.perf_counter() - start
            with open(out) as f:
                tuned = json.load(f)
            searches.append((kernel, a_path, a, dense, best, tuned, tuning_s))
        for kernel, a_path, a, dense, best, tuned, tuning_s in searches:
            peers = {name: median_ms(call) for name, call in
                     peer_calls(kernel, a, dense, torch).items()}
            peers.update(cpp_peers(args.bench_compiler, kernel, a_path, work))
            rows.append({"kernel": kernel, "name": a_path.replace("data/", ""), "shape": a.shape,
                         "nnz": a.nnz, "default": tuned["default_ms"],
                         "tuned": tuned["median_ms"], "best": best,
                         "chosen": tuned["arguments"], "measured": tuned["measured"],
                         "space": tuned["space"], "tuning_s": tuning_s,
                         "scipy": peers.get("scipy", float("nan")),
                         "torch": peers.get("torch", float("nan")),
                         "eigen": peers.get("Eigen", float("nan")),
                         "graphblas": peers.get("GraphBLAS", float("nan")),
                         "peer_name": min(peers, key=peers.get),
                         "peer": min(peers.values())})
    print("| kernel | held-out matrix | shape | nnz | chosen | default (ms) | tuned (ms) | "
          "exhaustive best (ms) | tuned/best | timed | tuning (s) | scipy (ms) | torch (ms) | "
          "Eigen (ms) | GraphBLAS (ms) | best peer / tuned |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kernel']} | {r['name']} | {r['shape'][0]}x{r['shape'][1]} | {r['nnz']} | "
              f"`{r['chosen']}` | {r['default']:.4g} | {r['tuned']:.4g} | {r['best']:.4g} | "
              f"{r['tuned'] / r['best']:.3f} | {r['measured']} of {r['space']} | "
              f"{r['tuning_s']:.1f} | {r['scipy']:.4g} | {r['torch']:.4g} | "
              f"{r['eigen']:.4g} | {r['graphblas']:.4g} | "
              f"{r['peer'] / r['tuned']:.2f} ({r['peer_name']}) |")
    geo = lambda values: math.exp(statistics.mean(math.log(v) for v in values))
    for kernel in KERNELS.values():
        mine = [r for r in rows if r["kernel"] == kernel]
        if not mine:
            continue
        regret = sorted(r["tuned"] / r["best"] for r in mine)
        slower = [r for r in mine if r["peer"] < r["tuned"]]
        faster_peers = ", ".join(f"{r['name'].split('/')[-1]} {r['peer_name']}" for r in slower)
        print(f"\n{kernel}, {len(mine)} held-out problems: tuned/exhaustive best median "
              f"{statistics.median(regret):.3f}, max {regret[-1]:.3f}; geomean speed-up over the "
              f"default {geo([r['default'] / r['tuned'] for r in mine]):.2f}x, over the best peer "
              f"{geo([r['peer'] / r['tuned'] for r in mine]):.2f}x (a peer faster on "
              f"{len(slower)}: {faster_peers or 'none'}); timed "
              f"{max(r['measured'] / r['space'] for r in mine):.1%} of the space at most")


if __name__ == "__main__":
    main()
