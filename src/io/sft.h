// The native binary tensor file (.sft): a small header, a text descriptor, an array table and
// 64-byte-aligned arrays, little-endian and checksummed; loads through mmap without parsing.
#pragma once

#include <string>
#include <string_view>

#include "sparseflow/tensor.h"

namespace sparseflow::io {

/// File layout, version 1 (all integers little-endian):
///   0  char[8] magic "SFTENSOR"      8  u32 version (1)          12 u32 reserved (0)
///   16 u64 descriptor bytes          24 u64 array count           32 u64 file bytes
///   40 u64 checksum of bytes [48, file bytes)
///   48 descriptor: lines "shape: 3 4", "dtype: f32", "format: csr" (UTF-8 text)
///   then the array table, 8-byte aligned, one 32-byte record per array:
///      u32 part (hybrid part, else 0), u32 level (0xffffffff for values),
///      u32 role (0 pos, 1 crd, 2 meta, 3 values), u32 dtype, u64 count, u64 offset
///   then the arrays, each at a 64-byte-aligned offset.
inline constexpr char kSftMagic[8] = {'S', 'F', 'T', 'E', 'N', 'S', 'O', 'R'};
inline constexpr uint32_t kSftVersion = 1;

struct SftReadOptions {
  bool verifyChecksum = true;  ///< reads every byte once; turn off for the fastest lazy load
  bool validate = true;        ///< structural validation of the arrays against the format
};

/// The bytes of a .sft file holding `tensor`.
std::string formatSft(const Tensor& tensor);
/// Writes formatSft(tensor) atomically to `path`.
void writeSft(const std::string& path, const Tensor& tensor);
/// Maps the file (copy-on-write) and returns a tensor whose arrays view the mapping; the mapping
/// lives as long as any array does. Errors name the file and byte offset.
Tensor readSft(const std::string& path, const SftReadOptions& options = {});
/// Parses .sft bytes held in memory (copied into owned arrays); for tests and fuzzing.
Tensor parseSft(std::string_view bytes, const std::string& name,
                const SftReadOptions& options = {});

}  // namespace sparseflow::io
