#!/usr/bin/env python3
"""Generated sparsity structures for the autoconfigurator's corpus (scripts/tune_corpus.sh).

Writes, seeded and reproducible, Matrix Market files of structures the bundled real matrices
have few of: a power-law graph (row lengths from a Zipf law, columns preferring hubs), a matrix of
dense 4x4 blocks, a banded matrix, and for each matrix a dense f32 right-hand side B with `--cols`
columns as .npy (the SpMM's B): OUT_DIR/b_COLS_ROWS.npy for each row count the matrices given
with --rhs-for (and the generated ones) need, a vector OUT_DIR/x_ROWS.npy (SpMV's x) and
OUT_DIR/d_32_ROWS.npy with 32 columns for each row and column count (SDDMM's X and Y).

    tune_structures.py OUT_DIR [--cols 64] [--seed 1] [--rhs-for MATRIX ...]
"""
import argparse
import os

import numpy as np
import scipy.io
import scipy.sparse as sp


def power_law(rng, n, mean_degree):
    lengths = np.minimum(rng.zipf(1.8, n), n // 4)
    lengths = np.maximum(1, (lengths * mean_degree / lengths.mean()).astype(np.int64))
    rows = np.repeat(np.arange(n), lengths)
    weights = 1.0 / np.arange(1, n + 1) ** 0.8  # hubs: low column numbers, then permuted
    cols = rng.permutation(n)[rng.choice(n, size=rows.size, p=weights / weights.sum())]
    values = rng.standard_normal(rows.size)
    return sp.coo_matrix((values, (rows, cols)), shape=(n, n)).tocsr()


def blocks(rng, n, block, density):
    nb = n // block
    mask = sp.random(nb, nb, density=density, random_state=rng, format="coo")
    dense_block = np.ones((block, block))
    out = sp.kron(mask.astype(bool).astype(np.float64), dense_block, format="coo")
    out.data = rng.standard_normal(out.nnz)
    return out.tocsr()


def band(rng, n, half_width):
    offsets = list(range(-half_width, half_width + 1))
    diagonals = [rng.standard_normal(n - abs(o)) for o in offsets]
    return sp.diags(diagonals, offsets, shape=(n, n), format="csr")


def shape(path):
    """The (rows, columns) in a Matrix Market (.mtx) or DLMC (.smtx) header."""
    with open(path) as f:
        for line in f:
            if line.startswith("%") or not line.strip():
                continue
            fields = line.replace(",", " ").split()
            return int(fields[0]), int(fields[1])
    raise ValueError(f"{path}: no header line")


def column_count(path):
    return shape(path)[1]


def row_count(path):
    return shape(path)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--cols", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rhs-for", nargs="*", default=[])
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)
    matrices = {
        "powerlaw_8192": power_law(rng, 8192, 12),
        "powerlaw_32768": power_law(rng, 32768, 6),
        "blocks4_4096": blocks(rng, 4096, 4, 0.006),
        "blocks8_8192": blocks(rng, 8192, 8, 0.002),
        "band9_16384": band(rng, 16384, 4),
        "band33_4096": band(rng, 4096, 16),
    }
    for name, m in matrices.items():
        m.sum_duplicates()
        m.sort_indices()
        scipy.io.mmwrite(os.path.join(args.out, name + ".mtx"), m, precision=9)
        print(f"{name}: {m.shape[0]}x{m.shape[1]}, {m.nnz} entries")
    rows = {m.shape[1] for m in matrices.values()} | {column_count(p) for p in args.rhs_for}
    for r in sorted(rows):
        b = rng.standard_normal((r, args.cols)).astype(np.float32)
        np.save(os.path.join(args.out, f"b_{args.cols}_{r}.npy"), b)
        np.save(os.path.join(args.out, f"x_{r}.npy"), rng.standard_normal(r).astype(np.float32))
    sides = rows | {m.shape[0] for m in matrices.values()} | {row_count(p) for p in args.rhs_for}
    for r in sorted(sides):
        d = rng.standard_normal((r, 32)).astype(np.float32)
        np.save(os.path.join(args.out, f"d_32_{r}.npy"), d)


if __name__ == "__main__":
    main()
