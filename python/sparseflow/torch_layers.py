"""PyTorch: SparseLinear (an nn.Module running sparseflow's 2:4 kernel) and sparsify(model).

Inference only: SparseLinear's forward computes no gradient, and its weights live in C++ (packed
once), not in parameters or the state_dict. Nothing is replaced silently: sparsify reports every
nn.Linear it saw, replaced or skipped with the reason.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import torch

from ._ext import _C
from .errors import InvalidArgument, NotSupported
from .nm import SparsifyDiff, sparsify as _sparsify_tensor
from .tensors import Tensor, from_torch, to_torch

_ACTIVATIONS = ("relu", "silu", "gelu", "gelu_erf", "gelu_tanh")
_WEIGHT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
_SF_TO_TORCH = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def _epilogue(has_bias: bool, activation: str | None) -> str:
    if activation is not None and activation not in _ACTIVATIONS:
        raise InvalidArgument(
            f"unknown activation '{activation}'; expected None or one of {', '.join(_ACTIVATIONS)}")
    parts = (["bias"] if has_bias else []) + ([activation] if activation else [])
    return "+".join(parts) if parts else "none"


class SparseLinear(torch.nn.Module):
    """y = activation(x · Wᵀ + b) with W in the 2:4 format, on sparseflow's CPU kernel.

    Build it with ``SparseLinear.from_dense(linear)``. forward takes any leading batch
    dimensions (``(..., in_features)``), float32 inputs, or inputs of the weights' dtype
    (bfloat16/float16), on the CPU; the output has the input's dtype (accumulation is float32).
    """

    def __init__(self, weight: Tensor, bias: torch.Tensor | None = None,
                 activation: str | None = None, threads: int = 0):
        super().__init__()
        if not isinstance(weight, Tensor):
            raise InvalidArgument("SparseLinear takes the weights as an sf.Tensor in the 2:4 "
                                  "format; use SparseLinear.from_dense(linear) for a dense layer")
        bias_f32 = None
        if bias is not None:
            bias_f32 = bias.detach().to(device="cpu", dtype=torch.float32).contiguous()
        self._layer = _C._NMLinear(weight, None if bias_f32 is None else bias_f32.numpy(),
                                   _epilogue(bias is not None, activation), threads)
        self.weight_nm = weight
        self.bias = bias_f32  # a plain attribute: the C++ layer holds its own copy
        self.activation = activation
        self.pattern = _C.nm_pattern_of(weight)
        self.in_features = int(self._layer.in_features)
        self.out_features = int(self._layer.out_features)
        self.weight_dtype = _SF_TO_TORCH[self._layer.weight_dtype]

    @classmethod
    def from_dense(cls, linear: torch.nn.Linear, pattern: str = "2:4",
                   activation: str | None = None, return_diff: bool = False, threads: int = 0):
        """Prunes ``linear``'s weight to ``pattern`` by magnitude (n largest |w| of every m
        along in_features) and builds the layer; with ``return_diff=True`` returns
        ``(layer, diff)``, diff a SparsifyDiff (max_error, mean_error, relative_error,
        kept_magnitude, kept, total). ``activation``: None, "relu", "silu", "gelu" (erf) or
        "gelu_tanh", fused after the bias. The dense layer is not changed."""
        if not isinstance(linear, torch.nn.Linear):
            raise InvalidArgument(f"expected a torch.nn.Linear, got {type(linear).__name__}")
        weight = linear.weight
        if weight.device.type != "cpu":
            raise NotSupported(f"sparseflow's 2:4 kernels run on the CPU; the weight is on "
                               f"{weight.device} (move the layer with .cpu())")
        if weight.dtype not in _WEIGHT_DTYPES:
            raise NotSupported(f"the 2:4 kernels take float32, bfloat16 or float16 weights, not "
                               f"{weight.dtype}")
        compressed, diff = _sparsify_tensor(from_torch(weight), pattern)
        layer = cls(compressed, linear.bias, activation=activation, threads=threads)
        return (layer, diff) if return_diff else layer

    @property
    def weight_bytes(self) -> int:
        """Bytes of packed weights (values + metadata) one forward streams."""
        return int(self._layer.weight_bytes)

    def dense_weight(self) -> torch.Tensor:
        """The pruned weight as a dense (out_features, in_features) torch tensor (a copy)."""
        return to_torch(_C.nm_decompress(self.weight_nm))

    def describe(self, batch: int = 1) -> str:
        """The SIMD target and tile plan forward uses for this batch size."""
        return self._layer.describe(batch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise InvalidArgument(f"SparseLinear takes a torch.Tensor, got {type(x).__name__}")
        if x.device.type != "cpu":
            raise NotSupported(f"SparseLinear runs on the CPU (sparseflow's 2:4 kernels); the "
                               f"input is on {x.device}")
        if x.dim() == 0 or x.shape[-1] != self.in_features:
            got = "a scalar" if x.dim() == 0 else f"shape {tuple(x.shape)}"
            raise InvalidArgument(f"SparseLinear({self.in_features} -> {self.out_features}) "
                                  f"takes (..., {self.in_features}) inputs, got {got}")
        if x.dtype != torch.float32 and x.dtype != self.weight_dtype:
            raise InvalidArgument(f"SparseLinear with {self.weight_dtype} weights takes float32 "
                                  f"or {self.weight_dtype} inputs, got {x.dtype}")
        lead = x.shape[:-1]
        rows = x.detach().reshape(-1, self.in_features).contiguous()
        y = torch.empty(rows.shape[0], self.out_features, dtype=x.dtype)
        if rows.shape[0] > 0:
            if x.dtype == torch.bfloat16:
                self._layer.forward_into(rows.view(torch.int16).numpy(),
                                         y.view(torch.int16).numpy(), "bf16")
            else:
                dtype = "f32" if x.dtype == torch.float32 else "f16"
                self._layer.forward_into(rows.numpy(), y.numpy(), dtype)
        return y.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, pattern={self.pattern}, "
                f"activation={self.activation}, weight_dtype={self.weight_dtype}")


@dataclass
class LayerReport:
    """One nn.Linear that sparsify saw: replaced, or skipped with the reason."""

    name: str
    shape: tuple  # (out_features, in_features)
    replaced: bool
    reason: str  # why it was skipped; "" when replaced
    bytes_before: int
    bytes_after: int
    diff: SparsifyDiff | None = None

    @property
    def max_error(self):
        return self.diff.max_error if self.diff else None

    @property
    def mean_error(self):
        return self.diff.mean_error if self.diff else None

    @property
    def relative_error(self):
        return self.diff.relative_error if self.diff else None

    @property
    def kept_magnitude(self):
        return self.diff.kept_magnitude if self.diff else None


class SparsifyReport:
    """Every nn.Linear sparsify saw, in module order: ``report.replaced``, ``report.skipped``,
    ``report["layer.name"]``, totals of bytes, and a table as ``str(report)``."""

    def __init__(self, pattern: str, layers: list[LayerReport]):
        self.pattern = pattern
        self.layers = layers

    @property
    def replaced(self) -> list[LayerReport]:
        return [layer for layer in self.layers if layer.replaced]

    @property
    def skipped(self) -> list[LayerReport]:
        return [layer for layer in self.layers if not layer.replaced]

    @property
    def bytes_before(self) -> int:
        return sum(layer.bytes_before for layer in self.layers)

    @property
    def bytes_after(self) -> int:
        return sum(layer.bytes_after for layer in self.layers)

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __getitem__(self, key):
        if isinstance(key, str):
            for layer in self.layers:
                if layer.name == key:
                    return layer
            raise KeyError(key)
        return self.layers[key]

    def __str__(self) -> str:
        lines = [f"sparsify {self.pattern}: {len(self.replaced)} of {len(self.layers)} Linear "
                 f"layers replaced, {self.bytes_before} -> {self.bytes_after} bytes"]
        for layer in self.layers:
            shape = f"{layer.shape[0]}x{layer.shape[1]}"
            if layer.replaced:
                d = layer.diff
                lines.append(f"  {layer.name}: {shape} replaced, {layer.bytes_before} -> "
                             f"{layer.bytes_after} bytes, max error {d.max_error:.4g}, relative "
                             f"error {d.relative_error:.4g}, kept magnitude {d.kept_magnitude:.2%}")
            else:
                lines.append(f"  {layer.name}: {shape} skipped: {layer.reason}")
        return "\n".join(lines)

    __repr__ = __str__


def _weight_bytes(linear: torch.nn.Linear) -> int:
    total = linear.weight.numel() * linear.weight.element_size()
    if linear.bias is not None:
        total += linear.bias.numel() * linear.bias.element_size()
    return total


def _skip_reason(name, linear, include, exclude, group, in_attention, is_root):
    matched = [p for p in include if fnmatch.fnmatchcase(name, p)]
    if not matched:
        return f"not matched by include {include}"
    for pattern in exclude:
        if fnmatch.fnmatchcase(name, pattern):
            return f"excluded by '{pattern}'"
    if is_root:
        return "the model itself is this Linear; use SparseLinear.from_dense(model)"
    if in_attention:
        return "inside nn.MultiheadAttention, which reads the weight directly"
    if type(linear) is not torch.nn.Linear:
        return f"{type(linear).__name__} is a subclass of nn.Linear whose forward may differ"
    if linear.weight.device.type != "cpu":
        return f"on {linear.weight.device}; the 2:4 kernels run on the CPU"
    if linear.weight.dtype not in _WEIGHT_DTYPES:
        return f"{linear.weight.dtype} weights; the 2:4 kernels take float32, bfloat16, float16"
    if linear.in_features % group != 0:
        return f"in_features {linear.in_features} is not a multiple of {group}"
    return ""


def sparsify(model: torch.nn.Module, pattern: str = "2:4", include=None, exclude=None,
             threads: int = 0) -> SparsifyReport:
    """Replaces the chosen nn.Linear layers of ``model`` (in place) by SparseLinear layers
    pruned to ``pattern``, and reports every Linear layer it saw.

    ``include``/``exclude``: fnmatch patterns (a string or a list) on qualified module names
    such as ``"encoder.0.fc1"``; default include all. A layer is replaced when some include
    pattern matches it and no exclude pattern does; every other Linear is listed as skipped with
    the reason (not matched, excluded, in_features not a multiple of the group size, a dtype or
    device the kernels do not take, part of nn.MultiheadAttention, a subclass of Linear).
    """
    pattern = _C.nm_pattern(pattern)
    group = int(pattern.split(":")[1])
    include = [include] if isinstance(include, str) else list(include or ["*"])
    exclude = [exclude] if isinstance(exclude, str) else list(exclude or [])
    in_attention = set()
    for module in model.modules():
        if isinstance(module, torch.nn.MultiheadAttention):
            in_attention.update(id(m) for m in module.modules())
    layers, replacements = [], {}
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear):
            continue
        shape = (module.out_features, module.in_features)
        before = _weight_bytes(module)
        reason = _skip_reason(name, module, include, exclude, group, id(module) in in_attention,
                              module is model)
        if reason:
            layers.append(LayerReport(name, shape, False, reason, before, before))
            continue
        sparse, diff = SparseLinear.from_dense(module, pattern, return_diff=True, threads=threads)
        after = sparse.weight_bytes + (4 * module.out_features if module.bias is not None else 0)
        layers.append(LayerReport(name, shape, True, "", before, after, diff))
        replacements[id(module)] = sparse
    for parent in list(model.modules()):  # every reference, so shared layers are swapped too
        for child_name, child in list(parent._modules.items()):
            if child is not None and id(child) in replacements:
                setattr(parent, child_name, replacements[id(child)])
    return SparsifyReport(pattern, layers)


__all__ = ["LayerReport", "SparseLinear", "SparsifyReport", "sparsify"]
