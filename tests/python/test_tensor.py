# sf.Tensor from and to numpy arrays and torch tensors: zero-copy where promised, copies otherwise.
import gc

import numpy as np
import pytest

import sparseflow as sf


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_numpy_dense_is_viewed_both_ways(rng, dtype):
    a = rng.standard_normal((7, 5)).astype(dtype)
    t = sf.from_numpy(a)
    assert t.shape == (7, 5) and t.format == "dense" and t.is_dense
    assert t.dtype == sf.dtype_name(dtype)
    back = t.to_numpy()
    assert np.shares_memory(back, a) and np.array_equal(back, a)
    a[3, 2] = 42  # one memory: the tensor sees the caller's writes
    assert t.to_numpy()[3, 2] == 42 and np.asarray(t)[3, 2] == 42


def test_view_keeps_its_owner_alive(rng):
    a = rng.standard_normal((64, 3)).astype(np.float32)
    expected = a.copy()
    t = sf.from_numpy(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(t.to_numpy(), expected)
    view = t.to_numpy()
    del t
    gc.collect()
    np.testing.assert_array_equal(view, expected)  # the view's base holds the tensor's memory


def test_non_contiguous_and_readonly_arrays_are_copied(rng):
    a = rng.standard_normal((6, 8))
    t = sf.from_numpy(a[:, ::2])
    assert not np.shares_memory(t.to_numpy(), a)
    np.testing.assert_array_equal(t.to_numpy(), a[:, ::2])
    frozen = a.copy()
    frozen.setflags(write=False)
    t = sf.from_numpy(frozen)
    assert not np.shares_memory(t.to_numpy(), frozen)


def test_integer_arrays_become_float64():
    t = sf.from_numpy(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert t.dtype == "f64"
    np.testing.assert_array_equal(t.to_numpy(), np.arange(12).reshape(3, 4))


def test_from_numpy_with_format_and_dtype(rng):
    a = rng.standard_normal((9, 13))
    a[rng.random(a.shape) < 0.7] = 0
    t = sf.from_numpy(a, format="csr", dtype="f32")
    assert t.format == "csr" and t.dtype == "f32" and t.num_stored == np.count_nonzero(a)
    np.testing.assert_allclose(t.to_numpy(), a.astype(np.float32))
    bf = sf.from_numpy(a, dtype="bf16")
    assert bf.dtype == "bf16" and bf.to_numpy().dtype == np.float32
    np.testing.assert_allclose(bf.to_numpy(), a, rtol=2**-8, atol=0)


def test_tensor_properties_and_level_arrays(rng):
    a = np.array([[0, 1.5, 0], [2.0, 0, 3.0]])
    t = sf.from_numpy(a, format="csr")
    assert t.rank == 2 and t.ndim == 2 and t.num_levels == 2 and not t.is_hybrid
    level = t.level_arrays(1)
    np.testing.assert_array_equal(level["pos"], [0, 1, 3])
    np.testing.assert_array_equal(level["crd"], [1, 0, 2])
    assert level["meta"] is None and t.level_arrays(0)["pos"] is None
    np.testing.assert_array_equal(t.values, [1.5, 2.0, 3.0])
    assert "csr" in repr(t) and t.storage_bytes > 0
    assert t.validate()["stored"] == 3
    with pytest.raises(sf.OutOfRange):
        t.level_arrays(2)


def test_hybrid_tensor_parts(rng):
    a = rng.standard_normal((20, 20))
    a[rng.random(a.shape) < 0.8] = 0
    t = sf.convert(a, "hyb:2")
    assert t.is_hybrid and len(t.parts) == 2
    np.testing.assert_allclose(t.to_numpy(), a.astype(np.float32))


def test_torch_dense_round_trip_shares_memory(torch_rng):
    import torch

    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x = torch.randn(5, 6).to(dtype)
        t = sf.from_torch(x)
        assert t.dtype == sf.dtype_name(dtype) and t.shape == (5, 6)
        back = sf.to_torch(t)
        assert back.dtype == dtype and torch.equal(back, x)
        assert back.data_ptr() == x.data_ptr()  # the same memory, no copy either way


def test_torch_non_contiguous_and_grad(torch_rng):
    import torch

    x = torch.randn(4, 6, requires_grad=True)
    t = sf.from_torch(x.t())  # transposed: copied to a contiguous layout
    np.testing.assert_array_equal(t.to_numpy(), x.detach().t().numpy())


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_torch_sparse_layouts(torch_rng):
    import torch

    dense = torch.randn(6, 9)
    dense[torch.rand(6, 9) < 0.6] = 0
    csr = sf.from_torch(dense.to_sparse_csr())
    assert csr.format.startswith("csr")
    np.testing.assert_array_equal(csr.to_numpy(), dense.numpy())
    coo = sf.from_torch(dense.to_sparse())
    assert coo.format.startswith("coo")
    np.testing.assert_array_equal(coo.to_numpy(), dense.numpy())
    assert torch.equal(sf.to_torch(csr).to_dense(), dense)
    assert torch.equal(sf.to_torch(coo).to_dense(), dense)
    assert torch.equal(sf.to_torch(sf.convert(csr, "bsr:2x2"), layout=torch.strided), dense)
    with pytest.raises(sf.NotSupported, match="layout"):
        sf.to_torch(sf.convert(csr, "bsr:2x2"))


def test_torch_non_cpu_tensor_is_refused():
    import torch

    x = torch.empty(3, 4, device="meta")
    with pytest.raises(sf.NotSupported, match="CPU") as info:
        sf.from_torch(x)
    assert isinstance(info.value, NotImplementedError)
