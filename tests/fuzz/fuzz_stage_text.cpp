// libFuzzer target: any text given to `sparseflow opt` before lowering (the checked stage's text,
// or a canonical `contraction:` line) reads back or gives a sparseflow::Error that is not internal;
// what reads back prints to text that reads back to the same text again (pipeline/stage_text.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/stage_text.h"
#include "sparseflow/error.h"

namespace {

/// Runs `read`; true when it read the text, false on a user error, a trap on an internal one.
template <typename Read>
bool readsBack(Read&& read) {
  try {
    read();
    return true;
  } catch (const sparseflow::Error& e) {
    if (e.code() == sparseflow::ErrorCode::kInternal) __builtin_trap();
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparseflow;
  using namespace sparseflow::pipeline;
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckedStage checked;
  if (readsBack([&] { checked = parseChecked(text, "fuzz", KernelOptions{}); })) {
    const std::string printed = printChecked(checked);
    CheckedStage back;
    if (!readsBack([&] { back = parseChecked(printed, "printed", KernelOptions{}); }))
      __builtin_trap();  // printed text must read back
    if (printChecked(back) != printed) __builtin_trap();
  }
  CanonicalStage canonical;
  if (readsBack([&] { canonical = parseCanonical(text, "fuzz", KernelOptions{}); })) {
    const std::string printed = printCanonical(canonical);
    CanonicalStage back;
    if (!readsBack([&] { back = parseCanonical(printed, "printed", KernelOptions{}); }))
      __builtin_trap();
    if (printCanonical(back) != printed) __builtin_trap();
  }
  return 0;
}
