// libFuzzer target: any bytes opened as a .safetensors checkpoint give a Checkpoint or a
// sparseflow::Error; what opens copies unchanged into a file that opens to the same tensors, and
// every tensor that reads is rewritten and read back to the same arrays.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "sparseflow/checkpoint.h"
#include "sparseflow/error.h"

namespace {

using sparseflow::Checkpoint;
using sparseflow::CheckpointEntry;
using sparseflow::CheckpointWriter;

bool sameBuffer(const sparseflow::Buffer& a, const sparseflow::Buffer& b) {
  return a.dtype() == b.dtype() && a.size() == b.size() &&
         (a.bytes() == 0 || std::memcmp(a.data(), b.data(), static_cast<size_t>(a.bytes())) == 0);
}

bool sameTensor(const sparseflow::Tensor& a, const sparseflow::Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype() || !(a.format() == b.format())) return false;
  if (a.isHybrid()) {
    if (a.parts().size() != b.parts().size()) return false;
    for (size_t p = 0; p < a.parts().size(); ++p) {
      if (!sameTensor(a.parts()[p], b.parts()[p])) return false;
    }
    return true;
  }
  if (!sameBuffer(a.values(), b.values()) || a.levels().size() != b.levels().size()) return false;
  for (size_t l = 0; l < a.levels().size(); ++l) {
    const auto &x = a.levels()[l], &y = b.levels()[l];
    if (!sameBuffer(x.pos, y.pos) || !sameBuffer(x.crd, y.crd) || !sameBuffer(x.meta, y.meta)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Checkpoint in;
  try {
    in = Checkpoint::parse(std::string_view(reinterpret_cast<const char*>(data), size),
                           "fuzz.safetensors");
  } catch (const sparseflow::Error&) {
    return 0;
  }
  // Copied unchanged (any dtype, any layout), it opens to the same entries and bytes.
  CheckpointWriter copy, rewrite;
  std::map<std::string, sparseflow::Tensor> read;
  for (const CheckpointEntry& e : in.entries()) {
    copy.copy(in, e.name);
    if (!e.readable()) continue;
    try {
      sparseflow::Tensor t = in.tensor(e.name);
      rewrite.add(e.name, t);
      read.emplace(e.name, std::move(t));
    } catch (const sparseflow::Error&) {
    }
  }
  for (const auto& [key, value] : in.metadata()) copy.setMetadata(key, value);
  const Checkpoint again = Checkpoint::parse(copy.bytes(), "copy.safetensors");
  if (again.entries().size() != in.entries().size() || again.metadata() != in.metadata()) {
    __builtin_trap();
  }
  for (const CheckpointEntry& e : in.entries()) {
    const CheckpointEntry& f = again.entry(e.name);
    if (f.shape != e.shape || f.dtype != e.dtype || f.format != e.format || f.arrays != e.arrays) {
      __builtin_trap();
    }
    for (const std::string& a : e.arrays) {
      if (again.arrayBytes(a) != in.arrayBytes(a)) __builtin_trap();
    }
  }
  // Every tensor that read comes back from the writer with the same arrays.
  const Checkpoint rewritten = Checkpoint::parse(rewrite.bytes(), "rewrite.safetensors");
  for (const auto& [name, tensor] : read) {
    if (!sameTensor(rewritten.tensor(name), tensor)) __builtin_trap();
  }
  return 0;
}
