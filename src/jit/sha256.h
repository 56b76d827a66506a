// SHA-256 (FIPS 180-4) for JIT cache keys and .so checksums: strong, dependency-free, fast enough.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sparseflow::jit {

/// Incremental SHA-256. checksum64 in support/hash.h is 64 bits and not collision resistant;
/// cache keys name files that are loaded as code, so they need a strong hash.
class Sha256 {
 public:
  Sha256();
  /// Feeds `size` bytes.
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  /// Feeds a length prefix, then the bytes, so that concatenated fields cannot be confused.
  void updateField(std::string_view text);
  /// The digest as 64 lowercase hex digits; the object must not be updated afterwards.
  std::string hexDigest();

 private:
  void block(const unsigned char* p);

  std::array<uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

/// SHA-256 of `size` bytes as 64 hex digits.
std::string sha256Hex(const void* data, size_t size);

}  // namespace sparseflow::jit
