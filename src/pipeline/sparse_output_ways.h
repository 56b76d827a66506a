// The ways a sparse output that lowering cannot produce as asked is produced anyway (lowerStage's
// fallbacks; docs/compiler.md, lowering rule 7), each tried when the ones before it do not lower:
// the output assembled in another format and converted; inputs whose storage reaches an output
// row more than once read through compressed copies in their level order; one input through a
// copy in the output's index order (A^T B); the writes collected as a list and sorted.
#pragma once

#include <optional>

#include "lower/lower.h"
#include "pipeline/stages.h"

namespace sparseflow::pipeline {

/// The kernel lowered one of those ways, with notes saying which, or nullopt when none lowers
/// (the caller reports the error of lowering as asked).
std::optional<lower::LoweredKernel> lowerSparseOutputAnotherWay(const CheckedStage& checked);

}  // namespace sparseflow::pipeline
