// The shape rules of ONNX's shape operators (Reshape, Unsqueeze, Squeeze, Flatten, Slice,
// broadcasting), shared by constant folding and by the translation of dynamic values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sparseflow::graph::onnx_import {

using Dims = std::vector<int64_t>;

/// `axis` in [-rank, rank) made non-negative (kInvalidArgument naming `where` otherwise).
int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& where);
/// Reshape's target: 0 copies the input's extent (unless allowzero), one -1 is inferred.
Dims reshapeTarget(const Dims& in, const Dims& spec, bool allowzero, const std::string& where);
Dims unsqueezeShape(const Dims& in, const Dims& axes, const std::string& where);
/// Without axes: every extent-1 dimension removed.
Dims squeezeShape(const Dims& in, const std::optional<Dims>& axes, const std::string& where);
/// Flatten to 2-D at `axis`.
Dims flattenShape(const Dims& in, int64_t axis, const std::string& where);
/// numpy broadcasting.
Dims broadcastShapes(const Dims& a, const Dims& b, const std::string& where);

/// One axis of a Slice: the first index taken, the step and how many are taken (ONNX's clamping).
struct SliceRange {
  int64_t start = 0, step = 1, count = 0;
};
SliceRange sliceRange(int64_t extent, int64_t start, int64_t end, int64_t step,
                      const std::string& where);

}  // namespace sparseflow::graph::onnx_import
