// Sorted range sets of indices: insertion with merging, union, intersection, shifts.
#include "graph/index_set.h"

#include <algorithm>

namespace sparseflow::graph {

IndexSet::IndexSet(std::initializer_list<int64_t> indices) {
  for (int64_t i : indices) add(i);
}

IndexSet IndexSet::range(int64_t begin, int64_t end) {
  IndexSet s;
  s.addRange(begin, end);
  return s;
}

void IndexSet::addRange(int64_t begin, int64_t end) {
  if (end <= begin) return;
  // Ranges that overlap or touch [begin, end) merge into it.
  auto first = std::lower_bound(ranges_.begin(), ranges_.end(), begin,
                                [](const Range& r, int64_t b) { return r.second < b; });
  auto last = first;
  while (last != ranges_.end() && last->first <= end) {
    begin = std::min(begin, last->first);
    end = std::max(end, last->second);
    ++last;
  }
  first = ranges_.erase(first, last);
  ranges_.insert(first, Range{begin, end});
}

bool IndexSet::contains(int64_t index) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), index,
                             [](int64_t i, const Range& r) { return i < r.second; });
  return it != ranges_.end() && it->first <= index;
}

int64_t IndexSet::count() const {
  int64_t n = 0;
  for (const Range& r : ranges_) n += r.second - r.first;
  return n;
}

bool IndexSet::covers(int64_t extent) const {
  if (extent <= 0) return true;
  return !ranges_.empty() && ranges_.front().first <= 0 && ranges_.front().second >= extent;
}

bool IndexSet::within(int64_t extent) const {
  return ranges_.empty() || (ranges_.front().first >= 0 && ranges_.back().second <= extent);
}

IndexSet IndexSet::shifted(int64_t offset, int64_t lo, int64_t hi) const {
  IndexSet out;
  for (const Range& r : ranges_) {
    out.addRange(std::max(r.first + offset, lo), std::min(r.second + offset, hi));
  }
  return out;
}

IndexSet unite(const IndexSet& a, const IndexSet& b) {
  IndexSet out = a;
  for (const IndexSet::Range& r : b.ranges()) out.addRange(r.first, r.second);
  return out;
}

IndexSet intersect(const IndexSet& a, const IndexSet& b) {
  IndexSet out;
  const auto& ra = a.ranges();
  const auto& rb = b.ranges();
  size_t i = 0;
  size_t j = 0;
  while (i < ra.size() && j < rb.size()) {
    out.addRange(std::max(ra[i].first, rb[j].first), std::min(ra[i].second, rb[j].second));
    if (ra[i].second < rb[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

}  // namespace sparseflow::graph
