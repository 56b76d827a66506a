// libFuzzer target: Matrix Market parsing never crashes, and what parses round-trips the writer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "io/matrix_market.h"
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
  try {
    io::MatrixMarketOptions stored;
    stored.expandSymmetry = false;
    (void)io::parseMatrixMarket(text, "fuzz.mtx", stored);
  } catch (const Error&) {
  }
  io::RawTensor tensor;
  try {
    tensor = io::parseMatrixMarket(text, "fuzz.mtx");
  } catch (const Error&) {
    return 0;
  }
  // What parses is a consistent matrix: the writer accepts it (or this throws and is a finding)
  // and reading its output gives the same tensor back.
  io::RawTensor again = io::parseMatrixMarket(io::formatMatrixMarket(tensor), "again.mtx");
  if (again.shape != tensor.shape || again.dense != tensor.dense ||
      again.pattern != tensor.pattern || again.coords != tensor.coords ||
      !sameValues(again.values, tensor.values)) {
    __builtin_trap();
  }
  return 0;
}
