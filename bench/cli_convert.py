#!/usr/bin/env python3
"""`sparseflow convert` as a user runs it, against scipy doing the same job, both as processes.

Cases: a generated 10^6 x 10^6 Matrix Market file with 10^7 random entries (17-digit values, so
both sides keep float64) converted to csr (ours: `sparseflow convert big.mtx --to csr -o big.sft`,
with the report's entry-by-entry check; scipy: `mmread(...).tocsr()` then `save_npz`), then to
hyb and back to .mtx (ours only), and the held-out SuiteSparse `arrow.mtx` (46500^2, a row of
46500 entries) to csr. Each case is run --reps times; the row holds the median wall time and the
largest peak resident memory (ru_maxrss of the child, from os.wait4). Rows are appended to --rows
in bench_report's tab-separated format; the floor is the input file read once at the measured
one-thread streaming bandwidth (--limits, from bench_limits).

  .venv/bin/python bench/cli_convert.py --sparseflow build/bin/sparseflow --rows rows.tsv \
      --limits limits.txt [--entries 10000000] [--reps 3]
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy

SCIPY_JOB = """
import sys, scipy.io, scipy.sparse
m = scipy.io.mmread(sys.argv[1]).tocsr()
scipy.sparse.save_npz(sys.argv[2], m, compressed=False)
"""


def run_measured(argv):
    """Runs argv under GNU time; returns (wall seconds, peak RSS in bytes). Raises on failure.

    GNU time, not os.wait4: a child forked from this (large) Python process starts with its
    resident pages counted in ru_maxrss; time's own child is forked from time, which is small."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as report:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name] + argv,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"cli_convert.py: {shlex.join(argv)} failed ({done.returncode}): "
                             f"{done.stderr.decode(errors='replace')}")
        peak_kb = int(report.read().split()[-1])
    return seconds, peak_kb * 1024


def measure(argv, reps):
    samples = [run_measured(argv) for _ in range(reps)]
    return statistics.median(s for s, _ in samples), max(r for _, r in samples)


def write_random_mtx(path, n, entries, seed=7):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{n} {n} {entries}\n")
        chunk = 1_000_000
        for start in range(0, entries, chunk):
            k = min(chunk, entries - start)
            rows = rng.integers(1, n + 1, k)
            cols = rng.integers(1, n + 1, k)
            vals = rng.random(k) - 0.5
            f.write("".join(f"{r} {c} {v!r}\n" for r, c, v in zip(rows, cols, vals)))


def read_limits(path):
    fields = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.strip().partition(" ")
            fields[key] = value
    return float(fields["read_bandwidth_1"])


def mib(b):
    return f"{b / 2**20:.0f} MiB"


def row(name, seconds, peer, peer_seconds, floor, basis, note, reproducer):
    number = lambda x: "nan" if x is None else repr(float(x))
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    return "\t".join([name, threads, number(seconds), peer, number(peer_seconds), number(floor), basis,
                      note, reproducer]) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sparseflow", required=True)
    parser.add_argument("--rows", required=True)
    parser.add_argument("--limits")
    parser.add_argument("--entries", type=int, default=10_000_000)
    parser.add_argument("--dim", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--arrow", default="data/suitesparse/ParU/Matrix/arrow.mtx")
    args = parser.parse_args()
    bandwidth = read_limits(args.limits) if args.limits else None
    tool = os.path.abspath(args.sparseflow)
    env_note = "OMP_NUM_THREADS=" + os.environ.get("OMP_NUM_THREADS", "(all cores)")
    out = []
    with tempfile.TemporaryDirectory(prefix="sparseflow-cli-convert.") as work:
        big = os.path.join(work, "big.mtx")
        print(f"writing {args.entries} entries to {big}", file=sys.stderr)
        write_random_mtx(big, args.dim, args.entries)
        size = os.path.getsize(big)
        label = f"rand_{args.dim}x{args.dim}_{args.entries}"

        def floor_of(nbytes):
            if not bandwidth:
                return None, ""
            return nbytes / bandwidth, f"{nbytes / 1e6:.0f} MB at {bandwidth / 1e9:.1f} GB/s"

        cases = [
            ("mtx_to_csr", [tool, "convert", big, "--to", "csr", "-o", os.path.join(work, "o.sft")],
             [sys.executable, "-c", SCIPY_JOB, big, os.path.join(work, "o.npz")], big),
            ("mtx_to_hyb", [tool, "convert", big, "--to", "hyb", "-o", os.path.join(work, "h.sft")],
             None, big),
        ]
        for kind, ours, peer, source in cases:
            print(f"timing {kind}", file=sys.stderr)
            seconds, rss = measure(ours, args.reps)
            peer_seconds, peer_rss = measure(peer, args.reps) if peer else (None, None)
            floor, basis = floor_of(os.path.getsize(source))
            note = f"peak RSS {mib(rss)}"
            if peer:
                note += f", scipy {mib(peer_rss)}"
            note += f"; dense f64 would be {args.dim * args.dim * 8 / 1e12:.3g} TB; {env_note}"
            out.append(row(f"cli_convert/{kind}/{label}", seconds,
                           f"scipy {scipy.__version__}" if peer else "", peer_seconds, floor,
                           basis, note, shlex.join(ours)))
        back = [tool, "convert", os.path.join(work, "o.sft"), "--to", "coo", "-o",
                os.path.join(work, "back.mtx")]
        seconds, rss = measure(back, args.reps)
        floor, basis = floor_of(os.path.getsize(os.path.join(work, "o.sft")))
        out.append(row(f"cli_convert/sft_to_mtx/{label}", seconds, "", None, floor, basis,
                       f"peak RSS {mib(rss)}; {env_note}", shlex.join(back)))
        if os.path.exists(args.arrow):
            arrow = [tool, "convert", args.arrow, "--to", "csr", "-o", os.path.join(work, "a.sft")]
            peer = [sys.executable, "-c", SCIPY_JOB, args.arrow, os.path.join(work, "a.npz")]
            seconds, rss = measure(arrow, args.reps)
            peer_seconds, peer_rss = measure(peer, args.reps)
            floor, basis = floor_of(os.path.getsize(args.arrow))
            out.append(row("cli_convert/mtx_to_csr/arrow", seconds, f"scipy {scipy.__version__}",
                           peer_seconds, floor, basis,
                           f"peak RSS {mib(rss)}, scipy {mib(peer_rss)}; 46500^2, 139k entries "
                           f"(was 23.5 GB and killed before the O(nnz) report)", shlex.join(arrow)))
    with open(args.rows, "a") as f:
        f.writelines(out)
    sys.stdout.writelines(out)


if __name__ == "__main__":
    main()
