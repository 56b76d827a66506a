// .npy writer: magic, version 1.0, a header dict padded to 64 bytes, then the raw elements.
#include "common/npy_file.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace sparseflow::bench {
namespace {

void write(const std::string& path, const char* descr, const void* data, int64_t count,
           size_t elementSize) {
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string prefix = "\x93NUMPY";
  prefix += '\x01';
  prefix += '\x00';
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>(header.size() >> 8);
  std::unique_ptr<FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  const size_t bytes = static_cast<size_t>(count) * elementSize;
  if (!file || std::fwrite(prefix.data(), 1, prefix.size(), file.get()) != prefix.size() ||
      std::fwrite(header.data(), 1, header.size(), file.get()) != header.size() ||
      (bytes && std::fwrite(data, 1, bytes, file.get()) != bytes) || std::fflush(file.get())) {
    throw std::runtime_error(path + ": cannot write the .npy file");
  }
}

}  // namespace

void writeNpy(const std::string& path, const int32_t* data, int64_t count) {
  write(path, "<i4", data, count, 4);
}
void writeNpy(const std::string& path, const int64_t* data, int64_t count) {
  write(path, "<i8", data, count, 8);
}
void writeNpy(const std::string& path, const float* data, int64_t count) {
  write(path, "<f4", data, count, 4);
}
void writeNpy(const std::string& path, const double* data, int64_t count) {
  write(path, "<f8", data, count, 8);
}

}  // namespace sparseflow::bench
