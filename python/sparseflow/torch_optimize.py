"""optimize(model, example_inputs): a whole torch model through sparseflow's graph executor.

The model is captured with make_fx on the example inputs (torch_capture.py: every aten operation
with concrete shapes, so Hugging Face models and Python control flow need no special tracing),
written out as sparseflow's graph IR (docs/graph.md) with its weights, propagated and compacted (rows, columns and neurons proven zero or dead removed),
then specialized: every linear layer (with the bias and activation after it) becomes one
sparseflow kernel whose weight format (dense, csr, 2:4 where exact) is chosen by measurement.
The result is an ``nn.Module`` taking the same arguments; the weights are a snapshot (copied when
optimize runs: later in-place changes to the torch model do not reach it).
"""

from __future__ import annotations

import collections
import math
import statistics
import time
from dataclasses import dataclass, field

import torch
from torch import nn

from ._ext import _C
from .errors import InvalidArgument
from .model_inputs import executor_input
from .torch_capture import capture, flatten_inputs, rebuild_output

@dataclass
class OptimizeStep:
    """One step of the optimized model: a kernel (linear layer with what is fused) or an operator
    on dense values."""

    what: str
    weight: str
    format: str
    provider: str
    density: float
    candidate_ms: dict
    why: str


@dataclass
class OptimizeReport:
    """What optimize did: compaction, the steps and formats, and the measured effect."""

    steps: list
    removed: list  # per weight dimension: {"param", "dim", "extent", "removed"}
    param_elements_before: int
    param_elements_after: int
    torch_ms: float  # median per call of the torch model on the example inputs
    optimized_ms: float  # the same for the optimized module
    max_relative_error: float  # of the outputs on the example inputs, against the torch model
    graph_text: str = field(repr=False, default="")

    @property
    def speedup(self) -> float:
        return self.torch_ms / self.optimized_ms if self.optimized_ms > 0 else math.inf

    @property
    def format_summary(self) -> str:
        """How many weights run in each format, most first: ``"34 dense, 3 2:4"``."""
        counts = collections.Counter(s.format for s in self.steps if s.weight)
        return ", ".join(f"{n} {f}" for f, n in counts.most_common())

    def __str__(self) -> str:
        lines = [
            f"sparseflow.optimize: torch {self.torch_ms:.3f} ms -> {self.optimized_ms:.3f} ms per "
            f"call ({self.speedup:.2f}x), max relative error {self.max_relative_error:.2e}",
            f"weights: {self.param_elements_before} -> {self.param_elements_after} elements"
            + (f" ({len(self.removed)} dimensions compacted)" if self.removed else ""),
        ]
        for r in self.removed:
            lines.append(f"  {r['param']} dim {r['dim']}: {r['extent']} -> "
                         f"{r['extent'] - r['removed']}")
        width = max([len(s.what) for s in self.steps] + [4])
        lines.append(f"{'step':<{width}}  {'weight':<24} {'format':<7} {'provider':<13} "
                     f"{'density':>7}  choice")
        for s in self.steps:
            if s.weight:
                lines.append(f"{s.what:<{width}}  {s.weight:<24} {s.format:<7} {s.provider:<13} "
                             f"{s.density:>7.3f}  {s.why}")
            else:
                lines.append(f"{s.what:<{width}}  (dense values)")
        return "\n".join(lines)


class OptimizedModule(nn.Module):
    """The optimized model: called with the same arguments as the example inputs (positional and
    keyword, tensors of the same shapes), it returns the same structure (a tensor, a tuple, a
    Hugging Face ModelOutput...)."""

    def __init__(self, model, executor, captured):
        super().__init__()
        self._model = model  # keeps the weights alive
        self._executor = executor
        self._captured = captured

    def forward(self, *args, **kwargs):
        flat = flatten_inputs(self._captured.out_spec, args, kwargs)
        arrays = {}
        for name, t in zip(self._captured.inputs, flat):
            value = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t
            arrays[name] = executor_input(name, value)
        outs = [torch.from_numpy(a) for a in self._executor.run(arrays)]
        return rebuild_output(self._captured.out_spec, outs)

    def describe(self) -> str:
        return self._executor.describe()


def _median_ms(fn, runs: int) -> float:
    fn()
    samples = []
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _flat_outputs(out):
    if hasattr(out, "to_tuple") and hasattr(out, "keys"):
        return [out[k] for k in out.keys()]
    return torch.utils._pytree.tree_flatten(out)[0]


def optimize(model: nn.Module, example_inputs, *, compact: bool = True, measure: bool = True,
             formats: dict | None = None, reps: int = 5, timing_runs: int = 5):
    """Captures ``model`` on ``example_inputs`` (a tensor, a tuple of positional arguments, or a
    dict of keyword arguments: ``tokenizer(...)``'s output for a Hugging Face model), compacts and
    specializes it, and returns ``(optimized_module, report)``. ``formats`` pins weights' formats
    by parameter name ("fc1.weight": "csr"); ``measure=False`` chooses by rule (csr below 25%
    density, else 2:4 when exact, else dense). The optimized module is specialized to the
    example's shapes. Raises NotSupported naming the first operation the graph IR does not have
    (docs/graph.md lists them). The model must run in float32 on the CPU."""
    if not isinstance(model, nn.Module):
        raise InvalidArgument(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if isinstance(example_inputs, dict) or hasattr(example_inputs, "keys"):
        args, kwargs = (), dict(example_inputs)
    else:
        args, kwargs = _as_tuple(example_inputs), {}
    modes = [(m, m.training) for m in model.modules()]  # restored one by one afterwards
    model.eval()
    try:
        captured = capture(model, args, kwargs)
        graph_model = _C._GraphModel(captured.text, captured.params)
        removed, before, after = [], 0, 0
        if compact:
            graph_model, compaction = graph_model.compact()
            removed = compaction["removed"]
            before = compaction["param_elements_before"]
            after = compaction["param_elements_after"]
        executor = _C._Executor(graph_model, measure, reps, dict(formats or {}))
        optimized = OptimizedModule(graph_model, executor, captured)
        with torch.no_grad():
            expect = _flat_outputs(model(*args, **kwargs))
            got = _flat_outputs(optimized(*args, **kwargs))
            worst = 0.0
            for e, g in zip(expect, got):
                scale = e.abs().clamp_min(1.0)
                worst = max(worst, float(((g - e).abs() / scale).max()) if e.numel() else 0.0)
            torch_ms = _median_ms(lambda: model(*args, **kwargs), timing_runs)
        optimized_ms = _median_ms(lambda: optimized(*args, **kwargs), timing_runs)
        steps = [OptimizeStep(s["what"], s["weight"], s["format"], s["provider"], s["density"],
                              s["candidate_ms"], s["why"]) for s in executor.steps()]
        report = OptimizeReport(steps, removed, before, after, torch_ms, optimized_ms, worst,
                                graph_model.text())
        return optimized, report
    finally:
        for m, training in modes:
            m.training = training
