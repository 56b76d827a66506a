"""sf.compile: index notation -> generated C++ -> native code (the system compiler, cached)."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

import numpy as np

from ._ext import _C
from .errors import InvalidArgument, NotSupported
from .tensors import _NUMPY_FLOATS, Tensor, _viewable, as_tensor, dtype_name


def _output_view(out) -> Tensor:
    """The caller's output as a Tensor the kernel writes into: an sf.Tensor as is, a numpy array
    (or a CPU torch tensor) through a view of its memory, never a copy (a copy would lose the
    result), so the array must be C-contiguous, aligned, writeable and of a float dtype."""
    if isinstance(out, Tensor):
        return out
    if type(out) is np.ndarray and out.dtype in _NUMPY_FLOATS and _viewable(out):
        return _C._from_numpy(out)
    array = out
    if type(out).__module__.startswith("torch"):
        array = out.detach().numpy() if out.is_contiguous() else None
    if not isinstance(array, np.ndarray) or array.dtype not in _NUMPY_FLOATS or not _viewable(array):
        raise InvalidArgument(
            "out= must be an sf.Tensor or a C-contiguous, aligned, writeable float32/float64 "
            f"array the kernel can write into; got {type(out).__name__}"
            + (f" {array.dtype} {array.shape}" if isinstance(array, np.ndarray) else "")
        )
    return _C._from_numpy(array)


class Kernel:
    """A compiled kernel; call it with the tensors and scalar parameters by name.

    ``kernel(A=a, x=x, alpha=0.5)``: tensors may be sf.Tensor, numpy arrays (dense, viewed
    without a copy), scipy.sparse matrices and CPU torch tensors; inputs in another format or
    dtype than compiled for are converted first. Python and numpy scalars are scalar parameters.
    A dense output comes back as a numpy array (viewing the result, no copy), a sparse one
    (SDDMM with a sparse output format) as an sf.Tensor. Safe to call from several threads.
    """

    def __init__(self, compiled, formats: dict, dtypes: dict, schedule: str, settings=None):
        self._kernel = compiled
        # `out=` is the output argument unless the kernel names a tensor `out` itself.
        self._out_is_tensor = re.search(r"\bout\s*\(", compiled.text) is not None
        self.formats = dict(formats)
        self.dtypes = dict(dtypes)
        self.schedule = schedule
        # (parallel, use_cache, schedule object, hand_tuned) to compile variants for inputs given
        # in a sparse format where no format was asked (see _compiled_for); None: never.
        self._settings = settings
        self._variants: dict = {}
        self._variants_lock = threading.Lock()
        self.formats_used = dict(formats)

    @property
    def text(self) -> str:
        """The index notation the kernel was compiled from."""
        return self._kernel.text

    @property
    def source(self) -> str:
        """The generated C++."""
        return self._kernel.source

    @property
    def ir(self) -> str:
        """The loop IR, printed."""
        return self._kernel.ir

    @property
    def provider(self) -> str:
        """The provider that runs the kernel: "csr_spmm", "nm_linear", "dense_linear" (the
        hand-tuned kernels, however the kernel is spelled) or "generated" (docs/compiler.md)."""
        return self._kernel.provider

    @property
    def from_cache(self) -> bool:
        """True when the native code came from the on-disk cache (docs/jit.md)."""
        return self._kernel.from_cache

    def describe(self) -> str:
        """Formats, loop order per nest, parallel loops, densified operands, cache use."""
        return self._kernel.describe()

    def mlir(self) -> str:
        """The kernel as textual MLIR (linalg.generic over sparse_tensor-encoded tensors);
        raises NotSupported for formats MLIR cannot express (bsr, ell, n:m, hybrid...)."""
        return self._kernel.mlir()

    def run(self, inputs: Mapping, params: Mapping | None = None, *, out=None):
        """As calling the kernel, with the tensors and scalar parameters in two mappings.

        ``out``: an existing output (numpy array, CPU torch tensor or sf.Tensor of the output's
        shape, dtype and format) that the kernel writes into and returns, so repeated calls
        allocate nothing; a ``+=`` kernel adds into it, an ``=`` kernel overwrites it.
        """
        tensors = {name: value if type(value) is Tensor else as_tensor(value)
                   for name, value in inputs.items()}
        scalars = {name: float(value) for name, value in params.items()} if params else {}
        compiled = self._compiled_for(tensors)
        if out is not None:
            compiled.run_into(tensors, _output_view(out), scalars)
            return out
        result = compiled.run(tensors, scalars)
        return result.to_numpy() if result.is_dense else result

    def _compiled_for(self, tensors: dict):
        """The native kernel that runs on these inputs (a tuned kernel chooses per input). An
        input given in a sparse format where compile() was told no format (a scipy.sparse
        matrix, an sf.Tensor in csr) runs a variant compiled for that format, once per set of
        formats, instead of being densified on every call; formats_used says which ran."""
        sparse = {name: t.format for name, t in tensors.items()
                  if name not in self.formats and not t.is_dense}
        if not sparse or self._settings is None:
            self.formats_used = dict(self.formats)
            return self._kernel
        key = tuple(sorted(sparse.items()))
        with self._variants_lock:
            known = key in self._variants
            variant = self._variants.get(key)
        if not known:
            formats = {**self.formats, **sparse}
            parallel, use_cache, schedule, hand_tuned = self._settings
            try:
                variant = _C._Kernel.compile(self._kernel.text, formats, self.dtypes, parallel,
                                             use_cache, schedule, hand_tuned)
            except (NotSupported, InvalidArgument):
                variant = None  # e.g. a schedule written for dense loops: convert, as before
            with self._variants_lock:
                variant = self._variants.setdefault(key, variant)
        if variant is None:
            self.formats_used = dict(self.formats)
            return self._kernel
        self.formats_used = {**self.formats, **sparse}
        return variant

    def __call__(self, **arguments):
        """``kernel(A=a, x=x)``; ``out=y`` writes into y (unless the kernel has a tensor named
        out)."""
        out = None
        if "out" in arguments and not self._out_is_tensor:
            out = arguments.pop("out")
        tensors, params = {}, {}
        for name, value in arguments.items():
            if isinstance(value, bool):
                raise InvalidArgument(f"argument '{name}' is a bool; give a number or a tensor")
            if isinstance(value, (int, float, np.integer, np.floating)):
                params[name] = value
            else:
                tensors[name] = value
        return self.run(tensors, params, out=out)

    def __repr__(self) -> str:
        return f"sparseflow.Kernel({self.text!r}, formats={self.formats})"


def compile(text: str, formats: Mapping | None = None, schedule=None, *,
            dtypes: Mapping | None = None, parallel: bool = True,
            use_cache: bool = True, hand_tuned: bool = True, tune=False,
            database=None, model=None, budget: int = 16) -> Kernel:
    """Compiles index notation: ``sf.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"})``.

    ``formats`` maps tensor names to formats (absent: dense, but an input then given in a sparse
    format runs a variant compiled for its format: Kernel._compiled_for); ``dtypes`` to value
    types (absent: f32; compute is f64 when any tensor is f64). ``parallel`` runs the outer loop of each nest
    on all cores where that cannot race. ``schedule``: None (the default loop order), schedule
    text such as ``"split(i, i0, i1, 64); parallel(i0)"`` (docs/compiler.md), or the same built
    with ``sf.Schedule().split("i", "i0", "i1", 64).parallel("i0")``; other objects are refused
    (NotSupported). ``hand_tuned=False`` runs generated code even where a hand-tuned provider
    accepts the kernel (CSR SpMM/SpMV, 2:4 and dense GEMM/GEMV with fused epilogues, however
    spelled; ``Kernel.provider`` says which runs). Errors: ParseError/InvalidArgument for the text
    (with line and column), NotSupported for what cannot be lowered yet, CompileError when no
    compiler works.

    ``tune``: choose the formats of the sparse inputs and the schedule for the inputs of each call
    (docs/tune.md): ``"database"`` uses a decision recorded for this kernel, machine and input
    pattern (else the formats as given) and never times anything; ``"search"`` (or ``True``) uses
    it or searches (a model-ranked search timing at most ``budget`` configurations) and records the
    decision. The kernel is compiled on the first call with each input pattern; ``tuning`` holds
    the last decision. ``database`` (a path, or False for none) and ``model`` as in ``sf.tune``.
    """
    if tune:
        if schedule is not None:
            raise InvalidArgument("tune= chooses the schedule: give no schedule with it")
        mode = "search" if tune is True else str(tune)
        if mode not in ("search", "database"):
            raise InvalidArgument(f"tune={tune!r}: expected False, True, 'database' or 'search'")
        from .tuning import TunedKernel
        return TunedKernel(text, formats or {}, dtypes or {}, parallel, use_cache, hand_tuned,
                           mode, database, model, budget)
    if schedule is None:
        schedule = _C.Schedule()
    elif isinstance(schedule, str):
        schedule = _C.Schedule(schedule)  # parsed here: a ParseError names the column
    elif not isinstance(schedule, _C.Schedule):
        raise NotSupported(
            f"a schedule must be None, text or a sparseflow.Schedule, not "
            f"{type(schedule).__name__}; pass None "
            "for the default loop order or schedule text such as "
            "'split(i, i0, i1, 64); parallel(i0)' (docs/compiler.md)"
        )
    formats = {str(k): str(v) for k, v in (formats or {}).items()}
    dtypes = {str(k): dtype_name(v) for k, v in (dtypes or {}).items()}
    compiled = _C._Kernel.compile(text, formats, dtypes, parallel, use_cache, schedule,
                                  hand_tuned)
    return Kernel(compiled, formats, dtypes, schedule.text,
                  (parallel, use_cache, schedule, hand_tuned))


__all__ = ["Kernel", "compile", "Tensor"]
