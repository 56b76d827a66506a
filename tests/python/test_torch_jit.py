# SparseLinear under TorchScript: torch.jit.trace records torch.ops.sparseflow.nm_linear,
# torch.jit.script compiles ScriptableSparseLinear, and both (saved and loaded too) give eager's
# numbers; the operator sees every change to its weight tensors.
import copy
import io
import subprocess
import sys

import numpy as np
import pytest

import sparseflow as sf
from conftest import dlmc_linear
from test_sparse_linear import make_linear, prune_24

torch = pytest.importorskip("torch")
F = torch.nn.functional


def mlp(rng, dtype=torch.float32, activation=None):
    model = torch.nn.Sequential(make_linear(rng, 32, 48), torch.nn.Dropout(0.1),
                                make_linear(rng, 48, 16, bias=False)).to(dtype).eval()
    sf.sparsify(model)
    if activation is not None:  # the fused activation path too
        model[0] = sf.SparseLinear.from_dense(make_linear(rng, 32, 48).to(dtype),
                                              activation=activation)
    return model


def saved_and_loaded(module):
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def dense_reference(layer, x):
    """float64 activation(x · Wᵀ + b) from the layer's own (pruned) weights."""
    y = x.double() @ layer.dense_weight().double().t()
    if layer.has_bias:
        y = y + layer.bias_values().double()
    act = {None: lambda v: v, "relu": F.relu, "gelu": F.gelu, "silu": F.silu,
           "gelu_tanh": lambda v: F.gelu(v, approximate="tanh")}[layer.activation]
    return act(y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("activation", [None, "gelu", "relu"])
def test_trace_gives_eager_numbers_for_new_inputs(torch_rng, dtype, activation):
    model = mlp(torch_rng, dtype, activation)
    traced = torch.jit.trace(model, torch.randn(4, 32).to(dtype))
    assert "sparseflow.torch_ops.nm_linear" in getattr(traced, "0").code
    loaded = saved_and_loaded(traced)
    for shape in [(4, 32), (7, 32), (2, 3, 32), (0, 32)]:  # other batch shapes than traced
        x = torch.from_numpy(torch_rng.uniform(-1, 1, shape)).to(dtype)
        with torch.no_grad():
            want = model(x)
            assert torch.equal(traced(x), want)  # the same kernel: bit for bit
            assert torch.equal(loaded(x), want)
    x = torch.from_numpy(torch_rng.uniform(-1, 1, (5, 32))).to(dtype)
    ref = dense_reference(model[0], x)
    got = torch.jit.trace(model[0], x[:1])(x).double()
    tol = (1e-5 if dtype == torch.float32 else 2e-2) * (1 + ref.abs().max().item()) * 6
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_script_gives_eager_numbers(torch_rng, dtype):
    model = mlp(torch_rng, dtype, "silu")
    scripted = torch.jit.script(copy.deepcopy(model))
    assert isinstance(model[0], sf.SparseLinear)  # the model scripted was a copy
    loaded = saved_and_loaded(scripted)
    for shape in [(3, 32), (1, 2, 32)]:
        x = torch.from_numpy(torch_rng.uniform(-1, 1, shape)).to(dtype)
        with torch.no_grad():
            want = model(x)
            assert torch.equal(scripted(x), want)
            assert torch.equal(loaded(x), want)


def test_script_of_the_model_itself_keeps_its_outputs(torch_rng):
    model = mlp(torch_rng)
    x = torch.randn(6, 32)
    with torch.no_grad():
        before = model(x)
        scripted = torch.jit.script(model)  # torch swaps in what __prepare_scriptable__ gives
        assert torch.equal(scripted(x), before)
        assert torch.equal(model(x), before)
    assert isinstance(model[0], sf.ScriptableSparseLinear)
    assert set(model[0].state_dict()) == {"weight_values", "weight_meta", "bias"}


def test_trace_on_a_real_pruned_weight(torch_rng):
    layer = sf.SparseLinear.from_dense(dlmc_linear(torch_rng), activation="gelu_tanh")
    x = torch.from_numpy(torch_rng.uniform(-1, 1, (9, 512)).astype(np.float32))
    traced = saved_and_loaded(torch.jit.trace(layer, x[:2]))
    with torch.no_grad():
        got = traced(x)
    assert torch.equal(got, layer(x))
    ref = dense_reference(layer, x)
    np.testing.assert_allclose(got.double().numpy(), ref.numpy(), rtol=0,
                               atol=1e-5 * (1 + ref.abs().max().item()) * np.sqrt(512))


def test_scripted_weights_changed_in_place_are_seen(torch_rng):
    linear = make_linear(torch_rng, 16, 8)
    scripted = torch.jit.script(sf.SparseLinear.from_dense(linear, activation="relu"))
    x = torch.randn(5, 16)
    w = torch.from_numpy(prune_24(linear.weight.detach().double().numpy()))
    b = linear.bias.detach().double()

    def expect(weight, bias):
        got = scripted(x).double()
        np.testing.assert_allclose(got.numpy(), F.relu(x.double() @ weight.t() + bias).numpy(),
                                   rtol=0, atol=1e-5)

    expect(w, b)
    scripted.weight_values.data.mul_(2)  # not seen by torch's version counter
    expect(2 * w, b)
    scripted.bias.numpy()[:] = 3  # nor is this
    expect(2 * w, torch.full_like(b, 3))
    scripted.load_state_dict({"weight_values": scripted.weight_values / 2,
                              "weight_meta": scripted.weight_meta, "bias": linear.bias.detach()})
    expect(w, b)


def test_eager_scriptable_layer_checks_changed_meta(torch_rng):
    sparse = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8))
    layer = sf.ScriptableSparseLinear(sparse)  # eager: no TorchScript in between
    x = torch.randn(2, 16)
    assert torch.equal(layer(x), sparse(x))
    layer.weight_meta.numpy()[:] = 255  # offsets 3, 3: not increasing
    with pytest.raises(sf.SparseFlowError, match="offset"):
        layer(x)


def test_operator_called_directly(torch_rng):
    sparse = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8), activation="relu")
    state = sparse.state_dict()
    x = torch.randn(3, 16)
    op = torch.ops.sparseflow.nm_linear
    y = op(x, state["weight_values"], state["weight_meta"], state["bias"], 16, "2:4", "relu")
    assert torch.equal(y, sparse(x))
    with pytest.raises(sf.InvalidArgument, match=r"takes \(batch, 16\) inputs"):
        op(torch.randn(3, 12), state["weight_values"], state["weight_meta"], None, 16, "2:4",
           "none")
    with pytest.raises(sf.InvalidArgument, match="weight_values has shape"):
        op(x, state["weight_values"][:, :4], state["weight_meta"], None, 16, "2:4", "none")
    with pytest.raises(sf.NotSupported, match="not trainable"):
        op(x, state["weight_values"].requires_grad_(), state["weight_meta"], None, 16, "2:4",
           "none")


@pytest.mark.parametrize("how", ["trace", "script"])
def test_errors_in_torchscript_keep_their_message(torch_rng, how):
    sparse = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8))
    module = (torch.jit.trace(sparse, torch.randn(2, 16)) if how == "trace"
              else torch.jit.script(sparse))
    with pytest.raises(torch.jit.Error,
                       match=r"SparseLinear\(16 -> 8\) takes \(\.\.\., 16\) inputs"):
        module(torch.randn(2, 12))
    with pytest.raises(torch.jit.Error, match="takes float32 or torch.float32 inputs, got "
                                           "torch.float64"):
        module(torch.randn(2, 16, dtype=torch.float64))


@pytest.mark.parametrize("how", ["trace", "script"])
def test_torchscript_input_gradient(torch_rng, how):
    sparse = sf.SparseLinear.from_dense(make_linear(torch_rng, 24, 12), activation="gelu")
    module = (torch.jit.trace(sparse, torch.randn(2, 24)) if how == "trace"
              else torch.jit.script(sparse))
    x = torch.randn(4, 24, requires_grad=True)
    grad = torch.randn(4, 12)
    module(x).backward(grad)
    x_eager = x.detach().clone().requires_grad_()
    sparse(x_eager).backward(grad)
    np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=0, atol=1e-6)


def test_jit_load_needs_sparseflow_imported(tmp_path, torch_rng):
    path = tmp_path / "traced.pt"
    sparse = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8))
    torch.jit.save(torch.jit.trace(sparse, torch.randn(2, 16)), str(path))
    without = subprocess.run([sys.executable, "-c", f"import torch; torch.jit.load({str(path)!r})"],
                             capture_output=True, text=True)
    assert without.returncode != 0 and "sparseflow::nm_linear" in without.stderr
    x = torch.randn(3, 16)
    code = (f"import torch, sparseflow; m = torch.jit.load({str(path)!r}); "
            f"import sys; sys.stdout.write(repr(m(torch.tensor({x.tolist()!r})).tolist()))")
    with_sf = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert with_sf.returncode == 0, with_sf.stderr
    assert torch.equal(torch.tensor(eval(with_sf.stdout)), sparse(x))


def test_onnx_export_names_the_operator(torch_rng):
    model = torch.nn.Sequential(make_linear(torch_rng, 16, 8))
    sf.sparsify(model)
    with pytest.raises(Exception, match="sparseflow::nm_linear"):
        torch.onnx.export(model, torch.randn(2, 16), io.BytesIO())
