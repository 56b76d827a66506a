"""A model input as the graph executor takes it (float32), checked: numbers only, and integers
(token ids) only while float32 holds them exactly (below 2^24), so ids never change silently.
Shared by sf.load_onnx's models and sf.optimize's modules."""

from __future__ import annotations

import numpy as np

from .errors import InvalidArgument

#: The smallest integer magnitude float32 does not hold exactly for every neighbour.
FLOAT32_EXACT_INTEGERS = 2**24


def executor_input(name: str, value) -> np.ndarray:
    """``value`` (a numpy array, a list, a CPU tensor's numpy view) as a contiguous float32 array;
    raises InvalidArgument naming the input for non-numbers and for integers of 2^24 or more."""
    a = np.asarray(value)
    if a.dtype.kind not in "fiub":
        raise InvalidArgument(f"input {name!r}: numbers are needed, got {a.dtype}")
    if a.dtype.kind in "iu" and a.size and int(np.abs(a.astype(np.int64)).max()) >= FLOAT32_EXACT_INTEGERS:
        raise InvalidArgument(f"input {name!r}: integers of 2^24 or more do not fit float32 "
                              "exactly (the executor's values are float32)")
    return np.ascontiguousarray(a, dtype=np.float32)
