// Stage III for the CPU: a lowered kernel → one C++ translation unit with an extern "C" entry
// (runtime_abi.h), readable by users (kernel.source).
#pragma once

#include <string>

#include "lower/lower.h"

namespace sparseflow::codegen {

std::string emitCpp(const lower::LoweredKernel& kernel);

}  // namespace sparseflow::codegen
