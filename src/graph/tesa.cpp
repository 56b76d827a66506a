// Combining TeSA attributes (meet, join), whole-tensor queries and their validation.
#include "graph/tesa.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "support/check.h"

namespace sparseflow::graph {

const IndexSet& slicesAt(const SliceSets& sets, int64_t dim) {
  static const IndexSet kEmpty;
  auto it = sets.find(dim);
  return it == sets.end() ? kEmpty : it->second;
}

void setSlices(SliceSets& sets, int64_t dim, IndexSet slices) {
  if (slices.empty()) {
    sets.erase(dim);
  } else {
    sets[dim] = std::move(slices);
  }
}

SliceSets uniteSlices(const SliceSets& a, const SliceSets& b) {
  SliceSets out = a;
  for (const auto& [d, s] : b) setSlices(out, d, unite(slicesAt(a, d), s));
  return out;
}

SliceSets intersectSlices(const SliceSets& a, const SliceSets& b) {
  SliceSets out;
  for (const auto& [d, s] : a) setSlices(out, d, intersect(s, slicesAt(b, d)));
  return out;
}

namespace {

std::vector<std::vector<int64_t>> blockUnion(const BlockStructure& a, const BlockStructure& b) {
  std::vector<std::vector<int64_t>> out;
  std::set_union(a.zeroBlocks.begin(), a.zeroBlocks.end(), b.zeroBlocks.begin(), b.zeroBlocks.end(),
                 std::back_inserter(out));
  return out;
}

std::vector<std::vector<int64_t>> blockIntersection(const BlockStructure& a,
                                                    const BlockStructure& b) {
  std::vector<std::vector<int64_t>> out;
  std::set_intersection(a.zeroBlocks.begin(), a.zeroBlocks.end(), b.zeroBlocks.begin(),
                        b.zeroBlocks.end(), std::back_inserter(out));
  return out;
}

}  // namespace

Tesa meet(const Tesa& a, const Tesa& b) {
  Tesa out;
  out.zero = uniteSlices(a.zero, b.zero);
  out.dead = uniteSlices(a.dead, b.dead);
  out.nm = a.nm ? a.nm : b.nm;
  if (a.nm && b.nm && a.nm->m == b.nm->m && a.nm->axis == b.nm->axis) {
    out.nm->n = std::min(a.nm->n, b.nm->n);
  }
  out.block = a.block ? a.block : b.block;
  if (a.block && b.block && a.block->shape == b.block->shape) {
    out.block->zeroBlocks = blockUnion(*a.block, *b.block);
  }
  out.lowerBound = a.lowerBound ? a.lowerBound : b.lowerBound;
  if (a.lowerBound && b.lowerBound) out.lowerBound = std::max(*a.lowerBound, *b.lowerBound);
  out.mask = a.mask ? a.mask : b.mask;
  if (a.mask && b.mask && a.mask->size() == b.mask->size()) {
    for (size_t i = 0; i < out.mask->size(); ++i) (*out.mask)[i] = (*a.mask)[i] && (*b.mask)[i];
  }
  return out;
}

Tesa join(const Tesa& a, const Tesa& b) {
  Tesa out;
  out.zero = intersectSlices(a.zero, b.zero);
  out.dead = intersectSlices(a.dead, b.dead);
  if (a.nm && b.nm && a.nm->m == b.nm->m && a.nm->axis == b.nm->axis) {
    out.nm = NmStructure{std::max(a.nm->n, b.nm->n), a.nm->m, a.nm->axis};
  }
  if (a.block && b.block && a.block->shape == b.block->shape) {
    out.block = BlockStructure{a.block->shape, blockIntersection(*a.block, *b.block)};
  }
  if (a.lowerBound && b.lowerBound) out.lowerBound = std::min(*a.lowerBound, *b.lowerBound);
  if (a.mask && b.mask && a.mask->size() == b.mask->size()) {
    out.mask = *a.mask;
    for (size_t i = 0; i < out.mask->size(); ++i) (*out.mask)[i] = (*a.mask)[i] || (*b.mask)[i];
  }
  return out;
}

namespace {

bool someSetCovers(const SliceSets& sets, const TensorType& type) {
  for (const auto& [d, s] : sets) {
    if (d >= 0 && d < type.rank() && s.covers(type.shape[static_cast<size_t>(d)])) return true;
  }
  return false;
}

void validateSlices(const SliceSets& sets, const TensorType& type, const std::string& what,
                    const char* kind) {
  for (const auto& [d, s] : sets) {
    SF_USER_CHECK(d >= 0 && d < type.rank()) << what << ": " << kind << " slices along dim " << d
                                             << " of a rank-" << type.rank() << " tensor";
    const int64_t extent = type.shape[static_cast<size_t>(d)];
    SF_USER_CHECK(s.within(extent))
        << what << ": " << kind << " slice index " << s.ranges().back().second - 1 << " along dim "
        << d << " is outside its extent " << extent;
  }
}

}  // namespace

bool isAllZero(const Tesa& tesa, const TensorType& type) {
  if (someSetCovers(tesa.zero, type)) return true;
  return tesa.mask && std::none_of(tesa.mask->begin(), tesa.mask->end(), [](bool b) { return b; });
}

bool isAllDead(const Tesa& tesa, const TensorType& type) {
  return someSetCovers(tesa.dead, type);
}

void validateTesa(const Tesa& tesa, const TensorType& type, const std::string& what) {
  validateSlices(tesa.zero, type, what, "zero");
  validateSlices(tesa.dead, type, what, "dead");
  if (tesa.nm) {
    const NmStructure& nm = *tesa.nm;
    SF_USER_CHECK(nm.axis >= 0 && nm.axis < type.rank())
        << what << ": n:m axis " << nm.axis << " of a rank-" << type.rank() << " tensor";
    SF_USER_CHECK(nm.m >= 1 && nm.m <= 1024 && nm.n >= 0 && nm.n <= nm.m)
        << what << ": n:m structure " << nm.n << ":" << nm.m << " needs 0 <= n <= m <= 1024";
  }
  if (tesa.block) {
    const BlockStructure& b = *tesa.block;
    SF_USER_CHECK(static_cast<int64_t>(b.shape.size()) == type.rank())
        << what << ": block shape of rank " << b.shape.size() << " for a rank-" << type.rank()
        << " tensor";
    for (int64_t e : b.shape) {
      SF_USER_CHECK(e >= 1 && e <= kMaxElements) << what << ": block extent " << e;
    }
    SF_USER_CHECK(std::is_sorted(b.zeroBlocks.begin(), b.zeroBlocks.end()) &&
                  std::adjacent_find(b.zeroBlocks.begin(), b.zeroBlocks.end()) ==
                      b.zeroBlocks.end())
        << what << ": zero blocks must be sorted and distinct";
    for (const auto& coord : b.zeroBlocks) {
      SF_USER_CHECK(coord.size() == b.shape.size())
          << what << ": zero block coordinate of rank " << coord.size();
      for (size_t d = 0; d < coord.size(); ++d) {
        const int64_t blocks = (type.shape[d] + b.shape[d] - 1) / b.shape[d];
        SF_USER_CHECK(coord[d] >= 0 && coord[d] < blocks)
            << what << ": zero block coordinate " << coord[d] << " along dim " << d
            << " is outside the " << blocks << " blocks";
      }
    }
  }
  if (tesa.lowerBound) {
    SF_USER_CHECK(std::isfinite(*tesa.lowerBound)) << what << ": lower bound is not finite";
  }
  if (tesa.mask) {
    const int64_t numel = checkedNumel(type, what);
    SF_USER_CHECK(static_cast<int64_t>(tesa.mask->size()) == numel && numel <= kMaxMaskElements)
        << what << ": element mask of " << tesa.mask->size() << " entries for " << numel
        << " elements (masks are for tensors of at most " << kMaxMaskElements << ")";
  }
}

}  // namespace sparseflow::graph
