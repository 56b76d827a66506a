// ONNX's shape rules (the operator specification's wording, opsets 9-18).
#include "graph/import/onnx_shapes.h"

#include <algorithm>

#include "graph/tensor_type.h"
#include "support/check.h"

namespace sparseflow::graph::onnx_import {

int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& where) {
  SF_USER_CHECK(axis >= -rank && axis < rank)
      << where << ": axis " << axis << " is outside a rank-" << rank << " tensor";
  return axis < 0 ? axis + rank : axis;
}

Dims reshapeTarget(const Dims& in, const Dims& spec, bool allowzero, const std::string& where) {
  int64_t known = 1, inferred = -1, total = 1;
  for (int64_t d : in) total *= d;
  Dims out(spec.size());
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      SF_USER_CHECK(i < in.size())
          << where << ": shape entry " << i << " is 0 (copy) but the input has rank " << in.size();
      d = in[i];
    }
    if (d == -1) {
      SF_USER_CHECK(inferred < 0) << where << ": the shape has more than one -1";
      inferred = static_cast<int64_t>(i);
      continue;
    }
    SF_USER_CHECK(d >= 0 && d <= kMaxElements && (d == 0 || known <= kMaxElements / d))
        << where << ": shape entry " << i << " is " << spec[i];
    out[i] = d;
    known *= d;
  }
  if (inferred >= 0) {
    SF_USER_CHECK(known > 0 && total % known == 0)
        << where << ": cannot infer the -1 of a reshape of " << total << " elements";
    out[static_cast<size_t>(inferred)] = total / known;
    known *= out[static_cast<size_t>(inferred)];
  }
  SF_USER_CHECK(known == total) << where << ": reshape of " << total << " elements to " << known;
  return out;
}

Dims unsqueezeShape(const Dims& in, const Dims& axes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t n = normalizeAxis(a, rank, where);
    SF_USER_CHECK(!inserted[static_cast<size_t>(n)]) << where << ": axis " << a << " repeated";
    inserted[static_cast<size_t>(n)] = true;
  }
  Dims out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(inserted[static_cast<size_t>(d)] ? 1 : in[next++]);
  return out;
}

Dims squeezeShape(const Dims& in, const std::optional<Dims>& axes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      const int64_t n = normalizeAxis(a, rank, where);
      SF_USER_CHECK(in[static_cast<size_t>(n)] == 1)
          << where << ": axis " << a << " has extent " << in[static_cast<size_t>(n)] << ", not 1";
      drop[static_cast<size_t>(n)] = true;
    }
  } else {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  }
  Dims out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!drop[d]) out.push_back(in[d]);
  }
  return out;
}

Dims flattenShape(const Dims& in, int64_t axis, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  SF_USER_CHECK(axis >= -rank && axis <= rank)
      << where << ": axis " << axis << " is outside a rank-" << rank << " tensor";
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[static_cast<size_t>(d)];
  return {outer, inner};
}

Dims broadcastShapes(const Dims& a, const Dims& b, const std::string& where) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    SF_USER_CHECK(x == y || x == 1 || y == 1)
        << where << ": extents " << x << " and " << y << " do not broadcast";
    out[i] = x == 1 ? y : x;
  }
  return out;
}

SliceRange sliceRange(int64_t extent, int64_t start, int64_t end, int64_t step,
                      const std::string& where) {
  SF_USER_CHECK(step != 0) << where << ": a slice step of 0";
  auto clampIndex = [extent](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v < -extent ? -1 : v + extent;  // -inf-like values stay below 0
    return std::clamp(v, lo, hi);
  };
  SliceRange r;
  r.step = step;
  if (step > 0) {
    r.start = clampIndex(start, 0, extent);
    const int64_t e = clampIndex(end, 0, extent);
    r.count = e > r.start ? (e - r.start + step - 1) / step : 0;
  } else {
    r.start = clampIndex(start, 0, extent - 1);
    const int64_t e = clampIndex(end, -1, extent - 1);
    r.count = extent > 0 && r.start > e ? (r.start - e + (-step) - 1) / (-step) : 0;
  }
  return r;
}

}  // namespace sparseflow::graph::onnx_import
