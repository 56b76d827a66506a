"""sparsify(model): replaces the chosen nn.Linear layers by SparseLinear (pruned to n:m) or, with
pattern="auto", by the fastest exact layer measured (dense, 2:4 where the weight is already 2:4,
FormatLinear in the format and schedule the autoconfigurator chooses), and reports every one.

Nothing is replaced silently: the report lists each nn.Linear, replaced or skipped with the reason
(and under "auto" the candidates' measured times).
"""

from __future__ import annotations

import fnmatch
import statistics
import time
from dataclasses import dataclass, field

import torch

from ._ext import _C
from .errors import InvalidArgument
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
    format: str = ""  # what the layer runs as: "2:4", "csr", "bsr:4x4", "dense"
    times_ms: dict = field(default_factory=dict)  # pattern="auto": each candidate's median time
    schedule: str = ""  # the FormatLinear's schedule when it is the choice ("" the default)
    tuning: dict | None = None  # pattern="auto" without formats: sf.tune's decision for the layer

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
            times = ", ".join(f"{k} {v:.3g} ms" for k, v in layer.times_ms.items())
            if layer.times_ms:
                verdict = (f"-> {layer.format}" if layer.replaced else
                           f"kept dense ({layer.reason})")
                tuned = ""
                if layer.tuning:
                    t = layer.tuning
                    tuned = (f"; the sparse candidate tuned over {t['space']} configurations "
                             f"({t['measured']} timed"
                             f"{', from the database' if t['from_database'] else ''})")
                schedule = f" ({layer.schedule})" if layer.replaced and layer.schedule else ""
                lines.append(f"  {layer.name}: {shape} {verdict}{schedule}, "
                             f"{layer.bytes_before} -> {layer.bytes_after} bytes; measured "
                             f"{times}{tuned}")
            elif layer.replaced:
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
             threads: int = 0, *, batch: int = 32, formats=None, reps: int = 5,
             prune: bool = False, budget: int = 4, database=None) -> SparsifyReport:
    """Replaces the chosen nn.Linear layers of ``model`` (in place) by SparseLinear layers
    pruned to ``pattern``, and reports every Linear layer it saw.

    ``pattern="auto"`` prunes nothing: per layer it times, on random float32 inputs of ``batch``
    rows as forward is called (medians over ``reps`` rounds that call every candidate once, in a
    rotating order, after a warm-up), the layer as it is
    (dense), 2:4 where the weight already is 2:4 (SparseLinear, no value changed) and an exact
    sparse FormatLinear (float32 weights), and keeps the fastest; ``report[name].times_ms`` holds
    every candidate's time, ``.format`` and ``.schedule`` the choice. The sparse candidate's
    format and schedule are the autoconfigurator's (``FormatLinear.tuned``: the cost model ranks
    formats and schedules, the default and at most ``budget`` of the best ranked are timed, the
    decision is recorded in the tuning ``database`` as in sf.tune; ``report[name].tuning`` is the
    decision); ``formats=("csr", "bsr:4x4")`` instead times FormatLinear in each format given.
    ``prune=True`` lets it prune to 2:4 by magnitude where that is fastest (the report's diff then
    says what pruning changed; it is None where nothing was pruned, as for a weight already 2:4).

    ``include``/``exclude``: fnmatch patterns (a string or a list) on qualified module names
    such as ``"encoder.0.fc1"``; default include all. A layer is replaced when some include
    pattern matches it and no exclude pattern does; every other Linear is listed as skipped with
    the reason (not matched, excluded, in_features not a multiple of the group size, a dtype or
    device the kernels do not take, part of nn.MultiheadAttention, a subclass of Linear).
    """
    auto = pattern == "auto"
    pattern = "2:4" if auto else _C.nm_pattern(pattern)
    group = 1 if auto else int(pattern.split(":")[1])
    if auto and (int(batch) < 1 or int(reps) < 1 or int(budget) < 0):
        raise InvalidArgument(f"sparsify(pattern='auto') needs batch >= 1, reps >= 1 and "
                              f"budget >= 0, got batch={batch}, reps={reps}, budget={budget}")
    if formats is not None:
        formats = [formats] if isinstance(formats, str) else list(formats)
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
        if auto:
            report, sparse = _fastest_exact(name, module, before, int(batch), formats, int(reps),
                                            threads, prune, (int(budget), database))
            layers.append(report)
            if sparse is not None:
                replacements[id(module)] = sparse
            continue
        sparse, diff = SparseLinear.from_dense(module, pattern, return_diff=True, threads=threads)
        after = sparse.weight_bytes + (4 * module.out_features if module.bias is not None else 0)
        layers.append(LayerReport(name, shape, True, "", before, after, diff, pattern))
        replacements[id(module)] = sparse
    for parent in list(model.modules()):  # every reference, so shared layers are swapped too
        for child_name, child in list(parent._modules.items()):
            if child is not None and id(child) in replacements:
                setattr(parent, child_name, replacements[id(child)])
    return SparsifyReport("auto" if auto else pattern, layers)


def _interleaved_medians(layers: dict, x, reps: int) -> dict:
    """Each layer's median time (ms) over `reps` rounds that call every layer once, in a rotating
    order, after a warm-up round: a machine's slow spell (or torch's own thread pool warming up)
    falls on every candidate alike instead of on whichever was timed then."""
    names = list(layers)
    samples = {name: [] for name in names}
    with torch.no_grad():
        for name in names:
            layers[name](x)  # warm-up: kernels compiled, caches filled
        for r in range(reps):
            for k in range(len(names)):
                name = names[(r + k) % len(names)]
                start = time.perf_counter()
                layers[name](x)
                samples[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(samples[name]) for name in names}


def _fastest_exact(name, linear, before, batch, formats, reps, threads, prune, tuning):
    """(report, replacement or None): the fastest of the layer as it is, 2:4 where exact (or
    allowed to prune) and FormatLinear (in each of `formats`, or as tuned when `formats` is None;
    `tuning` = (budget, database)), timed on the same random input."""
    from .torch_format_linear import FormatLinear

    shape = (linear.out_features, linear.in_features)
    bias_bytes = 4 * linear.out_features if linear.bias is not None else 0
    x = torch.randn(batch, linear.in_features, dtype=linear.weight.dtype)
    candidates = {"dense": (linear, before)}
    diff = None
    if linear.in_features % 4 == 0:
        two_four, diff = SparseLinear.from_dense(linear, "2:4", return_diff=True, threads=threads)
        if diff.max_error == 0 or prune:  # already 2:4 (nothing pruned), or pruning allowed
            candidates["2:4"] = (two_four, two_four.weight_bytes + bias_bytes)
    decision = None
    if linear.weight.dtype == torch.float32:
        if formats is None:
            budget, database = tuning
            layer, decision = FormatLinear.tuned(linear, batch, budget=budget, database=database)
            candidates[layer.format] = (layer, layer.weight_bytes + bias_bytes)
        for fmt in formats or ():
            layer = FormatLinear.from_dense(linear, fmt)
            candidates[fmt] = (layer, layer.weight_bytes + bias_bytes)
    times = _interleaved_medians({key: layer for key, (layer, _) in candidates.items()}, x, reps)
    best = min(times, key=times.get)
    layer, after = candidates[best]
    if best == "dense":
        return LayerReport(name, shape, False, "dense is the fastest", before, before,
                           format="dense", times_ms=times, tuning=decision), None
    pruned = best == "2:4" and diff.max_error != 0  # an exact 2:4 weight lost nothing
    return LayerReport(name, shape, True, "", before, after, diff if pruned else None,
                       format=best, times_ms=times,
                       schedule=getattr(layer, "schedule", ""), tuning=decision), layer


__all__ = ["LayerReport", "SparsifyReport", "sparsify"]
