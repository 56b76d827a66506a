// Building tensors from coordinates or dense arrays, and reading them back out.
#pragma once

#include <cstdint>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// Coordinate list: entry e has coordinates coords[e*rank .. e*rank+rank), 0-based, and value
/// values[e]. Entries may be unsorted and, per BuildOptions, repeated.
struct Coo {
  std::vector<int64_t> shape;
  std::vector<int64_t> coords;
  std::vector<double> values;

  int32_t rank() const { return static_cast<int32_t>(shape.size()); }
  int64_t numEntries() const { return static_cast<int64_t>(values.size()); }
};

/// What to do with entries that share coordinates.
enum class Duplicates : int32_t { kSum = 0, kReject = 1 };

struct BuildOptions {
  DType dtype = DType::kF32;
  Duplicates duplicates = Duplicates::kSum;
};

/// Builds a tensor of `format` from coordinates; coordinates are checked against the shape and
/// errors name the entry. Data-chosen parameters (ell's k, hyb's split) are resolved here.
Tensor fromCoo(const Coo& coo, const Format& format, const BuildOptions& options = {});
/// Builds a tensor from a dense row-major array of prod(shape) values (zeros are not stored
/// unless the format keeps them: dense, blocked or n:m positions).
Tensor fromDense(const std::vector<int64_t>& shape, const double* values, const Format& format,
                 DType dtype = DType::kF32);

/// The entries of a tensor in storage order (hybrid: part by part). Positions reached through a
/// zero-filling leaf level (dense, blocked, ragged, n:m) are entries only when nonzero.
Coo toCoo(const Tensor& tensor);
/// The dense row-major values (hybrid parts summed).
std::vector<double> toDense(const Tensor& tensor);
/// Number of elements prod(shape); throws kOutOfMemory on overflow.
int64_t numElements(const std::vector<int64_t>& shape);

}  // namespace sparseflow
