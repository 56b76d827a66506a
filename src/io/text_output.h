// Helpers the text writers share: RawTensor consistency checks and fast number formatting.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/raw_tensor.h"
#include "support/check.h"

namespace sparseflow::io::detail {

/// Appends the decimal form of `value`.
inline void appendInt(std::string& out, int64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

/// Appends the shortest decimal form that reads back as exactly `value` ("nan", "inf" too).
inline void appendDouble(std::string& out, double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

/// Number of elements of `shape`; throws kOutOfMemory if the product overflows int64.
inline int64_t checkedElementCount(const std::vector<int64_t>& shape, std::string_view context) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    SF_CHECK_CODE(!__builtin_mul_overflow(count, extent, &count), ErrorCode::kOutOfMemory)
        << context << ": shape has too many elements for a 64-bit count";
  }
  return count;
}

/// Throws kInvalidArgument "cannot write FORMAT: ..." unless `tensor` is self-consistent: extents
/// non-negative, dense values matching the shape, sparse coordinates inside the shape and one
/// value per entry (none for a pattern).
inline void checkWritable(const RawTensor& tensor, std::string_view format) {
  std::string context = "cannot write " + std::string(format);
  for (int64_t extent : tensor.shape) {
    SF_USER_CHECK(extent >= 0) << context << ": negative extent " << extent;
  }
  if (tensor.dense) {
    SF_USER_CHECK(tensor.coords.empty() && !tensor.pattern)
        << context << ": a dense tensor has values and no coordinates";
    int64_t count = checkedElementCount(tensor.shape, context);
    SF_USER_CHECK(static_cast<int64_t>(tensor.values.size()) == count)
        << context << ": dense tensor has " << tensor.values.size() << " values for " << count
        << " elements";
    return;
  }
  int64_t rank = tensor.rank();
  SF_USER_CHECK(rank > 0) << context << ": a sparse tensor needs rank 1 or more";
  SF_USER_CHECK(tensor.coords.size() % static_cast<size_t>(rank) == 0)
      << context << ": " << tensor.coords.size() << " coordinates is not a multiple of rank "
      << rank;
  size_t entries = tensor.coords.size() / static_cast<size_t>(rank);
  size_t expectedValues = tensor.pattern ? 0 : entries;
  SF_USER_CHECK(tensor.values.size() == expectedValues)
      << context << ": " << tensor.values.size() << " values for " << entries << " entries"
      << (tensor.pattern ? " of a pattern" : "");
  for (size_t e = 0; e < entries; ++e) {
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = tensor.coords[e * static_cast<size_t>(rank) + static_cast<size_t>(d)];
      SF_USER_CHECK(c >= 0 && c < tensor.shape[static_cast<size_t>(d)])
          << context << ": entry " << e << " has coordinate " << c << " in dimension " << d
          << " of extent " << tensor.shape[static_cast<size_t>(d)];
    }
  }
}

}  // namespace sparseflow::io::detail
