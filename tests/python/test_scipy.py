# scipy.sparse <-> sf.Tensor: every format and dtype round-trips against float64 references.
import numpy as np
import pytest
import scipy.sparse as sp

import sparseflow as sf
from conftest import random_sparse

FORMATS = ["csr", "csc", "coo", "bsr:4x4"]
DTYPES = ["f32", "f64", "f16", "bf16"]
# Relative rounding of each value type (scipy widens f16 and bf16 to float32 on the way back).
EPS = {"f32": 2**-24, "f64": 2**-53, "f16": 2**-11, "bf16": 2**-8}
# Half the step between subnormals: below the smallest normal (f16: 6.1e-5) a value rounds to a
# multiple of the subnormal step, not within a relative EPS (seed 848575010 drew one, 1.6e-3 off
# relatively). f32, f64 and bf16 subnormals lie far below the drawn values.
SUBNORMAL_HALF_STEP = {"f32": 2**-150, "f64": 0.0, "f16": 2**-25, "bf16": 2**-134}


def scipy_of(matrix, fmt):
    if fmt == "bsr:4x4":
        return matrix.tobsr(blocksize=(4, 4))
    return matrix.asformat(fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip(rng, fmt, dtype):
    shape = (4 * int(rng.integers(1, 9)), 4 * int(rng.integers(1, 9)))
    reference = random_sparse(rng, shape, density=float(rng.uniform(0.05, 0.5)))
    t = sf.from_scipy(scipy_of(reference, fmt), dtype=dtype)
    assert t.format == fmt and t.dtype == dtype and t.shape == shape
    back = sf.to_scipy(t)
    assert back.format == fmt.split(":")[0] and back.shape == shape
    want = reference.toarray()
    atol = SUBNORMAL_HALF_STEP[dtype]
    np.testing.assert_allclose(back.toarray(), want, rtol=EPS[dtype], atol=atol)
    np.testing.assert_allclose(t.to_numpy().astype(np.float64), want, rtol=EPS[dtype], atol=atol)


@pytest.mark.parametrize("fmt", FORMATS)
def test_canonical_matrices_are_viewed(rng, fmt):
    m = scipy_of(random_sparse(rng, (16, 12), 0.3), fmt)
    if fmt != "coo":
        m.sort_indices()  # tobsr may leave block columns unsorted (then from_scipy copies)
    t = sf.from_scipy(m)
    assert np.shares_memory(t.values, m.data)
    back = sf.to_scipy(t)
    assert np.shares_memory(back.data, m.data)
    if fmt != "coo":
        assert np.shares_memory(t.level_arrays(1)["crd"], m.indices)


@pytest.mark.parametrize("fmt", FORMATS)
def test_any_format_to_any_format(rng, fmt):
    reference = random_sparse(rng, (12, 20), 0.25)
    t = sf.from_scipy(reference, format=fmt)
    assert t.format == fmt
    for target in FORMATS:
        m = sf.to_scipy(t, format=target)
        assert m.format == target.split(":")[0]
        np.testing.assert_allclose(m.toarray(), reference.toarray(), rtol=2**-24)


def test_int64_indices_keep_their_width(rng):
    m = random_sparse(rng, (10, 10), 0.3)
    m.indices = m.indices.astype(np.int64)
    m.indptr = m.indptr.astype(np.int64)
    t = sf.from_scipy(m)
    assert t.format == "csr@i64" and t.level_arrays(1)["crd"].dtype == np.int64
    back = sf.to_scipy(t)  # scipy picks its own index width (int32 when the values fit)
    np.testing.assert_array_equal(back.toarray(), m.toarray())


def test_non_canonical_inputs_are_summed_and_sorted_without_touching_them():
    rows = np.array([2, 0, 2, 1, 0])
    cols = np.array([1, 3, 1, 0, 3])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    coo = sp.coo_matrix((vals, (rows, cols)), shape=(3, 4))
    want = coo.toarray()
    t = sf.from_scipy(coo)
    assert t.num_stored == 3
    np.testing.assert_array_equal(t.to_numpy(), want)
    np.testing.assert_array_equal(coo.row, rows)  # the caller's matrix is unchanged
    cols = np.array([3, 1, 1, 0, 0])  # row 0 unsorted, row 2 a duplicate
    csr = sp.csr_matrix((vals, cols, np.array([0, 2, 3, 5])), shape=(3, 4))
    assert not csr.has_canonical_format
    t = sf.from_scipy(csr)
    np.testing.assert_array_equal(t.to_numpy(), csr.toarray())


def test_other_scipy_formats_and_integer_values(rng):
    m = random_sparse(rng, (9, 7), 0.4)
    for other in (m.todia(), m.tolil(), m.todok()):
        t = sf.from_scipy(other)
        assert t.format == "csr"
        np.testing.assert_array_equal(t.to_numpy(), m.toarray())
    ints = sp.csr_matrix(np.array([[0, 3], [-2, 0]], dtype=np.int32))
    t = sf.from_scipy(ints)
    assert t.dtype == "f64"
    np.testing.assert_array_equal(t.to_numpy(), [[0, 3], [-2, 0]])


def test_to_scipy_converts_formats_scipy_lacks(rng):
    m = random_sparse(rng, (10, 9), 0.3)
    for fmt in ("ell", "dcsr", "hyb:1", "dense", "bsr:3x3"):
        t = sf.convert(m, fmt)
        back = sf.to_scipy(t)
        assert back.format in ("csr", "bsr")
        np.testing.assert_allclose(back.toarray(), m.toarray(), rtol=2**-24)
    with pytest.raises(sf.InvalidArgument, match="bsr"):
        sf.to_scipy(sf.convert(m, "csr"), format="bsr:4x4")  # 10x9 is not made of 4x4 blocks


def test_from_scipy_rejects_other_objects():
    with pytest.raises(sf.InvalidArgument):
        sf.from_scipy(np.eye(3))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_of_a_matrix_without_entries(fmt, dtype):
    # A stored array may be empty: it must come back as an empty index array, not None.
    reference = np.zeros((8, 12))
    t = sf.from_scipy(scipy_of(sp.csr_matrix(reference), fmt), dtype=dtype)
    back = sf.to_scipy(t)
    assert back.shape == (8, 12) and back.nnz == 0
    np.testing.assert_array_equal(back.toarray(), reference)
