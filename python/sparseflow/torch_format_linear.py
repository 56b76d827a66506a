"""PyTorch: FormatLinear, an nn.Module whose weight is held in an exact sparse format (csr, csc,
bsr:RxC, ...) and multiplied by sparseflow's compiled kernel (the CSR and BSR SpMM providers for
csr and bsr, generated code otherwise), for unstructured and block-pruned layers.

Nothing is pruned: the weight's zeros are its pattern, so the layer computes what the dense one
does (float32, accumulated in float32 as the providers do). The weight lives in sparseflow's memory
and no Python object views it: state_dict() and pickling hand out copies of its coordinates and
values, load_state_dict() builds a new weight. forward gives the input a gradient (dX = dY W
through a second kernel); the weight and bias are not trainable.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import torch

from ._ext import _C
from .errors import InvalidArgument, NotSupported, SparseFlowError
from .kernels import compile as _compile
from .scipy_interop import _coo_tensor
from .tensors import Tensor, from_torch

_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()
# How the product is compiled besides W's format: (schedule text, hand_tuned, parallel), as
# sf.compile takes them; the default is the default loop order on the hand-tuned providers.
_DEFAULT_CONFIG = ("", True, True)


def _kernel(text: str, fmt: str, config: tuple = _DEFAULT_CONFIG):
    """The compiled kernel for `text` with W in `fmt` and `config`, f32 throughout (one per
    process)."""
    key = (text, fmt, config)
    with _KERNELS_LOCK:
        if key not in _KERNELS:
            names = {"X", "W", "b", "Y", "dY", "dX"}
            dtypes = {name: "f32" for name in names if re.search(rf"\b{name}\(", text)}
            schedule, hand_tuned, parallel = config
            _KERNELS[key] = _compile(text, formats={"W": fmt}, schedule=schedule or None,
                                     dtypes=dtypes, hand_tuned=hand_tuned, parallel=parallel)
        return _KERNELS[key]


def _config_of(schedule, hand_tuned, parallel) -> tuple:
    """The (schedule, hand_tuned, parallel) key, checked: schedule text or None/""."""
    if schedule is not None and not isinstance(schedule, str):
        raise InvalidArgument(f"schedule must be schedule text such as 'split(n, n0, n1, 16); "
                              f"parallel(n0)' or None, not {type(schedule).__name__}")
    return (schedule or "", bool(hand_tuned), bool(parallel))


_FORWARD = "Y(n,o) = X(n,i) * W(o,i)"
_FORWARD_BIAS = "Y(n,o) = X(n,i) * W(o,i) + b(o)"
_BACKWARD = "dX(n,i) = dY(n,o) * W(o,i)"


def _matrix_of(x2: torch.Tensor) -> np.ndarray:
    """A C-contiguous float32 numpy view of a 2-D CPU tensor (a copy only when torch's is not)."""
    return x2.detach().contiguous().numpy()


def _sparse_format(fmt: str) -> str:
    """`fmt` when it is an exact sparse format FormatLinear holds (not dense, not n:m)."""
    base = str(fmt).split("@")[0]
    if base == "dense" or re.fullmatch(r"\d+:\d+", base):
        raise InvalidArgument(f"FormatLinear holds sparse formats such as csr or bsr:4x4, not "
                              f"'{fmt}' (a dense layer is nn.Linear; 2:4 is SparseLinear)")
    return str(fmt)


class _Product(torch.autograd.Function):
    """y = x Wᵀ (+ b) with dx = dy W; W and b are constants of the layer."""

    @staticmethod
    def forward(ctx, x, layer):
        ctx.layer = layer
        return layer._multiply(x)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        layer = ctx.layer
        rows = dy.numel() // layer.out_features
        dy2 = _matrix_of(dy.reshape(rows, layer.out_features).to(torch.float32))
        dx = torch.empty(rows, layer.in_features, dtype=torch.float32)
        if rows:
            _kernel(_BACKWARD, layer.format).run({"dY": dy2, "W": layer._weight}, out=dx)
        return dx.reshape(*dy.shape[:-1], layer.in_features), None


class FormatLinear(torch.nn.Module):
    """y = x · Wᵀ + b with W (out_features × in_features) in an exact sparse format, on
    sparseflow's compiled kernels. Build it with ``FormatLinear.from_dense(linear, "csr")`` (or
    ``FormatLinear.zeros(...)`` to load a state_dict into). forward takes float32
    ``(..., in_features)`` CPU inputs and returns float32 ``(..., out_features)``.

    state_dict keys: ``weight_rows``, ``weight_cols`` (int64 coordinates of the stored entries,
    row-major), ``weight_values`` (float32), ``weight_shape`` ([out_features, in_features]),
    ``bias`` (float32, when there is one), and the format and schedule in the module's extra
    state: all copies.

    ``schedule``, ``hand_tuned``, ``parallel``: how the product is compiled, as ``sf.compile``
    takes them (the default: the default loop order, the CSR/BSR providers where they accept);
    ``FormatLinear.tuned`` sets them from the autoconfigurator's decision.
    """

    def __init__(self, weight: Tensor, bias=None, format: str | None = None, *,
                 schedule: str | None = None, hand_tuned: bool = True, parallel: bool = True):
        super().__init__()
        if not isinstance(weight, Tensor) or weight.rank != 2:
            raise InvalidArgument("FormatLinear takes the weight as a 2-D sf.Tensor; use "
                                  "FormatLinear.from_dense(linear, format) for an nn.Linear")
        fmt = _sparse_format(format or weight.format)
        if weight.format != fmt or weight.dtype != "f32":
            weight, _ = _C._convert(weight, fmt, "f32" if weight.dtype != "f32" else "")
        self._weight = weight
        self._bias = None
        if bias is not None:
            values = bias.detach().to(torch.float32) if isinstance(bias, torch.Tensor) else (
                torch.as_tensor(np.asarray(bias, dtype=np.float32)))
            if tuple(values.shape) != (weight.shape[0],):
                raise InvalidArgument(f"bias has shape {tuple(values.shape)}, the layer "
                                      f"{weight.shape[0]} outputs")
            self._bias = values.contiguous().numpy().copy()  # a snapshot
        self._config = _config_of(schedule, hand_tuned, parallel)
        self._forward_kernel()  # compiled now: a schedule the kernel refuses fails here

    @classmethod
    def from_dense(cls, linear: torch.nn.Linear, format: str = "csr", *,
                   schedule: str | None = None, hand_tuned: bool = True,
                   parallel: bool = True) -> "FormatLinear":
        """The layer with ``linear``'s weight and bias (copies) in ``format``: its zeros are not
        stored, nothing else changes."""
        weight = _float32_weight(linear)
        weight, _ = _C._convert(weight, _sparse_format(format), "")
        return cls(weight, linear.bias, format, schedule=schedule, hand_tuned=hand_tuned,
                   parallel=parallel)

    @classmethod
    def tuned(cls, linear: torch.nn.Linear, batch: int = 32, *, budget: int = 8, database=None,
              model=None) -> tuple:
        """``(layer, decision)``: the layer in the format and schedule the autoconfigurator
        chooses for ``batch`` rows of input (``sf.tune`` on the layer's own product: the cost
        model ranks the formats and schedules, the default and at most ``budget`` of the best
        ranked are timed on random inputs, the fastest kept; docs/tune.md). ``decision`` is
        sf.tune's record. An n:m format is not among the choices (that is SparseLinear): if one
        wins, the fastest other timed configuration is taken (csr when the decision came from
        the database, which keeps no other candidate). ``database``/``model`` as in
        sf.tune (a decision recorded for this weight pattern is reused without timing)."""
        from .tuning import tune

        if int(batch) < 1:
            raise InvalidArgument(f"FormatLinear.tuned needs batch >= 1, got {batch}")
        weight, _ = _C._convert(_float32_weight(linear), "csr", "")
        inputs = {"X": torch.randn(int(batch), linear.in_features).numpy(), "W": weight}
        text = _FORWARD
        if linear.bias is not None:
            inputs["b"] = linear.bias.detach().to(torch.float32).contiguous().numpy()
            text = _FORWARD_BIAS
        decision = tune(text, inputs, dtypes={name: "f32" for name in inputs}, tuned=["W"],
                        budget=budget, database=database, model=model)
        chosen = decision
        if re.fullmatch(r"\d+:\d+", decision["formats"]["W"].split("@")[0]):
            timed = [c for c in decision.get("candidates", [])
                     if c.get("median_ms") is not None and
                     not re.fullmatch(r"\d+:\d+", c["formats"]["W"].split("@")[0])]
            chosen = min(timed, key=lambda c: c["median_ms"]) if timed else {
                "formats": {"W": "csr"}, "schedule": "", "hand_tuned": True, "parallel": True}
        layer = cls.from_dense(linear, chosen["formats"]["W"], schedule=chosen["schedule"],
                               hand_tuned=chosen["hand_tuned"], parallel=chosen["parallel"])
        return layer, decision

    @classmethod
    def zeros(cls, in_features: int, out_features: int, bias: bool = True,
              format: str = "csr") -> "FormatLinear":
        """A layer without stored weights (and a zero bias), to ``load_state_dict`` into."""
        dense = from_torch(torch.zeros(out_features, in_features))
        weight, _ = _C._convert(dense, format, "")
        return cls(weight, torch.zeros(out_features) if bias else None, format)

    in_features = property(lambda self: int(self._weight.shape[1]))
    out_features = property(lambda self: int(self._weight.shape[0]))
    format = property(lambda self: self._weight.format, doc="The weight's format, e.g. 'csr'.")
    schedule = property(lambda self: self._config[0],
                        doc="The product's schedule text ('' for the default loop order).")
    has_bias = property(lambda self: self._bias is not None)

    @property
    def weight_bytes(self) -> int:
        """Bytes of the stored weight (values and index arrays) one forward reads."""
        return int(self._weight.storage_bytes)

    def sparse_weight(self) -> Tensor:
        """The weight as an sf.Tensor in its format (a copy)."""
        return _C._convert(self._weight, self.format, "")[0]

    def dense_weight(self) -> torch.Tensor:
        """The weight as a dense (out_features, in_features) float32 tensor (a copy)."""
        dense, _ = _C._convert(self._weight, "dense", "")
        return torch.from_numpy(dense.to_numpy().copy())

    def bias_values(self) -> torch.Tensor | None:
        """The bias as a float32 tensor (a copy), or None."""
        return None if self._bias is None else torch.from_numpy(self._bias.copy())

    def _forward_kernel(self):
        text = _FORWARD_BIAS if self._bias is not None else _FORWARD
        return _kernel(text, self.format, self._config)

    @property
    def provider(self) -> str:
        """The provider that runs the product: csr_spmm, bsr_spmm or generated."""
        return self._forward_kernel().provider

    def describe(self) -> str:
        """Which provider runs the product and why (Kernel.describe)."""
        return self._forward_kernel().describe()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise InvalidArgument(f"FormatLinear takes a torch.Tensor, got {type(x).__name__}")
        if x.device.type != "cpu":
            raise NotSupported(f"FormatLinear runs on the CPU; the input is on {x.device}")
        if x.dtype != torch.float32:
            raise NotSupported(f"FormatLinear takes float32 inputs, not {x.dtype}")
        if x.dim() < 1 or x.shape[-1] != self.in_features:
            raise InvalidArgument(f"the input's last dimension is {tuple(x.shape)[-1:]}, the "
                                  f"layer takes {self.in_features} features")
        if torch.is_grad_enabled() and x.requires_grad:
            return _Product.apply(x, self)
        return self._multiply(x)

    def _multiply(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // self.in_features
        y = torch.empty(rows, self.out_features, dtype=torch.float32)
        if rows:
            inputs = {"X": _matrix_of(x.reshape(rows, self.in_features)), "W": self._weight}
            if self._bias is not None:
                inputs["b"] = self._bias
            self._forward_kernel().run(inputs, out=y)
        return y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        schedule = f", schedule={self.schedule!r}" if self.schedule else ""
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.has_bias}, format={self.format}{schedule}, "
                f"stored={self._weight.num_stored}")

    # --- state_dict, pickling, deepcopy -------------------------------------------------------

    def _state(self) -> dict:
        coo, _ = _C._convert(self._weight, "coo", "")
        state = {
            "weight_rows": torch.from_numpy(coo.level_arrays(0)["crd"].astype(np.int64)),
            "weight_cols": torch.from_numpy(coo.level_arrays(1)["crd"].astype(np.int64)),
            "weight_values": torch.from_numpy(np.array(coo.values, dtype=np.float32)),
            "weight_shape": torch.tensor([self.out_features, self.in_features]),
        }
        if self._bias is not None:
            state["bias"] = torch.from_numpy(self._bias.copy())
        return state

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination.update({prefix + key: value for key, value in self._state().items()})
        destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self):
        # Read back by _load_from_state_dict itself (which replaces nn.Module's, the only caller
        # of set_extra_state).
        schedule, hand_tuned, parallel = self._config
        return {"format": self.format, "schedule": schedule, "hand_tuned": hand_tuned,
                "parallel": parallel}

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        names = ["weight_rows", "weight_cols", "weight_values", "weight_shape"] + (
            ["bias"] if self.has_bias else [])
        if strict:
            unexpected_keys.extend(key for key in state_dict if key.startswith(prefix) and (
                key[len(prefix):] not in names + ["_extra_state"]))
        if prefix + "weight" in state_dict and prefix + "weight_values" not in state_dict:
            error_msgs.append(
                f"{prefix}weight is a dense weight, but {prefix[:-1] or 'this module'} is a "
                "FormatLinear, which loads weight_rows, weight_cols and weight_values: load the "
                "dense state_dict before sparsify, or build the layer with "
                "FormatLinear.from_dense(linear, format)")
            return
        missing = [prefix + name for name in names if prefix + name not in state_dict]
        if missing:
            missing_keys.extend(missing)
            return
        fmt, config = self.format, self._config
        if prefix + "_extra_state" in state_dict:
            extra = state_dict[prefix + "_extra_state"]
            if not isinstance(extra, dict) or not isinstance(extra.get("format"), str) or not (
                    isinstance(extra.get("schedule", ""), str) and
                    isinstance(extra.get("hand_tuned", True), bool) and
                    isinstance(extra.get("parallel", True), bool)):
                error_msgs.append(
                    f"{prefix}_extra_state must be {{'format': str, 'schedule': str, "
                    f"'hand_tuned': bool, 'parallel': bool}} (the weight's format and how the "
                    f"product is compiled; all but the format optional), got {extra!r}")
                return
            fmt = extra["format"]
            config = _config_of(extra.get("schedule", ""), extra.get("hand_tuned", True),
                                extra.get("parallel", True))
        try:
            weight = self._weight_from_state(state_dict, prefix, fmt)
            text = _FORWARD_BIAS if self.has_bias else _FORWARD
            _kernel(text, weight.format, config)  # a schedule the kernel refuses fails here
        except SparseFlowError as error:
            error_msgs.append(str(error))
            return
        self._weight, self._config = weight, config
        if self.has_bias:
            bias = state_dict[prefix + "bias"]
            if tuple(bias.shape) != (self.out_features,):
                error_msgs.append(f"size mismatch for {prefix}bias: {tuple(bias.shape)} in the "
                                  f"checkpoint, ({self.out_features},) in the current model")
                return
            self._bias = bias.detach().to(torch.float32).contiguous().numpy().copy()

    def _weight_from_state(self, state_dict, prefix, fmt) -> Tensor:
        shape = [int(v) for v in state_dict[prefix + "weight_shape"].tolist()]
        if shape != [self.out_features, self.in_features]:
            raise InvalidArgument(
                f"size mismatch for {prefix}weight_values: the checkpoint's layer is "
                f"{' x '.join(map(str, shape))} ({prefix}weight_shape), the layer in the current "
                f"model is {self.out_features} x {self.in_features}")
        return _weight_from_coo(shape, state_dict[prefix + "weight_rows"],
                                state_dict[prefix + "weight_cols"],
                                state_dict[prefix + "weight_values"], fmt, prefix)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_weight"] = self._state()
        state["_weight"]["format"] = self.format
        state.pop("_bias")
        return state

    def __setstate__(self, state):
        saved = state.pop("_weight")
        state.setdefault("_config", _DEFAULT_CONFIG)  # pickled before layers had a schedule
        super().__setstate__(state)
        shape = [int(v) for v in saved["weight_shape"].tolist()]
        self._weight = _weight_from_coo(shape, saved["weight_rows"], saved["weight_cols"],
                                        saved["weight_values"], saved["format"], "")
        bias = saved.get("bias")
        self._bias = None if bias is None else bias.numpy().copy()

    def _apply(self, fn):
        """.float() and .cpu() keep the layer; other dtypes and devices raise NotSupported (the
        compiled kernels run on the CPU in float32)."""
        probe = torch.zeros(1, dtype=torch.float32)
        converted = fn(probe)
        if isinstance(converted, torch.Tensor) and (
                converted.device.type != "cpu" or converted.dtype != torch.float32):
            raise NotSupported(f"FormatLinear runs on the CPU in float32; it cannot become "
                               f"{converted.dtype} on {converted.device}")
        return super()._apply(fn)

    def requires_grad_(self, requires_grad: bool = True):
        if requires_grad:
            raise NotSupported("FormatLinear.requires_grad_(True): the sparse weight and bias "
                               "are not trainable; gradients flow to the input only")
        return self


def _float32_weight(linear: torch.nn.Linear) -> Tensor:
    """`linear`'s weight as a dense float32 sf.Tensor (a copy), checked to be a CPU nn.Linear."""
    if not isinstance(linear, torch.nn.Linear):
        raise InvalidArgument(f"expected a torch.nn.Linear, got {type(linear).__name__}")
    if linear.weight.device.type != "cpu":
        raise NotSupported(f"FormatLinear runs on the CPU; the weight is on "
                           f"{linear.weight.device} (move the layer with .cpu())")
    return from_torch(linear.weight.detach().to(torch.float32).contiguous())


def _weight_from_coo(shape, rows, cols, values, fmt: str, prefix: str) -> Tensor:
    """The weight in `fmt` from coordinates and values (checked: integers in range, one value
    each, row-major and without repeats)."""
    fmt = _sparse_format(fmt)
    rows = rows.detach().to(torch.int64).contiguous().numpy()
    cols = cols.detach().to(torch.int64).contiguous().numpy()
    values = values.detach().to(torch.float32).contiguous().numpy()
    if not (rows.ndim == cols.ndim == values.ndim == 1 and
            rows.shape == cols.shape == values.shape):
        raise InvalidArgument(f"{prefix}weight_rows, weight_cols and weight_values must be 1-D "
                              f"and of one length; got {rows.shape}, {cols.shape}, {values.shape}")
    if rows.size and (rows.min() < 0 or rows.max() >= shape[0] or cols.min() < 0 or
                      cols.max() >= shape[1]):
        raise InvalidArgument(f"{prefix}weight_rows/weight_cols: a coordinate is outside the "
                              f"{shape[0]} x {shape[1]} weight")
    order = rows * shape[1] + cols
    if order.size > 1 and not bool(np.all(np.diff(order) > 0)):
        raise InvalidArgument(f"{prefix}weight_rows/weight_cols: coordinates must be row-major "
                              f"and without repeats (as state_dict() writes them)")
    coo = _coo_tensor(tuple(shape), rows, cols, values, "f32")
    weight, _ = _C._convert(coo, fmt, "")
    return weight


__all__ = ["FormatLinear"]
