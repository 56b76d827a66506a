"""FormatLinear (an nn.Linear whose weight is held in csr, bsr or another exact sparse format) and
sparsify(pattern="auto"): outputs against float64, gradients, state_dict and pickling, errors."""

import copy
import io

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import sparseflow as sf  # noqa: E402


@pytest.fixture
def seed(rng):
    s = int(rng.integers(0, 2**31 - 1))
    torch.manual_seed(s)
    return s


def _pruned_linear(inp, out, density, bias=True):
    linear = nn.Linear(inp, out, bias=bias)
    with torch.no_grad():
        linear.weight[torch.rand_like(linear.weight) >= density] = 0
    return linear


def _reference(linear, x):
    """x Wᵀ + b in float64."""
    y = x.double() @ linear.weight.detach().double().t()
    if linear.bias is not None:
        y = y + linear.bias.detach().double()
    return y


@pytest.mark.parametrize("fmt,provider", [("csr", "csr_spmm"), ("bsr:4x4", "bsr_spmm"),
                                          ("bsr:2x8", "bsr_spmm"), ("csc", "generated")])
def test_outputs_match_float64_for_every_batch_shape(seed, fmt, provider):
    linear = _pruned_linear(70, 45, 0.15)  # edges that are not whole blocks
    layer = sf.FormatLinear.from_dense(linear, fmt)
    assert layer.format == fmt and layer.provider == provider, layer.describe()
    assert (layer.in_features, layer.out_features, layer.has_bias) == (70, 45, True)
    for shape in [(9, 70), (2, 3, 70), (70,), (0, 70)]:
        x = torch.randn(*shape)
        y = layer(x)
        assert y.shape == (*shape[:-1], 45) and y.dtype == torch.float32
        want = _reference(linear, x)
        if y.numel():
            scale = max(1.0, float(want.abs().max()))
            assert float((y.double() - want).abs().max()) <= 1e-5 * scale
    no_bias = _pruned_linear(64, 32, 0.3, bias=False)
    layer = sf.FormatLinear.from_dense(no_bias, fmt)
    x = torch.randn(5, 64)
    assert torch.allclose(layer(x).double(), _reference(no_bias, x), atol=1e-5)
    assert layer.bias_values() is None
    assert torch.equal(layer.dense_weight(), no_bias.weight.detach())


def test_a_scheduled_layer_keeps_its_schedule_through_state_dict_and_pickle(seed):
    linear = _pruned_linear(72, 40, 0.2)
    schedule = "split(n, n0, n1, 16); parallel(n0)"
    layer = sf.FormatLinear.from_dense(linear, "csr", schedule=schedule, hand_tuned=False)
    assert layer.schedule == schedule and layer.provider == "generated", layer.describe()
    assert "schedule=" in repr(layer)
    x = torch.randn(37, 72)
    want = _reference(linear, x)
    got = layer(x)
    assert float((got.double() - want).abs().max()) <= 1e-5 * max(1.0, float(want.abs().max()))
    state = layer.state_dict()
    assert state["_extra_state"] == {"format": "csr", "schedule": schedule, "hand_tuned": False,
                                     "parallel": True}
    fresh = sf.FormatLinear.zeros(72, 40, bias=True, format="csr")
    fresh.load_state_dict(state)
    assert fresh.schedule == schedule and fresh.provider == "generated"
    assert torch.equal(fresh(x), got)
    for copied in (copy.deepcopy(layer), _saved_and_loaded(layer)):
        assert copied.schedule == schedule and torch.equal(copied(x), got)
    # A pickle of before layers had a schedule (no _config): the default product.
    old = layer.__getstate__()
    del old["_config"]
    revived = sf.FormatLinear.__new__(sf.FormatLinear)
    revived.__setstate__(old)
    assert revived.schedule == "" and revived.provider == "csr_spmm"
    assert torch.allclose(revived(x).double(), want, atol=1e-5)
    # A checkpoint of before schedules were saved (the format alone): the default product.
    state["_extra_state"] = {"format": "csr"}
    fresh.load_state_dict(state)
    assert fresh.schedule == "" and fresh.provider == "csr_spmm"
    # A schedule the kernel refuses is a load error naming it; the layer keeps what it had.
    state["_extra_state"] = {"format": "bsr:4x4", "schedule": "split(zz, z0, z1, 4)"}
    with pytest.raises(RuntimeError, match="zz"):
        fresh.load_state_dict(state)
    assert fresh.format == "csr" and fresh.schedule == "" and fresh.provider == "csr_spmm"
    assert torch.allclose(fresh(x).double(), want, atol=1e-5)
    state["_extra_state"] = {"format": "csr", "hand_tuned": "yes"}
    with pytest.raises(RuntimeError, match="_extra_state must be"):
        fresh.load_state_dict(state)
    with pytest.raises(sf.InvalidArgument, match="schedule must be"):
        sf.FormatLinear.from_dense(linear, "csr", schedule=16)


def test_tuned_takes_the_autoconfigurators_format_and_schedule(seed):
    linear = _pruned_linear(96, 64, 0.1)
    layer, decision = sf.FormatLinear.tuned(linear, batch=16, budget=3, database=False)
    assert decision["space"] > 100 and 1 <= decision["measured"] <= 4
    chosen = decision["formats"]["W"]  # "ell" is built as "ell:K", K the data's widest row
    assert layer.format == chosen or (chosen == "ell" and layer.format.startswith("ell:"))
    assert layer.schedule == decision["schedule"]
    assert decision["median_ms"] <= decision["default_ms"]
    x = torch.randn(16, 96)
    want = _reference(linear, x)
    assert float((layer(x).double() - want).abs().max()) <= 1e-5 * max(1.0, float(want.abs().max()))
    with pytest.raises(sf.InvalidArgument, match="batch >= 1"):
        sf.FormatLinear.tuned(linear, batch=0)


def test_the_weight_is_a_snapshot_and_stores_only_nonzeros(seed):
    linear = _pruned_linear(128, 64, 0.1)
    nonzeros = int((linear.weight != 0).sum())
    layer = sf.FormatLinear.from_dense(linear, "csr")
    assert layer.sparse_weight().num_stored == nonzeros
    assert layer.weight_bytes < 128 * 64 * 4 / 3
    x = torch.randn(4, 128)
    before = layer(x)
    with torch.no_grad():  # changing the dense layer afterwards changes nothing
        linear.weight.mul_(2)
        linear.bias.zero_()
    assert torch.equal(layer(x), before)


def test_input_gradient_matches_torch(seed):
    linear = _pruned_linear(48, 40, 0.2)
    for fmt in ("csr", "bsr:4x4"):
        layer = sf.FormatLinear.from_dense(linear, fmt)
        x = torch.randn(3, 5, 48, requires_grad=True)
        upstream = torch.randn(3, 5, 40)
        (layer(x) * upstream).sum().backward()
        want = upstream.double().reshape(-1, 40) @ linear.weight.detach().double()
        assert torch.allclose(x.grad.double().reshape(-1, 48), want, atol=1e-5)
    with pytest.raises(sf.NotSupported, match="not trainable"):
        layer.requires_grad_(True)


def test_state_dict_pickle_and_deepcopy_keep_the_weights(seed):
    linear = _pruned_linear(40, 24, 0.25)
    layer = sf.FormatLinear.from_dense(linear, "bsr:4x4")
    x = torch.randn(6, 40)
    want = layer(x)
    state = layer.state_dict()
    assert sorted(state) == sorted(["weight_rows", "weight_cols", "weight_values",
                                    "weight_shape", "bias", "_extra_state"])
    assert state["_extra_state"] == {"format": "bsr:4x4", "schedule": "", "hand_tuned": True,
                                     "parallel": True}
    # Loaded into a zero csr layer: the checkpoint's format and values come back.
    fresh = sf.FormatLinear.zeros(40, 24, bias=True, format="csr")
    fresh.load_state_dict(state)
    assert fresh.format == "bsr:4x4" and torch.equal(fresh(x), want)
    state["weight_values"].mul_(3)  # the state dict is a copy
    assert torch.equal(layer(x), want)
    for copied in (copy.deepcopy(layer), _saved_and_loaded(layer)):
        assert copied.format == "bsr:4x4" and torch.equal(copied(x), want)
    model = nn.Sequential(layer, nn.ReLU())
    restored = _saved_and_loaded(model)
    assert torch.equal(restored(x), model(x))


def _saved_and_loaded(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer)


def test_bad_state_dicts_and_arguments_get_clear_errors(seed):
    linear = _pruned_linear(16, 8, 0.5)
    layer = sf.FormatLinear.from_dense(linear, "csr")
    with pytest.raises(RuntimeError, match="is a dense weight"):
        layer.load_state_dict(linear.state_dict())
    state = layer.state_dict()
    state["weight_rows"] = state["weight_rows"].clone()
    if state["weight_rows"].numel():
        state["weight_rows"][-1] = 99
        with pytest.raises(RuntimeError, match="outside the 8 x 16 weight"):
            layer.load_state_dict(state)
    state = layer.state_dict()
    state["weight_shape"] = torch.tensor([8, 17])
    with pytest.raises(RuntimeError, match="size mismatch"):
        layer.load_state_dict(state)
    state = layer.state_dict()
    state["_extra_state"] = "csr"
    with pytest.raises(RuntimeError, match="_extra_state must be"):
        layer.load_state_dict(state)
    state["_extra_state"] = {"format": "2:4"}  # not a format FormatLinear holds
    with pytest.raises(RuntimeError, match="not '2:4'"):
        layer.load_state_dict(state)
    with pytest.raises(RuntimeError, match="Missing key"):
        layer.load_state_dict({"bias": torch.zeros(8)})
    with pytest.raises(sf.NotSupported, match="float32 inputs"):
        layer(torch.randn(2, 16, dtype=torch.float64))
    with pytest.raises(sf.InvalidArgument, match="takes 16 features"):
        layer(torch.randn(2, 15))
    with pytest.raises(sf.NotSupported, match="float32"):
        layer.half()
    with pytest.raises(sf.InvalidArgument, match="not '2:4'"):
        sf.FormatLinear.from_dense(linear, "2:4")
    with pytest.raises(sf.InvalidArgument, match="nn.Linear"):
        sf.FormatLinear.from_dense(nn.ReLU(), "csr")


class _Three(nn.Module):
    """A layer pruned to 5% (unstructured), one already 2:4, one dense."""

    def __init__(self):
        super().__init__()
        self.sparse = _pruned_linear(256, 512, 0.05)
        self.two_four = nn.Linear(512, 256)
        with torch.no_grad():
            w = self.two_four.weight.view(-1, 4)
            w.scatter_(1, torch.rand_like(w).argsort(dim=1)[:, :2], 0.0)
        self.dense = nn.Linear(256, 64)

    def forward(self, x):
        return self.dense(torch.relu(self.two_four(torch.relu(self.sparse(x)))))


def test_sparsify_auto_keeps_the_fastest_exact_layer_and_changes_no_output(seed):
    model = _Three()
    x = torch.randn(32, 256)
    with torch.no_grad():
        want = model(x)
    report = sf.sparsify(model, pattern="auto", batch=32, reps=3, budget=4, database=False)
    assert report.pattern == "auto" and len(report.layers) == 3
    for layer in report.layers:
        assert layer.format == min(layer.times_ms, key=layer.times_ms.get)
        # The sparse candidate is the autoconfigurator's: ranked by the model, a few timed.
        tuning = layer.tuning
        assert tuning is not None and tuning["space"] > 100 and not tuning["from_database"]
        assert 1 <= tuning["measured"] <= 5 and len(tuning["candidates"]) == tuning["measured"]
        sparse = [key for key in layer.times_ms if key not in ("dense", "2:4")]
        assert len(sparse) == 1 and "dense" in layer.times_ms
        assert all(t > 0 for t in layer.times_ms.values())
        assert layer.replaced == (layer.format != "dense")
        assert layer.diff is None  # nothing was pruned
    # 2:4 is a candidate only where the weight already is 2:4.
    assert "2:4" in report["two_four"].times_ms
    assert "2:4" not in report["sparse"].times_ms and "2:4" not in report["dense"].times_ms
    for name in ("sparse", "two_four", "dense"):
        chosen = report[name].format
        kind = {"dense": nn.Linear, "2:4": sf.SparseLinear}.get(chosen, sf.FormatLinear)
        layer = getattr(model, name)
        assert isinstance(layer, kind)
        if kind is sf.FormatLinear:
            assert layer.format == chosen and layer.schedule == report[name].schedule
    with torch.no_grad():
        got = model(x)
        assert float((got - want).abs().max()) <= 1e-4 * max(1.0, float(want.abs().max()))
        restored = _saved_and_loaded(model)
        assert torch.equal(restored(x), got)
    text = str(report)
    assert text.startswith("sparsify auto:") and "measured dense" in text
    assert "tuned over" in text


def test_sparsify_auto_with_formats_times_each_format_given(seed):
    model = _Three()
    report = sf.sparsify(model, pattern="auto", batch=8, reps=1, formats=("csr", "bsr:4x4"))
    for layer in report.layers:
        assert layer.tuning is None
        assert set(layer.times_ms) - {"2:4"} == {"dense", "csr", "bsr:4x4"}
    report = sf.sparsify(_Three(), pattern="auto", batch=8, reps=1, formats="csr")
    assert set(report["sparse"].times_ms) == {"dense", "csr"}


def test_sparsify_auto_reuses_the_tuning_database(seed, tmp_path):
    db = tmp_path / "tuning.jsonl"
    model = _Three()
    twin = copy.deepcopy(model)
    first = sf.sparsify(model, pattern="auto", batch=8, reps=1, budget=2, database=str(db),
                        include="sparse")
    assert not first["sparse"].tuning["from_database"] and db.exists()
    # The same weight again: the recorded decision, nothing timed by the search.
    second = sf.sparsify(twin, pattern="auto", batch=8, reps=1, budget=2, database=str(db),
                         include="sparse")
    tuning = second["sparse"].tuning
    assert tuning["from_database"]
    for key in ("formats", "schedule", "hand_tuned", "parallel"):
        assert tuning[key] == first["sparse"].tuning[key]
    assert "from the database" in str(second)


def test_sparsify_auto_with_pruning_allowed_offers_two_four_everywhere(seed):
    model = _Three()
    report = sf.sparsify(model, pattern="auto", batch=8, reps=1, prune=True,
                         formats=("csr",), include="sparse")
    assert "2:4" in report["sparse"].times_ms
    assert set(report["sparse"].times_ms) == {"dense", "2:4", "csr"}
    assert not report["two_four"].replaced and "not matched" in report["two_four"].reason
    if report["sparse"].format == "2:4":
        assert report["sparse"].diff is not None and report["sparse"].diff.max_error > 0
    with pytest.raises(sf.InvalidArgument, match="batch >= 1"):
        sf.sparsify(_Three(), pattern="auto", batch=0)
    with pytest.raises(sf.InvalidArgument, match="budget >= 0, got .*budget=-1"):
        sf.sparsify(_Three(), pattern="auto", budget=-1)


def test_sparsify_auto_choosing_an_exact_two_four_weight_reports_no_pruning(seed, monkeypatch):
    # Whichever candidate the timing favours, a weight already 2:4 loses nothing: no diff.
    import sparseflow.torch_sparsify as sparsify_module

    def two_four_first(layers, x, reps):
        return {name: (0.5 if name == "2:4" else 1.0) for name in layers}

    monkeypatch.setattr(sparsify_module, "_interleaved_medians", two_four_first)
    for prune in (False, True):
        model = _Three()
        report = sf.sparsify(model, pattern="auto", batch=4, reps=1, prune=prune,
                             include="two_four")
        assert report["two_four"].format == "2:4" and report["two_four"].diff is None
        assert isinstance(model.two_four, sf.SparseLinear)
