#!/usr/bin/env python3
"""scipy, torch.sparse and dense numpy peers of the compiled-kernel benchmarks.

bench_compiler and `sparseflow benchmark` write each matrix and its dense operands as .npy files
into a folder and run, for one or more folders,

  python sparse_peers.py [--libs numpy,scipy,torch] [--reps 5] [--threads 2]
      --dir DIR --kernels spmv,spmm32,sddmm32,spgemm [--dir DIR2 --kernels ...]

then read "PEER scipy X; torch Y; numpy Z", per case "RESULT <i>/<lib>/<kernel> <median seconds>
<reps> sum=<float64 sum of the result> stored=<values stored> via=<the call>" (i: the folder's
place on the command line), "FAILED <i>/<lib>/<kernel> <why>" for a case that could not run,
"UNAVAILABLE <lib> <why>" for a library that cannot be imported (with --strict: exit status 3),
and "DONE <i>/<kernel>" after each folder and kernel; a case a library cannot do at all
("FAILED ... n/a: <why>") is not a failure. A folder holds A_pos, A_crd (int32), A_vals (float32), dims (int64: rows,
cols, nnz), x (cols), B<n> (cols x n row-major) per SpMM width n, X<k> (rows x k) and Z<k>
(cols x k) per SDDMM size k, all float32 and 1-d.

scipy runs on one thread (its sparse kernels are sequential); torch on --threads
(torch.set_num_threads); numpy's BLAS on OPENBLAS_NUM_THREADS, which the caller sets. torch 1.13
without MKL has no CSR SpMV (addmv) or CSR x CSR, so SpMV is torch.sparse.mm with a one-column
matrix and SpGEMM uses COO; where CSR and COO both work the faster is kept. SDDMM: scipy gathers
rows of X and Z at M's coordinates (what a scipy user writes), torch uses
torch.sparse.sampled_addmm (X @ Z.T at M's pattern) times M's values, numpy the full X @ Z.T
times dense M. numpy stores A dense, and skips matrices whose dense form would pass --dense-limit.
"""
import argparse
import importlib
import os
import re
import sys
import warnings

from peer_timing import median_time

import numpy as np

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
KERNEL = re.compile(r"^(spmv|spgemm|spmm(\d+)|sddmm(\d+))$")


def load(folder):
    def get(name):
        path = os.path.join(folder, name + ".npy")
        return np.load(path) if os.path.exists(path) else None

    rows, cols, nnz = (int(v) for v in get("dims")[:3])
    import scipy.sparse as sp
    a = sp.csr_matrix((get("A_vals"), get("A_crd"), get("A_pos")), shape=(rows, cols))
    assert a.nnz == nnz and a.dtype == np.float32
    ops = {"A": a, "x": get("x")}
    for name in os.listdir(folder):
        match = re.match(r"^([BXZ])(\d+)\.npy$", name)
        if match:
            n = int(match.group(2))
            ops[match.group(1) + match.group(2)] = get(name[:-4]).reshape(
                cols if match.group(1) != "X" else rows, n)
    return ops


def summary(out):
    """(float64 sum, number stored) of a result of any of the libraries."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(out, torch.Tensor):
        if out.layout == torch.strided:
            return float(out.double().sum()), out.numel()
        values = out.values()
        return float(values.double().sum()), values.numel()
    scipy_sparse = sys.modules.get("scipy.sparse")
    if scipy_sparse is not None and scipy_sparse.issparse(out):
        return float(out.data.astype(np.float64).sum()), out.nnz
    return float(np.asarray(out, dtype=np.float64).sum()), np.asarray(out).size


def measure(call, reps):
    """Median of `reps` timings after a warm-up; calls under 10 ms are timed in ~10 ms batches."""
    return median_time(call, reps, 0.01, inspect=summary)


def operand(kernel, ops):
    """The dense operand of a kernel: x (SpMV), B (SpMM), (X, Z) (SDDMM); SpGEMM has none."""
    if kernel == "spmv":
        return ops["x"]
    if kernel.startswith("spmm"):
        return ops["B" + kernel[4:]]
    if kernel.startswith("sddmm"):
        return ops["X" + kernel[5:]], ops["Z" + kernel[5:]]
    return None


def named(kernel):
    """What the call multiplies A by, for the `via` field."""
    return {"spmv": "x", "spgemm": "A"}.get(kernel, "B")


def scipy_calls(kernel, ops, args):
    a, d = ops["A"], operand(kernel, ops)
    if kernel.startswith("sddmm"):
        coo = a.tocoo()  # M's coordinates, prepared once
        rows, cols, vals = coo.row, coo.col, coo.data
        x, z = d
        return {"M.data * einsum(X[rows], Z[cols])":
                lambda: vals * np.einsum("ij,ij->i", x[rows], z[cols])}
    other = a if kernel == "spgemm" else d
    return {f"A @ {named(kernel)} (csr)": lambda: a @ other}


def torch_calls(kernel, ops, args):
    import torch
    a, d = ops["A"], operand(kernel, ops)
    csr = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                  torch.from_numpy(a.indices.astype(np.int64)),
                                  torch.from_numpy(a.data), size=a.shape)
    coo = csr.to_sparse_coo().coalesce()
    if kernel.startswith("sddmm"):
        x, zt = torch.from_numpy(d[0]), torch.from_numpy(d[1]).t()
        values = csr.values()

        def sddmm():
            out = torch.sparse.sampled_addmm(csr, x, zt, beta=0.0)
            out.values().mul_(values)
            return out
        return {"sampled_addmm(csr) * M.values": sddmm}
    if kernel == "spgemm":
        return {"sparse.mm(csr, csr)": lambda: torch.sparse.mm(csr, csr),
                "sparse.mm(coo, coo)": lambda: torch.sparse.mm(coo, coo)}
    dense = torch.from_numpy(d).reshape(d.shape[0], -1)  # SpMV: x as one column
    what = "x[:, None]" if kernel == "spmv" else "B"
    return {f"sparse.mm(csr, {what})": lambda: torch.sparse.mm(csr, dense),
            f"sparse.mm(coo, {what})": lambda: torch.sparse.mm(coo, dense)}


class NotApplicable(Exception):
    """A case the library cannot do at all (not a failure)."""


def numpy_calls(kernel, ops, args):
    a, d = ops["A"], operand(kernel, ops)
    dense_bytes = a.shape[0] * a.shape[1] * 4
    if dense_bytes > args.dense_limit:
        raise NotApplicable(f"dense A would take {dense_bytes / 1e6:.0f} MB "
                            f"(limit {args.dense_limit / 1e6:.0f} MB)")
    ad = a.toarray()
    if kernel.startswith("sddmm"):
        x, z = d
        return {"dense M * (X @ Z.T)": lambda: ad * (x @ z.T)}
    other = ad if kernel == "spgemm" else d
    return {f"dense A @ {named(kernel)}": lambda: ad @ other}


CALLS = {"numpy": numpy_calls, "scipy": scipy_calls, "torch": torch_calls}


def run_library(case, calls, reps):
    """Times every variant that runs and reports the fastest."""
    best, problems = None, []
    for via, call in calls.items():
        try:
            seconds, count, (total, stored) = measure(call, reps)
        except (RuntimeError, NotImplementedError, ValueError, MemoryError) as e:
            problems.append(f"{via}: {str(e).splitlines()[0][:120]}")
            continue
        if best is None or seconds < best[0]:
            best = (seconds, count, total, stored, via)
    if best is None:
        print(f"FAILED {case} {'; '.join(problems)}", flush=True)
        return
    seconds, count, total, stored, via = best
    print(f"RESULT {case} {seconds:.9g} {count} sum={total!r} stored={stored} "
          f"via={via.replace(' ', '')}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", action="append", required=True)
    parser.add_argument("--kernels", action="append", required=True)
    parser.add_argument("--libs", default="scipy,torch")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dense-limit", type=float, default=256e6)
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 3 when a library of --libs cannot be imported")
    args = parser.parse_args()
    if len(args.dir) != len(args.kernels):
        parser.error("give one --kernels after each --dir")
    libs, names = [], []
    for lib in args.libs.split(","):
        if lib not in CALLS:
            parser.error(f"unknown library {lib!r} (expected numpy, scipy or torch)")
        try:
            module = importlib.import_module(lib if lib != "scipy" else "scipy.sparse")
        except ImportError as e:  # the caller says which peers are missing and why
            print(f"UNAVAILABLE {lib} {e} (Python {sys.executable})", flush=True)
            if args.strict:
                print(f"sparse_peers.py: {lib} is not available: {e} (Python {sys.executable})",
                      file=sys.stderr)
                sys.exit(3)
            continue
        if lib == "torch":
            module.set_num_threads(args.threads)
        version = sys.modules[lib].__version__
        libs.append(lib)
        names.append(f"{lib} {version}")
    print(f"PEER {'; '.join(names)}", flush=True)
    for index, (folder, kernels) in enumerate(zip(args.dir, args.kernels)):
        kernels = [k for k in kernels.split(",") if k]  # none: the folder keeps its number only
        ops = load(folder) if kernels else None
        for kernel in kernels:
            if not KERNEL.match(kernel):
                parser.error(f"unknown kernel {kernel!r}")
            for lib in libs:
                case = f"{index}/{lib}/{kernel}"
                try:
                    calls = CALLS[lib](kernel, ops, args)
                except NotApplicable as e:
                    print(f"FAILED {case} n/a: {e}", flush=True)
                    continue
                except (RuntimeError, ValueError, MemoryError) as e:
                    print(f"FAILED {case} {str(e).splitlines()[0][:160]}", flush=True)
                    continue
                run_library(case, calls, args.reps)
            print(f"DONE {index}/{kernel}", flush=True)


if __name__ == "__main__":
    main()
