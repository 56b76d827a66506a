"""all-MiniLM-L6-v2 end to end: dense and pruned variants through sf.optimize against PyTorch.

Variants (the encoder's linear layers; embeddings and pooler untouched):
  dense          the model as shipped
  2:4            every encoder linear pruned to 2:4 (SparseGPT calibrated on data/sentences'
                 Python docstrings; --method magnitude for the quick baseline)
  90%            every encoder linear pruned to 90% unstructured (same calibration)
  ffn-half       half of each FFN's 1536 neurons removed (the rows of intermediate.dense with the
                 smallest norm times the norm of output.dense's matching column, zeroed with
                 their bias): sf.optimize's compaction removes them (structured pruning)

For each: PyTorch 1.13 eager on the pruned weights, sf.optimize's module, and the model's ONNX
export (opset 13) through sparseflow's own ONNX importer and executor (sf.load_onnx; the same file
ONNX Runtime and DeepSparse run), at batch 1 and 32 x 128 tokens (padded to 128), medians of --runs calls, 2 threads, all in this process; embedding
cosine (mean pooling, as sentence-transformers) to the dense model and to the same pruned model
run by torch, on the Perl documentation sentences (not calibrated on). Also the share of the
optimized run's time per operator kind (linear layers, attention, normalization, data movement).

Usage: .venv/bin/python bench/minilm_end_to_end.py [--runs 5] [--method sparsegpt] [--variants ...]
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch

import sparseflow as sf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "peers"))
from onnx_peers import median_ms  # noqa: E402  (one timing loop for every engine)

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "sentences"
PEERS = ROOT / "bench" / "peers" / "onnx_peers.py"


def export_onnx(model, enc, workdir):
    """The model's ONNX export (static shapes, opset 13) and its inputs, as the peers read them."""
    path = pathlib.Path(workdir) / "model.onnx"
    inputs = pathlib.Path(workdir) / "inputs.npz"
    names = ["input_ids", "attention_mask"]
    with torch.no_grad():
        torch.onnx.export(model, tuple(enc[n] for n in names), str(path), input_names=names,
                          output_names=["last_hidden_state"], opset_version=13)
    np.savez(inputs, **{n: enc[n].numpy() for n in names})
    return path, inputs


def run_peers(python, path, inputs, runs):
    """ONNX Runtime and DeepSparse on the export, in their own venv."""
    out = subprocess.run([python, str(PEERS), str(path), str(inputs), "--runs", str(runs)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_sparseflow_onnx(path, enc, runs):
    """The same export through sparseflow's ONNX importer and executor (sf.load_onnx): median ms
    per call and the first output."""
    arrays = {k: enc[k].numpy() for k in ("input_ids", "attention_mask")}  # the export's inputs
    m = sf.load_onnx(path, arrays, reps=3)
    out = m(**arrays)[0]
    return median_ms(lambda: m(**arrays), runs), out


def encoder_linears(model):
    return [m for name, m in model.named_modules()
            if name.startswith("encoder.") and isinstance(m, torch.nn.Linear)]


def prune_variant(model, tokenizer, variant, method, calibration):
    if variant == "dense":
        return
    if variant == "ffn-half":
        sf.minilm.prune_ffn_neurons(model, 0.5)
        return
    batches = sf.minilm.tokenize(tokenizer, calibration, batch_size=16, by_length=True)
    kwargs = {"pattern": "2:4"} if variant == "2:4" else {"sparsity": 0.9}
    sf.prune(model, batches, method=method, layers="encoder.*", **kwargs)


def step_kind(what):
    op = what.split(" ")[0]
    if op in ("linear", "matmul") and "weight" not in what:
        return "linear layers"
    return {"linear": "linear layers", "batch_matmul": "attention (QK, PV)",
            "softmax": "attention (softmax)", "layer_norm": "layer norm",
            "transpose": "data movement", "reshape": "data movement", "slice": "data movement",
            "add": "element-wise", "mul": "element-wise", "embedding": "embedding"}.get(op, op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--method", default="sparsegpt")
    ap.add_argument("--variants", nargs="*", default=["dense", "2:4", "90%", "ffn-half"])
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 32])
    ap.add_argument("--peers-python", default=str(ROOT / ".venv-peers" / "bin" / "python"),
                    help="the venv with onnxruntime and deepsparse (scripts/install_deps.sh bench)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    minilm = sf.minilm
    calibration = minilm.read_sentences(DATA / "python_docstrings.txt")[:128]
    evaluation = minilm.read_sentences(DATA / "perl_docs.txt")
    base, tokenizer = sf.load_minilm()
    dense_emb = minilm.embed(base, tokenizer, evaluation)
    print(f"all-MiniLM-L6-v2, 2 threads, torch {torch.__version__}, tokens padded to 128, "
          f"median of {args.runs} calls; pruning: {args.method} calibrated on "
          f"{len(calibration)} docstring sentences, cosine on {len(evaluation)} Perl doc "
          "sentences\n")
    peers = pathlib.Path(args.peers_python).exists()
    if not peers:
        print(f"(no {args.peers_python}: ONNX Runtime and DeepSparse columns left out)\n")
    print("| variant | batch | torch (ms) | ONNX Runtime (ms) | DeepSparse (ms) | sparseflow (ms) | "
          "sparseflow ONNX (ms) | vs torch | vs DeepSparse | sentences/s | cosine to dense | "
          "cosine to torch-pruned | formats |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    shares = {}
    for variant in args.variants:
        model, _ = sf.load_minilm()
        prune_variant(model, tokenizer, variant, args.method, calibration)
        torch_emb = minilm.embed(model, tokenizer, evaluation)
        cos_dense = minilm.cosine(torch_emb, dense_emb)
        for batch in args.batches:
            sentences = (evaluation * batch)[:batch]
            enc = minilm.tokenize(tokenizer, sentences, batch_size=batch, tokens=128)[0]
            opt, report = sf.optimize(model, enc, reps=3, timing_runs=1)
            with torch.no_grad():
                torch_ms = median_ms(lambda: model(**enc), args.runs)
            ours_ms = median_ms(lambda: opt(**enc), args.runs)
            # cosine of the optimized module's embeddings to torch's on the evaluation set
            with torch.no_grad():
                got = minilm.pool(opt(**enc).last_hidden_state, enc["attention_mask"])
                want = minilm.pool(model(**enc).last_hidden_state, enc["attention_mask"])
            cos_torch = minilm.cosine(got, want)
            fmt = report.format_summary
            ort_ms = ds_ms = float("nan")
            with tempfile.TemporaryDirectory() as tmp:
                path, inputs = export_onnx(model, enc, tmp)
                onnx_ms, onnx_out = run_sparseflow_onnx(path, enc, args.runs)
                p = run_peers(args.peers_python, path, inputs, args.runs) if peers else {}
            ort_ms, ds_ms = p.get("onnxruntime_ms", ort_ms), p.get("deepsparse_ms", ds_ms)
            with torch.no_grad():  # every engine ran the same model: compare outputs
                full = model(**enc).last_hidden_state.double()
            ref = full.flatten()[:4096]
            p["sparseflow_onnx_out"] = torch.from_numpy(onnx_out).double().flatten()[:4096].tolist()
            for key in ("onnxruntime_out", "deepsparse_out", "sparseflow_onnx_out"):
                if key in p:
                    diff = float((torch.tensor(p[key]) - ref[: len(p[key])]).abs().max())
                    if diff > 1e-2:
                        print(f"  warning: {key[:-4]} differs from torch by {diff:.3g}")
            print(f"| {variant} | {batch}x128 | {torch_ms:.1f} | {ort_ms:.1f} | {ds_ms:.1f} | "
                  f"{ours_ms:.1f} | {onnx_ms:.1f} | {torch_ms / ours_ms:.2f}x | "
                  f"{ds_ms / min(ours_ms, onnx_ms):.2f}x | "
                  f"{batch / ours_ms * 1e3:.1f} | {cos_dense:.4f} | {cos_torch:.6f} | {fmt} |",
                  flush=True)
            if batch == max(args.batches):
                arrays = {k: v.numpy() for k, v in enc.items()}
                ms = opt._executor.profile(arrays)
                agg = collections.Counter()
                for s, t in zip(report.steps, ms):
                    agg[step_kind(s.what)] += t
                shares[variant] = (sum(ms), agg)
    print("\nWhere the optimized run's time goes (largest batch, one profiled run):\n")
    kinds = sorted({k for _, agg in shares.values() for k in agg})
    print("| variant | total (ms) | " + " | ".join(kinds) + " |")
    print("|---|---:|" + "---:|" * len(kinds))
    for variant, (total, agg) in shares.items():
        cells = " | ".join(f"{100 * agg[k] / total:.0f}%" for k in kinds)
        print(f"| {variant} | {total:.0f} | {cells} |")


if __name__ == "__main__":
    main()
