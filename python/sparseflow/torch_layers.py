"""PyTorch: SparseLinear, an nn.Module running sparseflow's 2:4 kernel on weights it owns.

The packed weights live in sparseflow's memory, and no Python object views them: state_dict(),
pickling and deepcopy hand out copies, load_state_dict() and .half()/.bfloat16()/.float() build
a new packed layer, so what the kernel reads can never go stale. forward gives the input a
gradient (dX through the sparse kernel); the weights are not trainable. Under torch.jit.trace
forward records torch.ops.sparseflow.nm_linear (torch_ops.py); torch.jit.script compiles
ScriptableSparseLinear in its place. sparsify(model) lives in torch_sparsify.py.
"""

from __future__ import annotations

import torch

from ._ext import _C
from .errors import InvalidArgument, NotSupported
from .nm import sparsify as _sparsify_tensor
from .tensors import Tensor, dtype_name, from_torch, to_torch
from .torch_ops import (
    WEIGHT_DTYPES,
    activation_name,
    apply_layer,
    check_input,
    check_weights,
    layer_from_state,
    layer_state,
    nm_linear,
    remember_layer,
    scripted_nm_linear,
    torch_dtype,
)

_ACTIVATIONS = ("relu", "silu", "gelu", "gelu_erf", "gelu_tanh", "tanh", "sigmoid")
_SF_WEIGHT_DTYPES = ("f32", "bf16", "f16")  # the weight dtypes torch_ops maps to torch


def _check_activation(activation: str | None) -> str:
    if activation is not None and activation not in _ACTIVATIONS:
        raise InvalidArgument(
            f"unknown activation '{activation}'; expected None or one of {', '.join(_ACTIVATIONS)}")
    return activation or "none"


def _bias_array(bias):
    if bias is None:
        return None
    if isinstance(bias, torch.Tensor):
        return bias.detach().to(device="cpu", dtype=torch.float32).contiguous().numpy()
    import numpy as np

    return np.ascontiguousarray(bias, dtype=np.float32)


class SparseLinear(torch.nn.Module):
    """y = activation(x · Wᵀ + b) with W in the 2:4 format, on sparseflow's CPU kernel.

    Build it with ``SparseLinear.from_dense(linear)`` (or ``SparseLinear.zeros(...)`` to load a
    state_dict into). forward takes ``(..., in_features)`` CPU inputs, float32 or of the weights'
    dtype (bfloat16/float16), and returns the input's dtype (accumulation is float32).

    state_dict keys: ``weight_values`` (out_features × slots, the weights' dtype),
    ``weight_meta`` (uint8, 2-bit in-group offsets), ``weight_shape`` ([out_features,
    in_features]), ``weight_pattern`` ([2, 4]) and ``bias`` (float32, when there is one): all
    tensors, all copies.
    """

    def __init__(self, weight: Tensor, bias=None, activation: str | None = None,
                 threads: int = 0):
        super().__init__()
        if not isinstance(weight, Tensor):
            raise InvalidArgument("SparseLinear takes the weights as an sf.Tensor in the 2:4 "
                                  "format; use SparseLinear.from_dense(linear) for a dense layer")
        if weight.dtype not in _SF_WEIGHT_DTYPES:
            raise NotSupported(f"SparseLinear takes float32, bfloat16 or float16 2:4 weights, not "
                               f"{weight.dtype}; an f64 2:4 layer runs through sf.compile("
                               f"'Y(n,o) = X(n,i) * W(o,i)', formats={{'W': '2:4'}}, dtypes=...)")
        self._layer = _C._NMLayer(weight, _bias_array(bias), _check_activation(activation),
                                  threads)

    @classmethod
    def from_dense(cls, linear: torch.nn.Linear, pattern: str = "2:4",
                   activation: str | None = None, return_diff: bool = False, threads: int = 0):
        """Prunes ``linear``'s weight to ``pattern`` by magnitude (n largest |w| of every m
        along in_features) and builds the layer; with ``return_diff=True`` returns
        ``(layer, diff)``, diff a SparsifyDiff (max_error, mean_error, relative_error,
        kept_magnitude, kept, total). ``activation``: None, "relu", "silu", "gelu" (erf),
        "gelu_tanh", "tanh" or "sigmoid", fused after the bias. The dense layer is not changed."""
        if not isinstance(linear, torch.nn.Linear):
            raise InvalidArgument(f"expected a torch.nn.Linear, got {type(linear).__name__}")
        weight = linear.weight
        if weight.device.type != "cpu":
            raise NotSupported(f"sparseflow's 2:4 kernels run on the CPU; the weight is on "
                               f"{weight.device} (move the layer with .cpu())")
        if weight.dtype not in WEIGHT_DTYPES:
            raise NotSupported(f"the 2:4 kernels take float32, bfloat16 or float16 weights, not "
                               f"{weight.dtype}")
        compressed, diff = _sparsify_tensor(from_torch(weight), pattern)
        layer = cls(compressed, linear.bias, activation=activation, threads=threads)
        return (layer, diff) if return_diff else layer

    @classmethod
    def zeros(cls, in_features: int, out_features: int, bias: bool = True, pattern: str = "2:4",
              activation: str | None = None, dtype: torch.dtype = torch.float32,
              threads: int = 0):
        """A layer of zero weights (and bias), the shape to ``load_state_dict`` a saved one into
        without the dense model."""
        if dtype not in WEIGHT_DTYPES:
            raise NotSupported(f"the 2:4 kernels take float32, bfloat16 or float16 weights, not "
                               f"{dtype}")
        dense = from_torch(torch.zeros(out_features, in_features, dtype=dtype))
        zeros_bias = torch.zeros(out_features) if bias else None
        return cls(_C.nm_compress(dense, pattern), zeros_bias, activation, threads)

    # What the layer is: read-only, from the packed layer itself.
    in_features = property(lambda self: int(self._layer.in_features))
    out_features = property(lambda self: int(self._layer.out_features))
    pattern = property(lambda self: self._layer.pattern)
    activation = property(lambda self: activation_name(self._layer),
                          doc="None, 'relu', 'silu', 'gelu', 'gelu_tanh', 'tanh' or 'sigmoid'.")
    has_bias = property(lambda self: bool(self._layer.has_bias))
    weight_dtype = property(lambda self: torch_dtype(self._layer.weight_dtype))

    @property
    def weight_bytes(self) -> int:
        """Bytes of packed weights (values + metadata) one forward streams."""
        return int(self._layer.weight_bytes)

    def dense_weight(self) -> torch.Tensor:
        """The pruned weight as a dense (out_features, in_features) torch tensor (a copy)."""
        return to_torch(_C.nm_decompress(self._layer.weights()))

    def sparse_weight(self) -> Tensor:
        """The weight as an sf.Tensor in the 2:4 format (a copy; e.g. for sf.save_checkpoint)."""
        return self._layer.weights()

    def bias_values(self) -> torch.Tensor | None:
        """The bias as a float32 tensor (a copy), or None."""
        bias = self._layer.bias()
        return None if bias is None else torch.from_numpy(bias)

    def describe(self, batch: int = 1) -> str:
        """The SIMD target and tile plan forward uses for this batch size."""
        return self._layer.describe(batch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.jit.is_tracing():
            return self._traced_forward(x)
        check_input(x, self.in_features, self.out_features, self.weight_dtype)
        return apply_layer(self._layer, x)

    def _traced_forward(self, x: torch.Tensor) -> torch.Tensor:
        """Records torch.ops.sparseflow.nm_linear with copies of the weights as the trace's
        constants (given this packed layer, which the operator checks against them)."""
        tracing = torch._C._get_tracing_state()
        torch._C._set_tracing_state(None)  # the copies are constants, not traced computations
        try:
            state = layer_state(self._layer)
        finally:
            torch._C._set_tracing_state(tracing)
        remember_layer(state["weight_values"], self._layer)
        return scripted_nm_linear()(x, state["weight_values"], state["weight_meta"],
                                    state["bias"], self.in_features, self.out_features,
                                    self.pattern, self._layer.activation)

    def __prepare_scriptable__(self):
        """torch.jit.script compiles a ScriptableSparseLinear in this layer's place."""
        return ScriptableSparseLinear(self)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.has_bias}, pattern={self.pattern}, "
                f"activation={self.activation}, weight_dtype={self.weight_dtype}")

    # --- state_dict, pickling, deepcopy -------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        state = layer_state(self._layer)
        destination[prefix + "weight_values"] = state["weight_values"]
        destination[prefix + "weight_meta"] = state["weight_meta"]
        destination[prefix + "weight_shape"] = torch.tensor([self.out_features, self.in_features])
        destination[prefix + "weight_pattern"] = torch.tensor(
            [int(part) for part in self.pattern.split(":")])
        if state["bias"] is not None:
            destination[prefix + "bias"] = state["bias"]

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        names = ["weight_values", "weight_meta", "weight_shape", "weight_pattern"] + (
            ["bias"] if self.has_bias else [])
        if strict:
            unexpected_keys.extend(key for key in state_dict
                                   if key.startswith(prefix) and key[len(prefix):] not in names)
        present = [name for name in names if prefix + name in state_dict]
        if prefix + "weight" in state_dict and prefix + "weight_values" not in state_dict:
            error_msgs.append(
                f"{prefix}weight is a dense weight, but {prefix[:-1] or 'this module'} is a "
                "SparseLinear, which loads 2:4 weights (weight_values, weight_meta): load the "
                "dense state_dict before sparsify, or build the layer with "
                "SparseLinear.from_dense(linear)")
            return
        if not present:
            missing_keys.extend(prefix + name for name in names)
            return
        for name in names:
            if name not in present:
                error_msgs.append(f"missing {prefix}{name}: a SparseLinear loads "
                                  f"{', '.join(prefix + n for n in names)} together")
        if len(present) != len(names):
            return
        try:
            self._layer = self._layer_from_state_dict(state_dict, prefix)
        except _C.SparseFlowError as error:
            error_msgs.append(str(error))

    def _layer_from_state_dict(self, state_dict, prefix):
        shape = self._small_ints(state_dict, prefix + "weight_shape")
        if shape != [self.out_features, self.in_features]:
            raise InvalidArgument(
                f"size mismatch for {prefix}weight_values: the checkpoint's layer is "
                f"{' x '.join(map(str, shape))} ({prefix}weight_shape), the layer in the current "
                f"model is {self.out_features} x {self.in_features}")
        pattern = self._small_ints(state_dict, prefix + "weight_pattern")
        if ":".join(map(str, pattern)) != self.pattern:
            raise InvalidArgument(f"{prefix}weight_pattern: the checkpoint's pattern is "
                                  f"{':'.join(map(str, pattern))}, this layer's {self.pattern}")
        values = state_dict[prefix + "weight_values"]
        meta = state_dict[prefix + "weight_meta"]
        bias = state_dict.get(prefix + "bias") if self.has_bias else None
        names = (prefix + "weight_values", prefix + "weight_meta", prefix + "bias")
        check_weights(values, meta, bias, self.in_features, self.out_features, self.pattern,
                      names)
        # As nn.Linear's copy_: the values take this layer's dtype.
        values = values.detach().to(self.weight_dtype)
        try:
            return layer_from_state(values, meta.detach(), bias, self.in_features, self.pattern,
                                    self._layer.activation, self._layer.threads)
        except _C.SparseFlowError as error:
            raise InvalidArgument(f"{names[0]}, {names[1]}: {error}") from error

    @staticmethod
    def _small_ints(state_dict, key) -> list:
        value = state_dict[key]
        if not isinstance(value, torch.Tensor) or value.dtype.is_floating_point or (
                value.dim() != 1 or value.numel() != 2):
            raise InvalidArgument(f"{key} must be a tensor of two integers, got {value!r}")
        return [int(v) for v in value.tolist()]

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_layer"] = layer_state(self._layer)  # tensors: torch.save stores them as such
        return state

    def __setstate__(self, state):
        saved = state.pop("_layer")
        super().__setstate__(state)
        self._layer = layer_from_state(saved["weight_values"], saved["weight_meta"],
                                       saved["bias"], saved["in_features"], saved["pattern"],
                                       saved["activation"], saved["threads"])

    # --- conversions ----------------------------------------------------------------------------

    def _apply(self, fn):
        """.half(), .bfloat16(), .float(), .to(dtype) repack the weights; other dtypes and
        devices raise NotSupported (the kernels run on the CPU on f32/bf16/f16 weights)."""
        probe = torch.zeros(1, dtype=self.weight_dtype)
        try:
            converted = fn(probe)
        except Exception as error:  # e.g. .cuda() on a build without CUDA
            raise NotSupported(f"SparseLinear cannot take this conversion ({error}); it runs on "
                               "the CPU with float32, bfloat16 or float16 weights") from error
        if isinstance(converted, torch.Tensor):
            if converted.device.type != "cpu":
                raise NotSupported(f"SparseLinear runs on the CPU (sparseflow's 2:4 kernels); it "
                                   f"cannot move to {converted.device}")
            if converted.dtype != self.weight_dtype:
                if converted.dtype not in WEIGHT_DTYPES:
                    raise NotSupported(f"SparseLinear's 2:4 kernels take float32, bfloat16 or "
                                       f"float16 weights, not {converted.dtype}")
                self._layer = self._layer.with_weight_dtype(dtype_name(converted.dtype))
        return super()._apply(fn)

    def requires_grad_(self, requires_grad: bool = True):
        if requires_grad:
            raise NotSupported("SparseLinear.requires_grad_(True): the 2:4 weights and bias are "
                               "not trainable (they are packed for the kernel); gradients flow "
                               "to the input only")
        return self


class ScriptableSparseLinear(torch.nn.Module):
    """What torch.jit.script compiles for a SparseLinear: the same layer with its weights as
    buffers (``weight_values``, ``weight_meta``, ``bias``, copies) run by
    torch.ops.sparseflow.nm_linear, which checks them bit for bit before every call and
    repacks them when they changed. Same outputs as the SparseLinear it came from."""

    __constants__ = ["in_features", "out_features", "pattern", "activation"]

    def __init__(self, layer: SparseLinear):
        super().__init__()
        state = layer_state(layer._layer)
        remember_layer(state["weight_values"], layer._layer)
        self.in_features = state["in_features"]
        self.out_features = state["out_features"]
        self.pattern = state["pattern"]
        self.activation = state["activation"]
        self.register_buffer("weight_values", state["weight_values"])
        self.register_buffer("weight_meta", state["weight_meta"])
        self.register_buffer("bias", state["bias"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nm_linear(x, self.weight_values, self.weight_meta, self.bias, self.in_features,
                         self.out_features, self.pattern, self.activation)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, pattern={self.pattern}, "
                f"activation={self.activation}")


def __getattr__(name):  # sparsify and its reports moved to torch_sparsify.py
    if name in ("sparsify", "SparsifyReport", "LayerReport"):
        from . import torch_sparsify

        return getattr(torch_sparsify, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ScriptableSparseLinear", "SparseLinear"]
