// Writes 1-d NumPy .npy arrays, the hand-over format between a C++ benchmark and its Python peers
// (numpy.load reads them without parsing, so both sides work on the very same numbers).
#pragma once

#include <cstdint>
#include <string>

namespace sparseflow::bench {

/// Writes `count` elements as a 1-d little-endian .npy file (format version 1.0); throws
/// std::runtime_error naming the path when the write fails.
void writeNpy(const std::string& path, const int32_t* data, int64_t count);
void writeNpy(const std::string& path, const int64_t* data, int64_t count);
void writeNpy(const std::string& path, const float* data, int64_t count);
void writeNpy(const std::string& path, const double* data, int64_t count);

}  // namespace sparseflow::bench
