// Buffer: typed arrays that own memory or view the caller's.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "sparseflow/tensor.h"
#include "support/check.h"
#include "support/half.h"
#include "support/memory.h"

namespace sparseflow {

/// What the copies of one Buffer share besides its memory (see Buffer::Stamp).
struct BufferState {
  const uint64_t id;
  /// Caller memory: written where the library cannot see it, ever.
  const bool borrowed;
  /// Bumped by stamp() when it finds `written` set, so every cache sees the write.
  std::atomic<uint64_t> version{0};
  /// Set by every mutable accessor; a plain flag so that accessors in loops stay cheap.
  std::atomic<bool> written{false};
  /// Writable views handed out to code the library cannot watch (Python, C).
  std::atomic<int64_t> externalWriters{0};

  BufferState(uint64_t id, bool borrowed) : id(id), borrowed(borrowed) {}
};

namespace {

std::shared_ptr<BufferState> newState(bool borrowed) {
  static std::atomic<uint64_t> nextId{1};
  return std::make_shared<BufferState>(nextId.fetch_add(1, std::memory_order_relaxed), borrowed);
}

}  // namespace

void Buffer::noteWrite() {
  // Load first: once set, repeated accessor calls (in loops, from several threads) only read.
  if (state_ && !state_->written.load(std::memory_order_relaxed)) {
    state_->written.store(true, std::memory_order_release);
  }
}

Buffer::Stamp Buffer::stamp() const {
  if (!state_) return Stamp{0, 0, true};  // an empty buffer: nothing can change
  if (state_->written.exchange(false, std::memory_order_acq_rel)) {
    state_->version.fetch_add(1, std::memory_order_acq_rel);
  }
  return Stamp{state_->id, state_->version.load(std::memory_order_acquire),
               !state_->borrowed && state_->externalWriters.load(std::memory_order_acquire) == 0};
}

std::shared_ptr<void> Buffer::openExternalWriter() const {
  if (!state_) return {};
  state_->externalWriters.fetch_add(1, std::memory_order_acq_rel);
  // The token keeps the state alive; its release is a write the library did not see.
  return std::shared_ptr<void>(new std::shared_ptr<BufferState>(state_), [](void* p) {
    auto* held = static_cast<std::shared_ptr<BufferState>*>(p);
    (*held)->written.store(true, std::memory_order_release);
    (*held)->externalWriters.fetch_sub(1, std::memory_order_acq_rel);
    delete held;
  });
}

Buffer Buffer::zeros(DType type, int64_t count) {
  SF_USER_CHECK(count >= 0) << "buffer size " << count << " is negative";
  SF_CHECK_CODE(count <= std::numeric_limits<int64_t>::max() / 8, ErrorCode::kOutOfMemory)
      << "buffer of " << count << " elements is too large";
  Buffer b;
  b.type_ = type;
  b.count_ = count;
  size_t bytes = static_cast<size_t>(count * dtypeSize(type));
  // 64-byte alignment keeps SIMD kernels on aligned rows; large arrays come zeroed from the
  // kernel's pages, so builders that overwrite them do not pay for a memset first.
  void* memory = allocateZeroed(bytes, "an array");
  b.memory_ = std::shared_ptr<void>(memory, [bytes](void* p) { freeZeroed(p, bytes); });
  b.data_ = memory;
  b.owning_ = true;
  b.state_ = newState(false);
  return b;
}

Buffer Buffer::view(DType type, void* data, int64_t count, std::shared_ptr<void> keepAlive) {
  SF_USER_CHECK(count >= 0) << "buffer size " << count << " is negative";
  SF_USER_CHECK(data != nullptr || count == 0)
      << "null data for a buffer of " << count << " elements";
  Buffer b;
  b.type_ = type;
  b.count_ = count;
  b.data_ = data;
  b.owning_ = false;
  b.memory_ = std::move(keepAlive);
  b.state_ = newState(true);
  return b;
}

Buffer Buffer::fromIndices(DType type, const std::vector<int64_t>& values, const char* what) {
  Buffer b = zeros(type, static_cast<int64_t>(values.size()));
  if (type == DType::kI64) {
    if (!values.empty()) std::memcpy(b.data_, values.data(), values.size() * 8);
  } else if (type == DType::kI32) {
    auto* out = b.as<int32_t>();
    for (size_t i = 0; i < values.size(); ++i) {
      SF_CHECK_CODE(values[i] >= std::numeric_limits<int32_t>::min() &&
                        values[i] <= std::numeric_limits<int32_t>::max(),
                    ErrorCode::kOutOfRange)
          << what << " value " << values[i]
          << " does not fit 32-bit indices; use a 64-bit format (suffix @i64)";
      out[i] = static_cast<int32_t>(values[i]);
    }
  } else if (type == DType::kU8) {
    auto* out = b.as<uint8_t>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<uint8_t>(values[i]);
  } else {
    SF_FAIL(kInternal) << "fromIndices with non-index type " << dtypeName(type);
  }
  return b;
}

int64_t Buffer::index(int64_t i) const {
  switch (type_) {
    case DType::kI32: return static_cast<const int32_t*>(data_)[i];
    case DType::kI64: return static_cast<const int64_t*>(data_)[i];
    case DType::kU8: return static_cast<const uint8_t*>(data_)[i];
    default: SF_FAIL(kInternal) << "index() on a " << dtypeName(type_) << " buffer";
  }
}

double Buffer::value(int64_t i) const {
  switch (type_) {
    case DType::kF32: return static_cast<const float*>(data_)[i];
    case DType::kF64: return static_cast<const double*>(data_)[i];
    case DType::kF16: return f16ToFloat(static_cast<const uint16_t*>(data_)[i]);
    case DType::kBF16: return bf16ToFloat(static_cast<const uint16_t*>(data_)[i]);
    case DType::kI32: return static_cast<const int32_t*>(data_)[i];
    case DType::kI64: return static_cast<double>(static_cast<const int64_t*>(data_)[i]);
    case DType::kU8: return static_cast<const uint8_t*>(data_)[i];
  }
  return 0;
}

void Buffer::setValue(int64_t i, double v) {
  noteWrite();
  switch (type_) {
    case DType::kF32: static_cast<float*>(data_)[i] = static_cast<float>(v); break;
    case DType::kF64: static_cast<double*>(data_)[i] = v; break;
    case DType::kF16: static_cast<uint16_t*>(data_)[i] = floatToF16(static_cast<float>(v)); break;
    case DType::kBF16: static_cast<uint16_t*>(data_)[i] = floatToBf16(static_cast<float>(v)); break;
    case DType::kI32: static_cast<int32_t*>(data_)[i] = static_cast<int32_t>(v); break;
    case DType::kI64: static_cast<int64_t*>(data_)[i] = static_cast<int64_t>(v); break;
    case DType::kU8: static_cast<uint8_t*>(data_)[i] = static_cast<uint8_t>(v); break;
  }
}

std::vector<int64_t> Buffer::toIndexVector() const {
  std::vector<int64_t> out(static_cast<size_t>(count_));
  for (int64_t i = 0; i < count_; ++i) out[static_cast<size_t>(i)] = index(i);
  return out;
}

Buffer Buffer::clone() const {
  Buffer b = zeros(type_, count_);
  if (count_) std::memcpy(b.data_, data_, static_cast<size_t>(bytes()));
  return b;
}

}  // namespace sparseflow
