// Format decomposition (SparseTIR's stage-I primitive): a kernel that reads one input in a hybrid
// format (hyb = ELL part + COO remainder, or any `hybrid[...]`) runs as one kernel per part, each
// compiled for its part's plain format, accumulated into one dense output; a sparse output is
// computed per part, and the parts' entries summed into its format. Valid when the kernel is
// linear in that input: one loop nest in which the input is a single multiplicative factor.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "sparseflow/format.h"

namespace sparseflow::runtime {

struct Decomposition {
  std::string tensor;  ///< the input bound to a hybrid format
  Format format;       ///< that hybrid format
  /// The kernel per part: `=` (as written) first, then `+=`; with a sparse output, all as written.
  std::vector<std::string> partTexts;
  std::vector<std::string> partFormats;
  /// The output's format when it is sparse: each part makes one, their entries are summed.
  std::optional<Format> sparseOutput;
};

/// The decomposition of `statement` for the formats bound to its tensors, or nullopt when no
/// input is hybrid. Throws kNotSupported (naming the tensor and the reason) when an input is
/// hybrid but the kernel cannot be split: two hybrid inputs, or a kernel that is not linear in
/// the hybrid input.
std::optional<Decomposition> decompose(const expr::CheckedKernel& kernel,
                                       const std::map<std::string, Format>& formats);

}  // namespace sparseflow::runtime
