// Carrying slice sets through reshapes: groups of dimensions with equal products, split and merge.
#include "graph/reshape_map.h"

#include <algorithm>

namespace sparseflow::graph {
namespace {

using Dims = std::vector<int64_t>;

/// One dimension of extent `from[i0]` split into `to[j0, j1)`: index e of part j is in the result
/// when every index of the whole dimension with coordinate e in part j is in `set`.
void splitSlices(const IndexSet& set, const Dims& to, size_t j0, size_t j1, int64_t whole,
                 SliceSets& out) {
  int64_t stride = whole;
  for (size_t j = j0; j < j1; ++j) {
    const int64_t extent = to[j];
    stride /= extent;
    std::vector<int64_t> count(static_cast<size_t>(extent), 0);
    for (const auto& [b, e] : set.ranges()) {
      for (int64_t n = b; n < e; ++n) ++count[static_cast<size_t>((n / stride) % extent)];
    }
    IndexSet result;
    const int64_t needed = whole / extent;
    for (int64_t c = 0; c < extent; ++c) {
      if (count[static_cast<size_t>(c)] == needed) result.add(c);
    }
    setSlices(out, static_cast<int64_t>(j), std::move(result));
  }
}

/// Dimensions `from[i0, i1)` merged into one of extent `whole`: index n is in the result when any
/// of its coordinates is in the set of its dimension.
IndexSet mergeSlices(const SliceSets& sets, const Dims& from, size_t i0, size_t i1, int64_t whole) {
  IndexSet result;
  for (int64_t n = 0; n < whole; ++n) {
    int64_t rest = n;
    for (size_t i = i1; i-- > i0;) {
      if (slicesAt(sets, static_cast<int64_t>(i)).contains(rest % from[i])) {
        result.add(n);
        break;
      }
      rest /= from[i];
    }
  }
  return result;
}

bool anySet(const SliceSets& sets, size_t i0, size_t i1) {
  for (size_t i = i0; i < i1; ++i) {
    if (!slicesAt(sets, static_cast<int64_t>(i)).empty()) return true;
  }
  return false;
}

}  // namespace

SliceSets reshapeSlices(const SliceSets& sets, const Dims& from, const Dims& to) {
  SliceSets out;
  const auto hasZero = [](const Dims& s) { return std::find(s.begin(), s.end(), 0) != s.end(); };
  if (sets.empty() || hasZero(from) || hasZero(to)) return out;
  size_t i = 0;
  size_t j = 0;
  while (i < from.size() && j < to.size()) {
    const size_t i0 = i;
    const size_t j0 = j;
    int64_t pf = from[i++];
    int64_t pt = to[j++];
    while (pf != pt) {
      if (pf < pt && i < from.size()) {
        pf *= from[i++];
      } else if (pt < pf && j < to.size()) {
        pt *= to[j++];
      } else {
        return out;  // not a reshape of the same element count: nothing to carry
      }
    }
    if (!anySet(sets, i0, i)) continue;
    if (i - i0 == 1 && j - j0 == 1) {
      setSlices(out, static_cast<int64_t>(j0), slicesAt(sets, static_cast<int64_t>(i0)));
    } else if (pf <= kMaxReshapeEnumeration && i - i0 == 1) {
      splitSlices(slicesAt(sets, static_cast<int64_t>(i0)), to, j0, j, pf, out);
    } else if (pf <= kMaxReshapeEnumeration && j - j0 == 1) {
      setSlices(out, static_cast<int64_t>(j0), mergeSlices(sets, from, i0, i, pf));
    }
  }
  return out;
}

}  // namespace sparseflow::graph
