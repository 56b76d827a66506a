# NaN and infinities from Python, as torch has them (docs/compiler.md, "Zeros, infinities and
# NaN"): SparseLinear (the 2:4 NMLinear) propagates NaN through its activation (relu(NaN) was 0),
# and the zeros the 2:4 pattern pruned contribute nothing beside an infinite input (0 x inf was
# NaN); compiled kernels' max and relu propagate NaN as numpy and torch do.
import numpy as np
import pytest
import scipy.sparse as sp

import sparseflow as sf

torch = pytest.importorskip("torch")
F = torch.nn.functional


@np.errstate(invalid="ignore")  # inf - inf is NaN here on purpose
def structural_reference(x, w, bias, activation):
    """float64 epilogue(x . w^T + bias) summing only over w's nonzero (stored) weights."""
    x = x.astype(np.float64)
    y = np.zeros((x.shape[0], w.shape[0]))
    for o in range(w.shape[0]):
        cols = np.nonzero(w[o])[0]
        y[:, o] = (x[:, cols] * w[o, cols]).sum(axis=1)
    if bias is not None:
        y = y + bias
    return activation(torch.from_numpy(y)).numpy()


def assert_same_specials(got, want, tol):
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=tol)


@pytest.mark.parametrize("batch", [1, 8, 32])
@pytest.mark.parametrize("activation", ["relu", "gelu", "silu", "tanh", "sigmoid"])
def test_sparse_linear_nan_and_inf_in_x_bias_and_weights(torch_rng, batch, activation):
    rng = torch_rng
    inp, out = 64, 24
    linear = torch.nn.Linear(inp, out)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(rng.standard_normal((out, inp))))
        linear.bias.copy_(torch.from_numpy(rng.standard_normal(out)))
        linear.bias[3] = float("nan")
        linear.bias[5] = float("inf")
    sparse = sf.SparseLinear.from_dense(linear, pattern="2:4", activation=activation)
    w = sparse.dense_weight().numpy().astype(np.float64)
    x = rng.uniform(-1, 1, (batch, inp)).astype(np.float32)
    x[:, 1] = np.inf  # beside pruned (structural) zeros in most rows of w
    x[0, 6] = np.nan
    x[batch - 1, 9] = -np.inf
    y = sparse(torch.from_numpy(x)).numpy()
    act = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu, "tanh": torch.tanh,
           "sigmoid": torch.sigmoid}[activation]
    want = structural_reference(x, w, linear.bias.detach().double().numpy(), act)
    assert np.isnan(want[:, 3]).all() and np.isnan(want[0]).any()
    assert_same_specials(y, want, 1e-4 * (1 + np.abs(want[np.isfinite(want)]).max(initial=0)))


def test_relu_of_nan_is_nan_as_torch(torch_rng):
    linear = torch.nn.Linear(8, 4)
    sparse = sf.SparseLinear.from_dense(linear, activation="relu")
    x = torch.zeros(2, 8)
    x[1, :] = float("nan")
    y = sparse(x)
    assert torch.isnan(y[1]).all()
    assert torch.isnan(F.relu(torch.tensor(float("nan"))))


def test_compiled_max_and_relu_propagate_nan():
    a = np.array([[5, np.nan, 0, 0], [-1, -2, np.nan, -3], [1, 2, 3, 4], [-1, -2, -3, -4]],
                 dtype=np.float32)
    want = np.max(a, axis=1)  # NaN where a row holds one, as torch.amax
    for fmt in ["dense", "csr", "bsr:2x2"]:
        kernel = sf.compile("y(i) = max(j, A(i,j))", formats={"A": fmt})
        got = kernel(A=sp.csr_matrix(a) if fmt != "dense" else a)
        np.testing.assert_array_equal(got, want)
    relu = sf.compile("y(i) = relu(x(i))")
    got = relu(x=np.array([np.nan, -np.inf, np.inf, -1, 2], dtype=np.float32))
    np.testing.assert_array_equal(got, F.relu(torch.tensor([np.nan, -np.inf, np.inf, -1, 2])))


@pytest.mark.parametrize("fmt, provider", [("csr", "csr_spmm"), ("dense", "dense_linear"),
                                           ("bsr:2x2", "bsr_spmm")])
def test_fused_clamp_keeps_nan_and_bounds_infinities_as_torch(rng, fmt, provider):
    """relu6 (clamp of relu) fused into each provider's store: NaN stays NaN, ±inf are bounded,
    as torch.clamp; the generated element-wise clamp and minimum/maximum agree with torch."""
    a = rng.uniform(-1, 1, (12, 10)).astype(np.float32)
    a[rng.uniform(size=a.shape) < 0.5] = 0
    a[:, 3] = 1  # every row reads B's row 3
    b = rng.uniform(-3, 3, (10, 16)).astype(np.float32)
    b[3, 0], b[3, 1], b[3, 2] = np.nan, np.inf, -np.inf
    kernel = sf.compile("C(i,j) = clamp(relu(A(i,k) * B(k,j)), 0, 6)", formats={"A": fmt})
    assert kernel.provider == provider, kernel.describe()
    got = kernel(A=a, B=b)
    want = torch.clamp(F.relu(torch.from_numpy(a.astype(np.float64) @ b.astype(np.float64))),
                       0, 6).numpy()
    assert_same_specials(got, want, 1e-5)
    assert np.isnan(got[:, 0]).all() and (got[:, 1] == 6).all()
    x = np.array([np.nan, -np.inf, np.inf, -2, 0.5, 7], dtype=np.float32)
    clamp = sf.compile("y(i) = clamp(x(i), -1, 1) + minimum(x(i), 0) * maximum(x(i), 3)")
    tx = torch.from_numpy(x)
    want = torch.clamp(tx, -1, 1) + torch.minimum(tx, torch.tensor(0.0)) * torch.maximum(
        tx, torch.tensor(3.0))
    np.testing.assert_array_equal(clamp(x=x), want.numpy())
