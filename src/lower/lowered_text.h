// The text form of a lowered kernel: a header (tensors, arrays, extents, assembly and fusion
// facts) and the loop IR of its phases. What the lower, schedule and default-transforms stages
// print, what `sparseflow opt` reads, and what tests/lit compares; parse(print(k)) is k again.
#pragma once

#include <string>

#include "lower/lower.h"

namespace sparseflow::lower {

/// The whole kernel as text:
///   tensor C: float rank 2 format csr          (one line per tensor, the output first)
///   array tC_pos1: int32_t = C pos 1           (one per ArrayBinding: values/pos/crd/meta/slots)
///   index i, j, k                              (extent order; n_i... in the body)
///   ... `param`, `compute`, `pattern from`, `accumulate`, `assembled level`, `hash capacity`,
///   `loop order`, `temporary`, `output indices`, `convert output to`, `note` lines where they
///   apply ...
///   symbolic:                                  (the first phase of an assembled output)
///   body:
///   <the loop IR, ir::toString>
std::string printKernel(const LoweredKernel& kernel);

/// Reads printKernel's text. Errors throw kInvalidArgument naming `source` and the line.
LoweredKernel parseKernel(const std::string& text, const std::string& source = "<ir>");

/// The same kernel: every header field equal and the phases equal as IR (ir/equal.h).
bool sameKernel(const LoweredKernel& a, const LoweredKernel& b);

}  // namespace sparseflow::lower
