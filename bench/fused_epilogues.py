"""The element-wise epilogue fused into the provider's store, through the CLI a user runs: each
spelling of a scale, a residual and a clamp (relu6) around an SpMM (and a linear layer with a csr weight) against
the plain product in the same run, and against the same kernel as generated code (what ran before
the providers took a scale, a residual or a clamp: two nests and a dense temporary).

`sparseflow run KERNEL --in ... --format A=csr --repeat N` medians per call (kernel only),
rounds interleaved; R, B and b random (np.float32), A the matrices below (held out of every
kernel and tuning choice made on this machine).

Usage: .venv/bin/python bench/fused_epilogues.py [--sparseflow build/bin/sparseflow]
       [--matrices A.mtx ...] [--columns 64] [--repeat 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import pathlib
import re
import statistics
import subprocess
import tempfile

import numpy as np
import scipy.io

ROOT = pathlib.Path(__file__).resolve().parents[1]
MATRICES = ["data/suitesparse/ParU/Matrix/bayer10.mtx",
            "data/suitesparse/LAGraph/data/pushpull.mtx",
            "data/dlmc/rn50/magnitude_pruning/0.98/bottleneck_2_block_group4_1_1.smtx"]
# (label, kernel, parameters); every kernel reads A, B, and b, R where it names them.
SPMM = [
    ("plain", "C(i,j) = A(i,k) * B(k,j)", {}),
    ("bias + relu", "C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {}),
    ("scale (parameter)", "C(i,j) = alpha * A(i,k) * B(k,j)", {"alpha": 0.125}),
    ("residual", "C(i,j) = A(i,k) * B(k,j) + R(i,j)", {}),
    ("relu(scale + bias + residual)",
     "C(i,j) = relu(alpha * A(i,k) * B(k,j) + b(j) + R(i,j))", {"alpha": 0.125}),
    ("relu(bias) + residual", "C(i,j) = relu(A(i,k) * B(k,j) + b(j)) + R(i,j)", {}),
    ("relu6(bias)", "C(i,j) = clamp(relu(A(i,k) * B(k,j) + b(j)), 0, 6)", {}),
]
LINEAR = [
    ("plain", "Y(n,o) = X(n,i) * W(o,i)", {}),
    ("bias + residual", "Y(n,o) = X(n,i) * W(o,i) + b(o) + R(n,o)", {}),
    ("gelu(scale + bias) + residual",
     "Y(n,o) = gelu(alpha * X(n,i) * W(o,i) + b(o)) + R(n,o)", {"alpha": 0.5}),
    ("relu6(bias)", "Y(n,o) = clamp(relu(X(n,i) * W(o,i) + b(o)), 0, 6)", {}),
]


def median_ms(args, kernel, params, inputs, formats, generated):
    command = [args.sparseflow, "run", kernel, "--repeat", str(args.repeat)]
    for name, path in inputs.items():
        if re.search(rf"\b{name}\(", kernel):
            command += ["--in", f"{name}={path}"]
    for name, value in params.items():
        command += ["--param", f"{name}={value}"]
    for name, fmt in formats.items():
        command += ["--format", f"{name}={fmt}"]
    if generated:
        command.append("--generated-only")
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median_ms: ([0-9.eE+-]+)", out).group(1))


def run_table(args, title, kernels, inputs, formats, plain_bytes, r_bytes):
    times = {(label, gen): [] for label, _, _ in kernels for gen in (False, True)}
    for _ in range(args.rounds):
        for label, kernel, params in kernels:
            times[(label, False)].append(median_ms(args, kernel, params, inputs, formats, False))
            if label != "plain" and label != "bias + relu":
                times[(label, True)].append(
                    median_ms(args, kernel, params, inputs, formats, True))
    plain = statistics.median(times[("plain", False)])
    print(f"\n{title}")
    print("| epilogue | sparseflow ms | vs plain | bytes vs plain's | generated code ms "
          "| vs generated |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, kernel, _ in kernels:
        # The traffic floor's ratio: A, B (or W, X) and C read or written once, plus R's bytes.
        floor = (plain_bytes + (r_bytes if "R(" in kernel else 0)) / plain_bytes
        fused = statistics.median(times[(label, False)])
        gen = times[(label, True)]
        gen_text = f"{statistics.median(gen):.3f} | {statistics.median(gen) / fused:.2f}x" \
            if gen else "- | -"
        print(f"| {label} | {fused:.3f} | {fused / plain:.2f}x | {floor:.2f}x | {gen_text} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sparseflow", default=str(ROOT / "build/bin/sparseflow"))
    parser.add_argument("--matrices", nargs="*", default=MATRICES)
    parser.add_argument("--columns", type=int, default=64)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", nargs="*", default=["1536x384", "384x1536"],
                        help="OUTxIN shapes of random dense and 2:4 layers (MiniLM's FFN)")
    args = parser.parse_args()
    rng = np.random.default_rng()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for matrix in args.matrices:
            path = ROOT / matrix
            if path.suffix == ".mtx":
                rows, cols, nnz, _, _, symmetry = scipy.io.mminfo(str(path))
                nnz = 2 * nnz if symmetry != "general" else nnz  # about: the diagonal once
            else:  # DLMC .smtx: "rows, cols, nnz" on the first line
                rows, cols, nnz = (int(v) for v in path.read_text().split("\n")[0].split(",")[:3])
            a_bytes = 8 * nnz + 4 * (rows + 1)  # int32 columns, f32 values, row starts
            n = args.columns
            files = {"A": path, "B": tmp / "B.npy", "b": tmp / "b.npy", "R": tmp / "R.npy"}
            np.save(files["B"], rng.standard_normal((cols, n), dtype=np.float32))
            np.save(files["b"], rng.standard_normal(n, dtype=np.float32))
            np.save(files["R"], rng.standard_normal((rows, n), dtype=np.float32))
            run_table(args, f"{path.name} ({rows} x {cols}), B {cols} x {n}, SpMM layout",
                      SPMM, files, {"A": "csr"}, a_bytes + 4 * n * (cols + rows), 4 * n * rows)
            files = {"W": path, "X": tmp / "X.npy", "b": tmp / "bo.npy", "R": tmp / "RY.npy"}
            np.save(files["X"], rng.standard_normal((args.batch, cols), dtype=np.float32))
            np.save(files["b"], rng.standard_normal(rows, dtype=np.float32))
            np.save(files["R"], rng.standard_normal((args.batch, rows), dtype=np.float32))
            batch = args.batch
            run_table(args, f"{path.name} as a csr layer W ({rows} x {cols}), batch {batch}",
                      LINEAR, files, {"W": "csr"}, a_bytes + 4 * batch * (cols + rows),
                      4 * batch * rows)
        for shape in args.layers:  # dense and 2:4 layers: DenseLinear and NMLinear
            rows, cols = (int(v) for v in shape.split("x"))
            batch = args.batch
            w = rng.standard_normal((rows, cols), dtype=np.float32)
            groups = w.reshape(-1, 4)
            smallest = np.argsort(np.abs(groups), axis=1)[:, :2]
            np.put_along_axis(groups, smallest, 0, axis=1)  # 2:4 by magnitude
            files = {"W": tmp / "W.npy", "X": tmp / "X.npy", "b": tmp / "bo.npy",
                     "R": tmp / "RY.npy"}
            np.save(files["W"], w)
            np.save(files["X"], rng.standard_normal((batch, cols), dtype=np.float32))
            np.save(files["b"], rng.standard_normal(rows, dtype=np.float32))
            np.save(files["R"], rng.standard_normal((batch, rows), dtype=np.float32))
            # 2:4 bytes: half the values, 2 bits of position each
            for fmt, w_bytes in (("dense", 4 * rows * cols),
                                 ("2:4", 2 * rows * cols + rows * cols // 8)):
                run_table(args, f"a {fmt} layer W ({rows} x {cols}), batch {batch}", LINEAR, files,
                          {"W": fmt}, w_bytes + 4 * batch * (cols + rows), 4 * batch * rows)


if __name__ == "__main__":
    main()
