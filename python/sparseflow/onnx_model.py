"""ONNX models run by sparseflow's C++ executor (no onnxruntime, no torch): ``sf.load_onnx``.

    model = sf.load_onnx("model.onnx", {"input_ids": (32, 128), "attention_mask": (32, 128)})
    last_hidden_state, pooled = model(input_ids=ids, attention_mask=mask)

The model is imported (docs/graph.md, "ONNX"), compacted and specialized to the input shapes:
each linear layer becomes one kernel with its weight in the fastest exact format.
"""

from __future__ import annotations

import os

from ._ext import _C
from .model_inputs import executor_input


class OnnxModel:
    """An ONNX model specialized to its input shapes; call it with the inputs by name."""

    def __init__(self, path, input_shapes=None, *, compact: bool = True, measure: bool = True,
                 formats: dict | None = None, reps: int = 5):
        shapes = {}
        for name, shape in dict(input_shapes or {}).items():
            shape = getattr(shape, "shape", shape)  # an example array gives its shape
            shapes[str(name)] = [int(d) for d in shape]
        graph = _C._GraphModel.from_onnx(os.fspath(path), shapes)
        self.compaction = None
        if compact:
            graph, self.compaction = graph.compact()
        self.graph = graph
        self._executor = _C._Executor(graph, measure, reps, dict(formats or {}))

    def __call__(self, **inputs) -> list:
        """The outputs (float32 arrays, the model's order) for inputs given by name."""
        arrays = {name: executor_input(name, value) for name, value in inputs.items()}
        return self._executor.run(arrays)

    @property
    def text(self) -> str:
        """The imported (and compacted) graph as text."""
        return self.graph.text()

    def steps(self) -> list:
        """Per step: what it runs, its weight, format, provider and why that format."""
        return self._executor.steps()

    def profile(self, **inputs) -> list:
        """Milliseconds of each step (steps() order) in one run."""
        return self._executor.profile(
            {n: executor_input(n, v) for n, v in inputs.items()})

    def describe(self) -> str:
        return self._executor.describe()


def load_onnx(path, input_shapes=None, **options) -> OnnxModel:
    """``OnnxModel(path, input_shapes, compact=True, measure=True, formats=None, reps=5)``:
    ``input_shapes`` maps input names to shapes (or example arrays); needed where the model's
    extents are symbolic. ``formats`` pins weights' formats by parameter name."""
    return OnnxModel(path, input_shapes, **options)
