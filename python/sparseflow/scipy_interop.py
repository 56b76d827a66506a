"""scipy.sparse <-> sf.Tensor, sharing the index and value arrays where the layout allows.

csr, csc, coo and bsr map onto sparseflow's csr, csc, coo and bsr:RxC formats array for array:
a canonical scipy matrix (sorted, no duplicates) with float32/float64 values is viewed, not
copied (the Tensor keeps scipy's arrays alive; coo gets one new two-element positions array).
Other scipy formats go through csr. Going back, the scipy matrix views the Tensor's arrays.
"""

from __future__ import annotations

import numpy as np

from ._ext import _C
from .errors import InvalidArgument
from .tensors import Tensor, as_tensor, dtype_name

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def _viewable(array: np.ndarray, dtype) -> np.ndarray:
    """`array` as a C-contiguous, writeable, native array of `dtype`: itself when it already is."""
    array = np.asarray(array)
    flags = array.flags
    if (array.dtype == dtype and flags.c_contiguous and flags.aligned and flags.writeable
            and array.dtype.isnative):
        return array
    return np.array(array, dtype=dtype, order="C", copy=True)


def _index_arrays(*arrays):
    """The index arrays in one width: int32 when all are int32, else int64 (and '@i64')."""
    wide = any(np.asarray(a).dtype != np.int32 for a in arrays)
    dtype = np.int64 if wide else np.int32
    return [_viewable(a, dtype) for a in arrays], ("@i64" if wide else "")


def _values(values, dtype: str = ""):
    values = np.asarray(values)
    if dtype == "bf16":
        return _viewable(values.reshape(-1), values.dtype), dtype
    if values.dtype not in _FLOATS:
        if values.dtype.kind not in "biuf":
            raise InvalidArgument(f"scipy matrix values of dtype {values.dtype} are not supported")
        values = values.astype(np.float64)
    return _viewable(values.reshape(-1), values.dtype), dtype


def _csr_like(shape, pos, crd, values, name: str, dtype: str = "") -> Tensor:
    """A csr, csc or bsr:RxC tensor viewing (pos, crd, values): the compressed level is level 1."""
    (pos, crd), width = _index_arrays(pos, crd)
    values, dtype = _values(values, dtype)
    empty = (None, None, None)
    levels = [empty, (pos, crd, None)] + ([empty, empty] if name.startswith("bsr") else [])
    return _C._from_arrays(list(shape), name + width, levels, values, dtype)


def _coo_tensor(shape, rows, cols, values, dtype: str = "") -> Tensor:
    """A coo matrix from row-major sorted, duplicate-free coordinates (viewed, not copied)."""
    (rows, cols), width = _index_arrays(rows, cols)
    pos = np.array([0, rows.shape[0]], dtype=rows.dtype)
    values, dtype = _values(values, dtype)
    levels = [(pos, rows, None), (None, cols, None)]
    return _C._from_arrays(list(shape), "coo" + width, levels, values, dtype)


def _row_major_unique(rows: np.ndarray, cols: np.ndarray) -> bool:
    if rows.shape[0] < 2:
        return True
    dr = np.diff(rows.astype(np.int64))
    dc = np.diff(cols.astype(np.int64))
    return bool(np.all((dr > 0) | ((dr == 0) & (dc > 0))))


def from_scipy(matrix, format: str | None = None, dtype=None) -> Tensor:
    """A Tensor from a scipy.sparse matrix or array.

    csr/csc/coo/bsr become csr/csc/coo/bsr:RxC viewing scipy's arrays when they are canonical
    (sorted, no duplicates; otherwise a canonical copy is made first, scipy's matrix is never
    changed); dia, lil, dok go through csr. Integer values become float64. ``format`` and
    ``dtype`` convert the result (``sf.from_scipy(m, format="bsr:4x4")``).
    """
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise InvalidArgument(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
    m = matrix
    if m.format not in ("csr", "csc", "coo", "bsr"):
        m = m.tocsr()
    shape = tuple(int(d) for d in m.shape)
    if m.format == "coo":
        rows, cols = np.asarray(m.row), np.asarray(m.col)
        if not _row_major_unique(rows, cols):
            c = m.tocsr()
            c.sum_duplicates()
            m = c.tocoo()
            rows, cols = m.row, m.col
        tensor = _coo_tensor(shape, rows, cols, m.data)
    else:
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        if m.format == "bsr":
            r, c = m.blocksize
            tensor = _csr_like(shape, m.indptr, m.indices, m.data, f"bsr:{r}x{c}")
        else:
            tensor = _csr_like(shape, m.indptr, m.indices, m.data, m.format)
    want = dtype_name(dtype) if dtype is not None else tensor.dtype
    if (format is not None and format != tensor.format) or want != tensor.dtype:
        target = format if format is not None else tensor.format
        tensor, _ = _C._convert(tensor, target, want if want != tensor.dtype else "")
    return tensor


def _base_format(text: str) -> str:
    return text.split("@")[0]


def to_scipy(tensor, format: str | None = None):
    """A scipy.sparse matrix from a Tensor (or anything as_tensor takes).

    csr, csc, coo and bsr:RxC (with a shape the blocks divide) come back as the same scipy
    format viewing the Tensor's arrays (f32/f64 values; f16 and bf16 are widened to float32,
    which scipy needs); every other format is converted to csr first. ``format`` ("csr", "csc",
    "coo", "bsr:RxC") asks for a scipy format, converting when the tensor is in another.
    """
    import scipy.sparse as sp

    t = as_tensor(tensor)
    if t.rank != 2:
        raise InvalidArgument(f"scipy.sparse holds matrices; this tensor has rank {t.rank}")
    base = _base_format(t.format)
    if format is None:
        target = base if base in ("csr", "csc", "coo") else "csr"
        if base.startswith("bsr:"):
            r, c = (int(x) for x in base[4:].split("x"))
            if t.shape[0] % r == 0 and t.shape[1] % c == 0:
                target = base
    else:
        target = _base_format(_C.parse_format(format, 2))
        if not (target in ("csr", "csc", "coo") or target.startswith("bsr:")):
            raise InvalidArgument(
                f"scipy.sparse has no '{format}'; ask for csr, csc, coo or bsr:RxC")
    if base != target:
        t, _ = _C._convert(t, target, "")
    if t.dtype not in ("f32", "f64"):
        t, _ = _C._convert(t, t.format, "f32")
    shape = t.shape
    values = t.values
    if target == "coo":
        rows = t.level_arrays(0)["crd"]
        cols = t.level_arrays(1)["crd"]
        return sp.coo_matrix((values, (rows, cols)), shape=shape, copy=False)
    level = t.level_arrays(1)
    if target == "csr":
        return sp.csr_matrix((values, level["crd"], level["pos"]), shape=shape, copy=False)
    if target == "csc":
        return sp.csc_matrix((values, level["crd"], level["pos"]), shape=shape, copy=False)
    r, c = (int(x) for x in target[4:].split("x"))
    if shape[0] % r or shape[1] % c:
        raise InvalidArgument(
            f"scipy's bsr needs a shape its {r}x{c} blocks divide; {shape[0]}x{shape[1]} is not")
    return sp.bsr_matrix((values.reshape(-1, r, c), level["crd"], level["pos"]), shape=shape,
                         blocksize=(r, c), copy=False)


__all__ = ["from_scipy", "to_scipy"]
