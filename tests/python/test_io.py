# Files: .mtx, .npy and .sft read and written on the bundled real matrices; conversions.
import numpy as np
import pytest
import scipy.io

import sparseflow as sf
from conftest import DATA, small_mtx_files

MTX = small_mtx_files()


def reference(path):
    """The matrix as scipy reads it, in float64."""
    return scipy.io.mmread(str(path)).toarray().astype(np.float64)


@pytest.mark.parametrize("path", MTX, ids=[p.name for p in MTX])
def test_read_mtx_matches_scipy(path):
    want = reference(path)
    t = sf.read(path, dtype="f64")
    assert t.format == "csr" and t.shape == want.shape
    np.testing.assert_array_equal(t.to_numpy(), want)
    # By default the values are exact: float32 only where every value is one.
    exact = sf.read(str(path), format="csc")
    assert exact.format == "csc"
    assert exact.dtype == ("f32" if np.array_equal(want.astype(np.float32), want) else "f64")
    np.testing.assert_array_equal(exact.to_numpy().astype(np.float64), want)
    t32 = sf.read(str(path), format="csc", dtype="f32")
    assert t32.format == "csc" and t32.dtype == "f32"
    np.testing.assert_allclose(t32.to_numpy(), want, rtol=2**-24)


@pytest.mark.parametrize("path", MTX, ids=[p.name for p in MTX])
@pytest.mark.parametrize("ext", ["mtx", "npy", "sft"])
def test_write_then_read(tmp_path, path, ext):
    want = reference(path)
    t = sf.read(path, dtype="f64")
    out = tmp_path / f"copy.{ext}"
    sf.write(out, t)
    back = sf.read(out, dtype="f64")
    np.testing.assert_array_equal(back.to_numpy(), want)
    if ext == "npy":
        np.testing.assert_array_equal(np.load(out), want)
    if ext == "sft":
        assert back.format == t.format


def test_sft_keeps_format_and_arrays(tmp_path):
    t = sf.convert(sf.read(MTX[0]), "bsr:4x4")
    sf.write(tmp_path / "w.sft", t)
    back = sf.read(tmp_path / "w.sft")
    assert back.format == "bsr:4x4" and back.dtype == t.dtype
    np.testing.assert_array_equal(back.values, t.values)
    np.testing.assert_array_equal(back.level_arrays(1)["crd"], t.level_arrays(1)["crd"])


def test_numpy_saved_array_reads_as_dense(tmp_path, rng):
    a = rng.standard_normal((5, 7)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    t = sf.read(tmp_path / "a.npy")
    assert t.format == "dense"
    np.testing.assert_array_equal(t.to_numpy(), a)
    sf.write(tmp_path / "b.mtx", a)  # numpy arrays are written through as_tensor
    np.testing.assert_allclose(np.asarray(scipy.io.mmread(str(tmp_path / "b.mtx"))), a)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "bsr:4x4", "bsr:2x3", "ell",
                                 "hyb", "dense", "csr@i64"])
def test_convert(fmt):
    want = reference(MTX[0])
    t = sf.read(MTX[0], dtype="f64")
    out, report = sf.convert(t, fmt, return_report=True)
    assert out.format.startswith(fmt.split(":")[0])
    assert report["from"] == "csr" and "->" in report["path"] and report["bytes_after"] > 0
    np.testing.assert_array_equal(out.to_numpy(), want)
    assert sf.convert(out, "csr").num_stored == t.num_stored


def test_convert_dtype_and_transpose():
    want = reference(MTX[0])
    t = sf.read(MTX[0], dtype="f64")
    half = sf.convert(t, "csr", dtype="f16")
    assert half.dtype == "f16"
    np.testing.assert_allclose(half.to_numpy(), want, rtol=2**-11)
    np.testing.assert_array_equal(sf.transpose(t).to_numpy(), want.T)


def test_convert_refuses_what_does_not_fit():
    dense = np.ones((4, 8))
    with pytest.raises(sf.SparseFlowError, match="2:4") as info:
        sf.convert(dense, "2:4")
    assert isinstance(info.value, ValueError)


def test_read_errors_name_the_file(tmp_path):
    missing = tmp_path / "missing.mtx"
    with pytest.raises(sf.IoError, match="missing.mtx") as info:
        sf.read(missing)
    assert isinstance(info.value, OSError) and info.value.code == "i/o error"
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 x 2\n")
    with pytest.raises(sf.ParseError, match="bad.mtx") as info:
        sf.read(bad)
    assert isinstance(info.value, ValueError)


def test_bundled_data_folder_exists():
    assert DATA.is_dir() and len(MTX) >= 3
