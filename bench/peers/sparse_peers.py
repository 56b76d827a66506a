#!/usr/bin/env python3
"""scipy and torch.sparse peers of bench_compiler: SpMV, SpMM, SDDMM, SpGEMM on one matrix.

bench_compiler writes one matrix and its dense operands as .npy files into a folder and runs

  .venv/bin/python bench/peers/sparse_peers.py --dir DIR --kernels spmv,spmm32,spmm128,sddmm,spgemm
      [--reps 5] [--threads 2]

then reads "PEER scipy X; torch Y" and per case "RESULT <lib>/<kernel> <median seconds> <reps>
sum=<float64 sum of the result> stored=<values stored> via=<the call>". The folder holds
A_pos, A_crd (int32), A_vals (float32), dims (int64: rows, cols, nnz, k), x, B32, B128 (cols x N
row-major), X (rows x k), Z (cols x k), all float32 and 1-d.

scipy runs on one thread (its sparse kernels are sequential); torch on --threads
(torch.set_num_threads). torch 1.13 without MKL has no CSR SpMV (addmv) or CSR x CSR, so SpMV is
torch.sparse.mm with a one-column matrix and SpGEMM uses COO; where CSR and COO both work the
faster is kept. SDDMM: scipy gathers rows of X and Z at M's coordinates (what a scipy user
writes), torch uses torch.sparse.sampled_addmm (X @ Z.T at M's pattern) times M's values.
"""
import argparse
import os
import sys
import warnings

from peer_timing import median_time

import numpy as np
import scipy
import scipy.sparse as sp

try:
    import torch
except ImportError:  # the table still gets scipy
    torch = None
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")


def load(folder):
    def get(name):
        return np.load(os.path.join(folder, name + ".npy"))

    rows, cols, nnz, k = (int(v) for v in get("dims"))
    a = sp.csr_matrix((get("A_vals"), get("A_crd"), get("A_pos")), shape=(rows, cols))
    assert a.nnz == nnz and a.dtype == np.float32
    ops = {"A": a, "x": get("x"), "X": get("X").reshape(rows, k), "Z": get("Z").reshape(cols, k)}
    for n in (32, 128):
        path = os.path.join(folder, f"B{n}.npy")
        if os.path.exists(path):
            ops[f"B{n}"] = np.load(path).reshape(cols, n)
    return ops


def summary(out):
    """(float64 sum, number stored) of a result of any of the libraries."""
    if torch is not None and isinstance(out, torch.Tensor):
        if out.layout == torch.strided:
            return float(out.double().sum()), out.numel()
        values = out.values()
        return float(values.double().sum()), values.numel()
    if sp.issparse(out):
        return float(out.data.astype(np.float64).sum()), out.nnz
    return float(np.asarray(out, dtype=np.float64).sum()), np.asarray(out).size


def measure(call, reps):
    """Median of `reps` timings after a warm-up; calls under 10 ms are timed in ~10 ms batches."""
    return median_time(call, reps, 0.01, inspect=summary)


def scipy_calls(kernel, ops):
    a = ops["A"]
    if kernel == "spmv":
        x = ops["x"]
        return {"A @ x (csr)": lambda: a @ x}
    if kernel.startswith("spmm"):
        b = ops["B" + kernel[4:]]
        return {"A @ B (csr)": lambda: a @ b}
    if kernel == "sddmm":
        coo = a.tocoo()  # M's coordinates, prepared once
        rows, cols, vals = coo.row, coo.col, coo.data
        x, z = ops["X"], ops["Z"]
        return {"M.data * einsum(X[rows], Z[cols])":
                lambda: vals * np.einsum("ij,ij->i", x[rows], z[cols])}
    if kernel == "spgemm":
        return {"A @ A (csr)": lambda: a @ a}
    raise SystemExit(f"sparse_peers.py: unknown kernel {kernel!r}")


def torch_calls(kernel, ops):
    a = ops["A"]
    csr = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                  torch.from_numpy(a.indices.astype(np.int64)),
                                  torch.from_numpy(a.data), size=a.shape)
    coo = csr.to_sparse_coo().coalesce()
    if kernel == "spmv":
        x = torch.from_numpy(ops["x"]).reshape(-1, 1)
        return {"sparse.mm(csr, x[:, None])": lambda: torch.sparse.mm(csr, x),
                "sparse.mm(coo, x[:, None])": lambda: torch.sparse.mm(coo, x)}
    if kernel.startswith("spmm"):
        b = torch.from_numpy(ops["B" + kernel[4:]])
        return {"sparse.mm(csr, B)": lambda: torch.sparse.mm(csr, b),
                "sparse.mm(coo, B)": lambda: torch.sparse.mm(coo, b)}
    if kernel == "sddmm":
        x, zt = torch.from_numpy(ops["X"]), torch.from_numpy(ops["Z"]).t()
        values = csr.values()

        def sddmm():
            out = torch.sparse.sampled_addmm(csr, x, zt, beta=0.0)
            out.values().mul_(values)
            return out
        return {"sampled_addmm(csr) * M.values": sddmm}
    if kernel == "spgemm":
        return {"sparse.mm(csr, csr)": lambda: torch.sparse.mm(csr, csr),
                "sparse.mm(coo, coo)": lambda: torch.sparse.mm(coo, coo)}
    raise SystemExit(f"sparse_peers.py: unknown kernel {kernel!r}")


def run_library(lib, calls, kernel, reps):
    """Times every variant that runs and reports the fastest."""
    best = None
    for via, call in calls.items():
        try:
            seconds, count, (total, stored) = measure(call, reps)
        except (RuntimeError, NotImplementedError, ValueError, MemoryError) as e:
            print(f"{lib} {kernel}: {via} fails: {str(e).splitlines()[0][:120]}", file=sys.stderr)
            continue
        if best is None or seconds < best[0]:
            best = (seconds, count, total, stored, via)
    if best is None:
        return
    seconds, count, total, stored, via = best
    print(f"RESULT {lib}/{kernel} {seconds:.9g} {count} sum={total!r} stored={stored} "
          f"via={via.replace(' ', '')}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--kernels", default="spmv,spmm32,spmm128,sddmm,spgemm")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    name = f"scipy {scipy.__version__}"
    if torch is not None:
        torch.set_num_threads(args.threads)
        name += f"; torch {torch.__version__}"
    print(f"PEER {name}", flush=True)
    ops = load(args.dir)
    for kernel in args.kernels.split(","):
        run_library("scipy", scipy_calls(kernel, ops), kernel, args.reps)
        if torch is not None:
            run_library("torch", torch_calls(kernel, ops), kernel, args.reps)


if __name__ == "__main__":
    main()
