// Inputs of bench_formats: seeded random triplets, a generated Matrix Market file, and .npy copies
// of the triplets for the scipy peer, so both sides convert and parse the very same numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sparseflow/build.h"

namespace sparseflow::bench {

/// A matrix's entries as scipy holds them: int32 coordinates, float32 values, unsorted.
struct Triplets {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> row, col;
  std::vector<float> value;

  int64_t size() const { return static_cast<int64_t>(value.size()); }
};

/// `count` distinct uniformly random entries of a rows x cols matrix with values in [-1, 1), in
/// random order.
Triplets randomTriplets(int64_t rows, int64_t cols, int64_t count, uint64_t seed);
/// A coordinate list narrowed to int32/float32 (throws std::runtime_error if it does not fit).
Triplets tripletsFromCoo(const Coo& coo);
/// The library's coordinate list of the same entries.
Coo cooFromTriplets(const Triplets& triplets);

/// Writes PREFIX_rows.npy, PREFIX_cols.npy (int32), PREFIX_vals.npy (float32) and
/// PREFIX_shape.npy (int64 [rows, cols]), which bench/peers/scipy_formats.py loads.
void writeTripletsNpy(const std::string& prefix, const Triplets& triplets);

/// Writes a "coordinate real general" file of about `bytes` bytes: distinct random entries of a
/// rows x cols matrix sorted by column, then row (the order of SuiteSparse files), float32 values
/// in their shortest round-trip form. Returns the number of entries.
int64_t writeRandomMatrixMarket(const std::string& path, int64_t rows, int64_t cols, int64_t bytes,
                                uint64_t seed);

}  // namespace sparseflow::bench
