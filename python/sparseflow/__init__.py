"""sparseflow: sparse tensors, formats, files, compiled sparse kernels and 2:4 layers for PyTorch.

    import sparseflow as sf
    A = sf.from_scipy(matrix)                       # csr, viewing scipy's arrays
    B = sf.convert(A, "bsr:4x4")
    kernel = sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"})
    y = kernel(A=A, x=x)                            # numpy in, numpy out
    layer, diff = sf.SparseLinear.from_dense(linear, pattern="2:4", return_diff=True)
    report = sf.sparsify(model, include=["*.fc*"])
    report = sf.prune(model, calibration_batches, pattern="2:4", method="sparsegpt")

torch is imported only when SparseLinear, sparsify or prune is first used (transformers only by
sf.load_minilm). See docs/python.md and docs/prune.md.
"""

from . import nm
from ._ext import _C
from .checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from .errors import (
    CompileError,
    InternalError,
    InvalidArgument,
    InvalidFormat,
    IoError,
    NotSupported,
    OutOfMemory,
    OutOfRange,
    ParseError,
    SparseFlowError,
)
from .kernels import Kernel, compile
from .onnx_model import OnnxModel, load_onnx

Schedule = _C.Schedule
from .scipy_interop import from_scipy, to_scipy
from .tuning import TunedKernel, tune
from .tensors import (
    Tensor,
    as_tensor,
    convert,
    dtype_name,
    from_numpy,
    from_torch,
    read,
    to_numpy,
    to_torch,
    transpose,
    write,
)

__version__ = _C.__version__

# Names whose modules import torch: loaded on first use only.
_TORCH_NAMES = {
    "SparseLinear": "torch_layers",
    "ScriptableSparseLinear": "torch_layers",
    "FormatLinear": "torch_format_linear",
    "sparsify": "torch_sparsify",
    "SparsifyReport": "torch_sparsify",
    "LayerReport": "torch_sparsify",
    "optimize": "torch_optimize",
    "OptimizeReport": "torch_optimize",
    "OptimizedModule": "torch_optimize",
    "prune": "torch_prune",
    "PruneReport": "torch_prune",
    "PrunedLayer": "torch_prune",
    "load_minilm": "minilm",
}
_LAZY_MODULES = {"minilm"}  # sf.minilm.embed(...) without importing it first


def __getattr__(name):
    if name in _TORCH_NAMES:
        import importlib

        return getattr(importlib.import_module(f".{_TORCH_NAMES[name]}", __name__), name)
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'sparseflow' has no attribute '{name}'")


def _register_torch_ops_if_torch_is_loaded():
    """torch.ops.sparseflow.* must exist before torch.jit.load reads a module that calls them:
    registered now when torch is already imported (else when SparseLinear is first used, or by
    ``import sparseflow.torch_ops``)."""
    import sys

    if "torch" in sys.modules:
        from . import torch_ops  # noqa: F401


_register_torch_ops_if_torch_is_loaded()


def formats() -> list:
    """The preset format names (dense, csr, csc, coo, bsr:RxC, ell[:K], 2:4...)."""
    return list(_C.format_presets())


def activations() -> list:
    """The activations SparseLinear can fuse: relu, silu, gelu (the erf form), gelu_tanh, tanh,
    sigmoid."""
    return ["gelu" if a == "gelu_erf" else a for a in _C.activations() if a != "none"]


__all__ = [
    "Checkpoint",
    "CompileError",
    "InternalError",
    "InvalidArgument",
    "InvalidFormat",
    "IoError",
    "Kernel",
    "Schedule",
    "LayerReport",
    "ScriptableSparseLinear",
    "NotSupported",
    "OptimizeReport",
    "OptimizedModule",
    "OutOfMemory",
    "OutOfRange",
    "ParseError",
    "PruneReport",
    "PrunedLayer",
    "SparseFlowError",
    "SparseLinear",
    "SparsifyReport",
    "Tensor",
    "TunedKernel",
    "activations",
    "as_tensor",
    "compile",
    "convert",
    "dtype_name",
    "formats",
    "from_numpy",
    "from_scipy",
    "from_torch",
    "load_checkpoint",
    "load_minilm",
    "nm",
    "optimize",
    "prune",
    "read",
    "save_checkpoint",
    "sparsify",
    "to_numpy",
    "to_scipy",
    "to_torch",
    "transpose",
    "tune",
    "write",
]
