// libFuzzer target: .npy parsing must never crash, and what parses must round-trip the writer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/npy.h"
#include "sparseflow/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sparseflow::io::NpyArray array;
  try {
    array = sparseflow::io::parseNpy(bytes, "fuzz.npy");
  } catch (const sparseflow::Error&) {
    return 0;
  }
  // A parsed array is consistent: it converts, and writing then reading it gives it back.
  sparseflow::io::RawTensor tensor = sparseflow::io::toRawTensor(array);
  if (tensor.values.size() * static_cast<size_t>(sparseflow::io::npyItemSize(array.dtype)) !=
      array.bytes.size()) {
    __builtin_trap();
  }
  sparseflow::io::NpyArray again =
      sparseflow::io::parseNpy(sparseflow::io::formatNpy(array), "again.npy");
  if (again.shape != array.shape || again.dtype != array.dtype || again.bytes != array.bytes) {
    __builtin_trap();
  }
  return 0;
}
