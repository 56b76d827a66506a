// Sets of indices along one tensor dimension (zero or dead slices), kept as sorted disjoint ranges
// so that a set covering a huge dimension costs one range, not one entry per index.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace sparseflow::graph {

/// Sorted, disjoint, non-adjacent half-open ranges [begin, end) of non-negative indices.
class IndexSet {
 public:
  using Range = std::pair<int64_t, int64_t>;

  IndexSet() = default;
  IndexSet(std::initializer_list<int64_t> indices);
  /// All of [begin, end) (empty when end <= begin).
  static IndexSet range(int64_t begin, int64_t end);

  /// Adds [begin, end); keeps the ranges sorted and merged.
  void addRange(int64_t begin, int64_t end);
  void add(int64_t index) { addRange(index, index + 1); }

  bool empty() const { return ranges_.empty(); }
  bool contains(int64_t index) const;
  /// How many indices the set holds.
  int64_t count() const;
  /// True when every index of [0, extent) is in the set.
  bool covers(int64_t extent) const;
  /// True when every index is in [0, extent).
  bool within(int64_t extent) const;
  const std::vector<Range>& ranges() const { return ranges_; }

  /// {i + offset : i in this set} restricted to [lo, hi).
  IndexSet shifted(int64_t offset, int64_t lo, int64_t hi) const;

  bool operator==(const IndexSet&) const = default;

 private:
  std::vector<Range> ranges_;
};

/// Indices in a or b.
IndexSet unite(const IndexSet& a, const IndexSet& b);
/// Indices in both a and b.
IndexSet intersect(const IndexSet& a, const IndexSet& b);

}  // namespace sparseflow::graph
