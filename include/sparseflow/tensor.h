// Tensor: shape + value type + Format + storage arrays (owned, or views of the caller's memory).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sparseflow/dtype.h"
#include "sparseflow/format.h"

namespace sparseflow {

struct BufferState;

/// A typed, contiguous array: owns its memory or views the caller's (kept alive by `keepAlive`).
///
/// Copies of a Buffer share its memory and its state: an identity that is never reused, and a
/// record of writes that caches of derived data (packed weights, converted copies, validation
/// verdicts) check so that they are never used for contents other than the ones they were built
/// from (docs/formats.md, "Buffers and caches"). Every mutable accessor (`data()`, `as<T>()`,
/// `setValue`) counts as a write. In C++ a pointer taken from a mutable accessor may be written
/// until the buffer is next given to a kernel; write again only through a new accessor call.
/// Memory the library cannot watch (views of caller memory, buffers handed out as writable
/// arrays to Python or C) is verified by its content hash instead.
class Buffer {
 public:
  Buffer() = default;
  /// A zero-filled owned buffer of `count` elements.
  static Buffer zeros(DType type, int64_t count);
  /// A view of caller memory; no copy. `keepAlive` (may be null) is held while the view lives.
  /// The caller may change the memory at any time, so caches verify it by content.
  static Buffer view(DType type, void* data, int64_t count, std::shared_ptr<void> keepAlive = {});
  /// An owned copy of int64 values narrowed to `type` (i32 or i64); throws if a value overflows.
  static Buffer fromIndices(DType type, const std::vector<int64_t>& values, const char* what);

  DType dtype() const { return type_; }
  int64_t size() const { return count_; }
  int64_t bytes() const { return count_ * dtypeSize(type_); }
  bool owning() const { return owning_; }
  void* data() {
    noteWrite();
    return data_;
  }
  const void* data() const { return data_; }
  template <typename T>
  T* as() {
    noteWrite();
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }
  /// Element i read as int64 (index buffers: i32, i64, u8).
  int64_t index(int64_t i) const;
  /// Element i read as double (value buffers of any float type).
  double value(int64_t i) const;
  /// Stores a double into element i, rounding to the buffer's type.
  void setValue(int64_t i, double v);
  /// All elements as int64 (index buffers).
  std::vector<int64_t> toIndexVector() const;
  /// A deep, owned copy.
  Buffer clone() const;
  /// True when this Buffer is the only holder of its memory (no copy, tensor or array view shares
  /// it): an output pool may then hand it out again.
  bool soleOwner() const { return memory_ != nullptr && memory_.use_count() == 1; }

  /// Where a cache of data derived from this buffer stands: `id` names the memory (never reused,
  /// unlike its address), `version` changes after every write, and `watched` is false when writes
  /// can happen where the library cannot see them (caller memory, writable views handed out), in
  /// which case only the content hash tells whether the contents changed.
  struct Stamp {
    uint64_t id = 0;
    uint64_t version = 0;
    bool watched = false;
  };
  Stamp stamp() const;
  /// Marks the buffer as writable by code the library cannot watch until the returned token is
  /// released (Python arrays and C pointers that view the buffer hold one); the release counts
  /// as a write.
  std::shared_ptr<void> openExternalWriter() const;

 private:
  void noteWrite();

  DType type_ = DType::kF32;
  int64_t count_ = 0;
  void* data_ = nullptr;
  bool owning_ = false;
  std::shared_ptr<void> memory_;
  std::shared_ptr<BufferState> state_;
};

/// The arrays of one level. Which are used depends on the level kind: pos (compressed, ragged),
/// crd (compressed, singleton, fixed), meta (n:m, packed in-group offsets).
struct LevelStorage {
  Buffer pos;
  Buffer crd;
  Buffer meta;
};

/// A tensor with sparsity: shape, value type, format and storage. Plain formats keep one array set
/// per level plus the values; hybrid formats keep one Tensor per part (their sum is the tensor).
class Tensor {
 public:
  Tensor() = default;
  /// Assembles a tensor from arrays; call validate() (format/validate.h) to check them.
  Tensor(std::vector<int64_t> shape, DType dtype, Format format, std::vector<LevelStorage> levels,
         Buffer values);
  /// A hybrid tensor from parts of the same shape and dtype whose formats are `format`'s parts.
  static Tensor hybrid(std::vector<int64_t> shape, DType dtype, Format format,
                       std::vector<Tensor> parts);

  const std::vector<int64_t>& shape() const { return shape_; }
  int32_t rank() const { return static_cast<int32_t>(shape_.size()); }
  DType dtype() const { return dtype_; }
  const Format& format() const { return format_; }

  const std::vector<LevelStorage>& levels() const { return levels_; }
  const LevelStorage& level(int32_t l) const { return levels_.at(static_cast<size_t>(l)); }
  LevelStorage& mutableLevel(int32_t l) { return levels_.at(static_cast<size_t>(l)); }
  const Buffer& values() const { return values_; }
  Buffer& mutableValues() { return values_; }

  bool isHybrid() const { return format_.isHybrid(); }
  const std::vector<Tensor>& parts() const { return parts_; }

  /// Stored values (including padding and explicit zeros), summed over hybrid parts.
  int64_t numStored() const;
  /// Bytes of all arrays (index and value), summed over hybrid parts.
  int64_t storageBytes() const;
  /// A deep copy that owns all its arrays.
  Tensor clone() const;
  /// One line: "f32 1024x1024 csr, 32768 stored, 393.2 KB".
  std::string summary() const;

 private:
  std::vector<int64_t> shape_;
  DType dtype_ = DType::kF32;
  Format format_;
  std::vector<LevelStorage> levels_;
  Buffer values_;
  std::vector<Tensor> parts_;
};

}  // namespace sparseflow
