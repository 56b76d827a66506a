// RawTensor: what a file reader returns before it becomes a Tensor (coordinates or dense values).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sparseflow/dtype.h"

namespace sparseflow::io {

/// The neutral content of a tensor file: either coordinates + values (sparse files) or a dense
/// row-major array. Readers fill it; format/ builds a Tensor from it; writers consume it.
struct RawTensor {
  std::vector<int64_t> shape;
  /// True for dense content (Matrix Market array, .npy): `values` has prod(shape) entries in
  /// row-major order and `coords` is empty.
  bool dense = false;
  /// Sparse content: entry e has coordinates coords[e*rank .. e*rank+rank), 0-based, in file order
  /// (symmetric files already expanded to both triangles).
  std::vector<int64_t> coords;
  /// One value per entry; empty when the file is a pattern (`pattern` is then true).
  std::vector<double> values;
  bool pattern = false;
  /// The value type the file stores, for binary files whose type says more than `values` (.npy
  /// float arrays); unset for text files, whose exact type is found from the values.
  std::optional<DType> storedType;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numEntries() const {
    return dense ? static_cast<int64_t>(values.size())
                 : (shape.empty() ? 0 : static_cast<int64_t>(coords.size()) / rank());
  }
};

}  // namespace sparseflow::io
