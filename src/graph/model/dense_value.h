// A dense row-major tensor value of the graph evaluators: shape and elements of type T.
#pragma once

#include <cstdint>
#include <vector>

namespace sparseflow::graph {

template <typename T>
struct DenseValue {
  std::vector<int64_t> shape;
  std::vector<T> data;  ///< row-major, prod(shape) elements (integer ids are stored as T too)

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
};

}  // namespace sparseflow::graph
