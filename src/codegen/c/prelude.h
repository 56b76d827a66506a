// The fixed text every generated kernel starts with: includes, the runtime ABI structs and the
// element-wise functions of the kernel language.
#pragma once

#include <string>

namespace sparseflow::codegen {

/// include/sparseflow/runtime_abi.h, verbatim (embedded at build time).
const char* runtimeAbiText();
/// The whole prelude.
std::string cppPrelude();

}  // namespace sparseflow::codegen
