// Test helper: a matrix's entries as (row, column, value bits), sorted, for bit-for-bit
// comparisons of round trips (any NaN counts as one value).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "sparseflow/build.h"

namespace sparseflow::testing {

/// (row, column, value bits) of every stored entry, sorted; explicit zeros dropped when asked.
inline std::vector<std::tuple<int64_t, int64_t, uint64_t>> entryBits(const Tensor& t,
                                                                     bool dropZeros) {
  const Coo coo = toCoo(t);
  std::vector<std::tuple<int64_t, int64_t, uint64_t>> out;
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    const double v = coo.values[static_cast<size_t>(e)];
    if (dropZeros && v == 0) continue;
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    if (std::isnan(v)) bits = 0x7ff8000000000000ull;
    out.emplace_back(coo.coords[static_cast<size_t>(2 * e)],
                     coo.coords[static_cast<size_t>(2 * e + 1)], bits);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sparseflow::testing
