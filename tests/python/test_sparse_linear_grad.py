# SparseLinear's backward: dX = dY · W (through the activation's derivative) on sparseflow's
# CSR SpMM, against torch autograd of the dense pruned layer in float64; the weights get none.
import numpy as np
import pytest

import sparseflow as sf
from conftest import dlmc_linear
from test_sparse_linear import make_linear

torch = pytest.importorskip("torch")
F = torch.nn.functional

ACTIVATIONS = {None: lambda v: v, "relu": F.relu, "silu": F.silu, "gelu": F.gelu,
               "gelu_tanh": lambda v: F.gelu(v, approximate="tanh")}


def reference_grad(layer, x, grad_out):
    """dL/dx of activation(x · Wᵀ + b) by torch autograd in float64 on the layer's weights."""
    x64 = x.detach().double().requires_grad_()
    y = x64 @ layer.dense_weight().double().t()
    if layer.has_bias:
        y = y + layer.bias_values().double()
    y = ACTIVATIONS[layer.activation](y)
    y.backward(grad_out.double())
    return y.detach(), x64.grad


def check_grad(layer, x, rng, rtol):
    x = x.clone().requires_grad_()
    y = layer(x)
    assert y.requires_grad and y.dtype == x.dtype
    grad_out = torch.from_numpy(rng.uniform(-1, 1, tuple(y.shape))).to(x.dtype)
    y.backward(grad_out)
    want_y, want_dx = reference_grad(layer, x, grad_out)
    assert x.grad.dtype == x.dtype and x.grad.shape == x.shape
    scale = 1 + want_dx.abs().max().item()
    np.testing.assert_allclose(x.grad.double().numpy(), want_dx.numpy(), rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(y.detach().double().numpy(), want_y.numpy(), rtol=0,
                               atol=rtol * (1 + want_y.abs().max().item()))


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(1,), (7,), (2, 5)])
def test_input_gradient_matches_float64_autograd(torch_rng, activation, bias, shape):
    rng = torch_rng
    inp, out = 4 * int(rng.integers(1, 24)), int(rng.integers(1, 40))
    layer = sf.SparseLinear.from_dense(make_linear(rng, inp, out, bias), activation=activation)
    x = torch.from_numpy(rng.uniform(-1, 1, shape + (inp,)).astype(np.float32))
    check_grad(layer, x, rng, 1e-5 * np.sqrt(inp))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("activation", [None, "gelu"])
def test_input_gradient_half_precision(torch_rng, dtype, activation):
    rng = torch_rng
    layer = sf.SparseLinear.from_dense(make_linear(rng, 64, 24, dtype=dtype),
                                       activation=activation)
    x = torch.from_numpy(rng.uniform(-1, 1, (6, 64))).to(dtype)
    check_grad(layer, x, rng, 3e-2)
    x32 = torch.from_numpy(rng.uniform(-1, 1, (3, 64)).astype(np.float32))  # f32 inputs too
    check_grad(layer, x32, rng, 1e-3)


def test_input_gradient_on_a_real_pruned_weight(torch_rng):
    layer = sf.SparseLinear.from_dense(dlmc_linear(torch_rng), activation="relu")
    x = torch.from_numpy(torch_rng.uniform(-1, 1, (16, 512)).astype(np.float32))
    check_grad(layer, x, torch_rng, 1e-5 * np.sqrt(512))


def test_gradient_flows_through_a_sparsified_model(torch_rng):
    model = torch.nn.Sequential(make_linear(torch_rng, 16, 32), torch.nn.Tanh(),
                                make_linear(torch_rng, 32, 8))
    sf.sparsify(model)
    dense = torch.nn.Sequential(torch.nn.Linear(16, 32).double(), torch.nn.Tanh(),
                                torch.nn.Linear(32, 8).double())
    with torch.no_grad():
        for i in (0, 2):
            dense[i].weight.copy_(model[i].dense_weight())
            dense[i].bias.copy_(model[i].bias_values())
    x = torch.randn(5, 16)
    x_sparse, x_dense = x.clone().requires_grad_(), x.double().requires_grad_()
    model(x_sparse).square().sum().backward()
    dense(x_dense).square().sum().backward()
    np.testing.assert_allclose(x_sparse.grad.double().numpy(), x_dense.grad.numpy(), rtol=0,
                               atol=1e-4 * (1 + x_dense.grad.abs().max().item()))


def test_no_graph_without_grad(torch_rng):
    layer = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8), activation="silu")
    x = torch.randn(2, 16, requires_grad=True)
    with torch.no_grad():
        assert layer(x).grad_fn is None
    with torch.inference_mode():
        assert not layer(torch.randn(2, 16)).requires_grad
    assert layer(x.detach()).grad_fn is None


def test_second_derivative_is_refused(torch_rng):
    layer = sf.SparseLinear.from_dense(make_linear(torch_rng, 16, 8))
    x = torch.randn(2, 16, requires_grad=True)
    (grad,) = torch.autograd.grad(layer(x).square().sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        grad.sum().backward()
