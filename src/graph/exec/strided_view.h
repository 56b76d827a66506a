// Strided views: a value's elements seen in another value's buffer (shape and element strides), as
// reshapes and transposes of it make them, so the executor can read or write through them instead
// of copying (attention's heads split and merged around its batched products).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace sparseflow::graph {

/// Element (i0, i1, ...) at offset sum_d i_d * strides[d] of some buffer.
struct StridedView {
  std::vector<int64_t> shape, strides;

  /// The row-major layout of `shape`.
  static StridedView contiguous(const std::vector<int64_t>& shape);
};

/// The same elements in row-major order seen with shape `to` (a reshape), or nullopt where no
/// strides can describe it (dimensions merged that are not laid out one after the other).
std::optional<StridedView> reshapeView(const StridedView& from, const std::vector<int64_t>& to);

/// The transpose's result, result dimension d being operand dimension perm[d].
StridedView transposeView(const StridedView& operand, const std::vector<int64_t>& perm);

/// The transpose's operand, given its result's view (the inverse of transposeView).
StridedView untransposeView(const StridedView& result, const std::vector<int64_t>& perm);

/// `operand` broadcast to `shape` (numpy rules: trailing dimensions aligned, extent 1 repeated
/// with stride 0); `operand` must be broadcastable to `shape`.
StridedView broadcastView(const StridedView& operand, const std::vector<int64_t>& shape);

/// The coarsest batch shape that refines every one of `shapes` (each of them a product of
/// consecutive runs of it; extents 1 ignored), or nullopt where none does ([2, 3] and [3, 2]).
std::optional<std::vector<int64_t>> commonRefinement(
    const std::vector<std::vector<int64_t>>& shapes);

}  // namespace sparseflow::graph
