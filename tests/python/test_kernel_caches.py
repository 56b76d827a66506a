# The runtime's caches of derived data (the 2:4 kernel's packed weights and bias) follow the
# contents of the arrays a user passes, never their addresses: values changed in place through a
# numpy view, and fresh arrays that land where freed ones were, always give fresh results.
import gc

import numpy as np
import pytest

import sparseflow as sf

BATCH, OUT, IN = 6, 32, 64


@pytest.fixture(scope="module")
def linear():
    return sf.compile("Y(b,o) = relu(sum(i, X(b,i) * W(o,i)) + bias(o))", formats={"W": "2:4"})


def reference(x, w_dense, bias):
    y = x.astype(np.float64) @ w_dense.astype(np.float64).T + bias.astype(np.float64)
    return np.maximum(y, 0)


def expect_close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4 * (1 + np.abs(want).max()))


def test_weights_changed_in_place_through_values_are_seen(rng, linear):
    w, _ = sf.nm.sparsify(rng.uniform(-1, 1, (OUT, IN)).astype(np.float32))
    x = rng.uniform(-1, 1, (BATCH, IN)).astype(np.float32)
    bias = rng.uniform(-1, 1, OUT).astype(np.float32)
    before = w.to_numpy()
    expect_close(linear(X=x, W=w, bias=bias), reference(x, before, bias))
    w.values[:] *= 2  # the spelling: same buffer, new values
    np.testing.assert_array_equal(w.to_numpy(), 2 * before)  # values is a view, not a copy
    expect_close(linear(X=x, W=w, bias=bias), reference(x, w.to_numpy(), bias))
    w.values[::3] = -w.values[::3]
    expect_close(linear(X=x, W=w, bias=bias), reference(x, w.to_numpy(), bias))


def test_bias_changed_in_place_is_seen(rng, linear):
    w, _ = sf.nm.sparsify(rng.uniform(-1, 1, (OUT, IN)).astype(np.float32))
    x = rng.uniform(-1, 1, (BATCH, IN)).astype(np.float32)
    bias = rng.uniform(-1, 1, OUT).astype(np.float32)
    for _ in range(5):
        expect_close(linear(X=x, W=w, bias=bias), reference(x, w.to_numpy(), bias))
        bias += np.float32(0.75)


def test_fresh_arrays_at_freed_addresses_are_used(rng, linear):
    """30 rounds of new weight and bias arrays, each freed before the next is made, so the
    allocator hands back the same addresses (the issue saw 29 of 30 rounds reuse the old bias)."""
    x = rng.uniform(-1, 1, (BATCH, IN)).astype(np.float32)
    for round_ in range(30):
        dense = rng.uniform(-1, 1, (OUT, IN)).astype(np.float32)
        w, _ = sf.nm.sparsify(dense)
        bias = rng.uniform(-1, 1, OUT).astype(np.float32)
        got = linear(X=x, W=w, bias=bias)
        try:
            expect_close(got, reference(x, w.to_numpy(), bias))
        except AssertionError as e:
            raise AssertionError(f"round {round_}: {e}") from None
        del w, bias, dense, got
        gc.collect()
