"""sparsify(model): replaces the chosen nn.Linear layers by SparseLinear and reports every one.

Nothing is replaced silently: the report lists each nn.Linear, replaced or skipped with the reason.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import torch

from ._ext import _C
from .layer_reports import LayerList
from .nm import SparsifyDiff
from .torch_layers import SparseLinear
from .torch_ops import WEIGHT_DTYPES

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


class SparsifyReport(LayerList):
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
    if linear.weight.dtype not in WEIGHT_DTYPES:
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


__all__ = ["LayerReport", "SparsifyReport", "sparsify"]
