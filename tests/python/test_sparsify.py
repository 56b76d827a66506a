# sf.sparsify(model): explicit replacement of chosen nn.Linear layers, with a report of each.
import copy

import numpy as np
import pytest

import sparseflow as sf
from test_sparse_linear import prune_24

torch = pytest.importorskip("torch")
nn = torch.nn


class Block(nn.Module):
    """A small transformer-like block: input projection, attention, MLP, head."""

    def __init__(self, d=32, hidden=64, inputs=6, classes=12):
        super().__init__()
        self.proj_in = nn.Linear(inputs, d)  # in_features 6: not a multiple of 4
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.proj_in(x)
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + a
        x = x + self.mlp(self.norm2(x))
        return self.head(x)


def prune_manually(model, names):
    """A copy of `model` whose named Linear layers hold numpy-pruned weights."""
    pruned = copy.deepcopy(model)
    modules = dict(pruned.named_modules())
    with torch.no_grad():
        for name in names:
            w = modules[name].weight
            w.copy_(torch.from_numpy(prune_24(w.double().numpy())).to(w.dtype))
    return pruned


def check_close(a, b):
    scale = 1 + float(b.abs().max())
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=1e-4 * scale)


def test_sequential(torch_rng):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8), nn.ReLU(),
                          nn.Linear(8, 10)).eval()
    reference = prune_manually(model, ["0", "2", "4"])
    report = sf.sparsify(model)
    assert [layer.name for layer in report] == ["0", "2", "4"]
    assert all(layer.replaced for layer in report) and len(report.skipped) == 0
    assert all(isinstance(model[k], sf.SparseLinear) for k in (0, 2, 4))
    x = torch.randn(9, 16)
    with torch.no_grad():
        check_close(model(x), reference(x))
    assert "0" in report and report["0"] in report and "1" not in report and "x" not in report
    first = report["0"]
    assert first.shape == (32, 16) and first.reason == ""
    assert 0 < first.kept_magnitude <= 1 and first.max_error > 0 and first.relative_error > 0
    assert first.bytes_before == (32 * 16 + 32) * 4 and 0 < first.bytes_after < first.bytes_before
    assert report.bytes_after < report.bytes_before and "3 of 3" in str(report)


def test_block_with_include_exclude(torch_rng):
    model = Block().eval()
    reference = prune_manually(model, ["mlp.0", "mlp.2"])
    report = sf.sparsify(model, include=["mlp.*", "head", "proj_in", "attn.*"], exclude="head")
    rows = {layer.name: layer for layer in report}
    assert set(rows) == {"proj_in", "attn.out_proj", "mlp.0", "mlp.2", "head"}
    assert rows["mlp.0"].replaced and rows["mlp.2"].replaced
    assert "not a multiple of 4" in rows["proj_in"].reason and not rows["proj_in"].replaced
    assert "MultiheadAttention" in rows["attn.out_proj"].reason
    assert rows["head"].reason == "excluded by 'head'"
    assert rows["head"].bytes_after == rows["head"].bytes_before and rows["head"].diff is None
    assert isinstance(model.mlp[0], sf.SparseLinear) and isinstance(model.mlp[2], sf.SparseLinear)
    assert type(model.head) is nn.Linear and type(model.proj_in) is nn.Linear
    x = torch.randn(3, 5, 6)
    with torch.no_grad():
        check_close(model(x), reference(x))
    text = str(report)
    assert "skipped" in text and "mlp.0" in text and "excluded by 'head'" in text


def test_default_include_reports_every_linear(torch_rng):
    model = Block().eval()
    reference = prune_manually(model, ["mlp.0", "mlp.2", "head"])
    report = sf.sparsify(model)
    assert [layer.name for layer in report.replaced] == ["mlp.0", "mlp.2", "head"]
    assert [layer.name for layer in report.skipped] == ["proj_in", "attn.out_proj"]
    x = torch.randn(2, 4, 6)
    with torch.no_grad():
        check_close(model(x), reference(x))


def test_include_that_matches_nothing_replaces_nothing(torch_rng):
    model = nn.Sequential(nn.Linear(8, 8))
    report = sf.sparsify(model, include=["encoder.*"])
    assert len(report.replaced) == 0
    assert "not matched by include" in report["0"].reason
    assert type(model[0]) is nn.Linear


def test_shared_layer_is_replaced_everywhere(torch_rng):
    shared = nn.Linear(8, 8)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    report = sf.sparsify(model)
    assert len(report) == 1 and report[0].replaced
    assert model[0] is model[2] and isinstance(model[0], sf.SparseLinear)


def test_odd_dtypes_are_listed_not_replaced(torch_rng):
    model = nn.Sequential(nn.Linear(8, 8).double(), nn.Linear(8, 4))
    report = sf.sparsify(model)
    assert not report["0"].replaced and "float64" in report["0"].reason
    assert report["1"].replaced
