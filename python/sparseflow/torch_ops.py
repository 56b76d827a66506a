"""torch.ops.sparseflow.nm_linear: the 2:4 linear layer as a real PyTorch operator.

torch.jit.trace records it, torch.jit.script calls it and saved TorchScript modules run it
(in a process that has imported sparseflow), with a gradient for the input. Its weights are
ordinary tensors (values, meta, bias), so the operator packs them for the kernel and keeps the
packed layer on the values tensor; before every call it checks, bit for bit, that the tensors
still hold what was packed (a write through ``.data`` or ``.numpy()`` does not bump torch's
version counter, so nothing cheaper is exact) and packs again when they do not.
"""

from __future__ import annotations

from typing import Optional

import torch

from ._ext import _C
from .errors import InvalidArgument, NotSupported

_LIBRARY = torch.library.Library("sparseflow", "DEF")
_LIBRARY.define(
    "nm_linear(Tensor x, Tensor weight_values, Tensor weight_meta, Tensor? bias, "
    "int in_features, str pattern, str activation) -> Tensor")

WEIGHT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
_SF_DTYPE = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
_TORCH_DTYPE = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
_CACHE_ATTRIBUTE = "_sparseflow_packed_layer"
_NOT_TRAINABLE = ("the 2:4 weights and bias of a SparseLinear are not trainable (they are packed "
                  "for the kernel); gradients flow to the input only. Fine-tune the dense model "
                  "and sparsify it again")


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a layer's weight dtype name ('f32', 'bf16', 'f16')."""
    return _TORCH_DTYPE[name]


def activation_name(layer) -> Optional[str]:
    """The activation as SparseLinear takes it: None, 'relu', 'silu', 'gelu', 'gelu_tanh',
    'tanh', 'sigmoid'."""
    name = layer.activation
    return None if name == "none" else "gelu" if name == "gelu_erf" else name


def _as_numpy(t: torch.Tensor):
    """A C-contiguous numpy array of a CPU tensor's bytes (bf16 as int16 raw bits)."""
    t = t.detach().contiguous()
    return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()


def layer_state(layer) -> dict:
    """Copies of what rebuilds ``layer``: values, meta and bias as torch tensors, and its shape."""
    values = torch.from_numpy(layer.weight_values())
    if layer.weight_dtype == "bf16":
        values = values.view(torch.bfloat16)
    bias = layer.bias()
    return {"weight_values": values, "weight_meta": torch.from_numpy(layer.weight_meta()),
            "bias": None if bias is None else torch.from_numpy(bias),
            "in_features": int(layer.in_features), "out_features": int(layer.out_features),
            "pattern": layer.pattern, "activation": layer.activation, "threads": layer.threads}


def check_weights(values, meta, bias, in_features: int, out_features: int, pattern: str,
                  names=("weight_values", "weight_meta", "bias")) -> None:
    """Raises InvalidArgument naming the argument (or state_dict key) whose dtype or shape does
    not fit an (out_features, in_features) layer in ``pattern``."""
    n, m = (int(part) for part in _C.nm_pattern(pattern).split(":"))
    slots = -(-in_features // m) * n
    bits = 2 if m <= 4 else 4 if m <= 16 else 8
    meta_bytes = -(-(out_features * slots * bits) // 8)
    for name, tensor in zip(names, (values, meta, bias)):
        if tensor is not None and not isinstance(tensor, torch.Tensor):
            raise InvalidArgument(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
        if tensor is not None and tensor.device.type != "cpu":
            raise NotSupported(f"{name} is on {tensor.device}; sparseflow's 2:4 kernels run on "
                               "the CPU")
    if values.dtype not in WEIGHT_DTYPES:
        raise NotSupported(f"{names[0]} is {values.dtype}; the 2:4 kernels take float32, "
                           "bfloat16 or float16 weights")
    if tuple(values.shape) != (out_features, slots):
        raise InvalidArgument(f"{names[0]} has shape {tuple(values.shape)}; a {pattern} layer of "
                              f"{out_features} x {in_features} stores ({out_features}, {slots})")
    if meta.dtype != torch.uint8 or tuple(meta.shape) != (meta_bytes,):
        raise InvalidArgument(f"{names[1]} is {meta.dtype} of shape {tuple(meta.shape)}; a "
                              f"{pattern} layer of {out_features} x {in_features} stores "
                              f"torch.uint8 of shape ({meta_bytes},)")
    if bias is not None and (not bias.is_floating_point() or tuple(bias.shape) != (out_features,)):
        raise InvalidArgument(f"{names[2]} is {bias.dtype} of shape {tuple(bias.shape)}; the "
                              f"layer adds {out_features} float values")


def layer_from_state(values, meta, bias, in_features: int, pattern: str, activation: str,
                     threads: int = 0):
    """A packed layer (sparseflow's own copy) from tensors; checks their shapes and the meta
    (InvalidArgument, InvalidFormat) and the dtype (NotSupported)."""
    out_features = int(values.shape[0]) if values.dim() >= 1 else 0
    check_weights(values, meta, bias, in_features, out_features, pattern)
    dtype = _SF_DTYPE[values.dtype]
    weights = _C._from_arrays([out_features, in_features], pattern,
                              [(None, None, None), (None, None, _as_numpy(meta))],
                              _as_numpy(values).reshape(-1), dtype)
    bias_array = None if bias is None else _as_numpy(bias.to(torch.float32))
    return _C._NMLayer(weights, bias_array, activation or "none", threads)


def _cached_layer(values, meta, bias, in_features: int, pattern: str, activation: str):
    """The packed layer for these tensors: the one kept on ``values`` when it still matches them
    exactly (same shape, dtype and bits), else a new one (then kept there)."""
    layer = getattr(values, _CACHE_ATTRIBUTE, None)
    if (layer is not None and layer.in_features == in_features and layer.pattern == pattern
            and layer.activation == _C.parse_epilogue(activation or "none")
            and values.dtype in _SF_DTYPE and layer.weight_dtype == _SF_DTYPE[values.dtype]
            and values.dim() == 2 and values.shape[0] == layer.out_features
            and meta.dtype == torch.uint8
            and (bias is None or bias.dtype.is_floating_point)
            and layer.same_state(_as_numpy(values), _as_numpy(meta),
                                 None if bias is None else _as_numpy(bias.to(torch.float32)))):
        return layer
    layer = layer_from_state(values, meta, bias, in_features, pattern, activation)
    remember_layer(values, layer)
    return layer


def remember_layer(values: torch.Tensor, layer) -> None:
    """Keeps ``layer`` on ``values`` for the next call (checked against its bits before use)."""
    setattr(values, _CACHE_ATTRIBUTE, layer)


def check_input(x, in_features: int, out_features: int, weight_dtype: torch.dtype,
                rows_only: bool = False) -> None:
    """Raises InvalidArgument or NotSupported for an input forward cannot take."""
    what = f"SparseLinear({in_features} -> {out_features})"
    if not isinstance(x, torch.Tensor):
        if type(x).__module__.startswith("torch.fx"):
            raise NotSupported(f"torch.fx cannot trace into {what}: make it a leaf module "
                               "(Tracer.is_leaf_module), or use torch.jit.trace, which records "
                               "torch.ops.sparseflow.nm_linear")
        raise InvalidArgument(f"{what} takes a torch.Tensor, got {type(x).__name__}")
    if x.device.type != "cpu":
        raise NotSupported(f"{what} runs on the CPU (sparseflow's 2:4 kernels); the input is on "
                           f"{x.device}")
    if x.dim() == 0 or x.shape[-1] != in_features or (rows_only and x.dim() != 2):
        got = "a scalar" if x.dim() == 0 else f"shape {tuple(x.shape)}"
        lead = "batch" if rows_only else "..."
        raise InvalidArgument(f"{what} takes ({lead}, {in_features}) inputs, got {got}")
    if x.dtype != torch.float32 and x.dtype != weight_dtype:
        raise InvalidArgument(f"{what} with {weight_dtype} weights takes float32 or "
                              f"{weight_dtype} inputs, got {x.dtype}")


def _run(layer, rows: torch.Tensor, pre_activation: bool) -> torch.Tensor:
    """The kernel on a (batch, in_features) tensor; a new (batch, out_features) tensor that the
    kernel writes completely (never uninitialised)."""
    rows = rows.detach().contiguous()
    y = torch.empty(rows.shape[0], layer.out_features, dtype=rows.dtype)
    if rows.shape[0] > 0 and layer.out_features > 0:
        if rows.dtype == torch.bfloat16:
            layer.forward_into(rows.view(torch.int16).numpy(), y.view(torch.int16).numpy(),
                               "bf16", pre_activation)
        else:
            layer.forward_into(rows.numpy(), y.numpy(), _SF_DTYPE[rows.dtype], pre_activation)
    return y


class _PreActivation(torch.autograd.Function):
    """z = x · Wᵀ + b with dX = dZ · W through sparseflow's CSR SpMM (the weights get none)."""

    @staticmethod
    def forward(ctx, rows, layer):
        ctx.layer = layer
        ctx.input_dtype = rows.dtype
        return _run(layer, rows, pre_activation=True)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        dz = grad.detach().to(torch.float32).contiguous()
        dx = torch.from_numpy(ctx.layer.backward_input(dz.numpy()))
        return dx.to(ctx.input_dtype), None


_ACTIVATIONS = {
    "none": lambda z: z,
    "relu": torch.relu,
    "silu": torch.nn.functional.silu,
    "gelu_erf": torch.nn.functional.gelu,
    "gelu_tanh": lambda z: torch.nn.functional.gelu(z, approximate="tanh"),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
}


def apply_layer(layer, x: torch.Tensor) -> torch.Tensor:
    """activation(x · Wᵀ + b) for x of shape (..., in_features), checked by the caller. With
    autograd on and x requiring grad: the pre-activation through _PreActivation, then torch's
    activation (so its derivative is torch's); otherwise the fused kernel."""
    lead = x.shape[:-1]
    rows = x.reshape(-1, layer.in_features)
    if torch.is_grad_enabled() and x.requires_grad:
        z = _PreActivation.apply(rows, layer)
        if layer.activation == "none":
            y = z
        elif z.dtype == torch.float16:  # torch's CPU activations have no float16 kernels
            y = _ACTIVATIONS[layer.activation](z.float()).to(torch.float16)
        else:
            y = _ACTIVATIONS[layer.activation](z)
    else:
        y = _run(layer, rows, pre_activation=False)
    return y.reshape(*lead, layer.out_features)


def _nm_linear_cpu(x, weight_values, weight_meta, bias, in_features, pattern, activation):
    layer = _cached_layer(weight_values, weight_meta, bias, in_features, pattern, activation)
    check_input(x, in_features, layer.out_features, weight_values.dtype, rows_only=True)
    return _run(layer, x, pre_activation=False)


def _nm_linear_autograd(x, weight_values, weight_meta, bias, in_features, pattern, activation):
    if torch.is_grad_enabled() and (weight_values.requires_grad or weight_meta.requires_grad or (
            bias is not None and bias.requires_grad)):
        raise NotSupported(_NOT_TRAINABLE)
    layer = _cached_layer(weight_values, weight_meta, bias, in_features, pattern, activation)
    check_input(x, in_features, layer.out_features, weight_values.dtype, rows_only=True)
    return apply_layer(layer, x)


_LIBRARY.impl("nm_linear", _nm_linear_cpu, "CPU")
_LIBRARY.impl("nm_linear", _nm_linear_autograd, "Autograd")


def _dtype_text(dtype: torch.dtype) -> str:
    """The dtype as torch prints it (TorchScript formats a dtype as its number)."""
    names = {torch.float32: "torch.float32", torch.float64: "torch.float64",
             torch.float16: "torch.float16", torch.bfloat16: "torch.bfloat16",
             torch.int64: "torch.int64", torch.int32: "torch.int32"}
    for known, name in names.items():
        if dtype == known:
            return name
    return "dtype number {}".format(dtype)


def nm_linear(x: torch.Tensor, weight_values: torch.Tensor, weight_meta: torch.Tensor,
              bias: Optional[torch.Tensor], in_features: int, out_features: int, pattern: str,
              activation: str) -> torch.Tensor:
    """SparseLinear's forward as TorchScript compiles it: the checks (so that their messages
    survive the TorchScript interpreter, which drops those of Python operators), then the
    operator on the rows of x."""
    if x.device.type != "cpu":
        raise NotImplementedError(
            "SparseLinear({} -> {}) runs on the CPU (sparseflow's 2:4 kernels); the input is on "
            "{}".format(in_features, out_features, x.device))
    if x.dim() == 0 or x.size(-1) != in_features:
        raise ValueError("SparseLinear({} -> {}) takes (..., {}) inputs, got shape {}".format(
            in_features, out_features, in_features, x.shape))
    if x.dtype != torch.float32 and x.dtype != weight_values.dtype:
        raise ValueError("SparseLinear({} -> {}) with {} weights takes float32 or {} inputs, got "
                         "{}".format(in_features, out_features, _dtype_text(weight_values.dtype),
                                     _dtype_text(weight_values.dtype), _dtype_text(x.dtype)))
    if weight_values.dtype != torch.float32 and weight_values.dtype != torch.bfloat16 and (
            weight_values.dtype != torch.float16):
        raise NotImplementedError("the 2:4 kernels take float32, bfloat16 or float16 weights, "
                                  "not {}".format(_dtype_text(weight_values.dtype)))
    trainable = weight_values.requires_grad or (bias is not None and bias.requires_grad)
    if torch.is_grad_enabled() and trainable:  # the text of _NOT_TRAINABLE (TorchScript)
        raise NotImplementedError(
            "the 2:4 weights and bias of a SparseLinear are not trainable (they are packed for "
            "the kernel); gradients flow to the input only. Fine-tune the dense model and "
            "sparsify it again")
    shape = list(x.shape[:-1]) + [out_features]
    y = torch.ops.sparseflow.nm_linear(x.reshape(-1, in_features), weight_values, weight_meta,
                                       bias, in_features, pattern, activation)
    return y.reshape(shape)


_SCRIPTED: list = []


def scripted_nm_linear():
    """nm_linear compiled by TorchScript (once), for calls made while tracing."""
    if not _SCRIPTED:
        _SCRIPTED.append(torch.jit.script(nm_linear))
    return _SCRIPTED[0]


__all__ = ["apply_layer", "check_input", "layer_from_state", "layer_state", "nm_linear"]
