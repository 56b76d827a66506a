#!/usr/bin/env python3
"""The pipeline's providers as users reach them: `sparseflow run ... --repeat N` (the CLI prints
the median per call, binding and conversions included, no file I/O) and Python `kernel(...)`
calls, against the peer in the same run.

Cases (f32, the machine's threads; inputs not tuned on: bayer10 and Groebner from SuiteSparse,
a DLMC transformer weight, the facebook graph from SNAP, all read from their files as users do):
- fused epilogue: `C(i,j) = relu(A(i,k) * B(k,j) + b(j))` against the plain SpMM
  `C(i,j) = A(i,k) * B(k,j)` with A csr and 64 columns (target: fused <= 1.15x plain), and the
  same fused kernel as generated code (--generated-only: one nest with a per-thread row, no
  dense temporary) against the generated plain SpMM;
- 2:4 GEMV: `y(o) = W(o,i) * x(i)` with W in 2:4 on 4096x11008, 11008x4096, 4096x4096 against
  numpy's W @ x (OpenBLAS sgemv) on the dense weights (target: >= 2x);
- per-call cost from Python: `kernel(A=a, B=b)` (a new output each call) and
  `kernel(A=a, B=b, out=c)` against the CLI's median for the same kernel (target: <= 1.10x);
- generated SpMM: the plain SpMM as generated code (--generated-only) and with a split row loop
  (--schedule), against the hand-tuned provider, on the DLMC weight at 16 and 64 columns;
- FusedMM `C(i,j) = sum(k, A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j))` (an SDDMM feeding an
  SpMM, one generated kernel; the SDDMM value is computed once per entry) on the DLMC weight with
  64-wide X, Y, B, against torch's sampled_addmm then the CSR product (two steps);
- SpMV `y(i) = A(i,j) * x(j)` on a random 100000 x 100000 matrix with 10^7 entries (A csr f32):
  the csr_spmm provider against the same kernel as generated code and scipy's A @ x (target:
  >= 70% of the measured read bandwidth);
- row epilogues: `C(i,j) = softmax(j, A(i,k) * B(k,j) + b(j))` and `layernorm(j, ...)` (fused
  into the CSR SpMM after each row's last panel) against the plain SpMM, the same kernel as
  generated code, and torch's `softmax(A @ B + b, 1)` / `layer_norm(A @ B + b, [64])` (CSR tensor,
  per call), 64 columns, every matrix;
- BSR SpMM: `C(i,j) = A(i,k) * B(k,j)` with A in bsr:4x4 (the bsr_spmm provider) on DLMC
  transformer weights block-pruned here (the 4x4 blocks of largest norm kept, 25%: a
  block-structured pruned weight), 64 columns, against the same matrix in csr (csr_spmm), as
  generated code, scipy's bsr_matrix @ B and torch's CSR @ B;
- f64 SpMM: `C(i,j) = A(i,k) * B(k,j)` with A, B, C f64 on the DLMC weight at 16 and 64 columns: the
  csr_spmm provider's f64 kernel against the same kernel as generated code and scipy's A @ B.
- f64 layers: `y(o) = W(o,i) * x(i)` (4096x4096, 11008x4096) and `Y(n,o) = X(n,i) * W(o,i)`
  (128 and 512 rows, 1024x1024) with every operand f64 and W pruned to 2:4, W read as dense (the
  dense_linear provider's f64 tile) and as 2:4 (nm_linear's f64 kernel), each against the same
  kernel as generated code and numpy's W @ x / X @ W.T (OpenBLAS dgemv/dgemm) on the same W.
- sparse outputs: SpGEMM `C(i,j) = A(i,k) * B(k,j)` and add `C(i,j) = A(i,j) + B(i,j)` (A = B
  the matrix, csr) with C asked as csr, dcsr and coo (dcsr and coo are assembled as csr and
  converted: the row level rebuilt, columns and values taken over), against the csr output and
  scipy's A @ A / A + A (then .tocoo() for coo), on the SuiteSparse and SNAP matrices and
  LAGraph's pushpull (A @ A on the square ones).
Each CLI case runs --rounds times interleaved with its peer; rows hold the medians. Rows go to
--rows in bench_report's tab-separated format, and to stdout.

  .venv/bin/python bench/cli_pipeline.py --sparseflow build/bin/sparseflow --rows rows.tsv \
      [--limits limits.txt] [--rounds 3] [--repeat 30] [--only cli_spmm_f64 ...]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MATRICES = [
    ("bayer10", "data/suitesparse/ParU/Matrix/bayer10.mtx"),
    ("Groebner_id2003_aug", "data/suitesparse/ParU/Matrix/Groebner_id2003_aug.mtx"),
    ("dlmc_transformer_0.5_ffn_conv1",
     "data/dlmc/transformer/magnitude_pruning/0.5/body_encoder_layer_0_ffn_conv1_fully_connected.smtx"),
    ("snap_facebook", "data/snap-prasanth1092/data/facebook_combined.txt"),
]
GEMV_SHAPES = [(4096, 11008), (11008, 4096), (4096, 4096)]


def cli_median_ms(sparseflow, kernel, formats, inputs, repeat, extra=()):
    argv = [sparseflow, "run", kernel, "--repeat", str(repeat), *extra]
    for name, fmt in formats.items():
        argv += ["--format", f"{name}={fmt}"]
    for name, path in inputs.items():
        argv += ["--in", f"{name}={path}"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cli_pipeline.py: {' '.join(argv)} failed: {done.stderr}")
    provider = re.search(r"provider: (\w+)", done.stdout)
    return float(re.search(r"median_ms: ([0-9.]+)", done.stdout).group(1)), (
        provider.group(1) if provider else "?")


# Each Python measurement runs in a child process of its own (like the CLI cases), so that no
# thread pool of an earlier measurement spins on the two cores beside the next one.
PYTHON_CALL = """
import time, statistics, numpy as np, sparseflow as sf
a = sf.convert(sf.read({path!r}), "csr", dtype="f32")
b, bias = np.load({b!r}), np.load({bias!r})
def cache_line_aligned(x):  # as the CLI's .npy reader places B (numpy's own: 16 bytes)
    raw = np.empty(x.size + 16, dtype=x.dtype)
    start = (-raw.ctypes.data // x.itemsize) % 16
    out = raw[start:start + x.size].reshape(x.shape)
    out[...] = x
    return out
b64 = cache_line_aligned(b)
b16 = np.empty(b.size + 16, dtype=b.dtype)
b16 = b16[(4 - b16.ctypes.data // 4) % 16:][:b.size].reshape(b.shape)  # 16 bytes past a line
b16[...] = b
kernel = sf.compile({kernel!r}, formats={{"A": "csr"}})
c = np.empty((a.shape[0], b.shape[1]), dtype=np.float32)
def ms(fn):
    fn()
    samples = []
    for _ in range({repeat}):
        t = time.perf_counter(); fn(); samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)
print(ms(lambda: kernel(A=a, B=b64, b=bias)), ms(lambda: kernel(A=a, B=b64, b=bias, out=c)),
      ms(lambda: kernel(A=a, B=b16, b=bias, out=c)))
"""
SGEMV = """
import time, statistics, numpy as np
w, x = np.load({w!r}), np.load({x!r})
w @ x
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); w @ x; samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""


DENSE_F64 = """
import time, statistics, numpy as np
w, x = np.load({w!r}), np.load({x!r})
op = (lambda: w @ x) if x.ndim == 1 else (lambda: x @ w.T)
op()
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); op(); samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""


SCIPY_SPARSE_OUT = """
import time, statistics, numpy as np, sparseflow as sf
a = sf.to_scipy(sf.read({path!r})).tocsr().astype(np.float32)
op = (lambda: a @ a) if {spgemm!r} else (lambda: a + a)
make = (lambda: op().tocoo()) if {coo!r} else op
make()
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); make(); samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""
SCIPY_AT_A = """
import time, statistics, numpy as np, sparseflow as sf
a = sf.to_scipy(sf.read({path!r})).tocsr().astype(np.float32)
(a.T @ a).tocsr()
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); (a.T @ a).tocsr(); samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""
PERMUTE = """
import numpy as np, scipy.io, sparseflow as sf
a = sf.to_scipy(sf.read({path!r})).tocsr()
rng = np.random.default_rng(0)
a = a[rng.permutation(a.shape[0])][:, rng.permutation(a.shape[1])]
scipy.io.mmwrite({out!r}, a.tocoo(), precision=9)
"""
SPMV_INPUTS = """
import numpy as np, scipy.sparse as sp, sparseflow as sf
rng = np.random.default_rng(5)
n, nnz = 100000, 10000000
m = sp.csr_matrix((rng.uniform(-1, 1, nnz).astype(np.float32),
                   (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
m.sum_duplicates()
sf.write({path!r}, sf.from_scipy(m, dtype="f32"))
np.save({x!r}, rng.uniform(-1, 1, n).astype(np.float32))
"""
# scipy's A @ x (x a vector or a matrix) with A read as users read it, in `dtype`.
SCIPY_PRODUCT = """
import time, statistics, numpy as np, sparseflow as sf
a = sf.to_scipy(sf.read({path!r})).tocsr().astype(np.{dtype})
x = np.load({x!r})
a @ x
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); a @ x; samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""

TORCH_ROW_EPILOGUE = """
import time, statistics, numpy as np, torch, sparseflow as sf
torch.set_num_threads(len(__import__("os").sched_getaffinity(0)))
a = sf.to_scipy(sf.read({path!r})).tocsr().astype(np.float32)
ta = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                             torch.from_numpy(a.indices.astype(np.int64)),
                             torch.from_numpy(a.data), size=a.shape)
b, bias = torch.from_numpy(np.load({b!r})), torch.from_numpy(np.load({bias!r}))
def run():
    x = ta @ b + bias
    return {row}
run()
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); run(); samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""

BLOCK_PRUNE = """
import numpy as np, scipy.io, sparseflow as sf
a = sf.to_scipy(sf.read({path!r})).toarray().astype(np.float32)
r, c = a.shape
norms = np.sqrt((a.reshape(r // 4, 4, c // 4, 4) ** 2).sum(axis=(1, 3)))
keep = norms >= np.quantile(norms, 0.75)
a = a * np.repeat(np.repeat(keep, 4, axis=0), 4, axis=1)
scipy.io.mmwrite({out!r}, __import__("scipy.sparse").sparse.coo_matrix(a), precision=9)
"""
BSR_PEERS = """
import time, statistics, numpy as np, scipy.io, scipy.sparse as sp, torch
torch.set_num_threads(len(__import__("os").sched_getaffinity(0)))
a = scipy.io.mmread({path!r}).tocsr().astype(np.float32)
b = np.load({b!r})
bsr = sp.bsr_matrix(a, blocksize=(4, 4))
ta = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                             torch.from_numpy(a.indices.astype(np.int64)),
                             torch.from_numpy(a.data), size=a.shape)
tb = torch.from_numpy(b)
def ms(fn):
    fn()
    samples = []
    for _ in range({repeat}):
        t = time.perf_counter(); fn(); samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)
print(ms(lambda: bsr @ b), ms(lambda: ta @ tb))
"""

TORCH_FUSEDMM = """
import time, statistics, numpy as np, torch, sparseflow as sf
torch.set_num_threads(len(__import__("os").sched_getaffinity(0)))
a = sf.to_scipy(sf.read({path!r})).tocsr().astype(np.float32)
ta = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                             torch.from_numpy(a.indices.astype(np.int64)),
                             torch.from_numpy(a.data), size=a.shape)
x, y, b = (torch.from_numpy(np.load(p)) for p in ({x!r}, {y!r}, {b!r}))
yt = y.T.contiguous()
def run():
    return torch.sparse.sampled_addmm(ta, x, yt, beta=0.0) @ b
run()
samples = []
for _ in range({repeat}):
    t = time.perf_counter(); run(); samples.append((time.perf_counter() - t) * 1e3)
print(statistics.median(samples))
"""


def python_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")


def python_ms(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"cli_pipeline.py: a Python measurement failed: {done.stderr}")
    return [float(v) for v in done.stdout.split()]


def row(name, ms, peer, peer_ms, floor_ms, basis, note, reproducer):
    number = lambda x: "nan" if x is None else repr(float(x) / 1e3)
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    return "\t".join([name, threads, number(ms), peer, number(peer_ms), number(floor_ms), basis, note,
                      reproducer]) + "\n"


def read_bandwidth(path):
    if not path:
        return None
    fields = dict(line.strip().partition(" ")[::2] for line in open(path))
    threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
    return float(fields["read_bandwidth_1" if threads == 1 else "read_bandwidth_all"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sparseflow", required=True)
    parser.add_argument("--rows", required=True)
    parser.add_argument("--limits")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--only", nargs="*", default=[],
                        help="row groups to run (cli_fused_spmm, cli_softmax_spmm, cli_spmv, "
                             "cli_generated_spmm, cli_bsr_spmm, cli_spmm_f64, cli_fusedmm, "
                             "cli_gemv_2to4, cli_sparse_outputs, cli_listed_outputs); "
                             "default all")
    args = parser.parse_args()
    want = lambda group: not args.only or group in args.only
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import sparseflow as sf

    bandwidth = read_bandwidth(args.limits)
    rng = np.random.default_rng(3)
    out = []
    with tempfile.TemporaryDirectory() as work:
        # --- fused epilogue vs plain SpMM, and the Python per-call cost; one matrix is also run
        if want("cli_fused_spmm"):
            # with its rows and columns randomly permuted (B's rows then come in no order)
            permuted = f"{work}/permuted.mtx"
            subprocess.run([sys.executable, "-c", PERMUTE.format(path=MATRICES[2][1], out=permuted)],
                           check=True, env={**os.environ, "PYTHONPATH": python_path()})
            for label, path in MATRICES + [(MATRICES[2][0] + "_permuted", permuted)]:
                a = sf.read(path)  # shape and entries only; the measurements run in child processes
                rows, inner = a.shape
                b = rng.uniform(-1, 1, (inner, 64)).astype(np.float32)
                bias = rng.uniform(-1, 1, 64).astype(np.float32)
                np.save(f"{work}/B.npy", b)
                np.save(f"{work}/b.npy", bias)
                inputs = {"A": path, "B": f"{work}/B.npy"}
                plain_k, fused_k = "C(i,j) = A(i,k) * B(k,j)", "C(i,j) = relu(A(i,k) * B(k,j) + b(j))"
                plain, fused, generated, generated_plain = [], [], [], []
                for _ in range(args.rounds):
                    plain.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                               args.repeat))
                    fused.append(cli_median_ms(args.sparseflow, fused_k, {"A": "csr"},
                                               {**inputs, "b": f"{work}/b.npy"}, args.repeat))
                    generated.append(cli_median_ms(args.sparseflow, fused_k, {"A": "csr"},
                                                   {**inputs, "b": f"{work}/b.npy"}, args.repeat,
                                                   ["--generated-only"]))
                    generated_plain.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"},
                                                         inputs, args.repeat, ["--generated-only"]))
                p = statistics.median(m for m, _ in plain)
                f = statistics.median(m for m, _ in fused)
                g = statistics.median(m for m, _ in generated)
                gp = statistics.median(m for m, _ in generated_plain)
                nnz = a.num_stored
                floor = None
                basis = "-"
                if bandwidth:
                    moved = nnz * 8 + rows * 64 * 4 + inner * 64 * 4
                    floor = moved / bandwidth * 1e3
                    basis = f"{moved / 1e6:.3g} MB at {bandwidth / 1e9:.3g} GB/s"
                shape = f"{label}_{rows}x{inner}_nnz{nnz}"
                repro = f"sparseflow run '{fused_k}' --format A=csr --in A={path} --in B=B.npy --in b=b.npy --repeat {args.repeat}"
                out.append(row(f"cli_fused_spmm/{shape}/64", f, f"plain SpMM ({plain[0][1]})", p, floor,
                               basis, f"fused/plain = {f / p:.2f} (target <= 1.15); provider "
                               f"{fused[0][1]}; as generated code (one fused nest) {g:.3g} ms = "
                               f"{g / p:.2f}x plain, {g / gp:.2f}x the generated plain SpMM",
                               repro))
                # Python: the same fused kernel per call, a new output vs out=, against the CLI's (in
                # a child process: the parent's idle OpenMP/OpenBLAS threads would spin beside it).
                fresh, into, unaligned = python_ms(PYTHON_CALL.format(path=path, b=f"{work}/B.npy",
                                                           bias=f"{work}/b.npy", kernel=fused_k,
                                                           repeat=args.repeat))
                out.append(row(f"python_call/{shape}/64", into, "the CLI's median (kernel alone)", f,
                               floor, basis, f"out= {into / f:.2f}x the CLI's (target <= 1.10); a new "
                               f"output per call {fresh:.3g} ms = {fresh / f:.2f}x; B on a cache "
                               f"line as the CLI's reader places it; with B 16 bytes past a line "
                               f"(numpy's usual placement) out= {unaligned:.3g} ms = "
                               f"{unaligned / f:.2f}x",
                               f"kernel(A=a, B=b, b=bias, out=c), kernel = sf.compile('{fused_k}', formats={{'A': 'csr'}})"))
        # --- the row epilogues against the plain SpMM, generated code and torch
        if want("cli_softmax_spmm"):
            for label, path in MATRICES:
                a = sf.read(path)
                rows, inner = a.shape
                np.save(f"{work}/Bs.npy", rng.uniform(-1, 1, (inner, 64)).astype(np.float32))
                np.save(f"{work}/bs.npy", rng.uniform(-1, 1, 64).astype(np.float32))
                inputs = {"A": path, "B": f"{work}/Bs.npy"}
                plain_k = "C(i,j) = A(i,k) * B(k,j)"
                for fn, torch_row in (("softmax", "torch.softmax(x, 1)"),
                                      ("layernorm", "torch.nn.functional.layer_norm(x, [64])")):
                    row_k = f"C(i,j) = {fn}(j, A(i,k) * B(k,j) + b(j))"
                    plain, fused, generated, peer = [], [], [], []
                    for _ in range(args.rounds):
                        plain.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                                   args.repeat))
                        fused.append(cli_median_ms(args.sparseflow, row_k, {"A": "csr"},
                                                   {**inputs, "b": f"{work}/bs.npy"}, args.repeat))
                        generated.append(cli_median_ms(args.sparseflow, row_k, {"A": "csr"},
                                                       {**inputs, "b": f"{work}/bs.npy"},
                                                       args.repeat, ["--generated-only"]))
                        peer.append(python_ms(TORCH_ROW_EPILOGUE.format(
                            path=path, b=f"{work}/Bs.npy", bias=f"{work}/bs.npy", row=torch_row,
                            repeat=args.repeat))[0])
                    p = statistics.median(m for m, _ in plain)
                    f = statistics.median(m for m, _ in fused)
                    g = statistics.median(m for m, _ in generated)
                    pm = statistics.median(peer)
                    shape = f"{label}_{rows}x{inner}_nnz{a.num_stored}"
                    out.append(row(f"cli_{fn}_spmm/{shape}/64", f, f"torch {torch_row} of A @ B + b",
                                   pm, None, "-", f"speedup {pm / f:.2f}; {fn}/plain SpMM = "
                                   f"{f / p:.2f}; provider {fused[0][1]}; as generated code "
                                   f"{g:.3g} ms = {g / f:.2f}x",
                                   f"sparseflow run '{row_k}' --format A=csr --in A={path} "
                                   f"--in B=B.npy --in b=b.npy --repeat {args.repeat}"))
        # --- SpMV on a random 10^5-square matrix with 10^7 entries, against generated code and scipy
        if want("cli_spmv"):
            spmv = f"{work}/spmv.sft"
            subprocess.run([sys.executable, "-c", SPMV_INPUTS.format(path=spmv, x=f"{work}/xv.npy")],
                           check=True, env={**os.environ, "PYTHONPATH": python_path()})
            inputs = {"A": spmv, "x": f"{work}/xv.npy"}
            ours, generated, peer = [], [], []
            for _ in range(args.rounds):
                ours.append(cli_median_ms(args.sparseflow, "y(i) = A(i,j) * x(j)", {"A": "csr"},
                                          inputs, args.repeat))
                generated.append(cli_median_ms(args.sparseflow, "y(i) = A(i,j) * x(j)", {"A": "csr"},
                                               inputs, args.repeat, ["--generated-only"]))
                peer.append(python_ms(SCIPY_PRODUCT.format(path=spmv, x=f"{work}/xv.npy",
                                                           dtype="float32",
                                                           repeat=args.repeat))[0])
            m = statistics.median(t for t, _ in ours)
            g = statistics.median(t for t, _ in generated)
            pm = statistics.median(peer)
            floor, basis = None, "-"
            if bandwidth:
                moved = 10_000_000 * 8 + 100_001 * 4 + 2 * 100_000 * 4
                floor = moved / bandwidth * 1e3
                basis = f"{moved / 1e6:.3g} MB at {bandwidth / 1e9:.3g} GB/s"
            out.append(row("cli_spmv/random_100000x100000_nnz10000000", m, "scipy A @ x", pm, floor,
                           basis, f"speedup {pm / m:.2f}; provider {ours[0][1]}; generated code "
                           f"{g:.3g} ms" + (f"; {floor / m:.0%} of the read bandwidth (target >= 70%)"
                                            if floor else ""),
                           f"sparseflow run 'y(i) = A(i,j) * x(j)' --format A=csr --in A=spmv.sft --in x=x.npy --repeat {args.repeat}"))
        # --- generated SpMM (default schedule, and a split row loop) against the hand-tuned one
        dlmc = MATRICES[2][1]  # the later groups' matrix
        a = sf.read(dlmc)
        rows, inner = a.shape
        plain_k, split = "C(i,j) = A(i,k) * B(k,j)", "split(i, i0, i1, 64); parallel(i0)"
        if want("cli_generated_spmm"):
            for width in (16, 32, 64, 128):
                np.save(f"{work}/Bg.npy", rng.uniform(-1, 1, (inner, width)).astype(np.float32))
                inputs = {"A": dlmc, "B": f"{work}/Bg.npy"}
                hand, generated, scheduled = [], [], []
                for _ in range(args.rounds):
                    hand.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                              args.repeat))
                    generated.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                                   args.repeat, ["--generated-only"]))
                    scheduled.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                                   args.repeat, ["--schedule", split]))
                h = statistics.median(t for t, _ in hand)
                g = statistics.median(t for t, _ in generated)
                sc = statistics.median(t for t, _ in scheduled)
                out.append(row(f"cli_generated_spmm/dlmc_transformer_0.5_ffn_conv1_{rows}x{inner}/{width}",
                               g, f"hand-tuned SpMM ({hand[0][1]})", h, None, "-",
                               f"generated/hand-tuned = {g / h:.2f}; with --schedule '{split}' "
                               f"(provider {scheduled[0][1]}) {sc:.3g} ms = {sc / h:.2f}x",
                               f"sparseflow run '{plain_k}' --format A=csr --in A={dlmc} --in B=B.npy "
                               f"--generated-only --repeat {args.repeat}"))
        # --- BSR SpMM on block-pruned DLMC weights against csr, generated code, scipy and torch
        if want("cli_bsr_spmm"):
            for layer in ("ffn_conv1", "ffn_conv2", "self_attention_multihead_attention_q"):
                source = ("data/dlmc/transformer/magnitude_pruning/0.5/"
                          f"body_encoder_layer_0_{layer}_fully_connected.smtx")
                pruned = f"{work}/block_{layer}.mtx"
                subprocess.run([sys.executable, "-c", BLOCK_PRUNE.format(path=source, out=pruned)],
                               check=True, env={**os.environ, "PYTHONPATH": python_path()})
                # its own names: the groups after this one run on the DLMC matrix's a, rows, inner
                block = sf.read(pruned)
                brows, binner = block.shape
                np.save(f"{work}/Bb.npy", rng.uniform(-1, 1, (binner, 64)).astype(np.float32))
                inputs = {"A": pruned, "B": f"{work}/Bb.npy"}
                bsr, csr, generated, peers = [], [], [], []
                for _ in range(args.rounds):
                    bsr.append(cli_median_ms(args.sparseflow, plain_k, {"A": "bsr:4x4"}, inputs,
                                             args.repeat))
                    csr.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                             args.repeat))
                    generated.append(cli_median_ms(args.sparseflow, plain_k, {"A": "bsr:4x4"},
                                                   inputs, args.repeat, ["--generated-only"]))
                    peers.append(python_ms(BSR_PEERS.format(path=pruned, b=f"{work}/Bb.npy",
                                                            repeat=args.repeat)))
                m = statistics.median(t for t, _ in bsr)
                c = statistics.median(t for t, _ in csr)
                g = statistics.median(t for t, _ in generated)
                scipy_ms = statistics.median(p[0] for p in peers)
                torch_ms = statistics.median(p[1] for p in peers)
                flops = 2 * block.num_stored * 64
                out.append(row(f"cli_bsr_spmm/dlmc_transformer_{layer}_block4x4_25%_{brows}x{binner}"
                               f"_nnz{block.num_stored}/64", m, "scipy bsr_matrix @ B", scipy_ms, None,
                               "-", f"speedup {scipy_ms / m:.2f}; provider {bsr[0][1]}; torch CSR @ B "
                               f"{torch_ms:.3g} ms ({torch_ms / m:.2f}x); csr_spmm on the same "
                               f"matrix {c:.3g} ms ({c / m:.2f}x); generated bsr code {g:.3g} ms "
                               f"({g / m:.2f}x); {flops / m / 1e6:.3g} GFLOP/s",
                               f"sparseflow run '{plain_k}' --format A=bsr:4x4 --in A=block.mtx "
                               f"--in B=B.npy --repeat {args.repeat}"))
        # --- f64 SpMM: the CSR SpMM's f64 instantiation against generated f64 code and scipy
        if want("cli_spmm_f64"):
            for width in (16, 64):
                np.save(f"{work}/B64.npy", rng.uniform(-1, 1, (inner, width)))
                inputs = {"A": dlmc, "B": f"{work}/B64.npy"}
                f64 = ["--dtype", "A=f64", "--dtype", "B=f64", "--dtype", "C=f64"]
                hand, generated, peer = [], [], []
                for _ in range(args.rounds):
                    hand.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs, args.repeat,
                                              f64))
                    generated.append(cli_median_ms(args.sparseflow, plain_k, {"A": "csr"}, inputs,
                                                   args.repeat, f64 + ["--generated-only"]))
                    peer.append(python_ms(SCIPY_PRODUCT.format(path=dlmc, x=f"{work}/B64.npy",
                                                               dtype="float64",
                                                               repeat=args.repeat))[0])
                h = statistics.median(t for t, _ in hand)
                g = statistics.median(t for t, _ in generated)
                pm = statistics.median(peer)
                out.append(row(f"cli_spmm_f64/dlmc_transformer_0.5_ffn_conv1_{rows}x{inner}/{width}", h,
                               "scipy A @ B (f64)", pm, None, "-",
                               f"speedup {pm / h:.2f}; provider {hand[0][1]}; generated f64 code "
                               f"{g:.3g} ms = {g / h:.2f}x",
                               f"sparseflow run '{plain_k}' --format A=csr --in A={dlmc} --in B=B64.npy "
                               f"--dtype A=f64 --dtype B=f64 --dtype C=f64 --repeat {args.repeat}"))
        # --- FusedMM (an SDDMM feeding an SpMM, one kernel) against torch's two steps
        if want("cli_fusedmm"):
            for name, shape in (("X", (rows, 64)), ("Y", (inner, 64)), ("Bf", (inner, 64))):
                np.save(f"{work}/{name}.npy", rng.uniform(-1, 1, shape).astype(np.float32))
            fused_mm = "C(i,j) = sum(k, A(i,k) * sum(l, X(i,l) * Y(k,l)) * B(k,j))"
            inputs = {"A": dlmc, "X": f"{work}/X.npy", "Y": f"{work}/Y.npy", "B": f"{work}/Bf.npy"}
            ours, peer = [], []
            for _ in range(args.rounds):
                ours.append(cli_median_ms(args.sparseflow, fused_mm, {"A": "csr"}, inputs, args.repeat))
                peer.append(python_ms(TORCH_FUSEDMM.format(path=dlmc, x=f"{work}/X.npy",
                                                           y=f"{work}/Y.npy", b=f"{work}/Bf.npy",
                                                           repeat=args.repeat))[0])
            m = statistics.median(t for t, _ in ours)
            pm = statistics.median(peer)
            flops = a.num_stored * 64 * 2 * 2
            out.append(row(f"cli_fusedmm/dlmc_transformer_0.5_ffn_conv1_{rows}x{inner}_nnz{a.num_stored}/64x64",
                           m, "torch sampled_addmm (on A's pattern) then CSR @ B", pm, None, "-",
                           f"speedup {pm / m:.2f}; provider {ours[0][1]}; {flops / m / 1e6:.3g} GFLOP/s "
                           f"(2 x nnz x (64 + 64) flops)",
                           f"sparseflow run '{fused_mm}' --format A=csr --in A={dlmc} --in X=X.npy "
                           f"--in Y=Y.npy --in B=B.npy --repeat {args.repeat}"))
        # --- 2:4 GEMV against OpenBLAS sgemv on the dense weights
        if want("cli_gemv_2to4"):
            for o, i in GEMV_SHAPES:
                w = rng.uniform(-1, 1, (o, i)).astype(np.float32)
                groups = w.reshape(-1, 4)
                keep = np.argsort(np.abs(groups), axis=1)[:, 2:]
                mask = np.zeros_like(groups, dtype=bool)
                np.put_along_axis(mask, keep, True, axis=1)
                w = np.where(mask, groups, 0).reshape(o, i).astype(np.float32)
                x = rng.uniform(-1, 1, i).astype(np.float32)
                np.save(f"{work}/W.npy", w)
                np.save(f"{work}/x.npy", x)
                ours, peer = [], []
                for _ in range(args.rounds):
                    ours.append(cli_median_ms(args.sparseflow, "y(o) = W(o,i) * x(i)", {"W": "2:4"},
                                              {"W": f"{work}/W.npy", "x": f"{work}/x.npy"},
                                              args.repeat))
                    peer.append(python_ms(SGEMV.format(w=f"{work}/W.npy", x=f"{work}/x.npy",
                                                       repeat=args.repeat))[0])
                m = statistics.median(t for t, _ in ours)
                pm = statistics.median(peer)
                floor, basis = None, "-"
                if bandwidth:
                    moved = o * i // 2 * 4 + o * i // 8 + i * 4 + o * 4  # values + 2-bit metadata
                    floor = moved / bandwidth * 1e3
                    basis = f"{moved / 1e6:.3g} MB at {bandwidth / 1e9:.3g} GB/s"
                out.append(row(f"cli_gemv_2to4/{o}x{i}", m, "numpy W@x (OpenBLAS sgemv, dense)", pm,
                               floor, basis, f"speedup {pm / m:.2f} (target >= 2); provider {ours[0][1]}",
                               f"sparseflow run 'y(o) = W(o,i) * x(i)' --format W=2:4 --in W=W.npy --in x=x.npy --repeat {args.repeat}"))
        # --- f64 dense and 2:4 GEMV and GEMM (DenseLinear's and NMLinear's f64 kernels) against
        # OpenBLAS dgemv/dgemm on the same (2:4-pruned) weights
        if want("cli_dense_f64"):
            cases = [("y(o) = W(o,i) * x(i)", (4096, 4096), (4096,)),
                     ("y(o) = W(o,i) * x(i)", (11008, 4096), (4096,)),
                     ("Y(n,o) = X(n,i) * W(o,i)", (1024, 1024), (128, 1024)),
                     ("Y(n,o) = X(n,i) * W(o,i)", (1024, 1024), (512, 1024))]
            for kernel, w_shape, x_shape in cases:
                x_name = "x" if len(x_shape) == 1 else "X"
                w = rng.uniform(-1, 1, w_shape)
                groups = w.reshape(-1, 4)
                keep = np.argsort(np.abs(groups), axis=1)[:, 2:]
                mask = np.zeros_like(groups, dtype=bool)
                np.put_along_axis(mask, keep, True, axis=1)
                np.save(f"{work}/Wd.npy", np.where(mask, groups, 0).reshape(w_shape))
                np.save(f"{work}/xd.npy", rng.uniform(-1, 1, x_shape))
                inputs = {"W": f"{work}/Wd.npy", x_name: f"{work}/xd.npy"}
                f64 = [arg for n in ("W", x_name, kernel[0]) for arg in ("--dtype", f"{n}=f64")]
                batch = 1 if len(x_shape) == 1 else x_shape[0]
                flops = 2 * batch * w_shape[0] * w_shape[1]
                peer_name = "numpy W @ x (OpenBLAS dgemv)" if batch == 1 else \
                    "numpy X @ W.T (OpenBLAS dgemm)"
                for label, fmt in (("dense", "dense"), ("2to4", "2:4")):
                    hand, generated, peer = [], [], []
                    for _ in range(args.rounds):
                        hand.append(cli_median_ms(args.sparseflow, kernel, {"W": fmt}, inputs,
                                                  args.repeat, f64))
                        generated.append(cli_median_ms(args.sparseflow, kernel, {"W": fmt}, inputs,
                                                       max(3, args.repeat // 4),
                                                       f64 + ["--generated-only"]))
                        peer.append(python_ms(DENSE_F64.format(w=f"{work}/Wd.npy",
                                                               x=f"{work}/xd.npy",
                                                               repeat=args.repeat))[0])
                    h = statistics.median(t for t, _ in hand)
                    g = statistics.median(t for t, _ in generated)
                    pm = statistics.median(peer)
                    floor, basis = None, "-"
                    if bandwidth and batch == 1:
                        values = w_shape[0] * w_shape[1] * (8 if fmt == "dense" else 4.25)
                        moved = values + 8 * (w_shape[0] + w_shape[1])
                        floor = moved / bandwidth * 1e3
                        basis = f"{moved / 1e6:.3g} MB at {bandwidth / 1e9:.3g} GB/s"
                    out.append(row(f"cli_{label}_f64/{batch}x{w_shape[1]}x{w_shape[0]}", h,
                                   peer_name, pm, floor, basis,
                                   f"speedup {pm / h:.2f}; provider {hand[0][1]}; generated f64 "
                                   f"code {g:.3g} ms = {g / h:.2f}x; {flops / h / 1e6:.3g} "
                                   f"GFLOP/s (dense-equivalent)",
                                   f"sparseflow run '{kernel}' --format W={fmt} --in W=W.npy "
                                   f"--in {x_name}=x.npy " + " ".join(f64) +
                                   f" --repeat {args.repeat}"))
        # --- sparse outputs in formats the kernel does not assemble, against csr and scipy
        if want("cli_sparse_outputs"):
            kernels = (("spgemm", "C(i,j) = A(i,k) * B(k,j)", max(3, args.repeat // 3)),
                       ("add", "C(i,j) = A(i,j) + B(i,j)", args.repeat))
            matrices = [m for m in MATRICES if not m[0].startswith("dlmc")] + [
                ("pushpull", "data/suitesparse/LAGraph/data/pushpull.mtx")]
            for label, path in matrices:
                a = sf.read(path)
                shape = f"{label}_{a.shape[0]}x{a.shape[1]}_nnz{a.num_stored}"
                for name, kernel, repeat in kernels:
                    if name == "spgemm" and a.shape[0] != a.shape[1]:
                        continue  # A @ A needs a square A
                    times = {fmt: [] for fmt in ("csr", "dcsr", "coo")}
                    peer = {fmt: [] for fmt in ("csr", "coo")}
                    for _ in range(args.rounds):
                        for fmt in times:
                            times[fmt].append(cli_median_ms(
                                args.sparseflow, kernel, {"A": "csr", "B": "csr", "C": fmt},
                                {"A": path, "B": path}, repeat)[0])
                        for fmt in peer:
                            peer[fmt].append(python_ms(SCIPY_SPARSE_OUT.format(
                                path=path, spgemm=name == "spgemm", coo=fmt == "coo",
                                repeat=repeat))[0])
                    csr = statistics.median(times["csr"])
                    for fmt, samples in times.items():
                        m = statistics.median(samples)
                        peer_fmt = "coo" if fmt == "coo" else "csr"
                        pm = statistics.median(peer[peer_fmt])
                        scipy_op = "A @ A" if name == "spgemm" else "A + A"
                        out.append(row(f"cli_sparse_outputs/{name}/{shape}/{fmt}", m,
                                       f"scipy {scipy_op}" + (".tocoo()" if fmt == "coo" else ""),
                                       pm, None, "-",
                                       f"{m / csr:.2f}x the csr output; speedup {pm / m:.2f}",
                                       f"sparseflow run '{kernel}' --format A=csr --format B=csr "
                                       f"--format C={fmt} --in A={path} --in B={path} --repeat {repeat}"))
        # --- outputs collected as a list (drivers that reach a row more than once: coo, bsr) and
        # hybrid inputs into a sparse output (parts summed), against the same SDDMM with A in csr
        # (the output then shares A's pattern), which is what a user would convert A to otherwise
        if want("cli_listed_outputs"):
            kernel = "C(i,j) = A(i,j) * sum(k, D(i,k) * E(j,k))"
            for label, path in MATRICES[:2] + MATRICES[3:]:
                a = sf.read(path)
                shape = f"{label}_{a.shape[0]}x{a.shape[1]}_nnz{a.num_stored}"
                np.save(f"{work}/D.npy", rng.uniform(-1, 1, (a.shape[0], 32)).astype(np.float32))
                np.save(f"{work}/E.npy", rng.uniform(-1, 1, (a.shape[1], 32)).astype(np.float32))
                inputs = {"A": path, "D": f"{work}/D.npy", "E": f"{work}/E.npy"}
                times = {fmt: [] for fmt in ("csr", "coo", "bsr:4x4", "hyb")}
                for _ in range(args.rounds):
                    for fmt in times:
                        times[fmt].append(cli_median_ms(args.sparseflow, kernel,
                                                        {"A": fmt, "C": "csr"}, inputs,
                                                        args.repeat)[0])
                csr = statistics.median(times["csr"])
                for fmt, samples in times.items():
                    if fmt == "csr":
                        continue
                    m = statistics.median(samples)
                    out.append(row(f"cli_listed_outputs/sddmm32/{shape}/A_{fmt}", m,
                                   "the same kernel with A csr", csr, None, "-",
                                   f"{m / csr:.2f}x A csr",
                                   f"sparseflow run '{kernel}' --format A={fmt} --format C=csr "
                                   f"--in A={path} --in D=D.npy --in E=E.npy --repeat {args.repeat}"))
                # A^T A into csr: A read through a csc copy (Gustavson's order), and with the
                # outer-product order a schedule asks for (a list, one thread); scipy's A.T @ A
                if a.shape[0] != a.shape[1]:
                    continue
                ata = "C(i,j) = A(k,i) * B(k,j)"
                repeat = max(3, args.repeat // 4)
                copy_ms, list_ms, peer = [], [], []
                for _ in range(args.rounds):
                    copy_ms.append(cli_median_ms(args.sparseflow, ata,
                                                 {"A": "csr", "B": "csr", "C": "csr"},
                                                 {"A": path, "B": path}, repeat)[0])
                    list_ms.append(cli_median_ms(args.sparseflow, ata,
                                                 {"A": "csr", "B": "csr", "C": "csr"},
                                                 {"A": path, "B": path}, repeat,
                                                 ["--schedule", "reorder(k, i, j)"])[0])
                    peer.append(python_ms(SCIPY_AT_A.format(path=path, repeat=repeat))[0])
                pm = statistics.median(peer)
                for name, samples, extra in (
                        ("AtA_csc_copy", copy_ms, ""),
                        ("AtA_outer_product_list", list_ms, " --schedule 'reorder(k, i, j)'")):
                    m = statistics.median(samples)
                    out.append(row(f"cli_listed_outputs/{name}/{shape}", m, "scipy A.T @ A", pm,
                                   None, "-", f"speedup {pm / m:.2f}",
                                   f"sparseflow run '{ata}'{extra} --format A=csr --format B=csr "
                                   f"--format C=csr --in A={path} --in B={path} --repeat {repeat}"))
    with open(args.rows, "a") as f:
        f.writelines(out)
    sys.stdout.writelines(out)


if __name__ == "__main__":
    main()
