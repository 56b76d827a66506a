// What the C++ preludes of the docs-as-tests harness share (tests/docs/doc_blocks.py): made-up
// dense inputs and checks of a block's results.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sparseflow/build.h"
#include "sparseflow/tensor.h"

namespace docs {

/// A dense f32 tensor of `shape` holding sin(k + 1) at element k (nonzero, deterministic).
inline sparseflow::Tensor denseTensor(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) values[static_cast<size_t>(k)] = std::sin(double(k + 1));
  return sparseflow::fromDense(shape, values.data(),
                               sparseflow::Format::parse("dense", static_cast<int32_t>(shape.size())));
}

/// Fails the block (the runner reports the message) unless `ok`.
inline void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("doc-test check failed: " + what);
}

}  // namespace docs
