// libFuzzer target: FROSTT parsing never crashes, and what parses round-trips the writer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "io/frostt.h"
#include "sparseflow/error.h"

namespace {

bool sameValues(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    bool bothNan = std::isnan(a[i]) && std::isnan(b[i]);
    if (!bothNan && std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparseflow;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Every header mode, and a given shape, must fail cleanly or succeed.
  for (auto header : {io::FrosttOptions::Header::kPlain, io::FrosttOptions::Header::kExtended}) {
    try {
      io::FrosttOptions options;
      options.header = header;
      (void)io::parseFrostt(text, "fuzz.tns", options);
    } catch (const Error&) {
    }
  }
  try {
    io::FrosttOptions options;
    options.shape = {3, 4};
    (void)io::parseFrostt(text, "fuzz.tns", options);
  } catch (const Error&) {
  }
  io::RawTensor tensor;
  try {
    tensor = io::parseFrostt(text, "fuzz.tns");
  } catch (const Error&) {
    return 0;
  }
  io::RawTensor again = io::parseFrostt(io::formatFrostt(tensor), "again.tns");
  if (again.shape != tensor.shape || again.dense || again.pattern ||
      again.coords != tensor.coords || !sameValues(again.values, tensor.values)) {
    __builtin_trap();
  }
  return 0;
}
