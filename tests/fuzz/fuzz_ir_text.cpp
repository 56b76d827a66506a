// libFuzzer target: any text given to `sparseflow opt` (a lowered kernel: header lines, then the
// loop IR of its phases) parses or gives kInvalidArgument naming the line; what parses prints to
// text that parses to the same kernel and prints the same again (lower/lowered_text.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "lower/lowered_text.h"
#include "sparseflow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparseflow;
  const std::string text(reinterpret_cast<const char*>(data), size);
  lower::LoweredKernel kernel;
  try {
    kernel = lower::parseKernel(text, "fuzz");
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument && e.code() != ErrorCode::kParseError)
      __builtin_trap();
    return 0;
  }
  const std::string printed = lower::printKernel(kernel);
  lower::LoweredKernel back;
  try {
    back = lower::parseKernel(printed, "printed");
  } catch (...) {
    __builtin_trap();  // printed text must read back
  }
  if (!lower::sameKernel(kernel, back) || lower::printKernel(back) != printed) __builtin_trap();
  return 0;
}
