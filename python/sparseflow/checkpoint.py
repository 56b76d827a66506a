"""Checkpoints: many named tensors in one .safetensors file, dense or compressed (2:4, csr...).

    ckpt = sf.load_checkpoint("model.safetensors")  # a read-only mapping, tensors read on access
    w = ckpt["encoder.0.fc1.weight"]                # an sf.Tensor in its stored format and dtype
    sf.save_checkpoint("out.safetensors", {"w": w, "b": np.zeros(4, np.float32)})

Dense tensors are plain safetensors arrays (any safetensors reader loads them); other formats are
stored as the arrays of their levels plus a record in ``__metadata__`` (docs/tools.md), which
sparseflow reads back to the same tensor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from ._ext import _C
from .errors import InvalidArgument
from .tensors import Tensor, as_tensor


class Checkpoint(Mapping):
    """A .safetensors file opened for reading (mapped; its header checked when opened): a
    read-only mapping of tensor names, in the file's order, to sf.Tensor values read on access.

    ``ckpt.info(name)`` describes one without reading it (shape, the safetensors dtype, format,
    the file arrays that hold it, bytes, readable); ``ckpt.metadata`` is ``__metadata__``.
    Tensors with integer, bool or 8-bit float values are listed but raise NotSupported when read.
    """

    def __init__(self, path):
        self._file = _C._Checkpoint.open(os.fspath(path))
        self._names = list(self._file.names())

    @property
    def path(self) -> str:
        return self._file.path

    @property
    def metadata(self) -> dict:
        """``__metadata__`` (str to str), without sparseflow's own record."""
        return dict(self._file.metadata)

    def info(self, name: str) -> dict:
        """name, shape, dtype ("F32", "BF16", "I64"...), format ("dense", "2:4", "csr"...),
        arrays, bytes and readable, from the header alone."""
        self._check_name(name)
        return self._file.entry(name)

    def _check_name(self, name) -> None:
        if not isinstance(name, str) or not self._file.contains(name):
            shown = ", ".join(self._names[:8]) + (", ..." if len(self._names) > 8 else "")
            raise KeyError(f"{self.path} holds no tensor {name!r} (it holds {len(self._names)}: "
                           f"{shown})")

    def __getitem__(self, name: str) -> Tensor:
        self._check_name(name)
        return self._file.tensor(name)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and self._file.contains(name)

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"sparseflow.Checkpoint({self.path!r}, {len(self)} tensors)"


def load_checkpoint(path) -> Checkpoint:
    """Opens a .safetensors checkpoint (written by sparseflow or any safetensors writer) as a
    mapping of names to sf.Tensor. Errors name the file and what is wrong with it."""
    return Checkpoint(path)


def _float_tensor(name: str, value) -> Tensor:
    """``value`` as a Tensor, refusing what would change its dtype (integers, bool)."""
    if isinstance(value, Tensor):
        return value
    dtype = getattr(value, "dtype", None)
    if dtype is not None and type(value).__module__.startswith("torch"):
        if not dtype.is_floating_point:
            raise InvalidArgument(f"tensor '{name}' has dtype {dtype}; sparseflow checkpoints hold "
                                  "float32, float64, float16 and bfloat16 values (cast it, or "
                                  "write it with safetensors.torch.save_file)")
    elif dtype is not None or isinstance(value, (list, tuple)):
        kind = np.asarray(value).dtype if dtype is None else np.dtype(dtype)
        if kind.kind != "f":
            raise InvalidArgument(f"tensor '{name}' has dtype {kind}; sparseflow checkpoints hold "
                                  "float32, float64, float16 and bfloat16 values (cast it first)")
    else:
        raise InvalidArgument(f"tensor '{name}' is a {type(value).__name__}, not a tensor")
    return as_tensor(value)


def save_checkpoint(path, tensors: Mapping, metadata: Mapping | None = None) -> None:
    """Writes ``tensors`` (name -> sf.Tensor in any format, numpy array, torch tensor or
    scipy.sparse matrix, float values) as one .safetensors file, atomically: dense tensors as
    plain arrays, the others as the arrays of their format. ``metadata``: str -> str entries
    of ``__metadata__`` (the key "sparseflow" is reserved)."""
    if not isinstance(tensors, Mapping):
        raise InvalidArgument(f"save_checkpoint takes a mapping of names to tensors, got "
                              f"{type(tensors).__name__}")
    writer = _C._CheckpointWriter()
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise InvalidArgument(f"tensor names must be strings, got {name!r}")
        writer.add(name, _float_tensor(name, value))
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgument(f"metadata maps strings to strings, got {key!r}: {value!r}")
        writer.set_metadata(key, value)
    writer.write(os.fspath(path))


__all__ = ["Checkpoint", "load_checkpoint", "save_checkpoint"]
