// Reading and writing tensors in files: Matrix Market, Harwell-Boeing, FROSTT, DLMC, npy, sft,
// safetensors (one tensor; sparseflow/checkpoint.h reads and writes whole checkpoints).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sparseflow/build.h"
#include "sparseflow/tensor.h"

namespace sparseflow {

/// File kinds. Values are stable (C ABI): append only.
enum class FileKind : int32_t {
  kAuto = 0,           ///< from the extension, else from the first bytes
  kMatrixMarket = 1,   ///< .mtx, .mm, .ttx (TACO's tensor object)
  kHarwellBoeing = 2,  ///< .rua .rsa .psa .pua .rra .rb .hb
  kFrostt = 3,         ///< .tns
  kDlmc = 4,           ///< .smtx
  kNpy = 5,            ///< .npy
  kSft = 6,            ///< .sft (sparseflow's binary format)
  kTriplet = 7,        ///< headerless 0-based "i j [x]" lines
  kSafetensors = 8,    ///< .safetensors (one tensor of it; see sparseflow/checkpoint.h)
};

/// "matrix-market", "harwell-boeing", "frostt", "dlmc", "npy", "sft", "triplet", "safetensors".
const char* fileKindName(FileKind kind);
/// The kind a path's extension names, or kAuto when the extension says nothing.
FileKind fileKindFromPath(const std::string& path);

/// How DLMC files, which hold no values, get them.
enum class ValueFill : int32_t { kOnes = 0, kRandom = 1 };

struct ReadOptions {
  FileKind kind = FileKind::kAuto;
  /// Format of the result; empty: as stored for .sft, dense for dense files (.npy, array .mtx),
  /// csr for other matrices and coo for other tensors.
  std::string format;
  /// Value type of the result; unset: exact. Binary files (.npy, .sft, .safetensors) keep the type
  /// they store (integer .npy arrays: f32 when every value is an f32, else f64); text files and
  /// pattern files get f32 when every value is exactly an f32 (patterns: ones), else f64. Set it to
  /// convert while reading (the values are rounded to nearest even).
  std::optional<DType> dtype;
  Duplicates duplicates = Duplicates::kSum;
  ValueFill fill = ValueFill::kOnes;  ///< DLMC
  uint64_t seed = 0;                  ///< DLMC random fill
  bool verifyChecksum = true;         ///< .sft
  /// .safetensors: the tensor to read; empty: the file must hold exactly one.
  std::string tensor;
  /// The most bytes the tensor built from a file may take: 0 (default) allows
  /// max(256 MiB, 16 x the file's size), so that a header declaring a huge shape cannot make a
  /// small file allocate gigabytes (csr's row pointers grow with the rows, dense storage with the
  /// elements; kOutOfMemory names the file and what it would need); a positive value is the limit
  /// in bytes; a negative one removes it (the memory guard of support/memory.h still applies).
  int64_t storageLimit = 0;
};

/// Reads a tensor; errors name the file and the line or byte at fault. Only regular files are read
/// (a FIFO or a device is refused without blocking), files of kinds no reader takes (a PyTorch
/// checkpoint, a zip or gzip file...) are refused naming what they are, and memory grows with
/// what the file holds (ReadOptions::storageLimit), never with what its header claims alone.
Tensor read(const std::string& path, const ReadOptions& options = {});
/// The file's coordinates as read (pattern values 1), before any format is chosen.
Coo readCoo(const std::string& path, const ReadOptions& options = {});

struct WriteOptions {
  FileKind kind = FileKind::kAuto;  ///< from the extension when kAuto
  std::string tensor = "tensor";    ///< .safetensors: the tensor's name in the file
};

/// Writes a tensor atomically (a failed write leaves no partial file). .mtx, .tns and .smtx get
/// the entries; .npy the dense array; .sft the format and arrays as they are; .safetensors a
/// checkpoint of this one tensor (dense as a plain array, other formats as in docs/tools.md).
void write(const std::string& path, const Tensor& tensor, const WriteOptions& options = {});

}  // namespace sparseflow
