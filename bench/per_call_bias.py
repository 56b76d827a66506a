"""A rank-1 addend that changes on every call, through the Python API a user calls: the GEMV
`y(o) = W(o,i) * x(i) + r(o)` and the layer `Y(n,o) = X(n,i) * W(o,i) + r(o)` with W in 2:4 and
dense (nm_linear, dense_linear). r is the layer's bias; before it was given per call, a new r
re-packed W on every call (the layer was prepared per contents of W and the bias). Times per call:
r the same every call, r written in place before every call, and W written in place before every
call (a re-pack per call: what a changed r cost before), with numpy's `W @ x + r` (OpenBLAS,
dense W) in the same run. Medians of `--repeat` calls, three interleaved rounds, median of the
rounds.

Usage: OMP_NUM_THREADS=2 .venv/bin/python bench/per_call_bias.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import sparseflow as sf

SHAPES = [(4096, 4096, 1), (4096, 4096, 32), (1536, 384, 128)]  # out x in x batch


def two_four(w):
    """W with the two largest magnitudes of every four along its rows kept."""
    groups = w.reshape(w.shape[0], -1, 4)
    order = np.argsort(np.abs(groups), axis=2)
    kept = np.zeros_like(groups)
    np.put_along_axis(kept, order[:, :, 2:], np.take_along_axis(groups, order[:, :, 2:], 2), 2)
    return kept.reshape(w.shape)


def per_call(fn, before, repeat):
    times = []
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng()
    print("| W | shape (out x in, batch) | r fixed ms | r changed per call ms | "
          "W changed per call ms | numpy W @ x + r ms | r changed vs fixed |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for fmt in ("2:4", "dense"):
        for out, inner, batch in SHAPES:
            w = rng.standard_normal((out, inner), dtype=np.float32)
            if fmt == "2:4":
                w = two_four(w)
            gemv = batch == 1
            text = ("y(o) = W(o,i) * x(i) + r(o)" if gemv
                    else "Y(n,o) = X(n,i) * W(o,i) + r(o)")
            kernel = sf.compile(text, {"W": fmt})
            tw = sf.from_numpy(w, fmt)
            x = rng.standard_normal(inner if gemv else (batch, inner), dtype=np.float32)
            r = rng.standard_normal(out, dtype=np.float32)
            tr = sf.from_numpy(r)
            r_view = sf.to_numpy(tr)  # tr's own values, written in place
            y = np.empty(out if gemv else (batch, out), dtype=np.float32)
            inputs = {"W": tw, "x" if gemv else "X": x, "r": tr}
            w_view = sf.to_numpy(tw) if fmt == "dense" else None

            def call():
                kernel.run(inputs, out=y)

            def nothing():
                pass

            def bump_r():
                r_view[0] += 1.0

            def bump_w():
                if w_view is not None:
                    w_view[0, 0] += 1.0
                else:  # a new 2:4 tensor of the same values: a new contents witness
                    inputs["W"] = sf.from_numpy(w, fmt)

            def numpy_call():
                np.add(x @ w.T, r, out=y)

            call()
            rounds = []
            for _ in range(3):
                rounds.append((per_call(call, nothing, args.repeat),
                               per_call(call, bump_r, args.repeat),
                               per_call(call, bump_w, max(5, args.repeat // 5)),
                               per_call(numpy_call, nothing, args.repeat)))
            fixed, changed, repacked, numpy_ms = (statistics.median(c) for c in zip(*rounds))
            print(f"| {fmt} | {out} x {inner}, {batch} | {fixed:.3f} | {changed:.3f} | "
                  f"{repacked:.3f} | {numpy_ms:.3f} | {changed / fixed:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
