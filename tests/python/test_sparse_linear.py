# SparseLinear.from_dense: sparseflow's 2:4 kernel against F.linear on the pruned weights and a
# float64 numpy reference, for batch sizes, activations, bias and weight dtypes.
import numpy as np
import pytest

import sparseflow as sf

torch = pytest.importorskip("torch")
F = torch.nn.functional

ACTIVATIONS = {
    None: lambda y: y,
    "relu": F.relu,
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
}


def prune_24(w):
    """numpy reference: the 2 largest |w| of every 4 along rows stay, ties to the lower column."""
    out, inp = w.shape
    groups = w.reshape(out, inp // 4, 4)
    order = np.argsort(-np.abs(groups), axis=-1, kind="stable")
    keep = np.zeros(groups.shape, dtype=bool)
    np.put_along_axis(keep, order[..., :2], True, axis=-1)
    return np.where(keep, groups, 0.0).reshape(out, inp)


def make_linear(rng, inp, out, bias=True, dtype=torch.float32):
    linear = torch.nn.Linear(inp, out, bias=bias)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(rng.standard_normal((out, inp))))
        if bias:
            linear.bias.copy_(torch.from_numpy(rng.standard_normal(out)))
    return linear.to(dtype)


def assert_24(w):
    groups = (w.reshape(w.shape[0], -1, 4) != 0).sum(axis=-1)
    assert groups.max() <= 2


@pytest.mark.parametrize("batch", [1, 7, 32])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("bias", [True, False])
def test_matches_pruned_dense_layer(torch_rng, batch, activation, bias):
    rng = torch_rng
    inp, out = 4 * int(rng.integers(1, 40)), int(rng.integers(1, 70))
    linear = make_linear(rng, inp, out, bias)
    sparse, diff = sf.SparseLinear.from_dense(linear, pattern="2:4", activation=activation,
                                              return_diff=True)
    assert isinstance(sparse, torch.nn.Module)
    w = linear.weight.detach().numpy().astype(np.float64)
    pruned = prune_24(w)
    assert_24(pruned)
    np.testing.assert_array_equal(sparse.dense_weight().numpy(), pruned.astype(np.float32))
    x = torch.from_numpy(rng.uniform(-1, 1, (batch, inp)).astype(np.float32))
    y = sparse(x)
    assert y.shape == (batch, out) and y.dtype == torch.float32
    b = linear.bias.detach() if bias else None
    act = ACTIVATIONS[activation]
    # torch on the pruned weights, float32
    torch_y = act(F.linear(x, torch.from_numpy(pruned.astype(np.float32)), b))
    # float64 reference
    ref = x.double() @ torch.from_numpy(pruned).t()
    if bias:
        ref = ref + b.double()
    ref = act(ref).numpy()
    tol = 1e-5 * (1 + np.abs(ref).max()) * np.sqrt(inp)
    np.testing.assert_allclose(y.numpy(), ref, rtol=0, atol=tol)
    np.testing.assert_allclose(y.numpy(), torch_y.numpy(), rtol=0, atol=tol)
    assert diff.kept == np.count_nonzero(pruned) and diff.total == w.size


def test_diff_matches_numpy(torch_rng):
    rng = torch_rng
    linear = make_linear(rng, 64, 24)
    _, diff = sf.SparseLinear.from_dense(linear, return_diff=True)
    w = linear.weight.detach().numpy().astype(np.float64)
    e = w - prune_24(w)
    assert 0 < diff.kept_magnitude <= 1
    np.testing.assert_allclose(diff.relative_error, np.linalg.norm(e) / np.linalg.norm(w),
                               rtol=1e-12)
    np.testing.assert_allclose(diff.max_error, np.abs(e).max(), rtol=1e-12)
    np.testing.assert_allclose(diff.mean_error, np.abs(e).mean(), rtol=1e-12)
    kept = np.abs(w)[prune_24(w) != 0].sum() / np.abs(w).sum()
    np.testing.assert_allclose(diff.kept_magnitude, kept, rtol=1e-12)
    assert diff["max_error"] == diff.max_error and "kept" in str(diff)
    assert set(diff.as_dict()) >= {"max_error", "mean_error", "relative_error", "kept_magnitude"}


def test_leading_batch_dimensions_and_empty_batch(torch_rng):
    rng = torch_rng
    linear = make_linear(rng, 16, 8)
    sparse = sf.SparseLinear.from_dense(linear)
    x = torch.randn(2, 3, 5, 16)
    y = sparse(x)
    assert y.shape == (2, 3, 5, 8)
    np.testing.assert_allclose(y.reshape(-1, 8).numpy(), sparse(x.reshape(-1, 16)).numpy())
    assert sparse(torch.randn(16)).shape == (8,)
    assert sparse(torch.randn(0, 16)).shape == (0, 8)
    xt = torch.randn(16, 6).t()  # non-contiguous input
    np.testing.assert_allclose(sparse(xt).numpy(), sparse(xt.contiguous()).numpy())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_weights(torch_rng, dtype):
    rng = torch_rng
    linear = make_linear(rng, 32, 12, dtype=dtype)
    sparse = sf.SparseLinear.from_dense(linear, activation="relu")
    assert sparse.weight_dtype == dtype
    pruned = prune_24(linear.weight.detach().double().numpy())
    x = torch.randn(5, 32).to(dtype)
    ref = F.relu(x.double() @ torch.from_numpy(pruned).t() + linear.bias.detach().double())
    y = sparse(x)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.double().numpy(), ref.numpy(), rtol=1e-2,
                               atol=1e-2 * (1 + ref.abs().max().item()))
    y32 = sparse(x.float())  # float32 inputs are taken too
    assert y32.dtype == torch.float32
    np.testing.assert_allclose(y32.double().numpy(), ref.numpy(), rtol=1e-3,
                               atol=1e-3 * (1 + ref.abs().max().item()))


def test_errors(torch_rng):
    linear = make_linear(torch_rng, 16, 8)
    sparse = sf.SparseLinear.from_dense(linear)
    with pytest.raises(sf.InvalidArgument, match="in_features|16") as info:
        sparse(torch.randn(3, 12))
    assert isinstance(info.value, ValueError)
    with pytest.raises(sf.NotSupported, match="CPU") as info:
        sparse(torch.empty(3, 16, device="meta"))
    assert isinstance(info.value, NotImplementedError)
    with pytest.raises(sf.InvalidArgument, match="float64"):
        sparse(torch.randn(3, 16, dtype=torch.float64))
    with pytest.raises(sf.InvalidArgument, match="activation"):
        sf.SparseLinear.from_dense(linear, activation="mish")
    with pytest.raises(sf.NotSupported):
        sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8).double())
    # f64 2:4 weights run through sf.compile (nm_linear's f64 kernel), not this module.
    f64 = sf.convert(sf.from_numpy(sparse.dense_weight().double().numpy()), "2:4")
    with pytest.raises(sf.NotSupported, match="not f64.*sf.compile"):
        sf.SparseLinear(f64)
    with pytest.raises(sf.SparseFlowError):
        sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8), pattern="2:5")


def test_module_repr_and_describe(torch_rng):
    sparse = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8), activation="gelu")
    text = repr(sparse)
    assert "in_features=16" in text and "2:4" in text and "gelu" in text
    assert isinstance(sparse.describe(7), str) and sparse.weight_bytes > 0
    assert sf.activations() == ["relu", "silu", "gelu", "gelu_tanh", "tanh", "sigmoid"]


def test_diff_is_a_read_only_mapping(torch_rng):
    _, diff = sf.SparseLinear.from_dense(make_linear(torch_rng, 32, 8), return_diff=True)
    names = ["max_error", "mean_error", "relative_error", "kept_magnitude", "kept", "total"]
    assert "max_error" in diff and "nope" not in diff and 0 not in diff
    assert list(diff) == names and len(diff) == 6 and list(diff.keys()) == names
    assert dict(diff) == diff.as_dict() and diff.get("kept") == diff.kept
    assert dict(**diff)["total"] == 32 * 8
    for key in ("nope", "__class__", "as_dict"):
        with pytest.raises(KeyError):
            diff[key]
    with pytest.raises(Exception):
        diff.kept = 3  # frozen
