// The type of a graph value: element type and shape, with checked element counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sparseflow/dtype.h"

namespace sparseflow::graph {

/// Largest element count (and extent) a graph value may have: products stay far from overflow.
inline constexpr int64_t kMaxElements = int64_t{1} << 50;

/// Element type and shape (row-major dims) of one graph value.
struct TensorType {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  bool operator==(const TensorType&) const = default;
};

/// Element count; throws kInvalidArgument naming `what` on a negative extent or a count above
/// kMaxElements.
int64_t checkedNumel(const TensorType& type, const std::string& what);

/// "f32[8, 512]".
std::string toString(const TensorType& type);

}  // namespace sparseflow::graph
