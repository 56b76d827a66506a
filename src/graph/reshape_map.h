// Slice sets carried through a reshape (the same row-major data seen with another shape).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/tesa.h"

namespace sparseflow::graph {

/// Largest dimension a split or merge is computed over; beyond it the sets are dropped.
inline constexpr int64_t kMaxReshapeEnumeration = int64_t{1} << 22;

/// `sets` over a tensor of shape `from`, carried to shape `to` (same element count). The shapes
/// are cut into groups of dimensions with equal products: a one-to-one group keeps its set; a
/// dimension split into several keeps, in each part, the indices whose whole preimage is in the
/// set; dimensions merged into one give every index with a component in a set. Anything else is
/// dropped (conservative). Zero slices forward and dead slices backward both map this way.
SliceSets reshapeSlices(const SliceSets& sets, const std::vector<int64_t>& from,
                        const std::vector<int64_t>& to);

}  // namespace sparseflow::graph
