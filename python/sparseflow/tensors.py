"""sf.Tensor from and to numpy arrays and torch tensors, files and conversions.

Zero-copy rules (docs/python.md): a C-contiguous, aligned, writeable numpy array of float32,
float64 or float16 becomes a dense Tensor that views its memory (the Tensor keeps the array
alive); anything else is copied first. A dense Tensor comes back as a numpy view whose base
keeps the Tensor alive. torch CPU tensors go through the same path via ``.numpy()`` /
``torch.from_numpy`` (bfloat16 as raw int16 bits, since numpy has no bfloat16).
"""

from __future__ import annotations

import os

import numpy as np

from ._ext import _C
from .errors import InvalidArgument, NotSupported

Tensor = _C.Tensor

_NUMPY_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def dtype_name(dtype) -> str:
    """The short name ('f32', 'f64', 'f16', 'bf16') of a str, numpy dtype or torch dtype."""
    if isinstance(dtype, str):
        return _C.dtype_name(dtype)
    text = str(dtype)
    if text.startswith("torch."):
        return _C.dtype_name(text[len("torch."):])
    return _C.dtype_name(np.dtype(dtype).name)


def _viewable(array: np.ndarray) -> bool:
    flags = array.flags
    return flags.c_contiguous and flags.aligned and flags.writeable and array.dtype.isnative


def from_numpy(array, format: str = "dense", dtype=None) -> Tensor:
    """A Tensor from a numpy array (or anything np.asarray takes).

    With format "dense" and the array's own float dtype, the Tensor views the array's memory
    when it is C-contiguous, aligned and writeable (no copy); otherwise, or for integer and
    boolean arrays (which become float64), a copy is made. Another ``format`` converts.
    """
    array = np.asarray(array)
    want = dtype_name(dtype) if dtype is not None else None
    if array.dtype not in _NUMPY_FLOATS:
        if array.dtype.kind not in "biuf":
            raise InvalidArgument(f"cannot make a tensor of numpy dtype {array.dtype}")
        array = array.astype(np.float64)
    if not _viewable(array):
        array = np.array(array, order="C", dtype=array.dtype.newbyteorder("="), copy=True)
    tensor = _C._from_numpy(array)
    if format != "dense" or want not in (None, tensor.dtype):
        tensor, _ = _C._convert(tensor, format, "" if want in (None, tensor.dtype) else want)
    return tensor


def to_numpy(tensor) -> np.ndarray:
    """The dense values: a view of a dense Tensor (bf16: a float32 copy), else a dense copy."""
    return as_tensor(tensor).to_numpy()


def _torch_dense_to_tensor(t, dtype) -> Tensor:
    import torch

    t = t.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.dtype == torch.bfloat16:
        tensor = _C._from_numpy(t.view(torch.int16).numpy(), "bf16")
    elif t.dtype in (torch.float32, torch.float64, torch.float16):
        tensor = _C._from_numpy(t.numpy())
    elif t.dtype.is_complex:
        raise InvalidArgument(f"cannot make a tensor of torch dtype {t.dtype}")
    else:
        tensor = _C._from_numpy(t.to(torch.float64).numpy())
    want = dtype_name(dtype) if dtype is not None else tensor.dtype
    if want != tensor.dtype:
        tensor, _ = _C._convert(tensor, "dense", want)
    return tensor


def from_torch(t, format: str | None = None, dtype=None) -> Tensor:
    """A Tensor from a CPU torch tensor: dense (strided) tensors are viewed without a copy when
    contiguous (bfloat16 included); torch sparse CSR tensors view their arrays; sparse COO
    tensors are coalesced. ``format``/``dtype`` convert. CUDA (any non-CPU) tensors raise
    NotSupported."""
    import torch

    if not isinstance(t, torch.Tensor):
        raise InvalidArgument(f"expected a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise NotSupported(
            f"sparseflow runs on the CPU; this tensor is on {t.device} (move it with .cpu())"
        )
    if t.layout == torch.strided:
        tensor = _torch_dense_to_tensor(t, dtype)
    elif t.layout == torch.sparse_csr:
        from .scipy_interop import _csr_like

        t = t.detach()
        values = _torch_dense_to_tensor(t.values(), None)
        tensor = _csr_like(tuple(t.shape), t.crow_indices().numpy(), t.col_indices().numpy(),
                           values.values, "csr", values.dtype)
    elif t.layout == torch.sparse_coo:
        from .scipy_interop import _coo_tensor

        t = t.detach().coalesce()
        if t.sparse_dim() != 2 or t.dense_dim() != 0:
            raise NotSupported("sparseflow takes torch sparse COO matrices (2 sparse dims)")
        indices = t.indices().numpy()
        values = _torch_dense_to_tensor(t.values(), None)
        tensor = _coo_tensor(tuple(t.shape), indices[0], indices[1], values.values, values.dtype)
    else:
        raise NotSupported(f"torch layout {t.layout} is not supported; use .to_dense()")
    want = dtype_name(dtype) if dtype is not None else tensor.dtype
    if (format is not None and format != tensor.format) or want != tensor.dtype:
        target = format if format is not None else tensor.format
        tensor, _ = _C._convert(tensor, target, want if want != tensor.dtype else "")
    return tensor


def to_torch(tensor, layout=None):
    """A torch tensor from a Tensor. Dense tensors become strided torch tensors sharing memory
    (bf16 too); csr becomes torch.sparse_csr sharing its arrays and coo torch.sparse_coo (int64
    indices, copied). ``layout=torch.strided`` gives any tensor as a dense torch tensor."""
    import torch

    tensor = as_tensor(tensor)
    if layout is None:
        if tensor.is_dense:
            layout = torch.strided
        elif tensor.format.split("@")[0] == "csr":
            layout = torch.sparse_csr
        elif tensor.format.split("@")[0] == "coo" and tensor.rank == 2:
            layout = torch.sparse_coo
        else:
            raise NotSupported(
                f"no torch layout holds '{tensor.format}'; convert to csr or coo, or pass "
                "layout=torch.strided for a dense copy"
            )
    if layout == torch.strided:
        if not tensor.is_dense:
            tensor, _ = _C._convert(tensor, "dense", "")
        if tensor.dtype == "bf16":
            raw = tensor.values.reshape(tensor.shape)
            return torch.from_numpy(raw).view(torch.bfloat16)
        return torch.from_numpy(tensor.to_numpy())
    if layout == torch.sparse_csr:
        if tensor.format.split("@")[0] != "csr":
            tensor, _ = _C._convert(tensor, "csr", "")
        level = tensor.level_arrays(1)
        return torch.sparse_csr_tensor(
            torch.from_numpy(level["pos"]),
            torch.from_numpy(level["crd"]),
            _values_to_torch(tensor),
            size=tensor.shape,
        )
    if layout == torch.sparse_coo:
        if tensor.format.split("@")[0] != "coo":
            tensor, _ = _C._convert(tensor, "coo", "")
        rows = tensor.level_arrays(0)["crd"].astype(np.int64)
        cols = tensor.level_arrays(1)["crd"].astype(np.int64)
        indices = torch.from_numpy(np.stack([rows, cols]))
        return torch.sparse_coo_tensor(indices, _values_to_torch(tensor), size=tensor.shape)
    raise NotSupported(f"torch layout {layout} is not supported")


def _values_to_torch(tensor):
    import torch

    if tensor.dtype == "bf16":
        return torch.from_numpy(tensor.values).view(torch.bfloat16)
    return torch.from_numpy(tensor.values)


def as_tensor(obj, format: str | None = None, dtype=None) -> Tensor:
    """Any supported object as a Tensor: a Tensor as is, scipy.sparse matrices and arrays,
    torch tensors, numpy arrays (and what np.asarray takes). ``format``/``dtype`` convert."""
    if type(obj) is np.ndarray and format is None and dtype is None and _viewable(obj) and (
            obj.dtype in _NUMPY_FLOATS):
        return _C._from_numpy(obj)  # a float array viewed as is: the per-call path of kernels
    if isinstance(obj, Tensor):
        tensor = obj
    elif _is_scipy_sparse(obj):
        from .scipy_interop import from_scipy

        tensor = from_scipy(obj)
    elif _is_torch_tensor(obj):
        tensor = from_torch(obj)
    else:
        tensor = from_numpy(obj)
    want = dtype_name(dtype) if dtype is not None else tensor.dtype
    if (format is not None and format != tensor.format) or want != tensor.dtype:
        target = format if format is not None else tensor.format
        tensor, _ = _C._convert(tensor, target, want if want != tensor.dtype else "")
    return tensor


def _is_scipy_sparse(obj) -> bool:
    module = type(obj).__module__
    if not module.startswith("scipy.sparse"):
        return False
    import scipy.sparse

    return scipy.sparse.issparse(obj)


def _is_torch_tensor(obj) -> bool:
    if not type(obj).__module__.startswith("torch"):
        return False
    import torch

    return isinstance(obj, torch.Tensor)


def convert(tensor, format: str, dtype=None, *, return_report: bool = False,
            force_general: bool = False):
    """The tensor in another format (and optionally dtype): ``sf.convert(t, "bsr:4x4")``.

    Exact: every entry is kept; a format that cannot hold the data (2:4 for a denser matrix) is
    an error naming the first place that does not fit. With ``return_report=True`` returns
    ``(tensor, report)``, the report a dict (path taken, sizes before and after, seconds, text).
    """
    source = as_tensor(tensor)
    out, report = _C._convert(source, format, dtype_name(dtype) if dtype is not None else "",
                              force_general)
    return (out, report) if return_report else out


def transpose(tensor, format: str | None = None) -> Tensor:
    """The transpose of a matrix, in ``format`` (default: the input's format)."""
    source = as_tensor(tensor)
    return _C._transpose(source, format if format is not None else source.format)


def read(path, format: str | None = None, dtype=None, *, kind: str = "auto",
         verify_checksum: bool = True, tensor: str | None = None) -> Tensor:
    """Reads .mtx, Harwell-Boeing, .tns, .smtx, .npy, .sft or one tensor of a .safetensors
    checkpoint (``kind`` from the extension, else from the first bytes).

    ``format``: the result's format (default: as stored for .sft and checkpoints, dense for dense
    files, csr for other matrices, coo for other tensors). ``dtype``: None (the default) keeps the
    values exactly: binary files keep their stored type, text files get float32 when every value
    is a float32, else float64; a dtype converts while reading. ``tensor``: the name of the tensor to
    read from a checkpoint that holds several (``sf.load_checkpoint`` opens all of them). Errors
    name the file and line (or byte offset).
    """
    path = os.fspath(path)
    try:
        return _C._read(path, format or "", dtype_name(dtype) if dtype is not None else "", kind,
                        verify_checksum, tensor or "")
    except InvalidArgument as error:
        if tensor is None:
            _raise_if_checkpoint_needs_a_name(path, error)
        raise


def _raise_if_checkpoint_needs_a_name(path: str, error: Exception) -> None:
    """When ``path`` is a checkpoint of several tensors, says how to name the one to read."""
    try:
        names = _C._Checkpoint.open(path).names()
    except Exception:  # not a checkpoint: the reader's own error stands
        return
    if len(names) < 2:
        return
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    raise InvalidArgument(
        f"{path} is a checkpoint of {len(names)} tensors ({shown}); name the one to read: "
        f"sf.read(path, tensor={names[0]!r}), or open them all with sf.load_checkpoint(path)"
    ) from error


def write(path, tensor, *, kind: str = "auto", name: str | None = None) -> None:
    """Writes a tensor (or anything as_tensor takes) atomically; the kind from the extension:
    .mtx/.tns/.smtx get the entries, .npy the dense array, .sft the format and arrays as is,
    .safetensors a checkpoint of this one tensor named ``name`` (default "tensor";
    ``sf.save_checkpoint`` writes several)."""
    _C._write(os.fspath(path), as_tensor(tensor), kind, name or "")


__all__ = [
    "Tensor",
    "as_tensor",
    "convert",
    "dtype_name",
    "from_numpy",
    "from_torch",
    "read",
    "to_numpy",
    "to_torch",
    "transpose",
    "write",
]
