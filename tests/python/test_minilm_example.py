# sf.minilm's helpers (prune_ffn_neurons, cosine, embed and tokenize at a fixed shape) and
# examples/minilm/embed_and_optimize.py in quick settings: its table, its cosines and the check
# that makes it exit non-zero when sparseflow and torch disagree.
import importlib.util
import pathlib

import pytest
import torch

import sparseflow as sf
from conftest import DATA

EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "minilm"
           / "embed_and_optimize.py")


def _minilm_or_skip():
    try:
        return sf.load_minilm()
    except sf.NotSupported as e:  # transformers or the wheel missing: scripts/install_deps.sh
        pytest.skip(str(e))


def _tiny_bert(seed):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=64,
                                     max_position_embeddings=32)
    return transformers.BertModel(config).eval()


def test_prune_ffn_neurons_zeroes_the_lowest_scores_and_optimize_removes_them(torch_rng):
    model = _tiny_bert(int(torch_rng.integers(0, 2**31 - 1)))
    layers = model.encoder.layer
    scores = [(l.intermediate.dense.weight.norm(dim=1) * l.output.dense.weight.norm(dim=0)).clone()
              for l in layers]
    assert sf.minilm.prune_ffn_neurons(model, 0.25) == 2 * 16
    for layer, score in zip(layers, scores):
        up, down = layer.intermediate.dense, layer.output.dense
        zero = (up.weight == 0).all(dim=1)
        assert int(zero.sum()) == 16
        assert bool((up.bias[zero] == 0).all()) and bool((down.weight[:, zero] == 0).all())
        assert bool((down.weight[:, ~zero] != 0).any(dim=0).all())  # the others kept
        assert float(score[zero].max()) <= float(score[~zero].min())
    x = {"input_ids": torch.randint(0, 50, (2, 8)),
         "attention_mask": torch.ones(2, 8, dtype=torch.long)}
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    removed = {(r["param"], r["dim"]): r["removed"] for r in report.removed}
    assert removed[("encoder.layer.0.intermediate.dense.weight", 0)] == 16
    assert removed[("encoder.layer.1.output.dense.weight", 1)] == 16
    assert report.max_relative_error <= 1e-4
    with pytest.raises(sf.InvalidArgument, match="fraction 1.0"):
        sf.minilm.prune_ffn_neurons(model, 1.0)


def test_cosine():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    assert sf.minilm.cosine(a, a) == pytest.approx(1.0)
    assert sf.minilm.cosine(a, torch.tensor([[0.0, 1.0], [0.0, 1.0]])) == pytest.approx(0.5)


def test_embed_and_tokenize_at_a_fixed_shape():
    """Padded to a fixed shape (the last batch filled up), the embeddings are the ones padded
    within each batch."""
    model, tokenizer = _minilm_or_skip()
    sentences = sf.minilm.read_sentences(DATA / "sentences" / "perl_docs.txt")[:7]
    want = sf.minilm.embed(model, tokenizer, sentences)
    got = sf.minilm.embed(model, tokenizer, sentences, shape=(4, 64))
    assert got.shape == (7, 384)
    assert float((got - want).abs().max()) < 1e-5
    batches = sf.minilm.tokenize(tokenizer, sentences, batch_size=4, tokens=64)
    assert [tuple(b["input_ids"].shape) for b in batches] == [(4, 64), (3, 64)]


def _example():
    spec = importlib.util.spec_from_file_location("embed_and_optimize", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_prints_the_table_and_checks_against_torch(capsys):
    """The example end to end in small settings (one pruned variant, one batch shape): its rows,
    its cosines, and its check failing when an optimized model disagrees with torch."""
    _minilm_or_skip()
    example = _example()
    threads = torch.get_num_threads()  # main() sets torch's (and OpenMP's) thread count
    try:
        rows = example.main(["--quick", "--variants", "2:4", "--method", "wanda", "--calibration",
                             "8", "--evaluation", "6", "--batches", "2", "--tokens", "64",
                             "--runs", "1"])
    finally:  # left at 2, the later torch-heavy tests ran 3x slower (36 s instead of 12)
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert [(r["model"], r["engine"]) for r in rows] == [("2:4", "PyTorch"), ("2:4", "sparseflow")]
    torch_row, ours = rows
    assert ours["cos_torch"] > 0.9999 and ours["error"] <= 1e-4
    assert ours["cos_dense"] == pytest.approx(torch_row["cos_dense"], abs=1e-4)
    assert 0.3 < torch_row["cos_dense"] < 0.99  # pruned: not the dense model any more
    assert set(ours["ms"]) == {2} and ours["ms"][2] > 0 and torch_row["ms"][2] > 0
    assert sum(int(part.split()[0]) for part in ours["formats"].split(", ")) == 37  # every linear
    assert "prune wanda 2:4: 36 of 37 Linear layers pruned" in out
    table = out[out.index("model     run by"):]
    assert "2x64 ms" in table.splitlines()[0]
    assert [line.split()[:2] for line in table.splitlines()[2:4]] == [["2:4", "PyTorch"],
                                                                     ["2:4", "sparseflow"]]
    assert "ok: every optimized model equals" in out
    with pytest.raises(SystemExit, match="2:4: 2.00e-04"):  # a disagreement fails loudly
        example.check([torch_row, dict(ours, error=2e-4)])
    with pytest.raises(SystemExit, match="nan"):
        example.check([dict(ours, error=float("nan"))])
