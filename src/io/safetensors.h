// The .safetensors container (Hugging Face): an 8-byte header length, a JSON header naming each
// array's dtype, shape and byte range, then the arrays. Parsing checks every rule of the format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sparseflow/dtype.h"

namespace sparseflow::io {

/// The largest JSON header accepted, as in the reference implementation (100 MB).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

/// One array as the header lists it.
struct SafetensorsArray {
  std::string name;
  std::string dtype;  ///< as in the file: "F32", "BF16", "I64", "BOOL", "F8_E4M3"...
  std::vector<int64_t> shape;
  uint64_t begin = 0;  ///< byte range [begin, end) in the data buffer (after the header)
  uint64_t end = 0;
};

/// A parsed and checked header.
struct SafetensorsHeader {
  /// Every array, ordered by their place in the data buffer (ties: by name).
  std::vector<SafetensorsArray> arrays;
  /// `__metadata__`, string to string, sorted by key.
  std::vector<std::pair<std::string, std::string>> metadata;
  /// Where the data buffer begins in the file: 8 + header length.
  uint64_t dataStart = 0;
};

/// Bytes per element of a safetensors dtype; 0 for a name the format does not define.
int64_t safetensorsDTypeSize(std::string_view dtype);
/// The sparseflow type of a safetensors dtype (F32, F64, F16, BF16, I32, I64, U8), if it has one.
std::optional<DType> dtypeFromSafetensors(std::string_view dtype);
/// The safetensors name of a sparseflow type ("F32"...).
const char* safetensorsDTypeName(DType type);

/// Parses and checks the header of a whole .safetensors file held in `file`. Errors name `name`
/// and what is wrong (kParseError): a file too short for its header, a header over the 100 MB
/// limit or past the end of the file, JSON that does not parse or is not an object of objects,
/// duplicate names, a shape or data_offsets that are not non-negative integers, a byte size that
/// is not dtype size × shape, offsets out of order or outside the data buffer, arrays that overlap
/// or leave bytes of the buffer unused; kNotSupported for an unknown dtype.
SafetensorsHeader parseSafetensorsHeader(std::string_view file, const std::string& name);

/// An array to write: its bytes are viewed, not copied (they must live until the write ends).
struct SafetensorsOutArray {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

/// Writes a .safetensors file atomically (a temporary file in the same directory, renamed over
/// `path` when complete), streaming the arrays. Arrays are laid out by decreasing element size,
/// then in the given order, so that each starts aligned to its element size; the header is padded
/// with spaces to a multiple of 8 bytes. Checks what parseSafetensorsHeader checks (unique,
/// non-empty names, known dtypes, bytes = dtype size × shape); kIoError when the file cannot be
/// written.
void writeSafetensors(const std::string& path, const std::vector<SafetensorsOutArray>& arrays,
                      const std::vector<std::pair<std::string, std::string>>& metadata);
/// The same file's bytes, in memory (tests and fuzzing).
std::string formatSafetensors(const std::vector<SafetensorsOutArray>& arrays,
                              const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace sparseflow::io
