"""sf.sparsify(model, pattern="auto") on all-MiniLM-L6-v2: the torch model as a user runs it,
before and after its encoder's nn.Linear layers are swapped for the fastest exact layer measured
(dense, exact 2:4 SparseLinear, FormatLinear in the autoconfigurator's format and schedule, or
in each of --formats), against sf.optimize's whole-graph module on the same pruned model, in the
same run. The tuning database starts empty (a temporary file): sparsify's time is a first use.

Variants: dense (as shipped), 2:4 and 90% unstructured (magnitude-pruned by default, --method
sparsegpt for the calibrated weights; pruning changes the values, not the speed). For each batch
(sentences x 128 tokens) sparsify is told the layer's row count (batch x 128), so its choice is
for that serving size. Prints per call medians (torch.no_grad, 2 threads), the speed-up, sparsify's
own time (what choosing cost) and the formats chosen; outputs are checked against the pruned torch
model before swapping (relative 1e-4).

Usage: .venv/bin/python bench/sparsify_auto.py [--runs 9] [--variants dense 2:4 90%]
       [--batches 1 32] [--method magnitude] [--formats csr bsr:4x4] [--budget 4]
"""

from __future__ import annotations

import argparse
import collections
import copy
import pathlib
import sys
import tempfile
import time

import torch

import sparseflow as sf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "peers"))
from onnx_peers import median_ms  # noqa: E402  (one timing loop for every engine)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from minilm_end_to_end import prune_variant  # noqa: E402  (the same pruned variants)

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "sentences"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--method", default="magnitude")
    ap.add_argument("--variants", nargs="*", default=["dense", "2:4", "90%"])
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 32])
    ap.add_argument("--formats", nargs="*", default=None,
                    help="time FormatLinear in these formats instead of tuning each layer")
    ap.add_argument("--budget", type=int, default=4)
    args = ap.parse_args()
    database = pathlib.Path(tempfile.mkdtemp()) / "tuning.jsonl"
    torch.set_num_threads(2)
    minilm = sf.minilm
    calibration = minilm.read_sentences(DATA / "python_docstrings.txt")[:64]
    evaluation = minilm.read_sentences(DATA / "perl_docs.txt")
    _, tokenizer = sf.load_minilm()
    print(f"all-MiniLM-L6-v2, 2 threads, torch {torch.__version__}, tokens padded to 128, median "
          f"of {args.runs} calls, pruning: {args.method}\n")
    print("| variant | batch | torch (ms) | torch + sparsify auto (ms) | vs torch | sf.optimize "
          "(ms) | sparsify's time (s) | chosen |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for variant in args.variants:
        pruned, _ = sf.load_minilm()
        prune_variant(pruned, tokenizer, variant, args.method, calibration)
        pruned.eval()
        for batch in args.batches:
            sentences = (evaluation * batch)[:batch]
            enc = minilm.tokenize(tokenizer, sentences, batch_size=batch, tokens=128)[0]
            with torch.no_grad():
                want = pruned(**enc).last_hidden_state
                torch_ms = median_ms(lambda: pruned(**enc), args.runs)
            swapped = copy.deepcopy(pruned)
            start = time.perf_counter()
            report = sf.sparsify(swapped, pattern="auto", include="encoder.*",
                                 batch=batch * 128, reps=3, formats=args.formats,
                                 budget=args.budget, database=str(database))
            choose_s = time.perf_counter() - start
            with torch.no_grad():
                got = swapped(**enc).last_hidden_state
                error = float(((got - want).abs() / want.abs().clamp_min(1.0)).max())
                ours_ms = median_ms(lambda: swapped(**enc), args.runs)
            if error > 1e-4:
                print(f"  warning: sparsified output differs from torch by {error:.3g}")
            opt, _ = sf.optimize(pruned, enc, reps=3, timing_runs=1)
            opt_ms = median_ms(lambda: opt(**enc), args.runs)
            chosen = collections.Counter(
                layer.format + (" (scheduled)" if layer.replaced and layer.schedule else "")
                for layer in report.layers if layer.times_ms)
            summary = ", ".join(f"{n} {fmt}" for fmt, n in chosen.most_common())
            print(f"| {variant} | {batch}x128 | {torch_ms:.1f} | {ours_ms:.1f} | "
                  f"{torch_ms / ours_ms:.2f}x | {opt_ms:.1f} | {choose_s:.1f} | {summary} |",
                  flush=True)


if __name__ == "__main__":
    main()
