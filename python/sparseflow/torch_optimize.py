"""optimize(model, example_inputs): a whole torch model through sparseflow's graph executor.

The model is captured with torch.fx, written out as sparseflow's graph IR (docs/graph.md) with
its weights, propagated and compacted (rows, columns and neurons proven zero or dead removed),
then specialized: every linear layer (with the bias and activation after it) becomes one
sparseflow kernel whose weight format (dense, csr, 2:4 where exact) is chosen by measurement.
The result is an ``nn.Module`` taking the same arguments; the weights are a snapshot (copied when
optimize runs: later in-place changes to the torch model do not reach it).
"""

from __future__ import annotations

import math
import operator
import statistics
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._ext import _C
from .errors import InvalidArgument, NotSupported
from .tensors import from_numpy

_DTYPES = {torch.float32: "f32", torch.int64: "i64", torch.int32: "i32"}


def _type(meta) -> str:
    dtype = _DTYPES.get(meta.dtype)
    if dtype is None:
        raise NotSupported(f"values of dtype {meta.dtype} (the executor runs float32 models)")
    return f"{dtype}[{', '.join(str(int(d)) for d in meta.shape)}]"


def _quote(name: str) -> str:
    out = []
    for ch in name:
        if ch == '"' or ch == "\\" or not (32 <= ord(ch) < 127):
            out.append("".join(f"\\x{b:02x}" for b in ch.encode()))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Writer:
    """Turns an fx graph (with shapes from ShapeProp) into graph text and named weights."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self.modules = dict(gm.named_modules())
        self.lines: list[str] = []
        self.params: dict[str, object] = {}
        self.ids: dict[torch.fx.Node, int] = {}
        self.inputs: list[str] = []
        self.next = 0
        self.constants = 0

    # -- values ----------------------------------------------------------------------------
    def _emit(self, rhs: str) -> int:
        v = self.next
        self.next += 1
        self.lines.append(f"%{v} = {rhs}")
        return v

    def param(self, name: str, tensor: torch.Tensor) -> int:
        array = tensor.detach().cpu().to(torch.float32).numpy().copy()  # a snapshot
        self.params[name] = from_numpy(array)
        shape = ", ".join(str(d) for d in array.shape)
        return self._emit(f"param {_quote(name)} : f32[{shape}]")

    def constant(self, value: float) -> int:
        self.constants += 1
        return self.param(f"constant.{self.constants}", torch.tensor([float(value)]))

    def value(self, arg) -> int:
        if isinstance(arg, torch.fx.Node):
            if arg not in self.ids:
                raise NotSupported(f"{arg.name} is used before it is defined")
            return self.ids[arg]
        if isinstance(arg, (int, float)) and not isinstance(arg, bool):
            return self.constant(arg)
        raise NotSupported(f"operand {arg!r} (only tensors and numbers)")

    def op(self, name: str, operands, **attrs) -> int:
        parts = [f"%{v}" for v in operands]
        for key, val in attrs.items():
            if isinstance(val, (list, tuple)):
                parts.append(f"{key}=[{', '.join(str(int(x)) for x in val)}]")
            elif isinstance(val, float):
                parts.append(f"{key}={val!r}")  # repr keeps "." or "e": read back as a real
            else:
                parts.append(f"{key}={int(val)}")
        return self._emit(f"{name}({', '.join(parts)})")

    # -- nodes -----------------------------------------------------------------------------
    def shape(self, node) -> list[int]:
        meta = node.meta.get("tensor_meta")
        if meta is None:
            raise NotSupported(f"{node.name}: no shape (is it a tensor?)")
        return [int(d) for d in meta.shape]

    def rank(self, node) -> int:
        return len(self.shape(node))

    def add(self, node: torch.fx.Node):
        handler = {
            "placeholder": self._placeholder,
            "get_attr": self._get_attr,
            "call_module": self._call_module,
            "call_function": self._call_function,
            "call_method": self._call_method,
        }.get(node.op)
        if node.op == "output":
            return
        if handler is None:
            raise NotSupported(f"fx node kind {node.op}")
        self.ids[node] = handler(node)

    def _placeholder(self, node):
        self.inputs.append(node.target)
        return self._emit(f"input {_quote(node.target)} : {_type(node.meta['tensor_meta'])}")

    def _get_attr(self, node):
        obj = self.gm
        for part in node.target.split("."):
            obj = getattr(obj, part)
        if not isinstance(obj, torch.Tensor):
            raise NotSupported(f"{node.name}: attribute {node.target} is not a tensor")
        return self.param(node.target, obj)

    def _unary(self, node, kind, x):
        return self.op(kind, [self.value(x)])

    def _call_module(self, node):
        mod = self.modules[node.target]
        x = node.args[0]
        name = node.target
        if isinstance(mod, nn.Linear):
            ops = [self.value(x), self.param(f"{name}.weight", mod.weight)]
            if mod.bias is not None:
                ops.append(self.param(f"{name}.bias", mod.bias))
            return self.op("linear", ops)
        if isinstance(mod, (nn.Dropout, nn.Identity)):
            return self.value(x)
        if isinstance(mod, nn.ReLU):
            return self._unary(node, "relu", x)
        if isinstance(mod, nn.GELU):
            if getattr(mod, "approximate", "none") != "none":
                raise NotSupported(f"{name}: GELU(approximate={mod.approximate!r})")
            return self._unary(node, "gelu", x)
        if isinstance(mod, nn.SiLU):
            return self._unary(node, "silu", x)
        if isinstance(mod, nn.Tanh):
            return self._unary(node, "tanh", x)
        if isinstance(mod, nn.Softmax):
            return self.op("softmax", [self.value(x)], axis=mod.dim if mod.dim is not None else -1)
        if isinstance(mod, nn.LayerNorm):
            return self._layer_norm(node, x, mod.normalized_shape, mod.weight, mod.bias, mod.eps,
                                    name)
        if isinstance(mod, nn.Embedding):
            table = self.param(f"{name}.weight", mod.weight)
            return self.op("embedding", [table, self.value(x)])
        raise NotSupported(f"{node.name}: module {type(mod).__name__} ({name})")

    def _layer_norm(self, node, x, shape, weight, bias, eps, name):
        if len(tuple(shape)) != 1:
            raise NotSupported(f"{node.name}: layer norm over {len(tuple(shape))} dimensions")
        ops = [self.value(x)]
        if weight is not None and bias is not None:
            ops += [self.param(f"{name}.weight", weight), self.param(f"{name}.bias", bias)]
        elif weight is not None or bias is not None:
            raise NotSupported(f"{node.name}: layer norm with only one of weight and bias")
        return self.op("layer_norm", ops, axis=self.rank(node) - 1, eps=float(eps))

    def _binary(self, node, kind, a, b):
        return self.op(kind, [self.value(a), self.value(b)])

    def _call_function(self, node):
        f, args, kw = node.target, node.args, node.kwargs
        if f in (torch.relu, F.relu):
            return self._unary(node, "relu", args[0])
        if f is F.gelu:
            if kw.get("approximate", "none") != "none":
                raise NotSupported(f"{node.name}: gelu(approximate={kw['approximate']!r})")
            return self._unary(node, "gelu", args[0])
        if f is F.silu:
            return self._unary(node, "silu", args[0])
        if f in (torch.tanh, F.tanh):
            return self._unary(node, "tanh", args[0])
        if f in (F.softmax, torch.softmax):
            dim = kw.get("dim", args[1] if len(args) > 1 else None)
            if dim is None:
                raise NotSupported(f"{node.name}: softmax without dim")
            return self.op("softmax", [self.value(args[0])], axis=dim)
        if f is F.linear:
            w = args[1] if len(args) > 1 else kw["weight"]
            b = args[2] if len(args) > 2 else kw.get("bias")
            ops = [self.value(args[0]), self.value(w)] + ([self.value(b)] if b is not None else [])
            return self.op("linear", ops)
        if f is F.layer_norm:
            shape = args[1] if len(args) > 1 else kw["normalized_shape"]
            weight = args[2] if len(args) > 2 else kw.get("weight")
            bias = args[3] if len(args) > 3 else kw.get("bias")
            eps = args[4] if len(args) > 4 else kw.get("eps", 1e-5)
            if len(tuple(shape)) != 1:
                raise NotSupported(f"{node.name}: layer norm over several dimensions")
            ops = [self.value(args[0])]
            if weight is not None:
                ops += [self.value(weight), self.value(bias)]
            return self.op("layer_norm", ops, axis=self.rank(node) - 1, eps=float(eps))
        if f in (operator.add, torch.add):
            return self._binary(node, "add", args[0], args[1])
        if f in (operator.mul, torch.mul):
            return self._binary(node, "mul", args[0], args[1])
        if f in (operator.sub, torch.sub) and isinstance(args[1], (int, float)):
            return self.op("add", [self.value(args[0]), self.constant(-float(args[1]))])
        if f in (operator.truediv, torch.div) and isinstance(args[1], (int, float)):
            return self.op("mul", [self.value(args[0]), self.constant(1.0 / float(args[1]))])
        if f in (torch.minimum, torch.clamp_max):
            return self._binary(node, "minimum", args[0], args[1])
        if f in (torch.maximum, torch.clamp_min):
            return self._binary(node, "maximum", args[0], args[1])
        if f is torch.clamp:
            lo = args[1] if len(args) > 1 else kw.get("min")
            hi = args[2] if len(args) > 2 else kw.get("max")
            v = self.value(args[0])
            if lo is not None:
                v = self.op("maximum", [v, self.value(lo)])
            if hi is not None:
                v = self.op("minimum", [v, self.value(hi)])
            return v
        if f in (torch.matmul, operator.matmul):
            a, b = args[0], args[1]
            kind = "matmul" if self.rank(node) == 2 else "batch_matmul"
            return self.op(kind, [self.value(a), self.value(b)])
        if f in (torch.transpose,):
            return self._transpose(node, args[0], args[1], args[2])
        if f in (torch.permute,):
            return self.op("transpose", [self.value(args[0])], perm=list(args[1]))
        if f in (torch.reshape, torch.flatten):
            return self.op("reshape", [self.value(args[0])], shape=self.shape(node))
        if f in (torch.cat, torch.concat):
            dim = kw.get("dim", args[1] if len(args) > 1 else 0)
            return self.op("concat", [self.value(t) for t in args[0]], axis=dim)
        raise NotSupported(f"{node.name}: function {getattr(f, '__name__', f)}")

    def _transpose(self, node, x, a, b):
        r = self.rank(node)
        perm = list(range(r))
        a, b = a % r, b % r
        perm[a], perm[b] = perm[b], perm[a]
        return self.op("transpose", [self.value(x)], perm=perm)

    def _call_method(self, node):
        m, args = node.target, node.args
        x = args[0]
        if m in ("view", "reshape", "flatten", "unsqueeze", "squeeze"):
            return self.op("reshape", [self.value(x)], shape=self.shape(node))
        if m == "permute":
            perm = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
            return self.op("transpose", [self.value(x)], perm=list(perm))
        if m == "transpose":
            return self._transpose(node, x, args[1], args[2])
        if m in ("contiguous",):
            return self.value(x)
        if m in ("relu", "tanh"):
            return self._unary(node, m, x)
        if m == "softmax":
            dim = node.kwargs.get("dim", args[1] if len(args) > 1 else None)
            return self.op("softmax", [self.value(x)], axis=dim)
        raise NotSupported(f"{node.name}: method .{m}()")

    def outputs(self, node) -> tuple[list[int], bool]:
        out = node.args[0]
        if isinstance(out, torch.fx.Node):
            return [self.value(out)], False
        if isinstance(out, (tuple, list)) and all(isinstance(o, torch.fx.Node) for o in out):
            return [self.value(o) for o in out], True
        raise NotSupported("the model's output must be a tensor or a tuple of tensors")


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
    """The optimized model: same positional arguments as the traced forward, same output kind."""

    def __init__(self, model, executor, inputs, tuple_output):
        super().__init__()
        self._model = model  # keeps the weights alive
        self._executor = executor
        self._inputs = list(inputs)
        self._tuple = tuple_output

    def forward(self, *args, **kwargs):
        if len(args) > len(self._inputs):
            raise InvalidArgument(f"takes {len(self._inputs)} inputs ({', '.join(self._inputs)}), "
                                  f"got {len(args)}")
        named = dict(zip(self._inputs, args))
        for k, v in kwargs.items():
            if k not in self._inputs or k in named:
                raise InvalidArgument(f"unexpected or repeated argument {k!r}")
            named[k] = v
        arrays = {}
        for name in self._inputs:
            if name not in named:
                raise InvalidArgument(f"missing input {name!r}")
            t = named[name]
            arrays[name] = (t.detach().cpu().numpy() if isinstance(t, torch.Tensor)
                            else np.asarray(t))
        outs = [torch.from_numpy(a) for a in self._executor.run(arrays)]
        return tuple(outs) if self._tuple else outs[0]

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


def optimize(model: nn.Module, example_inputs, *, compact: bool = True, measure: bool = True,
             formats: dict | None = None, reps: int = 5, timing_runs: int = 5):
    """Captures ``model`` with torch.fx on ``example_inputs`` (a tensor or a tuple of them, the
    forward's positional arguments), compacts and specializes it, and returns
    ``(optimized_module, report)``. ``formats`` pins weights' formats by parameter name
    ("fc1.weight": "csr"); ``measure=False`` chooses by rule (csr below 25% density, else
    2:4 when exact, else dense). Raises NotSupported naming the first operation the graph IR does not
    have (docs/graph.md lists them). The model must run in float32 on the CPU."""
    if not isinstance(model, nn.Module):
        raise InvalidArgument(f"model must be a torch.nn.Module, got {type(model).__name__}")
    example = _as_tuple(example_inputs)
    modes = [(m, m.training) for m in model.modules()]  # restored one by one afterwards
    model.eval()
    try:
        gm = torch.fx.symbolic_trace(model)
        from torch.fx.passes.shape_prop import ShapeProp

        with torch.no_grad():
            ShapeProp(gm).propagate(*example)
        writer = _Writer(gm)
        output_node = None
        for node in gm.graph.nodes:
            if node.op == "output":
                output_node = node
            else:
                writer.add(node)
        outs, tuple_output = writer.outputs(output_node)
        text = "\n".join(writer.lines) + "\noutput " + ", ".join(f"%{o}" for o in outs) + "\n"
        graph_model = _C._GraphModel(text, writer.params)
        removed, before, after = [], 0, 0
        if compact:
            graph_model, compaction = graph_model.compact()
            removed = compaction["removed"]
            before = compaction["param_elements_before"]
            after = compaction["param_elements_after"]
        executor = _C._Executor(graph_model, measure, reps, dict(formats or {}))
        optimized = OptimizedModule(graph_model, executor, writer.inputs, tuple_output)
        with torch.no_grad():
            expect = _as_tuple(model(*example))
            got = _as_tuple(optimized(*example))
            worst = 0.0
            for e, g in zip(expect, got):
                scale = e.abs().clamp_min(1.0)
                worst = max(worst, float(((g - e).abs() / scale).max()) if e.numel() else 0.0)
            torch_ms = _median_ms(lambda: model(*example), timing_runs)
        optimized_ms = _median_ms(lambda: optimized(*example), timing_runs)
        steps = [OptimizeStep(s["what"], s["weight"], s["format"], s["provider"], s["density"],
                              s["candidate_ms"], s["why"]) for s in executor.steps()]
        report = OptimizeReport(steps, removed, before, after, torch_ms, optimized_ms, worst,
                                graph_model.text())
        return optimized, report
    finally:
        for m, training in modes:
            m.training = training
