// Strided views (see strided_view.h): reshape, transpose and broadcast of a layout, and the
// common refinement of batch shapes.
#include "graph/exec/strided_view.h"

#include <algorithm>
#include <set>

#include "support/check.h"

namespace sparseflow::graph {

StridedView StridedView::contiguous(const std::vector<int64_t>& shape) {
  StridedView v{shape, std::vector<int64_t>(shape.size(), 1)};
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
    v.strides[static_cast<size_t>(d)] = v.strides[static_cast<size_t>(d + 1)] *
                                        std::max<int64_t>(shape[static_cast<size_t>(d + 1)], 1);
  }
  return v;
}

std::optional<StridedView> reshapeView(const StridedView& from, const std::vector<int64_t>& to) {
  int64_t elements = 1, toElements = 1;
  for (int64_t e : from.shape) elements *= e;
  for (int64_t e : to) toElements *= e;
  SF_ICHECK(elements == toElements) << "reshapeView: element counts differ";
  if (elements == 0) return StridedView::contiguous(to);
  // Dimensions of extent 1 carry no layout: drop them, then cut both shapes into runs of equal
  // products; a run of `from` must be laid out contiguously (each stride the next one's times its
  // extent) for the run of `to` to have strides.
  std::vector<int64_t> shape, strides;
  for (size_t d = 0; d < from.shape.size(); ++d) {
    if (from.shape[d] != 1) {
      shape.push_back(from.shape[d]);
      strides.push_back(from.strides[d]);
    }
  }
  StridedView out{to, std::vector<int64_t>(to.size(), 0)};
  int64_t fromD = static_cast<int64_t>(shape.size()) - 1;
  int64_t toD = static_cast<int64_t>(to.size()) - 1;
  while (fromD >= 0) {
    // One contiguous run of `from`, innermost first.
    const int64_t base = strides[static_cast<size_t>(fromD)];
    int64_t runElements = shape[static_cast<size_t>(fromD)];
    while (fromD > 0 &&
           strides[static_cast<size_t>(fromD - 1)] ==
               strides[static_cast<size_t>(fromD)] * shape[static_cast<size_t>(fromD)]) {
      --fromD;
      runElements *= shape[static_cast<size_t>(fromD)];
    }
    --fromD;
    // The dimensions of `to` that make up exactly this run (and extents 1 next to it).
    int64_t covered = 1;
    while (toD >= 0 && covered < runElements) {
      out.strides[static_cast<size_t>(toD)] = base * covered;
      covered *= to[static_cast<size_t>(toD)];
      --toD;
    }
    if (covered != runElements) return std::nullopt;
    for (; toD >= 0 && to[static_cast<size_t>(toD)] == 1; --toD) {
      out.strides[static_cast<size_t>(toD)] = base * covered;
    }
  }
  for (; toD >= 0; --toD) out.strides[static_cast<size_t>(toD)] = 0;  // leading extents 1
  return out;
}

StridedView transposeView(const StridedView& operand, const std::vector<int64_t>& perm) {
  StridedView out;
  for (int64_t p : perm) {
    out.shape.push_back(operand.shape[static_cast<size_t>(p)]);
    out.strides.push_back(operand.strides[static_cast<size_t>(p)]);
  }
  return out;
}

StridedView untransposeView(const StridedView& result, const std::vector<int64_t>& perm) {
  StridedView out{result.shape, result.strides};
  for (size_t d = 0; d < perm.size(); ++d) {
    out.shape[static_cast<size_t>(perm[d])] = result.shape[d];
    out.strides[static_cast<size_t>(perm[d])] = result.strides[d];
  }
  return out;
}

StridedView broadcastView(const StridedView& operand, const std::vector<int64_t>& shape) {
  SF_ICHECK(operand.shape.size() <= shape.size()) << "broadcastView: operand of higher rank";
  StridedView out{shape, std::vector<int64_t>(shape.size(), 0)};
  const size_t lead = shape.size() - operand.shape.size();
  for (size_t d = 0; d < operand.shape.size(); ++d) {
    const int64_t e = operand.shape[d];
    SF_ICHECK(e == shape[lead + d] || e == 1) << "broadcastView: extents do not broadcast";
    out.strides[lead + d] = e == 1 ? 0 : operand.strides[d];
  }
  return out;
}

std::optional<std::vector<int64_t>> commonRefinement(
    const std::vector<std::vector<int64_t>>& shapes) {
  // Every boundary between dimensions (a running product) of every shape, in order; each must
  // divide the next for a refinement to exist.
  std::set<int64_t> cuts;
  int64_t total = -1;  // every shape's product (the same)
  for (const std::vector<int64_t>& s : shapes) {
    int64_t running = 1;
    for (int64_t e : s) {
      running *= e;
      cuts.insert(running);
    }
    SF_ICHECK(total < 0 || total == running) << "commonRefinement: shapes of different sizes";
    total = running;
  }
  if (total <= 0) return std::nullopt;
  std::vector<int64_t> refined;
  int64_t previous = 1;
  for (int64_t cut : cuts) {
    if (cut == previous) continue;
    if (cut % previous != 0) return std::nullopt;
    refined.push_back(cut / previous);
    previous = cut;
  }
  return refined;
}

}  // namespace sparseflow::graph
