// libFuzzer target: any bytes in a file of any extension, read as `sparseflow info` and `convert`
// read them (the kind from the extension or the first bytes, foreign files named, sizes bounded
// by the file): a tensor or a sparseflow::Error, never a crash, a hang or an allocation the file
// does not back. The first byte chooses the extension; the rest is the file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/statistics.h"
#include "sparseflow/validate.h"

namespace {

const char* const kExtensions[] = {".mtx", ".tns", ".smtx", ".npy", ".sft", ".safetensors",
                                   ".rua", ".txt", "",      ".pt",  ".onnx"};

/// One scratch file per fuzzing process, rewritten for every input.
const std::string& scratchBase() {
  static const std::string base = "/tmp/sparseflow-fuzz-read-" + std::to_string(::getpid());
  return base;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path =
      scratchBase() + kExtensions[data[0] % (sizeof kExtensions / sizeof kExtensions[0])];
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data + 1, 1, size - 1, f);
    std::fclose(f);
  } else {
    return 0;
  }
  // Both reads run under a storage limit of 16 MiB instead of the default 256 MiB: a 12-byte
  // triplet file naming row 40155156 legitimately builds 160 MB of CSR row positions, whose
  // validation takes over 10 s under ASan and coverage (a libFuzzer timeout, not a bug). The
  // default limit is tested by DeclaredSizes.* and the CLI sweep.
  constexpr int64_t kStorageLimit = int64_t{16} << 20;
  // What `info` does: coordinates in 64 bits, validation, statistics of a matrix.
  try {
    sparseflow::ReadOptions info;
    info.format = "coo@i64";
    info.dtype = sparseflow::DType::kF64;
    info.storageLimit = kStorageLimit;
    const sparseflow::Tensor t = sparseflow::read(path, info);
    sparseflow::validate(t);
    if (t.rank() == 2) sparseflow::matrixStatistics(t);
  } catch (const sparseflow::Error&) {
  }
  // What `convert` does first: the default format (csr for matrices), under the storage limit.
  try {
    sparseflow::ReadOptions convert;
    convert.storageLimit = kStorageLimit;
    sparseflow::validate(sparseflow::read(path, convert));
  } catch (const sparseflow::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
