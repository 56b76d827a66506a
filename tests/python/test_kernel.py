# sf.compile: kernels generated, JIT-compiled and run against float64 scipy/numpy references.
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

import sparseflow as sf
from conftest import random_sparse


def close(got, want, reduction):
    """float32 compute against a float64 reference: a tolerance that grows with the sum length."""
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    tol = 4 * 2e-6 * scale * np.sqrt(reduction + 1)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


@pytest.fixture(scope="module")
def spmv():
    return sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"})


def test_spmv_csr(rng, spmv):
    m, n = (int(v) for v in rng.integers(1, 80, size=2))
    a = random_sparse(rng, (m, n), float(rng.uniform(0.01, 0.5)))
    x = rng.uniform(-1, 1, n)
    y = spmv(A=a, x=x)
    assert isinstance(y, np.ndarray) and y.shape == (m,) and y.dtype == np.float32
    a32 = a.astype(np.float32).astype(np.float64)
    close(y, a32 @ x.astype(np.float32).astype(np.float64), n)


def test_spmv_inputs_of_every_kind(rng, spmv):
    a = random_sparse(rng, (23, 17), 0.3)
    x = rng.uniform(-1, 1, 17).astype(np.float32)
    want = a.astype(np.float32).astype(np.float64) @ x.astype(np.float64)
    close(spmv(A=sf.from_scipy(a, dtype="f32"), x=sf.from_numpy(x)), want, 17)
    close(spmv(A=sf.from_scipy(a, format="bsr:4x4"), x=x), want, 17)  # converted for the kernel
    close(spmv(A=a.toarray(), x=x.tolist()), want, 17)
    import torch

    close(spmv(A=torch.from_numpy(a.toarray()), x=torch.from_numpy(x)), want, 17)
    close(spmv.run({"A": a, "x": x}), want, 17)


def test_a_sparse_input_where_no_format_was_asked_runs_in_its_format(rng):
    """sf.compile without formats, called with a scipy CSR matrix (or an sf.Tensor in bsr): the
    call runs a kernel compiled for the input's format (once per set of formats; the CSR
    provider for csr) instead of densifying it on every call; dense inputs keep the dense
    kernel, and formats pinned at compile time stay pinned."""
    kernel = sf.compile("C(i,j) = A(i,k) * B(k,j)")
    a = random_sparse(rng, (60, 45), 0.1)
    b = rng.uniform(-1, 1, (45, 9))
    want = a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64)
    close(kernel(A=a, B=b), want, 45)
    assert kernel.formats_used == {"A": "csr"} and kernel.formats == {}
    close(kernel(A=sf.from_scipy(a, format="bsr:4x4"), B=b), want, 45)
    assert kernel.formats_used == {"A": "bsr:4x4"}
    close(kernel(A=a.toarray(), B=b), want, 45)
    assert kernel.formats_used == {}
    variant = kernel._compiled_for({"A": sf.from_scipy(a, dtype="f32"), "B": sf.from_numpy(b)})
    assert variant.provider == "csr_spmm" and kernel.provider == "dense_linear"
    pinned = sf.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csc"})
    close(pinned(A=a, B=b), want, 45)  # converted to the pinned csc, as asked
    assert pinned.formats_used == {"A": "csc"}


@pytest.mark.parametrize("hand_tuned", [True, False])
def test_spmm_csr(rng, hand_tuned):
    kernel = sf.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr"}, hand_tuned=hand_tuned)
    assert ("hand-tuned" in kernel.describe()) == hand_tuned, kernel.describe()
    i, k, j = (int(v) for v in rng.integers(1, 50, size=3))
    a = random_sparse(rng, (i, k), 0.2)
    b = rng.uniform(-1, 1, (k, j))
    c = kernel(A=a, B=b)
    assert c.shape == (i, j)
    close(c, a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64), k)


def test_spmm_f64(rng):
    kernel = sf.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr"},
                        dtypes={"A": "f64", "B": np.float64, "C": "float64"})
    a = random_sparse(rng, (31, 19), 0.3)
    b = rng.uniform(-1, 1, (19, 5))
    c = kernel(A=a, B=b)
    assert c.dtype == np.float64
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


def test_sddmm_dense_and_sparse_output(rng):
    text = "Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))"
    m = random_sparse(rng, (21, 17), 0.2)
    a = rng.uniform(-1, 1, (21, 9))
    b = rng.uniform(-1, 1, (17, 9))
    m32 = m.astype(np.float32).astype(np.float64)
    a32, b32 = (v.astype(np.float32).astype(np.float64) for v in (a, b))
    want = m32.multiply(a32 @ b32.T).toarray()
    dense_out = sf.compile(text, formats={"M": "csr"})(M=m, A=a, B=b)
    close(dense_out, want, 9)
    sparse_out = sf.compile(text, formats={"M": "csr", "Y": "csr"})(M=m, A=a, B=b)
    assert isinstance(sparse_out, sf.Tensor) and sparse_out.format == "csr"
    assert sparse_out.num_stored == m.nnz  # the pattern of M
    close(sf.to_scipy(sparse_out).toarray(), want, 9)


def test_spgemm_and_sparse_add_into_csr(rng):
    """Sparse outputs with patterns of their own: SpGEMM and A + B assembled into csr."""
    i, k, j = (int(v) for v in rng.integers(5, 60, size=3))
    a = random_sparse(rng, (i, k), 0.15)
    b = random_sparse(rng, (k, j), 0.15)
    formats = {"A": "csr", "B": "csr", "C": "csr"}
    c = sf.compile("C(i,j) = A(i,k) * B(k,j)", formats=formats)(A=a, B=b)
    assert isinstance(c, sf.Tensor) and c.format == "csr"
    a32, b32 = (v.astype(np.float32).astype(np.float64) for v in (a, b))
    want = (a32 @ b32).tocsr()
    got = sf.to_scipy(c)
    assert got.nnz == want.nnz  # the structural pattern of A·B, rows sorted
    close(got.toarray(), want.toarray(), k)
    e = random_sparse(rng, (i, k), 0.2)
    added = sf.to_scipy(sf.compile("C(i,j) = A(i,j) + B(i,j)", formats=formats)(A=a, B=e))
    want_add = a32 + e.astype(np.float32).astype(np.float64)
    assert added.nnz == (abs(a).sign() + abs(e).sign()).nnz
    close(added.toarray(), want_add.toarray(), 1)


def test_scalar_parameters(rng):
    kernel = sf.compile("C(i,j) = alpha * A(i,j) - B(i,j) / 2", formats={"A": "csr"})
    a = random_sparse(rng, (8, 6), 0.5)
    b = rng.uniform(-1, 1, (8, 6))
    alpha = float(rng.uniform(-2, 2))
    c = kernel(A=a, B=b, alpha=alpha)
    want = alpha * a.astype(np.float32).toarray().astype(np.float64) - b.astype(np.float32) / 2
    close(c, want, 1)
    close(kernel(A=a, B=b, alpha=np.float32(alpha)), want, 1)
    with pytest.raises(sf.InvalidArgument, match="alpha"):
        kernel(A=a, B=b)


def test_source_ir_and_description():
    kernel = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"}, hand_tuned=False)
    assert isinstance(kernel.source, str) and "for" in kernel.source
    assert "sf_kernel_main" in kernel.source
    assert isinstance(kernel.ir, str) and "for" in kernel.ir
    assert kernel.text == "y(i) = A(i,j) * x(j)"
    assert "csr" in kernel.describe() and "csr" in repr(kernel)
    assert isinstance(kernel.from_cache, bool)
    assert kernel.provider == "generated"
    # The same SpMV by default: the hand-tuned CSR provider, and its source says so.
    spmv = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"})
    assert spmv.provider == "csr_spmm" and "src/kernels/csr_spmm" in spmv.source


@pytest.mark.parametrize(
    "text, formats, provider",
    [
        ("C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {"A": "csr"}, "csr_spmm"),
        ("C(i,j) += A(i,k) * B(k,j)", {"A": "csr"}, "csr_spmm"),
        ("y(o) = W(o,i) * x(i)", {"W": "2:4"}, "nm_linear"),
        ("Y(n,o) = gelu(X(n,i) * W(o,i) + c(o))", {}, "dense_linear"),
        ("C(i,j) = A(i,k) * B(k,j) * 2", {"A": "csr"}, "csr_spmm"),
        ("C(i,j) = abs(A(i,k) * B(k,j))", {"A": "csr"}, "generated"),
        ("C(i,j) = relu(A(i,k) * B(k,j) / 4) + R(i,j)", {"A": "csr"}, "csr_spmm"),
        ("Y(n,o) = X(n,i) * W(o,i) + c(o) + R(n,o)", {"W": "2:4"}, "nm_linear"),
        ("C(i,j) = softmax(j, A(i,k) * B(k,j) + b(j))", {"A": "csr"}, "csr_spmm"),
        ("C(i,j) = silu(A(i,k) * B(k,j) + b(j))", {"A": "bsr:4x2"}, "bsr_spmm"),
        ("Y(n,o) = softmax(o, X(n,i) * W(o,i))", {"W": "bsr:2x4"}, "bsr_spmm"),
    ],
)
def test_out_is_written_in_place_by_every_provider(rng, text, formats, provider):
    """``out=`` writes into the caller's array and returns it (no new output per call); `=`
    overwrites what it held, `+=` adds to it."""
    kernel = sf.compile(text, formats=formats)
    assert kernel.provider == provider, kernel.describe()
    shapes = {"A": (40, 24), "B": (24, 9), "b": (9,), "W": (16, 24), "x": (24,), "X": (7, 24),
              "c": (16,), "R": (7, 16) if "W" in text else (40, 9)}
    args = {}
    for name in "ABbWxXcR":
        if re.search(rf"\b{name}\(", text):
            value = rng.uniform(-1, 1, shapes[name])
            if name == "W" and formats.get("W") == "2:4":
                value.reshape(-1, 4)[:, :2] = 0  # two of every four kept
            if name in "AW" and formats.get(name, "").startswith(("csr", "bsr")):
                value[rng.uniform(size=value.shape) < 0.6] = 0
            args[name] = value.astype(np.float32)
    want = kernel(**args)
    out = np.full(want.shape, 3.0, dtype=np.float32)
    got = kernel(**args, out=out)
    assert got is out
    added = text.split("(")[1].startswith("i,j) +=")
    np.testing.assert_allclose(out, want + (3.0 if added else 0.0), rtol=1e-5, atol=1e-5)
    with pytest.raises(sf.InvalidArgument, match="out="):
        kernel(**args, out=np.zeros(want.shape, dtype=np.float32)[:, ::-1] if want.ndim == 2
               else np.zeros(2 * want.shape[0], dtype=np.float32)[::2])
    with pytest.raises(sf.InvalidArgument, match="shape"):
        kernel.run(args, out=np.zeros(tuple(d + 1 for d in want.shape), dtype=np.float32))


@pytest.mark.parametrize("text", ["y(o) = gelu(W(o,i) * x(i) + b(o))",
                                  "Y(n,o) = relu(X(n,i) * W(o,i) + b(o))"])
@pytest.mark.parametrize("fmt, provider", [("dense", "dense_linear"), ("2:4", "nm_linear")])
def test_f64_layers_reach_their_provider_and_keep_f64(rng, text, fmt, provider):
    """A dense or 2:4 layer in f64 throughout runs its hand-tuned kernel in f64 (not generated
    code), accurate to f64: against numpy's float64 product, well below what an f32 accumulation
    gives."""
    names = {"W": (130, 301), "x": (301,), "X": (5, 301), "b": (130,)}
    args = {n: rng.uniform(-1, 1, shape) for n, shape in names.items() if f"{n}(" in text}
    if fmt == "2:4":  # two of every four kept (the last group of 301 columns is partial)
        keep = np.argsort(rng.uniform(size=(130 * 75, 4)), axis=1) < 2  # two distinct slots
        args["W"][:, :300] *= keep.reshape(130, 300)
        args["W"][:, 300] = 0
    out = text.split("(")[0]
    kernel = sf.compile(text, formats={"W": fmt}, dtypes={**{n: "f64" for n in args}, out: "f64"})
    assert kernel.provider == provider, kernel.describe()
    got = kernel(**args)
    assert got.dtype == np.float64
    x = args.get("x", args.get("X"))
    pre = x @ args["W"].T + args["b"]
    erf = np.vectorize(math.erf)
    want = 0.5 * pre * (1 + erf(pre / math.sqrt(2))) if "gelu" in text else np.maximum(pre, 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "bsr:4x4", "dense"])
def test_softmax_of_a_sparse_product_matches_torch(rng, fmt):
    """``softmax(j, ...)`` as users write attention-style normalization: torch's values, through
    the provider the format has (csr and bsr fused into the SpMM's store, dense after the GEMM)."""
    import torch
    a = rng.uniform(-2, 2, (90, 61))
    a[rng.uniform(size=a.shape) < 0.7] = 0
    b, bias = rng.uniform(-2, 2, (61, 37)), rng.uniform(-1, 1, 37)
    kernel = sf.compile("C(i,j) = softmax(j, gelu(A(i,k) * B(k,j) + b(j)))", formats={"A": fmt})
    assert kernel.provider == {"csr": "csr_spmm", "bsr:4x4": "bsr_spmm",
                               "dense": "dense_linear"}[fmt], kernel.describe()
    a32, b32, bias32 = (v.astype(np.float32) for v in (a, b, bias))
    got = kernel(A=a32, B=b32, b=bias32)
    want = torch.softmax(torch.nn.functional.gelu(
        torch.from_numpy(a32.astype(np.float64) @ b32.astype(np.float64) + bias32)), 1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("fmt", ["csr", "bsr:2x2", "dense"])
def test_layernorm_of_a_sparse_product_matches_torch(rng, fmt):
    """``layernorm(j, ...)``: torch.nn.functional.layer_norm's values (no weights, eps 1e-5)."""
    import torch
    a = rng.uniform(-2, 2, (70, 45))
    a[rng.uniform(size=a.shape) < 0.7] = 0
    b, bias = rng.uniform(-2, 2, (45, 33)), rng.uniform(-1, 1, 33)
    kernel = sf.compile("C(i,j) = layernorm(j, relu(A(i,k) * B(k,j) + b(j)))", formats={"A": fmt})
    assert kernel.provider == {"csr": "csr_spmm", "bsr:2x2": "bsr_spmm",
                               "dense": "dense_linear"}[fmt], kernel.describe()
    a32, b32, bias32 = (v.astype(np.float32) for v in (a, b, bias))
    got = kernel(A=a32, B=b32, b=bias32)
    x = torch.relu(torch.from_numpy(a32.astype(np.float64) @ b32.astype(np.float64) + bias32))
    want = torch.nn.functional.layer_norm(x, [33]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_schedule_text_and_objects(rng):
    a = random_sparse(rng, (70, 33), 0.2)
    x = rng.uniform(-1, 1, 33)
    kernel = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"},
                        schedule="split(i, i0, i1, 16); parallel(i0)")
    assert "i0" in kernel.ir and kernel.schedule.startswith("split")
    want = a.astype(np.float32).astype(np.float64) @ x.astype(np.float32).astype(np.float64)
    close(kernel(A=a, x=x), want, 33)
    built = sf.Schedule().split("i", "i0", "i1", 16).parallel("i0")
    assert built.text == "split(i, i0, i1, 16); parallel(i0)"
    same = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"}, schedule=built)
    assert same.ir == kernel.ir and same.schedule == built.text
    close(same(A=a, x=x), want, 33)
    with pytest.raises(sf.SparseFlowError):
        sf.Schedule().unroll("j", 0)
    with pytest.raises(NotImplementedError, match="schedule") as info:
        sf.compile("y(i) = A(i,j) * x(j)", schedule={"reorder": ["j", "i"]})
    assert isinstance(info.value, sf.NotSupported)
    with pytest.raises(sf.SparseFlowError) as info:
        sf.compile("y(i) = A(i,j) * x(j)", schedule="split(q, q0, q1, 4)")
    assert isinstance(info.value, ValueError) and "q" in str(info.value)


def test_mlir_export():
    kernel = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"})
    assert "linalg.generic" in kernel.mlir()
    with pytest.raises(sf.NotSupported):
        sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "bsr:4x4"}).mlir()


def test_bad_text_is_a_parse_error():
    with pytest.raises(sf.ParseError) as info:
        sf.compile("y(i) = A(i,j) * ")
    assert isinstance(info.value, ValueError) and info.value.code == "parse error"
    assert str(info.value)


def test_bad_format_string():
    with pytest.raises(sf.InvalidArgument, match="unknown format 'cssr'") as info:
        sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "cssr"})
    assert isinstance(info.value, ValueError)
    with pytest.raises(sf.InvalidArgument, match="'Z'"):
        sf.compile("y(i) = A(i,j) * x(j)", formats={"Z": "csr"})


def test_wrong_shapes_and_names(rng, spmv):
    a = random_sparse(rng, (5, 4), 0.5)
    with pytest.raises(sf.InvalidArgument) as info:
        spmv(A=a, x=np.ones(5))
    assert isinstance(info.value, ValueError) and str(info.value)
    with pytest.raises(sf.InvalidArgument, match="'B' is not an input"):
        spmv(A=a, x=np.ones(4), B=np.ones(4))
    with pytest.raises(sf.InvalidArgument, match="needs tensor 'x'"):
        spmv(A=a)
    with pytest.raises(sf.InvalidArgument, match="rank"):
        spmv(A=a, x=np.ones((4, 1)))


def test_sparse_dense_agree_across_formats(rng):
    a = random_sparse(rng, (18, 22), 0.3)
    x = rng.uniform(-1, 1, 22)
    want = a.astype(np.float32).astype(np.float64) @ x.astype(np.float32).astype(np.float64)
    for fmt in ("csc", "coo", "bsr:4x4", "dense"):
        kernel = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": fmt})
        close(kernel(A=a, x=x), want, 22)
    assert sp.issparse(a)


def test_threads_share_a_kernel(rng, spmv):
    """Runs release the GIL; views of numpy inputs are dropped from whichever thread is last."""
    import threading

    a = random_sparse(rng, (64, 48), 0.2)
    xs = [rng.uniform(-1, 1, 48) for _ in range(4)]
    a32 = a.astype(np.float32).astype(np.float64)
    errors = []

    def work(x):
        try:
            for _ in range(25):
                close(spmv(A=a, x=x), a32 @ x.astype(np.float32).astype(np.float64), 48)
        except Exception as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
