// Stage III for the CPU: a lowered kernel → one C++ translation unit with an extern "C" entry
// (runtime_abi.h), readable by users (kernel.source).
#pragma once

#include <set>
#include <string>

#include "lower/lower.h"

namespace sparseflow::codegen {

std::string emitCpp(const lower::LoweredKernel& kernel);

/// The names the entry point declares for the body (extents, the hash capacity, the tensors'
/// arrays, sf_params): what ir::verifyScopes takes as external.
std::set<std::string> entryPointNames(const lower::LoweredKernel& kernel);

}  // namespace sparseflow::codegen
