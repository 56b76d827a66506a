// libFuzzer target: .sft decoding must never crash; what decodes must read out and re-encode.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/sft.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sparseflow::io::SftReadOptions options;
  options.verifyChecksum = false;  // reach the table and array checks, not only the checksum
  sparseflow::Tensor tensor;
  try {
    tensor = sparseflow::io::parseSft(bytes, "fuzz.sft", options);
  } catch (const sparseflow::Error&) {
    return 0;
  }
  // A decoded tensor passed validation: reading its entries out must be safe.
  try {
    sparseflow::Coo coo = sparseflow::toCoo(tensor);
    sparseflow::Tensor again =
        sparseflow::io::parseSft(sparseflow::io::formatSft(tensor), "again.sft");
    if (again.format() != tensor.format() || again.shape() != tensor.shape()) __builtin_trap();
  } catch (const sparseflow::Error& e) {
    // Only resource limits may stop a valid tensor (a forged huge shape).
    if (e.code() != sparseflow::ErrorCode::kOutOfMemory) __builtin_trap();
  }
  return 0;
}
