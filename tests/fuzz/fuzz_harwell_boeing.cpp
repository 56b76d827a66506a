// libFuzzer target: Harwell-Boeing parsing and Fortran-format reading must never crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/fortran_format.h"
#include "io/harwell_boeing.h"
#include "sparseflow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    sparseflow::io::RawTensor tensor = sparseflow::io::parseHarwellBoeing(text, "fuzz.rua");
    // Every coordinate lies inside the shape.
    for (size_t e = 0; e < tensor.coords.size(); ++e) {
      if (tensor.coords[e] < 0 || tensor.coords[e] >= tensor.shape[e % 2]) __builtin_trap();
    }
  } catch (const sparseflow::Error&) {
  }
  // The first line as a format, the rest as data: reaches reversion, '/', T and blank modes.
  size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return 0;
  try {
    auto format = sparseflow::io::FortranFormat::parse(text.substr(0, newline), "fuzz");
    sparseflow::io::LineCursor lines(text.substr(newline + 1), "fuzz");
    sparseflow::io::readFortranReals(lines, format, 100, "values");
  } catch (const sparseflow::Error&) {
  }
  return 0;
}
