// Checkpoints: many named tensors in one .safetensors file, dense or compressed (2:4, csr, bsr...).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow {

/// One tensor of a checkpoint as its header describes it (no data read).
struct CheckpointEntry {
  std::string name;
  std::vector<int64_t> shape;
  /// The safetensors dtype of the values: "F32", "BF16", "I64", "BOOL", "F8_E4M3"...
  std::string dtype;
  /// "dense" for a plain safetensors array; else the sparseflow format it is stored in ("2:4",
  /// "csr", "bsr:4x4"...), as the arrays of the layout in docs/tools.md.
  std::string format;
  /// The names of the file arrays that hold it (the tensor's own name for a plain array).
  std::vector<std::string> arrays;
  /// Bytes of those arrays in the file.
  int64_t bytes = 0;
  /// True when Checkpoint::tensor can return it: its values are F32, F64, F16 or BF16.
  bool readable() const;
};

/// A .safetensors file opened for reading: mapped, its header checked (docs/tools.md lists the
/// rules), the sparseflow layout of compressed tensors resolved. Cheap to copy (shared).
/// Files written by any safetensors writer open; their arrays are plain (dense) tensors.
class Checkpoint {
 public:
  /// Opens `path`; errors name the file and what is wrong (kIoError, kParseError, kNotSupported).
  static Checkpoint open(const std::string& path);
  /// The same for bytes in memory (copied); `name` stands for the file in errors.
  static Checkpoint parse(std::string_view bytes, const std::string& name);

  /// The path (or the name given to parse).
  const std::string& path() const;
  /// Every tensor, in the order of the file's data.
  const std::vector<CheckpointEntry>& entries() const;
  bool contains(const std::string& name) const;
  /// The entry named `name`; kInvalidArgument naming the file and listing some names otherwise.
  const CheckpointEntry& entry(const std::string& name) const;
  /// `__metadata__` without sparseflow's own key.
  const std::map<std::string, std::string>& metadata() const;

  /// The tensor in its stored format and dtype, with arrays of its own, validated against its
  /// format. kNotSupported for dtypes without sparseflow values (integers, BOOL, F8...).
  Tensor tensor(const std::string& name) const;
  /// The bytes of one file array (entry.arrays), as stored: for copying any tensor unchanged.
  std::string_view arrayBytes(const std::string& arrayName) const;

  struct Impl;

 private:
  friend class CheckpointWriter;
  std::shared_ptr<const Impl> impl_;
};

/// Collects named tensors and writes them as one .safetensors file: dense row-major tensors as
/// plain arrays any safetensors reader loads, other formats as the arrays `name.values`,
/// `name.level<L>.pos|crd|meta` (and `name.part<P>.` prefixes for hybrids) with a record in
/// `__metadata__["sparseflow"]` (docs/tools.md). Checkpoint reads both back to the same tensors.
class CheckpointWriter {
 public:
  CheckpointWriter();
  ~CheckpointWriter();
  CheckpointWriter(CheckpointWriter&&) noexcept;
  CheckpointWriter& operator=(CheckpointWriter&&) noexcept;

  /// Adds `tensor` under `name` (kept by reference: its arrays are written by write()). Names
  /// must be unique, also among the arrays a compressed tensor becomes.
  void add(const std::string& name, const Tensor& tensor);
  /// Adds the tensor `name` of `source` unchanged, whatever its dtype and layout.
  void copy(const Checkpoint& source, const std::string& name);
  /// Sets a `__metadata__` entry (the key "sparseflow" is reserved).
  void setMetadata(const std::string& key, const std::string& value);
  /// The names added so far, in order.
  std::vector<std::string> names() const;

  /// Writes the file atomically (a temporary file renamed over `path`; nothing on failure).
  void write(const std::string& path) const;
  /// The file's bytes in memory.
  std::string bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparseflow
