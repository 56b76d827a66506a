"""sf.tune and sf.compile(..., tune=...): the autoconfigurator (docs/tune.md) from Python.

The C++ side (sparseflow/tune.h) enumerates the formats and schedules, ranks them with the cost
model, times the few best and records the decision in the tuning database; these functions pass
the inputs and hand back the decision as a dict with the keys ``sparseflow tune --json`` writes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

from ._ext import _C
from .errors import InvalidArgument
from .kernels import Kernel
from .tensors import Tensor, as_tensor, dtype_name


def _database_path(database) -> str:
    if database is None:
        return ""  # $SPARSEFLOW_TUNE_DB, else tuning.jsonl in the kernel cache directory
    if database is False:
        return "-"  # none: nothing read or recorded
    return str(database)


def _tensors(inputs: Mapping) -> dict:
    return {str(name): value if type(value) is Tensor else as_tensor(value)
            for name, value in inputs.items()}


def tune(text: str, inputs: Mapping, formats: Mapping | None = None, *,
         dtypes: Mapping | None = None, budget: int = 16, exhaustive: bool = False,
         retune: bool = False, database=None, model=None, tuned=None) -> dict:
    """Chooses the formats of ``text``'s sparse inputs and its schedule for ``inputs``.

    ``sf.tune("C(i,j) = A(i,k) * B(k,j)", {"A": a, "B": b})`` returns the decision: ``formats``,
    ``schedule``, ``hand_tuned``, ``parallel`` (False: one thread, for problems too small to pay
    for a fork), ``arguments`` (the ``sparseflow run`` spelling), ``median_ms``
    and ``default_ms`` (the chosen and the as-given configuration's time per call), ``space``,
    ``measured``, ``from_database``, ``database``, ``model``, ``machine``, ``inputs`` (the key)
    and ``candidates`` (each timed configuration with its predicted score and time). Pass the
    decision's ``formats``, ``schedule``, ``hand_tuned`` and ``parallel`` to ``sf.compile`` to run
    it (or compile with ``tune=True``, which applies the recorded decision).

    A decision already recorded for this kernel, machine and input pattern is returned without
    timing (``retune=True`` searches again). ``formats`` pins operands that are not searched
    (``tuned`` names the searched ones; default: every sparse input). ``budget``: configurations
    timed besides the default, at most (and at most 5% of the space); ``exhaustive`` times them
    all (minutes). ``database``: a path, None for the default, False for none. ``model``: a cost
    model file (default: the one that ships).
    """
    return _C._tune(text, _tensors(inputs), {str(k): str(v) for k, v in (formats or {}).items()},
                    {str(k): dtype_name(v) for k, v in (dtypes or {}).items()},
                    _database_path(database), "" if model is None else str(model), int(budget),
                    bool(exhaustive), bool(retune), [str(n) for n in (tuned or [])])


class TunedKernel(Kernel):
    """A kernel compiled per input pattern with the tuned formats and schedule (sf.compile with
    ``tune=``). ``tuning`` is the decision of the last call; the properties (source, provider...)
    describe the kernel that call ran. Safe to call from several threads."""

    def __init__(self, text, formats, dtypes, parallel, use_cache, hand_tuned, mode, database,
                 model, budget):
        self._text = text
        self._out_is_tensor = re.search(r"\bout\s*\(", text) is not None
        self.formats = {str(k): str(v) for k, v in formats.items()}
        self.dtypes = {str(k): dtype_name(v) for k, v in dtypes.items()}
        self.schedule = ""
        self._settings = (bool(parallel), bool(use_cache), bool(hand_tuned), mode,
                          _database_path(database), "" if model is None else str(model),
                          int(budget))
        self._by_pattern = {}  # input fingerprint -> (native kernel, decision)
        self._lock = threading.Lock()
        self._kernel = None
        self.tuning = None

    def _compiled_for(self, tensors: dict):
        key = _C._input_fingerprint(tensors)
        with self._lock:
            entry = self._by_pattern.get(key)
        if entry is None:
            parallel, use_cache, hand_tuned, mode, database, model, budget = self._settings
            entry = _C._compile_tuned(self._text, tensors, self.formats, self.dtypes, parallel,
                                      use_cache, hand_tuned, mode, database, model, budget)
            with self._lock:
                self._by_pattern.setdefault(key, entry)
        with self._lock:
            self._kernel, self.tuning = entry
            self.schedule = entry[1]["schedule"]
        return entry[0]

    def _last(self):
        if self._kernel is None:
            raise InvalidArgument("a tuned kernel is compiled on its first call: call it with "
                                  "its inputs first")
        return self._kernel

    @property
    def text(self) -> str:
        return self._text

    @property
    def source(self) -> str:
        return self._last().source

    @property
    def ir(self) -> str:
        return self._last().ir

    @property
    def provider(self) -> str:
        return self._last().provider

    @property
    def from_cache(self) -> bool:
        return self._last().from_cache

    def describe(self) -> str:
        return self._last().describe()

    def mlir(self) -> str:
        return self._last().mlir()

    def __repr__(self) -> str:
        return f"sparseflow.TunedKernel({self._text!r}, mode={self._settings[3]!r})"


__all__ = ["tune", "TunedKernel"]
