# sf.tune and sf.compile(..., tune=...): the decision as a dict (the keys `sparseflow tune --json`
# writes), recorded and reused without timing, and the tuned kernel run against a float64
# reference on a fresh random matrix.
import numpy as np
import pytest
import scipy.sparse as sp

import sparseflow as sf
from conftest import random_sparse

SPMM = "C(i,j) = A(i,k) * B(k,j)"


def spmm_inputs(rng):
    m, k, n = (int(v) for v in rng.integers(40, 120, size=3))
    a = random_sparse(rng, (m, k), float(rng.uniform(0.02, 0.3)))
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    return sp.csr_matrix(a), b


def test_tune_searches_once_then_reuses_the_recorded_decision(rng, tmp_path):
    a, b = spmm_inputs(rng)
    db = tmp_path / "tuning.jsonl"
    first = sf.tune(SPMM, {"A": a, "B": b}, budget=1, database=db)
    assert not first["from_database"]
    assert first["measured"] == 2  # the default and the model's first pick
    assert first["space"] >= 1000
    assert first["database"] == str(db)
    assert first["model"].endswith("model.json")
    assert first["candidates"][0]["formats"] == {"A": "csr"}  # the default, as given
    assert first["median_ms"] <= first["default_ms"]
    assert first["arguments"].startswith("--format A=")
    for key in ("formats", "schedule", "hand_tuned", "parallel", "machine", "inputs"):
        assert key in first
    again = sf.tune(SPMM, {"A": a * 2.0, "B": b}, budget=1, database=db)  # other values
    assert again["from_database"] and again["measured"] == 0
    assert again["formats"] == first["formats"] and again["schedule"] == first["schedule"]
    assert again["parallel"] == first["parallel"]
    assert db.read_text().count("\n") == 1


def test_compile_with_tune_runs_the_decision_per_input_pattern(rng, tmp_path):
    a, b = spmm_inputs(rng)
    db = tmp_path / "tuning.jsonl"
    kernel = sf.compile(SPMM, tune="database", database=db)
    with pytest.raises(sf.InvalidArgument, match="first call"):
        kernel.provider
    want = a.astype(np.float32).astype(np.float64) @ b.astype(np.float64)
    # No decision yet: the formats as given (dense A unless named), nothing timed.
    got = kernel(A=a, B=b)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * max(1.0, np.abs(want).max()))
    assert not kernel.tuning["from_database"] and kernel.tuning["measured"] == 0
    # Searched (and recorded) once; a new tuned kernel in "database" mode then uses it.
    decision = sf.tune(SPMM, {"A": a, "B": b}, budget=1, database=db)
    reused = sf.compile(SPMM, tune="database", database=db)
    got = reused(A=a, B=b)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * max(1.0, np.abs(want).max()))
    assert reused.tuning["from_database"]
    assert reused.tuning["formats"] == decision["formats"]
    assert reused.schedule == decision["schedule"]
    # Whichever configuration won the timing: the provider that runs it.
    assert reused.provider in ("csr_spmm", "bsr_spmm", "generated", "format decomposition")
    # Another pattern is another problem: searched in "search" mode, and recorded.
    c, d = spmm_inputs(rng)
    searching = sf.compile(SPMM, tune=True, database=db, budget=1)
    got = searching(A=c, B=d)
    want = c.astype(np.float32).astype(np.float64) @ d.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * max(1.0, np.abs(want).max()))
    assert not searching.tuning["from_database"] and searching.tuning["measured"] == 2
    assert db.read_text().count("\n") == 2


def test_tune_errors_name_what_is_wrong(rng, tmp_path):
    a, b = spmm_inputs(rng)
    with pytest.raises(sf.IoError, match="absent.json"):
        sf.tune(SPMM, {"A": a, "B": b}, database=False, model=tmp_path / "absent.json")
    with pytest.raises(sf.InvalidArgument, match="no sparse 2-d input"):
        sf.tune(SPMM, {"A": a.toarray().astype(np.float32), "B": b}, database=False)
    with pytest.raises(sf.InvalidArgument, match="tune="):
        sf.compile(SPMM, tune="fastest")
    with pytest.raises(sf.InvalidArgument, match="schedule"):
        sf.compile(SPMM, tune=True, schedule="split(i, i0, i1, 4)")
