// Validation of a tensor's storage against its format's invariants.
#pragma once

#include <cstdint>
#include <string>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// What validate found in values (structural errors throw instead).
struct ValidationReport {
  int64_t stored = 0;     ///< stored values
  int64_t nanCount = 0;   ///< NaN values (accepted, reported)
  int64_t infCount = 0;   ///< ±Inf values (accepted, reported)
  int64_t zeroCount = 0;  ///< stored zeros (explicit zeros and padding)
  std::string toString() const;
};

/// Checks positions (monotone, in bounds), coordinates (in range, sorted and unique where the
/// level says so), n:m groups and array sizes; throws kInvalidFormat naming the level and position.
ValidationReport validate(const Tensor& tensor);

/// validate(tensor), skipped when a tensor with the same contents (a 128-bit hash of its dtype,
/// shape, format and every array) passed before: wrapping the same caller arrays again (a scipy
/// matrix passed to every kernel call) costs a hash instead of a validation. Remembers the last
/// 64 verdicts; thread-safe.
void validateOnce(const Tensor& tensor);

}  // namespace sparseflow
