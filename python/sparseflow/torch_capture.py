"""Capture of a torch model as sparseflow graph text (docs/graph.md), for sf.optimize.

The model runs once on the example inputs under make_fx, which records every aten operation with
concrete shapes (Python control flow, Hugging Face models and `x.shape` arithmetic need no
special tracing). Values that do not depend on an input (position ids, token type embeddings,
transposed weights) are computed there and become constants. The aten operations are then written
as graph IR operators; weights keep their parameter names.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils import _pytree as pytree

from .errors import NotSupported
from .tensors import from_numpy

aten = torch.ops.aten


def _pair(v, default):
    """A 2-D pooling argument as two ints: one value or a list of one or two (torch's forms);
    None or empty gives [default, default] (None when default is None)."""
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        return None if default is None else [default, default]
    if isinstance(v, (list, tuple)):
        return [int(v[0]), int(v[-1])]
    return [int(v), int(v)]


def _quote(name: str) -> str:
    out = []
    for ch in name:
        if ch == '"' or ch == "\\" or not (32 <= ord(ch) < 127):
            out.append("".join(f"\\x{b:02x}" for b in ch.encode()))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@dataclass
class Captured:
    text: str  # the graph IR
    params: dict  # name -> sparseflow Tensor (float32 snapshot)
    inputs: list  # input names, in the order of the flattened example inputs
    out_spec: object  # how to rebuild the model's output from the flat list of outputs


class _Recorder(torch.fx.Interpreter):
    """Runs the captured graph once, keeping every node's value."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n] = v
        return v


_VIEWS = {aten.view.default, aten._unsafe_view.default, aten._reshape_alias.default,
          aten.reshape.default, aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.default,
          aten.clone.default, aten.alias.default, aten.detach.default, aten.flatten.using_ints,
          aten.contiguous.default if hasattr(aten, "contiguous") else aten.clone.default}
_UNARY = {aten.relu.default: "relu", aten.gelu.default: "gelu", aten.silu.default: "silu",
          aten.tanh.default: "tanh", aten.sqrt.default: "sqrt", aten.sigmoid.default: "sigmoid",
          aten.exp.default: "exp", aten.sin.default: "sin", aten.cos.default: "cos"}
# Comparisons as the graph IR's (1 or 0 in float32; NaN compares false): a >= b and a <= b are
# maximum(a > b, a == b) and a != b is not(a == b), so NaN gives what torch gives.
_COMPARE = {aten.eq: "equal", aten.gt: "greater", aten.lt: "less", aten.ge: "greater",
            aten.le: "less", aten.ne: "equal"}


class _Writer:
    def __init__(self, gm, values, names):
        self.gm, self.values, self.names = gm, values, names
        self.lines, self.params, self.ids = [], {}, {}
        self.inputs = []
        self.next = 0
        self.constants = 0
        self.dynamic = set()
        self.vshape = {}  # graph value -> its shape
        self.reshaped = {}  # (value, shape) -> the reshape emitted for it

    # -- emission ------------------------------------------------------------------------------
    def _emit(self, rhs: str) -> int:
        v = self.next
        self.next += 1
        self.lines.append(f"%{v} = {rhs}")
        return v

    def _param(self, name: str, tensor: torch.Tensor) -> int:
        array = tensor.detach().to(torch.float32).contiguous().numpy().copy()  # a snapshot
        self.params[name] = from_numpy(array)
        return self._emit(f"param {_quote(name)} : f32[{', '.join(map(str, array.shape))}]")

    def constant(self, value: float) -> int:
        self.constants += 1
        return self._param(f"constant.{self.constants}", torch.tensor([float(value)]))

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

    def value(self, arg) -> int:
        """The graph value of an fx argument: a dynamic node, a constant tensor or a number."""
        if isinstance(arg, torch.fx.Node):
            if arg in self.ids:
                return self.as_shape(self.ids[arg], self.shape(arg))
            v = self.values[arg]
            if not isinstance(v, torch.Tensor):
                raise NotSupported(f"{arg.name}: a {type(v).__name__} where a tensor is needed")
            name = self.names.get(v.data_ptr()) if v.numel() else None
            if name is None or tuple(v.shape) != tuple(self.names_shape.get(name, ())):
                name = f"constant.{arg.name}"
            self.ids[arg] = self._param(name, v)
            self.vshape[self.ids[arg]] = list(v.shape)
            return self.ids[arg]
        if isinstance(arg, (int, float)) and not isinstance(arg, bool):
            return self.constant(arg)
        raise NotSupported(f"operand {arg!r} (tensors and numbers only)")

    def max_pool(self, node) -> int:
        """max_pool2d as the graph IR's max_pool2d: torch's symmetric padding as [top, left,
        bottom, right], ceil_mode as extra end padding (padding never wins; a last window that
        would start in the end padding is dropped, as torch does)."""
        args, kw = node.args, node.kwargs
        names = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
        given = dict(zip(names, args[1:]))
        given.update({k: v for k, v in kw.items() if k in names})
        kernel = _pair(given["kernel_size"], 1)
        stride = _pair(given.get("stride"), None) or kernel  # torch: empty stride = the kernel
        padding = _pair(given.get("padding"), 0)
        dilation = _pair(given.get("dilation"), 1)
        shape = self.shape(args[0])
        if len(shape) != 4:
            raise NotSupported(f"{node.name}: max_pool2d of a {len(shape)}-d input")
        pads = [padding[0], padding[1], padding[0], padding[1]]
        if given.get("ceil_mode"):
            for d in range(2):
                span = dilation[d] * (kernel[d] - 1) + 1
                padded = shape[2 + d] + 2 * padding[d]
                out = -(-(padded - span) // stride[d]) + 1
                if (out - 1) * stride[d] >= shape[2 + d] + padding[d]:
                    out -= 1
                pads[2 + d] += max(0, (out - 1) * stride[d] + span - padded)
        return self.op("max_pool2d", [self.value(args[0])], kernel=kernel, stride=stride,
                       padding=pads, dilation=dilation)

    def avg_pool(self, node) -> int:
        """avg_pool2d as the graph IR's avg_pool2d (the same window count as torch's)."""
        args, kw = node.args, node.kwargs
        names = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                 "divisor_override")
        given = dict(zip(names, args[1:]))
        given.update({k: v for k, v in kw.items() if k in names})
        if given.get("divisor_override") is not None:
            raise NotSupported(f"{node.name}: avg_pool2d with divisor_override")
        kernel = _pair(given["kernel_size"], 1)
        stride = _pair(given.get("stride"), None) or kernel  # torch: empty stride = the kernel
        padding = _pair(given.get("padding"), 0)
        if len(self.shape(args[0])) != 4:
            raise NotSupported(f"{node.name}: avg_pool2d of a {len(self.shape(args[0]))}-d input")
        return self.op("avg_pool2d", [self.value(args[0])], kernel=kernel, stride=stride,
                       padding=[padding[0], padding[1], padding[0], padding[1]],
                       ceil_mode=int(bool(given.get("ceil_mode", False))),
                       count_include_pad=int(bool(given.get("count_include_pad", True))))

    def _truth(self, arg) -> int:
        """A boolean view of `arg` (1 or 0): itself when it is bool already, else x != 0."""
        if isinstance(arg, torch.fx.Node) and self.values[arg].dtype is torch.bool:
            return self.value(arg)
        return self.op("not", [self.op("not", [self.value(arg)])])

    def reduction(self, node, mean: bool) -> int:
        """sum/mean over `dim` (keepdim or not) as reduce_sum per axis (last first), scaled by
        1/count for a mean; the result reshaped to torch's shape."""
        args, kw = node.args, node.kwargs
        x = args[0]
        in_shape = self.shape(x)
        rank = len(in_shape)
        dims = args[1] if len(args) > 1 else kw.get("dim")
        if kw.get("dtype") not in (None, torch.float32):
            raise NotSupported(f"{node.name}: a reduction to {kw['dtype']}")
        dims = list(range(rank)) if dims is None or dims == [] else [int(d) % rank for d in dims]
        if len(set(dims)) == rank:
            raise NotSupported(f"{node.name}: a reduction to a scalar")
        v, count = self.value(x), 1
        for d in sorted(set(dims), reverse=True):
            count *= in_shape[d]
            v = self.op("reduce_sum", [v], axis=d)
        kept = [1 if d in dims else n for d, n in enumerate(in_shape)]
        reduced = [n for d, n in enumerate(in_shape) if d not in dims]
        self.vshape[v] = reduced
        if mean:
            v = self.op("mul", [v, self.constant(1.0 / count)])
            self.vshape[v] = reduced
        return self.as_shape(v, self.shape(node))

    def as_shape(self, v: int, shape: list) -> int:
        """Value v seen with `shape` (a reshape, emitted once, where its own shape differs)."""
        if self.vshape.get(v, shape) == shape:
            return v
        key = (v, tuple(shape))
        if key not in self.reshaped:
            self.reshaped[key] = self.op("reshape", [v], shape=shape)
            self.vshape[self.reshaped[key]] = list(shape)
        return self.reshaped[key]

    def raw(self, node) -> int:
        """The value emitted for a node, whatever its shape (value() reshapes it as the node)."""
        if node not in self.ids:
            self.value(node)
        return self.ids[node]

    def static(self, arg):
        """A concrete Python value (ints, lists) for an argument."""
        if isinstance(arg, torch.fx.Node):
            return self.values[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.static(a) for a in arg)
        return arg

    def shape(self, node) -> list:
        v = self.values[node]
        if isinstance(v, (tuple, list)):  # native_layer_norm: (out, mean, rstd)
            v = v[0]
        return [int(d) for d in v.shape]

    # -- nodes ---------------------------------------------------------------------------------
    def placeholder(self, node, dtype: str):
        self.inputs.append(node.target)
        shape = ", ".join(str(int(d)) for d in self.values[node].shape)
        self.ids[node] = self._emit(f"input {_quote(node.target)} : {dtype}[{shape}]")
        self.vshape[self.ids[node]] = [int(d) for d in self.values[node].shape]

    def add(self, node):
        f, args, kw = node.target, node.args, node.kwargs
        x = args[0] if args else None
        if f is operator.getitem:
            src, index = args
            if src.target is aten.native_layer_norm.default and index == 0:
                return self.value(src)
            if src.target is aten.max_pool2d_with_indices.default and index == 0:
                return self.value(src)  # the values (the indices are refused where read)
            raise NotSupported(f"{node.name}: item {index} of {src.target}")
        if f in _VIEWS:  # the source's own value, reshaped only where the shapes differ
            return self.as_shape(self.raw(x), self.shape(node))
        if f is aten.expand.default:
            if list(self.values[x].shape) == self.shape(node):
                return self.value(x)
            raise NotSupported(f"{node.name}: expand that broadcasts")
        if f is aten._to_copy.default:
            if kw.get("dtype") is torch.bool:  # nonzero (and NaN) is true
                return self._truth(x)
            if kw.get("dtype", torch.float32) not in (torch.float32, None):
                raise NotSupported(f"{node.name}: a cast to {kw['dtype']}")
            return self.value(x)  # the executor's values are float32; booleans are 1 or 0
        if f in _UNARY:
            name = _UNARY[f]
            if f is aten.gelu.default:
                approximate = kw.get("approximate", args[1] if len(args) > 1 else "none")
                if approximate not in ("none", "tanh"):
                    raise NotSupported(f"{node.name}: gelu(approximate={approximate!r})")
                name = "gelu_tanh" if approximate == "tanh" else "gelu"
            return self.op(name, [self.value(x)])
        if f is aten.pow.Tensor_Scalar:  # small integer powers as products (GPT-2's x ** 3)
            exponent = args[1]
            if exponent not in (1, 2, 3):
                raise NotSupported(f"{node.name}: pow with exponent {exponent!r} (1, 2 and 3 run)")
            base = self.value(x)
            out = base
            for _ in range(int(exponent) - 1):
                out = self.op("mul", [out, base])
            return out
        if getattr(f, "overloadpacket", None) is aten.where and len(args) == 3:
            # where(cond, a, b): a mask from a buffer (GPT-2's causal mask), a fill value
            return self.op("where", [self.value(a) for a in args])
        if f in (aten.max_pool2d_with_indices.default, aten.max_pool2d.default):
            return self.max_pool(node)
        if f is aten.avg_pool2d.default:
            return self.avg_pool(node)
        packet = getattr(f, "overloadpacket", None)
        if packet in _COMPARE:
            a, b = self.value(x), self.value(args[1])
            out = self.op(_COMPARE[packet], [a, b])
            if packet in (aten.ge, aten.le):  # or equal: NaN gives 0, as torch
                out = self.op("maximum", [out, self.op("equal", [a, b])])
            if packet is aten.ne:
                out = self.op("not", [out])
            return out
        if packet is aten.masked_fill:  # x.masked_fill(mask, v): where(mask, v, x)
            return self.op("where", [self._truth(args[1]), self.value(args[2]), self.value(x)])
        if f in (aten.logical_not.default, aten.bitwise_not.default):
            if f is aten.bitwise_not.default and self.values[x].dtype is not torch.bool:
                raise NotSupported(f"{node.name}: bitwise_not of {self.values[x].dtype} values")
            return self.op("not", [self.value(x)])
        if f in (aten.logical_and.default, aten.bitwise_and.Tensor, aten.logical_or.default,
                 aten.bitwise_or.Tensor):
            if any(self.values[a].dtype is not torch.bool for a in args[:2]
                   if isinstance(a, torch.fx.Node)):
                raise NotSupported(f"{node.name}: {f} of non-boolean values")
            a, b = (self._truth(a) for a in args[:2])
            kind = "mul" if f in (aten.logical_and.default, aten.bitwise_and.Tensor) else "maximum"
            return self.op(kind, [a, b])
        if f is aten._softmax.default:
            return self.op("softmax", [self.value(x)], axis=int(args[1]))
        if f is aten.native_layer_norm.default:
            shape, weight, bias, eps = args[1], args[2], args[3], args[4]
            if len(shape) != 1:
                raise NotSupported(f"{node.name}: layer norm over {len(shape)} dimensions")
            ops = [self.value(x)]
            if weight is not None and bias is not None:
                ops += [self.value(weight), self.value(bias)]
            elif weight is not None or bias is not None:
                raise NotSupported(f"{node.name}: layer norm with one of weight and bias")
            return self.op("layer_norm", ops, axis=len(self.shape(x)) - 1, eps=float(eps))
        if f in (aten.add.Tensor, aten.add_.Tensor, aten.sub.Tensor):
            a, b = self.value(args[0]), args[1]
            alpha = kw.get("alpha", 1)
            if f is aten.sub.Tensor:
                alpha = -alpha
            if isinstance(b, (int, float)):
                return self.op("add", [a, self.constant(alpha * b)])
            b = self.value(b)
            if alpha != 1:
                b = self.op("mul", [b, self.constant(alpha)])
            return self.op("add", [a, b])
        if f is aten.neg.default:
            return self.op("mul", [self.value(x), self.constant(-1.0)])
        if f is aten.rsub.Scalar:  # other - alpha * x
            scaled = self.op("mul", [self.value(x), self.constant(-kw.get("alpha", 1))])
            return self.op("add", [scaled, self.constant(args[1])])
        if f in (aten.mul.Tensor, aten.mul.Scalar):
            return self.op("mul", [self.value(x), self.value(args[1])])
        if f in (aten.div.Tensor, aten.div.Scalar):
            if kw.get("rounding_mode") is not None:
                raise NotSupported(f"{node.name}: division with rounding_mode="
                                   f"{kw['rounding_mode']!r}")
            if isinstance(args[1], (int, float)):  # a product with the reciprocal (fuses)
                return self.op("mul", [self.value(x), self.constant(1.0 / args[1])])
            return self.op("div", [self.value(x), self.value(args[1])])
        if f is aten.rsqrt.default:  # RMSNorm's x * rsqrt(mean(x^2) + eps)
            return self.op("div", [self.constant(1.0), self.op("sqrt", [self.value(x)])])
        if f in (aten.mean.dim, aten.sum.dim_IntList):
            return self.reduction(node, mean=f is aten.mean.dim)
        if f in (aten.addmm.default, aten.mm.default):
            bias = args[0] if f is aten.addmm.default else None
            a, b = (args[1], args[2]) if bias is not None else (args[0], args[1])
            if (bias is not None and kw.get("beta", 1) != 1) or kw.get("alpha", 1) != 1:
                raise NotSupported(f"{node.name}: addmm with alpha or beta")
            weight = self._transposed_param(b)
            if weight is not None:  # x W^T (+ b): nn.Linear
                # nn.Linear on [..., in] traces as view to [N, in], addmm, view back: the linear
                # takes the unflattened x, so what follows it (an activation) reads it directly.
                x_id = None
                if isinstance(a, torch.fx.Node) and a.target in _VIEWS:
                    src = self.raw(a.args[0])
                    src_shape = self.vshape.get(src, [])
                    if len(src_shape) >= 2 and src_shape[-1] == self.shape(a)[-1]:
                        x_id = src
                if x_id is None:  # emitted only when needed: an unused reshape would stay
                    x_id = self.value(a)
                ops = [x_id, self.value(weight)]
                if bias is not None:
                    ops.append(self.value(bias))
                out = self.op("linear", ops)
                self.vshape[out] = self.vshape.get(x_id, self.shape(a))[:-1] + [self.shape(node)[-1]]
                return out
            out = self.op("matmul", [self.value(a), self.value(b)])
            return self.op("add", [out, self.value(bias)]) if bias is not None else out
        if f is aten.bmm.default:
            return self.op("batch_matmul", [self.value(x), self.value(args[1])])
        if f is aten.permute.default:
            return self.op("transpose", [self.value(x)], perm=list(args[1]))
        if f in (aten.transpose.int, aten.t.default):
            r = len(self.shape(node))
            a, b = (int(args[1]) % r, int(args[2]) % r) if f is aten.transpose.int else (0, 1)
            perm = list(range(r))
            perm[a], perm[b] = perm[b], perm[a]
            return self.op("transpose", [self.value(x)], perm=perm)
        if f is aten.slice.Tensor:
            dim = int(args[1]) if len(args) > 1 else 0
            start = int(args[2]) if len(args) > 2 and args[2] is not None else 0
            end = int(args[3]) if len(args) > 3 and args[3] is not None else 2**62
            step = int(args[4]) if len(args) > 4 else 1
            extent = self.values[x].shape[dim]
            start, end = max(0, min(start, extent)), max(0, min(end, extent))
            if step != 1:
                raise NotSupported(f"{node.name}: slice with step {step}")
            if (start, end) == (0, extent):
                return self.value(x)
            return self.op("slice", [self.value(x)], axis=dim % len(self.values[x].shape),
                           start=start, end=end)
        if f is aten.select.int:
            dim, index = int(args[1]), int(args[2])
            r = len(self.values[x].shape)
            index %= self.values[x].shape[dim]
            s = self.op("slice", [self.value(x)], axis=dim % r, start=index, end=index + 1)
            return self.op("reshape", [s], shape=self.shape(node))
        if f is aten.convolution.default:
            # (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
            if args[6] or len(self.shape(node)) != 4:
                raise NotSupported(f"{node.name}: only 2-D, non-transposed convolutions")
            stride, padding, dilation = (list(args[3]), list(args[4]), list(args[5]))
            if any(len(v) != 2 for v in (stride, padding, dilation)):
                raise NotSupported(f"{node.name}: padding given as {padding} (two values needed)")
            ops = [self.value(x), self.value(args[1])]
            if args[2] is not None:
                ops.append(self.value(args[2]))
            return self.op("conv2d", ops, stride=stride, padding=padding, dilation=dilation,
                           groups=int(args[8]))
        if f is aten.embedding.default:
            return self.op("embedding", [self.value(args[0]), self.value(args[1])])
        if f in (aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default):
            lo = args[1] if f is not aten.clamp_max.default and len(args) > 1 else kw.get("min")
            hi = (args[2] if len(args) > 2 else kw.get("max")) if f is aten.clamp.default else (
                args[1] if f is aten.clamp_max.default else None)
            v = self.value(x)
            if lo is not None:
                v = self.op("maximum", [v, self.value(lo)])
            if hi is not None:
                v = self.op("minimum", [v, self.value(hi)])
            return v
        if f in (aten.minimum.default, aten.maximum.default):
            kind = "minimum" if f is aten.minimum.default else "maximum"
            return self.op(kind, [self.value(x), self.value(args[1])])
        if f is aten.cat.default:
            dim = int(args[1]) if len(args) > 1 else 0
            return self.op("concat", [self.value(t) for t in args[0]], axis=dim)
        raise NotSupported(f"{node.name}: {f} (not an operator of sparseflow's graph IR; "
                           "docs/graph.md lists them)")

    def _transposed_param(self, node):
        """The parameter P when `node` is t(P) of a constant parameter, else None."""
        if (isinstance(node, torch.fx.Node) and node.target is aten.t.default
                and node not in self.dynamic):
            src = node.args[0]
            if isinstance(src, torch.fx.Node) and src.op == "get_attr":
                return src
        return None


def _input_names(model, args, kwargs, count) -> list:
    """The forward's parameter names for positional tensors, the keys for keyword ones (arg<i>
    where the inputs are nested)."""
    import inspect

    if len(args) + len(kwargs) != count:
        return [f"arg{i}" for i in range(count)]
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [params[i] if i < len(params) else f"arg{i}" for i in range(len(args))]
    return names + list(kwargs)


def capture(model, args: tuple, kwargs: dict) -> Captured:
    """Captures model(*args, **kwargs) (tensors only, flattened) as graph text and weights."""
    flat, in_spec = pytree.tree_flatten((args, kwargs))
    if not flat or not all(isinstance(t, torch.Tensor) for t in flat):
        raise NotSupported("example inputs must be tensors (positional or keyword)")
    user_names = _input_names(model, args, kwargs, len(flat))
    out_box = {}

    def flat_fn(*tensors):
        a, k = pytree.tree_unflatten(list(tensors), in_spec)
        out = model(*a, **k)
        if hasattr(out, "to_tuple") and hasattr(out, "keys"):  # a Hugging Face ModelOutput
            keys = list(out.keys())
            out_box["spec"] = ("model_output", type(out), keys)
            return [out[k] for k in keys]
        leaves, spec = pytree.tree_flatten(out)
        out_box["spec"] = ("pytree", spec)
        return leaves

    with torch.no_grad():
        gm = make_fx(flat_fn)(*flat)
    gm.graph.eliminate_dead_code()
    recorder = _Recorder(gm)
    with torch.no_grad():
        recorder.run(*flat)
    values = recorder.values
    names = {p.data_ptr(): n for n, p in list(model.named_parameters()) + list(model.named_buffers())
             if p.numel()}
    shapes = {n: tuple(p.shape) for n, p in list(model.named_parameters()) +
              list(model.named_buffers())}
    w = _Writer(gm, values, names)
    w.names_shape = shapes
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    # Which nodes depend on an input (the rest are constants).
    for n in gm.graph.nodes:
        if n.op == "placeholder" or any(isinstance(a, torch.fx.Node) and a in w.dynamic
                                        for a in n.all_input_nodes):
            w.dynamic.add(n)
    # Integer inputs are ids when embeddings are their only readers; else values (float).
    input_names = []
    for i, n in enumerate(placeholders):
        v = values[n]
        readers = [u for u in n.users]
        ids = v.dtype in (torch.int64, torch.int32) and readers and all(
            u.target is aten.embedding.default and u.args[1] is n for u in readers)
        if not (v.dtype == torch.float32 or v.dtype in (torch.int64, torch.int32)):
            raise NotSupported(f"input {i} has dtype {v.dtype} (float32 or integer ids)")
        n.target = user_names[i]
        w.placeholder(n, "i64" if ids else "f32")
        input_names.append(n.target)
    output = next(n for n in gm.graph.nodes if n.op == "output")
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output", "get_attr") or n not in w.dynamic:
            continue
        v = w.add(n)
        w.ids[n] = v
        if v not in w.vshape and isinstance(values[n], torch.Tensor):
            w.vshape[v] = [int(d) for d in values[n].shape]
    outs = []
    for o in pytree.tree_flatten(output.args[0])[0]:
        if not isinstance(o, torch.fx.Node):
            raise NotSupported("the model's outputs must be tensors")
        outs.append(w.value(o))
    text = "\n".join(w.lines) + "\noutput " + ", ".join(f"%{o}" for o in outs) + "\n"
    return Captured(text, w.params, input_names, (in_spec, out_box["spec"]))


def rebuild_output(out_spec, flat_outputs):
    """The model's output structure from the executor's flat list."""
    spec = out_spec[1]
    if spec[0] == "model_output":
        cls, keys = spec[1], spec[2]
        return cls(**dict(zip(keys, flat_outputs)))
    return pytree.tree_unflatten(list(flat_outputs), spec[1])


def flatten_inputs(out_spec, args, kwargs) -> list:
    """The flat list of input tensors of a call, checked against the captured structure."""
    flat, spec = pytree.tree_flatten((args, kwargs))
    if spec != out_spec[0]:
        raise NotSupported("call the optimized module with the same arguments (positional and "
                           f"keyword) as the example inputs: expected {out_spec[0]}, got {spec}")
    return flat
