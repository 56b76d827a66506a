// TeSA: the sparsity attributes a graph value carries (SparTA's Tensor with Sparsity Attributes),
// how two descriptions of one tensor combine (meet) or of two tensors generalize (join).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/index_set.h"
#include "graph/tensor_type.h"

namespace sparseflow::graph {

/// Per dimension, a set of slice indices (dimensions without any are absent, never empty sets).
using SliceSets = std::map<int64_t, IndexSet>;

/// n:m structure: at most n nonzeros in every group of m consecutive entries along `axis`.
struct NmStructure {
  int64_t n = 0;
  int64_t m = 0;
  int64_t axis = 0;
  bool operator==(const NmStructure&) const = default;
};

/// Block structure: the tensor tiled by `shape` (one extent per dimension); `zeroBlocks` lists,
/// sorted, the block coordinates known to be all zero.
struct BlockStructure {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> zeroBlocks;
  bool operator==(const BlockStructure&) const = default;
};

/// Largest tensor that may carry an element mask.
inline constexpr int64_t kMaxMaskElements = 4096;

/// What is known about one tensor value. Forward facts (zero, nm, block, lowerBound, mask) say
/// what its values are; the backward fact (dead) says which slices no graph output depends on.
struct Tesa {
  SliceSets
      zero;  ///< slices known to be all zero: zero[d] holds i when x[..., i, ...] (dim d) is 0
  SliceSets dead;  ///< slices whose values do not affect any graph output
  std::optional<NmStructure> nm;
  std::optional<BlockStructure> block;
  std::optional<double> lowerBound;       ///< every value is >= this (finite)
  std::optional<std::vector<bool>> mask;  ///< row-major, false = known zero (small tensors only)

  bool empty() const { return *this == Tesa{}; }
  bool operator==(const Tesa&) const = default;
};

/// The slices of `sets` along `dim` (an empty set when there are none).
const IndexSet& slicesAt(const SliceSets& sets, int64_t dim);
/// Sets the slices along `dim`, dropping the entry when `slices` is empty.
void setSlices(SliceSets& sets, int64_t dim, IndexSet slices);

/// Per dimension, the union of the slices of a and b.
SliceSets uniteSlices(const SliceSets& a, const SliceSets& b);
/// Per dimension, the slices in both a and b.
SliceSets intersectSlices(const SliceSets& a, const SliceSets& b);

/// Both descriptions hold for one tensor: every fact of either (union of zero and dead slices,
/// the larger lower bound, the intersection of masks). Where both carry an n:m or block structure
/// that cannot be combined, a's is kept.
Tesa meet(const Tesa& a, const Tesa& b);
/// What holds for a tensor described by a or by b: only the facts common to both.
Tesa join(const Tesa& a, const Tesa& b);

/// True when the attributes prove the whole tensor zero (a zero set or the mask covers it).
bool isAllZero(const Tesa& tesa, const TensorType& type);
/// True when no graph output depends on any element of the tensor.
bool isAllDead(const Tesa& tesa, const TensorType& type);

/// Checks that the attributes fit `type` (dimensions, indices, n:m axis and group size, block
/// rank, mask length); throws kInvalidArgument naming `what`.
void validateTesa(const Tesa& tesa, const TensorType& type, const std::string& what);

}  // namespace sparseflow::graph
