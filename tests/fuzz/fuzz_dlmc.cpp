// libFuzzer target: DLMC parsing never crashes, and what parses round-trips the writer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/dlmc.h"
#include "sparseflow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparseflow;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  io::DlmcOptions options;
  options.fill = io::DlmcOptions::Fill::kRandom;
  io::RawTensor tensor;
  try {
    io::DlmcCsr csr = io::parseDlmcCsr(text, "fuzz.smtx", options);
    if (csr.offsets.size() != static_cast<size_t>(csr.rows) + 1 ||
        csr.values.size() != csr.indices.size() ||
        std::any_of(csr.values.begin(), csr.values.end(),
                    [](double v) { return !(v >= -1.0 && v < 1.0); })) {
      __builtin_trap();
    }
    tensor = io::parseDlmc(text, "fuzz.smtx");
  } catch (const Error&) {
    return 0;
  }
  std::string written;
  try {
    written = io::formatDlmc(tensor);
  } catch (const Error& e) {
    // The reader keeps duplicate columns; the writer refuses them, and only them.
    if (e.code() != ErrorCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  io::DlmcCsr again = io::parseDlmcCsr(written, "again.smtx");
  if (again.rows != tensor.shape[0] || again.cols != tensor.shape[1] ||
      again.nnz() != tensor.numEntries()) {
    __builtin_trap();
  }
  return 0;
}
