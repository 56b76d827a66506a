// Format decomposition (SparseTIR's stage-I primitive): a kernel that reads one input in a hybrid
// format (hyb = ELL part + COO remainder, or any `hybrid[...]`) runs as one kernel per part, each
// compiled for its part's plain format, accumulated into one dense output. Valid when the kernel
// is linear in that input: one loop nest in which the input is a single multiplicative factor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "sparseflow/format.h"

namespace sparseflow::runtime {

struct Decomposition {
  std::string tensor;                  ///< the input bound to a hybrid format
  Format format;                       ///< that hybrid format
  std::vector<std::string> partTexts;  ///< the kernel per part: `=` (as written) first, then `+=`
  std::vector<std::string> partFormats;
};

/// The decomposition of `statement` for the formats bound to its tensors, or nullopt when no
/// input is hybrid. Throws kNotSupported (naming the tensor and the reason) when an input is
/// hybrid but the kernel cannot be split: the output hybrid or sparse, two hybrid inputs, or a
/// kernel that is not linear in the hybrid input.
std::optional<Decomposition> decompose(const expr::CheckedKernel& kernel,
                                       const std::map<std::string, Format>& formats);

}  // namespace sparseflow::runtime
