// Zero-copy bridges between numpy arrays and sparseflow Buffers, both ways.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sparseflow/dtype.h"
#include "sparseflow/error.h"
#include "sparseflow/tensor.h"

namespace sparseflow::python {

namespace py = pybind11;

/// The DType of a numpy dtype (float32/64/16, int32/64, uint8); `what` names the array in the
/// error raised for any other dtype or a non-native byte order.
DType dtypeOfNumpy(const py::dtype& dtype, const char* what);
/// The numpy dtype that holds a DType's elements; bf16 has none and is given as int16 (raw bits).
py::dtype numpyDtypeOf(DType type);

/// A Buffer of `type` viewing a C-contiguous, aligned, writeable numpy array without copying.
/// The buffer holds a reference to the array, released under the GIL when the last view goes.
/// `type` must have the array's element size (int16 arrays may be viewed as bf16).
Buffer viewOfArray(const py::array& array, DType type, const char* what);

/// Raises InvalidArgument with `message` (a bad argument from Python).
[[noreturn]] inline void invalid(const std::string& message) {
  throw Error(ErrorCode::kInvalidArgument, message);
}

/// A numpy array of `shape` viewing a buffer without copying; the array's base holds a copy of
/// the Buffer (which shares its memory), so the data lives as long as either side.
py::array arrayOfBuffer(const Buffer& buffer, const std::vector<int64_t>& shape);
/// As above, one-dimensional over the whole buffer.
py::array arrayOfBuffer(const Buffer& buffer);

}  // namespace sparseflow::python
