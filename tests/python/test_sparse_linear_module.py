# SparseLinear as an nn.Module: state_dict (copies) and load_state_dict (checked), torch.save,
# pickle and deepcopy, dtype conversions that repack or refuse, and weights nothing else can
# change behind the kernel's back.
import copy
import io
import pickle

import numpy as np
import pytest

import sparseflow as sf
from conftest import dlmc_linear
from test_sparse_linear import make_linear, prune_24

torch = pytest.importorskip("torch")
F = torch.nn.functional


def sparse_layer(rng, inp=32, out=12, bias=True, activation="gelu", dtype=torch.float32):
    return sf.SparseLinear.from_dense(make_linear(rng, inp, out, bias, dtype),
                                      activation=activation)


def outputs(layer, x):
    with torch.no_grad():
        return layer(x)


def test_state_dict_holds_copies_of_the_compressed_weights(torch_rng):
    linear = make_linear(torch_rng, 32, 12)
    layer = sf.SparseLinear.from_dense(linear, activation="relu")
    state = layer.state_dict()
    assert list(state) == ["weight_values", "weight_meta", "weight_shape", "weight_pattern", "bias"]
    assert all(isinstance(v, torch.Tensor) for v in state.values())
    assert state["weight_values"].shape == (12, 16)
    assert state["weight_values"].dtype == torch.float32
    assert state["weight_meta"].shape == (12 * 16 * 2 // 8,)
    assert state["weight_meta"].dtype == torch.uint8
    assert torch.equal(state["bias"], linear.bias.detach())
    assert state["weight_shape"].tolist() == [12, 32] and state["weight_pattern"].tolist() == [2, 4]
    pruned = prune_24(linear.weight.detach().double().numpy())
    kept = pruned.reshape(12, 8, 4)[pruned.reshape(12, 8, 4) != 0].reshape(12, 16)
    np.testing.assert_array_equal(state["weight_values"].numpy(), kept.astype(np.float32))
    # The same arrays as the 2:4 tensor (and a checkpoint) store.
    np.testing.assert_array_equal(state["weight_meta"].numpy(),
                                  layer.sparse_weight().level_arrays(1)["meta"])
    x = torch.randn(4, 32)
    before = outputs(layer, x)
    for key in ("weight_values", "bias"):  # writes into what state_dict gave change nothing
        state[key].numpy()[...] = 7
        state[key].data.mul_(3)
    state["weight_meta"].numpy()[:] = 255
    layer.bias_values().numpy()[:] = 5
    layer.sparse_weight().values[:] = 9
    layer.dense_weight().numpy()[:] = 9
    assert torch.equal(outputs(layer, x), before)
    assert not list(layer.parameters()) and not list(layer.buffers())


def test_no_attribute_can_change_what_the_kernel_reads(torch_rng):
    layer = sparse_layer(torch_rng)
    for name in ("in_features", "out_features", "activation", "pattern", "weight_dtype"):
        with pytest.raises(AttributeError):
            setattr(layer, name, None)
    assert not hasattr(layer, "weight") and not hasattr(layer, "bias")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("bias", [True, False])
def test_load_state_dict_round_trip(torch_rng, dtype, bias):
    layer = sparse_layer(torch_rng, bias=bias, dtype=dtype, activation="silu")
    fresh = sf.SparseLinear.zeros(32, 12, bias=bias, activation="silu", dtype=dtype)
    x = torch.randn(5, 32).to(dtype)
    assert not torch.equal(outputs(fresh, x), outputs(layer, x))
    assert fresh.load_state_dict(layer.state_dict()) is not None
    assert torch.equal(outputs(fresh, x), outputs(layer, x))
    assert fresh.weight_dtype == dtype


def test_load_state_dict_converts_values_to_the_layers_dtype(torch_rng):
    layer = sparse_layer(torch_rng, activation=None)
    half = sf.SparseLinear.zeros(32, 12, activation=None, dtype=torch.bfloat16)
    half.load_state_dict(layer.state_dict())  # as nn.Linear's copy_ does
    assert half.weight_dtype == torch.bfloat16
    x = torch.randn(3, 32)
    np.testing.assert_allclose(outputs(half, x).numpy(), outputs(layer, x).numpy(), rtol=0,
                               atol=2e-2 * (1 + outputs(layer, x).abs().max().item()))


def test_load_state_dict_errors_name_the_key(torch_rng):
    layer = sparse_layer(torch_rng)
    state = layer.state_dict()
    x = torch.randn(3, 32)
    before = outputs(layer, x)

    def fails(state_dict, pattern, strict=True, target=layer):
        with pytest.raises(RuntimeError, match=pattern):
            target.load_state_dict(state_dict, strict=strict)
        assert torch.equal(outputs(layer, x), before)  # nothing changed

    wider = sf.SparseLinear.zeros(64, 12, activation="gelu")
    fails(state, r"size mismatch for weight_values: the checkpoint's layer is 12 x 32 "
                 r"\(weight_shape\), the layer in the current model is 12 x 64", target=wider)
    broken = dict(state, weight_meta=torch.full_like(state["weight_meta"], 255))
    fails(broken, r"weight_values, weight_meta: .*offset")
    fails(dict(state, weight_values=state["weight_values"][:, :8]),
          r"weight_values has shape \(12, 8\); a 2:4 layer of 12 x 32 stores \(12, 16\)")
    fails(dict(state, weight_meta=state["weight_meta"].int()), r"weight_meta is torch.int32")
    fails(dict(state, bias=torch.zeros(5)), r"bias is torch.float32 of shape \(5,\)")
    fails(dict(state, weight_pattern=torch.tensor([1, 4])),
          r"weight_pattern: the checkpoint's pattern is 1:4, this layer's 2:4")
    fails(dict(state, weight_shape=torch.tensor([12.0, 32.0])),
          r"weight_shape must be a tensor of two integers")
    fails({k: v for k, v in state.items() if k != "weight_meta"}, r"missing weight_meta")
    fails({k: v for k, v in state.items() if k != "weight_meta"}, r"missing weight_meta",
          strict=False)
    fails(dict(state, extra=torch.zeros(1)), r'Unexpected key\(s\) in state_dict: "extra"')
    fails({"weight": torch.zeros(12, 32), "bias": torch.zeros(12)},
          r"weight is a dense weight, but this module is a SparseLinear.*from_dense", strict=False)
    fails(dict(state, weight_values=state["weight_values"].double()), r"torch.float64")
    result = layer.load_state_dict({}, strict=False)
    assert set(result.missing_keys) == {"weight_values", "weight_meta", "weight_shape",
                                        "weight_pattern", "bias"}
    assert torch.equal(outputs(layer, x), before)


def make_model(rng):
    model = torch.nn.Sequential(make_linear(rng, 32, 64), torch.nn.ReLU(),
                                make_linear(rng, 64, 16), torch.nn.ReLU(), make_linear(rng, 16, 6))
    report = sf.sparsify(model.eval(), exclude="4")
    assert [layer.name for layer in report.replaced] == ["0", "2"]
    return model


def test_sparsified_model_round_trips(torch_rng):
    model = make_model(torch_rng)
    x = torch.randn(7, 32)
    want = outputs(model, x)
    copies = [copy.deepcopy(model), pickle.loads(pickle.dumps(model))]
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    copies.append(torch.load(buffer))
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)  # plain tensors and dicts
    assert set(state) == {f"{i}.{key}" for i in (0, 2) for key in (
        "weight_values", "weight_meta", "weight_shape", "weight_pattern", "bias")} | {
        "4.weight", "4.bias"}
    fresh = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16),
                                torch.nn.ReLU(), torch.nn.Linear(16, 6))
    sf.sparsify(fresh, exclude="4")
    fresh.load_state_dict(state)
    copies.append(fresh)
    for other in copies:
        assert torch.equal(outputs(other, x), want)
        assert other[0]._layer is not model[0]._layer


def test_state_dict_saves_with_safetensors(tmp_path, torch_rng):
    st = pytest.importorskip("safetensors.torch", reason="PyPI safetensors is not installed")
    model = make_model(torch_rng)
    st.save_file(model.state_dict(), str(tmp_path / "model.safetensors"))  # tensors only
    fresh = make_model(torch_rng)
    fresh.load_state_dict(st.load_file(str(tmp_path / "model.safetensors")))
    x = torch.randn(4, 32)
    assert torch.equal(outputs(fresh, x), outputs(model, x))


def test_eval_no_grad_and_inference_mode(torch_rng):
    model = make_model(torch_rng)
    x = torch.randn(3, 32)
    with torch.no_grad():
        want = model(x)
    assert torch.equal(model.eval()(x), want) and torch.equal(model.train()(x), want)
    with torch.inference_mode():
        got = model(x)
    assert torch.equal(got, want) and got.is_inference()
    xg = x.clone().requires_grad_()
    with torch.no_grad():
        y = model(xg)
    assert not y.requires_grad and torch.equal(y, want)


@pytest.mark.parametrize("start", [torch.float32, torch.bfloat16])
def test_half_bfloat16_float_repack_the_weights(torch_rng, start):
    layer = sparse_layer(torch_rng, dtype=start, activation="relu")
    w = layer.dense_weight()
    for convert, dtype in [(lambda m: m.half(), torch.float16),
                           (lambda m: m.bfloat16(), torch.bfloat16),
                           (lambda m: m.float(), torch.float32),
                           (lambda m: m.to(torch.float16), torch.float16),
                           (lambda m: m.cpu(), start)]:
        other = copy.deepcopy(layer)
        assert convert(other) is other and other.weight_dtype == dtype
        assert torch.equal(other.dense_weight(), w.to(dtype))
        x = torch.randn(4, 32).to(dtype)
        ref = F.relu(x.double() @ w.to(dtype).double().t() + layer.bias_values().double())
        tol = (1e-5 if dtype == torch.float32 else 2e-2) * (1 + ref.abs().max().item()) * 6
        np.testing.assert_allclose(outputs(other, x).double().numpy(), ref.numpy(), rtol=0,
                                   atol=tol)
    model = torch.nn.Sequential(layer, torch.nn.Linear(12, 3))
    model.half()  # through the parent's _apply
    assert layer.weight_dtype == torch.float16 and model[1].weight.dtype == torch.float16


def test_other_dtypes_and_devices_are_refused(torch_rng):
    layer = sparse_layer(torch_rng)
    for convert, pattern in [(lambda m: m.double(), "not torch.float64"),
                             (lambda m: m.to(torch.float64), "not torch.float64"),
                             (lambda m: m.to("meta"), "cannot move to meta"),
                             (lambda m: m.cuda(), "CPU"),
                             (lambda m: torch.nn.Sequential(m).double(), "not torch.float64")]:
        with pytest.raises(sf.NotSupported, match=pattern):
            convert(layer)
    assert layer.weight_dtype == torch.float32
    with pytest.raises(sf.NotSupported, match="not trainable"):
        layer.requires_grad_()
    assert layer.requires_grad_(False) is layer


def test_real_pruned_weight_state_round_trip(torch_rng):
    layer = sf.SparseLinear.from_dense(dlmc_linear(torch_rng, dtype=torch.bfloat16))
    fresh = sf.SparseLinear.zeros(512, 512, dtype=torch.bfloat16)
    fresh.load_state_dict(layer.state_dict())
    x = torch.randn(8, 512).to(torch.bfloat16)
    assert torch.equal(outputs(fresh, x), outputs(layer, x))
    assert torch.equal(fresh.dense_weight(), layer.dense_weight())
