// The binding functions each python/src/*.cpp file contributes to the _sparseflow module.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "sparseflow/kernel.h"

namespace sparseflow::python {

namespace py = pybind11;

/// The exception classes (SparseFlowError and one subclass per ErrorCode) and their translator.
void bindErrors(py::module_& m);
/// Tensor, dtypes, formats, zero-copy construction from numpy arrays and views back.
void bindTensor(py::module_& m);
/// read, write, convert, transpose.
void bindIo(py::module_& m);
/// Kernel: compile index notation, run it, look at what was generated.
void bindKernel(py::module_& m);
/// The options sf.compile passes (dtypes by name: "f32", "bf16"...), schedule left default.
KernelOptions kernelOptions(const std::map<std::string, std::string>& formats,
                            const std::map<std::string, std::string>& dtypes, bool parallel,
                            bool useCache, bool handTuned);
/// The autoconfigurator: _tune, _compile_tuned, _input_fingerprint (python/sparseflow/tuning.py).
void bindTune(py::module_& m);
/// n:m pruning, the impact report and the 2:4 linear layer.
void bindNM(py::module_& m);
/// The graph IR, models with weights, compaction and the executor (sf.optimize).
void bindGraph(py::module_& m);

}  // namespace sparseflow::python
