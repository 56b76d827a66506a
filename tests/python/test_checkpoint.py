# Checkpoints from Python: sf.save_checkpoint / sf.load_checkpoint (many named tensors, dense
# and compressed, in one .safetensors file), sf.read(path, tensor=NAME), and interop with the
# PyPI safetensors package both ways.
import numpy as np
import pytest

import sparseflow as sf
from conftest import DATA, DLMC_Q

torch = pytest.importorskip("torch")


def safetensors_torch():
    try:
        import safetensors.torch
    except ImportError:
        pytest.skip("PyPI safetensors is not installed (scripts/install_deps.sh installs it)")
    return safetensors.torch


def some_tensors(rng):
    """Dense f32/f64/bf16, a 2:4 weight (a real pruned pattern with random values), csr."""
    pattern = sf.read(DATA / DLMC_Q).to_numpy() != 0
    weight = np.where(pattern, rng.uniform(-1, 1, pattern.shape), 0.0).astype(np.float32)
    two_four, _ = sf.nm.sparsify(weight)
    sparse = weight.copy()
    sparse[rng.random(sparse.shape) < 0.9] = 0
    return {
        "enc.fc.weight": two_four,
        "enc.fc.bias": rng.standard_normal(512).astype(np.float32),
        "emb": torch.from_numpy(rng.standard_normal((10, 6))).to(torch.bfloat16),
        "graph": sf.convert(sparse, "csr"),
        "scale": rng.standard_normal((3, 4)),  # float64
    }


def dense(value):
    if isinstance(value, torch.Tensor):
        return value.double().numpy()
    return np.asarray(sf.as_tensor(value).to_numpy(), dtype=np.float64)


def test_save_and_load_keep_formats_dtypes_and_values(tmp_path, rng):
    tensors = some_tensors(rng)
    path = tmp_path / "model.safetensors"
    sf.save_checkpoint(path, tensors, metadata={"source": "test"})
    ckpt = sf.load_checkpoint(path)
    assert isinstance(ckpt, sf.Checkpoint) and len(ckpt) == len(tensors)
    assert set(ckpt) == set(tensors) and "enc.fc.weight" in ckpt and "nope" not in ckpt
    assert ckpt.metadata == {"source": "test"}
    want = {"enc.fc.weight": ("2:4", "f32"), "enc.fc.bias": ("dense", "f32"),
            "emb": ("dense", "bf16"), "graph": ("csr", "f32"), "scale": ("dense", "f64")}
    for name, value in tensors.items():
        got = ckpt[name]
        assert (got.format, got.dtype) == want[name], name
        np.testing.assert_array_equal(dense(got), dense(value))
    info = ckpt.info("enc.fc.weight")
    assert info["format"] == "2:4" and info["shape"] == (512, 512) and info["readable"]
    assert sorted(info["arrays"]) == ["enc.fc.weight.level1.meta", "enc.fc.weight.values"]
    with pytest.raises(KeyError, match="holds no tensor 'nope'.*enc.fc.weight"):
        ckpt["nope"]


def test_read_names_one_tensor_of_a_checkpoint(tmp_path, rng):
    tensors = some_tensors(rng)
    path = tmp_path / "model.safetensors"
    sf.save_checkpoint(path, tensors)
    got = sf.read(path, tensor="enc.fc.weight")
    assert got.format == "2:4"
    np.testing.assert_array_equal(got.to_numpy(), dense(tensors["enc.fc.weight"]))
    with pytest.raises(sf.InvalidArgument, match=r"is a checkpoint of 5 tensors \(.*\); name the "
                                                 r"one to read: sf.read\(path, tensor='.*'\), or "
                                                 r"open them all with sf.load_checkpoint\(path\)"):
        sf.read(path)
    with pytest.raises(sf.InvalidArgument, match="nope"):
        sf.read(path, tensor="nope")
    one = tmp_path / "one.safetensors"
    sf.write(one, tensors["enc.fc.bias"], name="bias")
    assert list(sf.load_checkpoint(one)) == ["bias"]
    np.testing.assert_array_equal(sf.read(one).to_numpy(), tensors["enc.fc.bias"])
    assert sf.read(one, kind="safetensors").shape == (512,)


def test_save_refuses_what_it_would_change(tmp_path):
    path = tmp_path / "x.safetensors"
    for tensors, pattern in [({"ids": torch.arange(4)}, "'ids' has dtype torch.int64"),
                             ({"mask": np.ones(3, dtype=bool)}, "'mask' has dtype bool"),
                             ({"meta": {"a": 1}}, "'meta' is a dict, not a tensor"),
                             ([("a", np.ones(2))], "mapping of names")]:
        with pytest.raises(sf.InvalidArgument, match=pattern):
            sf.save_checkpoint(path, tensors)
    assert not path.exists()
    with pytest.raises(sf.InvalidArgument, match="metadata maps strings to strings"):
        sf.save_checkpoint(path, {"a": np.ones(2)}, metadata={"n": 1})


def test_sparseflow_checkpoint_reads_with_safetensors(tmp_path, rng):
    st = safetensors_torch()
    tensors = some_tensors(rng)
    path = tmp_path / "model.safetensors"
    sf.save_checkpoint(path, tensors)
    loaded = st.load_file(str(path))
    assert torch.equal(loaded["emb"], tensors["emb"])
    np.testing.assert_array_equal(loaded["enc.fc.bias"].numpy(), tensors["enc.fc.bias"])
    np.testing.assert_array_equal(loaded["scale"].numpy(), tensors["scale"])
    # 2:4 as its arrays: the values, and 2-bit offsets four to a byte, LSB first.
    values = loaded["enc.fc.weight.values"].numpy().reshape(512, 128, 2)
    meta = loaded["enc.fc.weight.level1.meta"].numpy()
    offsets = ((meta[:, None] >> np.array([0, 2, 4, 6])) & 3).reshape(512, 128, 2)
    rebuilt = np.zeros((512, 128, 4), np.float32)
    np.put_along_axis(rebuilt, offsets.astype(np.int64), values, axis=-1)
    np.testing.assert_array_equal(rebuilt.reshape(512, 512), dense(tensors["enc.fc.weight"]))
    csr = tensors["graph"]
    np.testing.assert_array_equal(loaded["graph.level1.pos"].numpy(), csr.level_arrays(1)["pos"])
    np.testing.assert_array_equal(loaded["graph.level1.crd"].numpy(), csr.level_arrays(1)["crd"])
    np.testing.assert_array_equal(loaded["graph.values"].numpy(), csr.values)


def test_safetensors_file_loads_with_sparseflow(tmp_path, rng):
    st = safetensors_torch()
    tensors = {"w": torch.from_numpy(rng.standard_normal((6, 8)).astype(np.float32)),
               "h": torch.from_numpy(rng.standard_normal(5)).to(torch.float16),
               "b": torch.from_numpy(rng.standard_normal((2, 3))).to(torch.bfloat16),
               "step": torch.tensor([3], dtype=torch.int64)}
    path = tmp_path / "torch.safetensors"
    st.save_file(tensors, str(path), metadata={"format": "pt"})
    ckpt = sf.load_checkpoint(path)
    assert set(ckpt) == set(tensors) and ckpt.metadata == {"format": "pt"}
    for name in ("w", "h", "b"):
        got = sf.to_torch(ckpt[name])
        assert got.dtype == tensors[name].dtype and torch.equal(got, tensors[name])
    assert ckpt.info("step")["dtype"] == "I64" and not ckpt.info("step")["readable"]
    with pytest.raises(sf.NotSupported, match="step"):
        ckpt["step"]


def test_sparse_linear_weights_through_a_checkpoint(tmp_path, torch_rng):
    linear = torch.nn.Linear(64, 16)
    layer = sf.SparseLinear.from_dense(linear)
    path = tmp_path / "layer.safetensors"
    sf.save_checkpoint(path, {"fc.weight": layer.sparse_weight(), "fc.bias": layer.bias_values()})
    ckpt = sf.load_checkpoint(path)
    back = sf.SparseLinear(ckpt["fc.weight"], sf.to_torch(ckpt["fc.bias"]))
    x = torch.randn(3, 64)
    with torch.no_grad():
        assert torch.equal(back(x), layer(x))
