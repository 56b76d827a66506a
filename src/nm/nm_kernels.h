// Internals shared by the n:m stage: dtype traits, group selection, the packed-meta writer, the
// impact accumulator and the parallel row loop that reports the first failure in row-major order.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

#include "sparseflow/nm.h"
#include "support/half.h"

namespace sparseflow::nm::detail {

// ---- dtype traits: values are handled as their IEEE bits; |x| compares as an unsigned integer.

template <typename StorageT, typename BitsT, BitsT kSignMask, BitsT kExpMask>
struct IeeeTraits {
  using Storage = StorageT;
  using Bits = BitsT;
  static Bits bits(Storage v) { return std::bit_cast<Bits>(v); }
  /// |x| as an integer: monotone in |x| for finite values; 0 for +0 and -0.
  static Bits magnitude(Storage v) { return bits(v) & static_cast<Bits>(~kSignMask); }
  static bool nonFinite(Storage v) { return (bits(v) & kExpMask) == kExpMask; }
  /// NaN or Inf, from magnitude(v).
  static bool nonFiniteMagnitude(Bits magnitude) { return magnitude >= kExpMask; }
};

// The impact is summed in double. Squares of f32, f16 and bf16 values stay far inside double's
// range; f64 values are first scaled by a power of two (exact) so that the largest is below 1.
struct F32 : IeeeTraits<float, uint32_t, 0x80000000u, 0x7f800000u> {
  static constexpr bool kScaled = false;
  static double toDouble(float v) { return v; }
};
struct F64 : IeeeTraits<double, uint64_t, 0x8000000000000000ull, 0x7ff0000000000000ull> {
  static constexpr bool kScaled = true;
  static double toDouble(double v) { return v; }
};
struct F16 : IeeeTraits<uint16_t, uint16_t, 0x8000u, 0x7c00u> {
  static constexpr bool kScaled = false;
  static double toDouble(uint16_t v) { return f16ToFloat(v); }
};
struct BF16 : IeeeTraits<uint16_t, uint16_t, 0x8000u, 0x7f80u> {
  static constexpr bool kScaled = false;
  static double toDouble(uint16_t v) { return bf16ToFloat(v); }
};

/// The value as the impact sums see it: as a double, times `scale` for f64.
template <typename Tr>
inline double impactValue(typename Tr::Storage v, double scale) {
  if constexpr (Tr::kScaled) {
    return Tr::toDouble(v) * scale;
  } else {
    return Tr::toDouble(v);
  }
}

/// Calls fn(Traits{}) for the traits of `type` (a float dtype).
template <typename Fn>
decltype(auto) dispatchDType(DType type, Fn&& fn) {
  switch (type) {
    case DType::kF64: return fn(F64{});
    case DType::kF16: return fn(F16{});
    case DType::kBF16: return fn(BF16{});
    default: return fn(F32{});
  }
}

/// Calls fn(std::integral_constant<int, M>{}) with M = m for the common group sizes (so the
/// group loops unroll) and M = 0 (m known only at run time) otherwise.
template <typename Fn>
decltype(auto) dispatchGroupSize(int32_t m, Fn&& fn) {
  switch (m) {
    case 4: return fn(std::integral_constant<int, 4>{});
    case 8: return fn(std::integral_constant<int, 8>{});
    case 16: return fn(std::integral_constant<int, 16>{});
    default: return fn(std::integral_constant<int, 0>{});
  }
}

// ---- group selection (groups of at most 64 elements: one bit each in a uint64_t)

/// The low g bits set.
inline uint64_t lowBits(int g) {
  return g >= 64 ? ~uint64_t{0} : (uint64_t{1} << g) - 1;
}

/// Bit i set for the n largest of the g magnitudes mag[0..g), ties to the lower index; all g
/// bits when g <= n. Branch-free for small groups, and unrolled when g is a constant.
template <typename Bits>
[[gnu::always_inline]] inline uint64_t largestMask(const Bits* mag, int g, int n) {
  if (g <= n) return lowBits(g);
  if (g > 16) {
    int order[64];
    std::iota(order, order + g, 0);
    std::nth_element(order, order + n, order + g,
                     [&](int a, int b) { return mag[a] != mag[b] ? mag[a] > mag[b] : a < b; });
    uint64_t mask = 0;
    for (int i = 0; i < n; ++i) mask |= uint64_t{1} << order[i];
    return mask;
  }
  uint64_t mask = 0;
  for (int i = 0; i < g; ++i) {
    int rank = 0;  // how many elements beat element i
    for (int j = 0; j < i; ++j) rank += static_cast<int>(mag[j] >= mag[i]);
    for (int j = i + 1; j < g; ++j) rank += static_cast<int>(mag[j] > mag[i]);
    mask |= static_cast<uint64_t>(rank < n) << i;
  }
  return mask;
}

/// The n slot offsets of a group whose nonzeros to store are `stored` (count of them: `count`):
/// those, plus padding at the smallest unused offsets.
[[gnu::always_inline]] inline uint64_t slotMask(uint64_t stored, int count, int n) {
  uint64_t slots = stored;
  for (int pads = n - count; pads > 0; --pads) slots |= ~slots & (slots + 1);
  return slots;
}

// ---- packed metadata

/// Bits per packed offset, as the n:m level stores them: 2 (m <= 4), 4 (m <= 16) or 8.
inline int32_t metaBits(int32_t m) {
  return m <= 4 ? 2 : m <= 16 ? 4 : 8;
}

/// Appends offsets little-endian, LSB first, to a byte-aligned start (slots never straddle a
/// byte: the widths divide 8).
class MetaWriter {
 public:
  explicit MetaWriter(uint8_t* out) : out_(out) {}
  void put(uint32_t offset, int bits) {
    acc_ |= static_cast<uint64_t>(offset) << used_;
    used_ += bits;
    if (used_ >= 32) {
      for (int b = 0; b < 4; ++b) *out_++ = static_cast<uint8_t>(acc_ >> (8 * b));
      acc_ >>= 32;
      used_ -= 32;
    }
  }
  /// Writes the partial bytes left (the end of a chunk; the next chunk starts on a new byte).
  void flush() {
    for (; used_ > 0; used_ -= 8, acc_ >>= 8) *out_++ = static_cast<uint8_t>(acc_);
    used_ = 0;
  }

 private:
  uint8_t* out_;
  uint64_t acc_ = 0;
  int used_ = 0;
};

/// Rows per chunk so that every chunk's meta starts on a byte: 8 / gcd(bits per row, 8).
inline int64_t byteAlignedRows(int64_t bitsPerRow) {
  return 8 / std::gcd(bitsPerRow % 8 == 0 ? 8 : bitsPerRow % 8, int64_t{8});
}

// ---- impact

/// Sums over a whole matrix (rows merged in order). The original's sums are split by whether the
/// pruned value is nonzero ("kept") or zero ("dropped"): pruning adds |x| to the dropped sums
/// exactly as to the error sums, so one accumulation serves both.
struct ImpactSums {
  double sumAbsError = 0, sumSqError = 0, maxAbsError = 0;
  double sumAbsKept = 0, sumSqKept = 0, sumAbsDropped = 0, sumSqDropped = 0;
  int64_t kept = 0;
  void merge(const ImpactSums& o) {
    sumAbsError += o.sumAbsError, sumSqError += o.sumSqError;
    maxAbsError = std::max(maxAbsError, o.maxAbsError);
    sumAbsKept += o.sumAbsKept, sumSqKept += o.sumSqKept;
    sumAbsDropped += o.sumAbsDropped, sumSqDropped += o.sumSqDropped;
    kept += o.kept;
  }
};

/// Sums of one row in four lanes (column % 4) that break the chains of dependent additions.
/// Every caller adds a row's elements in column order with lane = column % 4, so sparsify and
/// measureImpact produce the same bits.
struct ImpactLanes {
  static constexpr int kLanes = 4;
  double absError[kLanes] = {}, sqError[kLanes] = {}, maxError[kLanes] = {};
  double absKept[kLanes] = {}, sqKept[kLanes] = {}, absDropped[kLanes] = {}, sqDropped[kLanes] = {};
  int64_t kept[kLanes] = {};

  /// An element of the original and its pruned value.
  void add(int lane, double original, double pruned) {
    const double error = std::fabs(original - pruned), magnitude = std::fabs(original);
    const double square = original * original;
    const bool stays = pruned != 0;
    absError[lane] += error;
    sqError[lane] += error * error;
    maxError[lane] = std::max(maxError[lane], error);
    absKept[lane] += stays ? magnitude : 0.0;
    sqKept[lane] += stays ? square : 0.0;
    absDropped[lane] += stays ? 0.0 : magnitude;
    sqDropped[lane] += stays ? 0.0 : square;
    kept[lane] += stays;
  }
  /// The same as add(lane, v, v) when `stays` (v != 0), add(lane, v, 0) otherwise.
  void addPruned(int lane, double value, bool stays) {
    const double magnitude = std::fabs(value);
    const double k = stays ? magnitude : 0.0, e = stays ? 0.0 : magnitude;
    absError[lane] += e;
    sqError[lane] += e * e;
    maxError[lane] = std::max(maxError[lane], e);
    absKept[lane] += k;
    sqKept[lane] += k * k;
    absDropped[lane] += e;
    sqDropped[lane] += e * e;
    kept[lane] += stays;
  }
  /// The lanes merged in order.
  ImpactSums sum() const {
    ImpactSums s;
    for (int l = 0; l < kLanes; ++l) {
      s.merge({absError[l], sqError[l], maxError[l], absKept[l], sqKept[l], absDropped[l],
               sqDropped[l], kept[l]});
    }
    return s;
  }
};

/// The Impact of summed rows over `total` elements (definitions in nm.h).
/// `scale`: the factor the values were multiplied by (1 but for f64).
inline Impact finishImpact(const ImpactSums& s, int64_t total, double scale) {
  const double sumSqOriginal = s.sumSqKept + s.sumSqDropped;
  const double sumAbsOriginal = s.sumAbsKept + s.sumAbsDropped;
  Impact impact;
  impact.total = total;
  impact.kept = s.kept;
  impact.maxAbsError = s.maxAbsError / scale;
  impact.meanAbsError = total ? s.sumAbsError / static_cast<double>(total) / scale : 0;
  if (sumSqOriginal > 0) {
    impact.relativeFrobeniusError = std::sqrt(s.sumSqError / sumSqOriginal);
  } else {
    impact.relativeFrobeniusError = s.sumSqError > 0 ? std::numeric_limits<double>::infinity() : 0;
  }
  impact.keptMagnitudeFraction = sumAbsOriginal > 0 ? s.sumAbsKept / sumAbsOriginal : 1.0;
  return impact;
}

// ---- parallel rows with a first failure

/// Runs body(firstRow, endRow) over chunks of `chunkRows` rows in parallel. body returns the
/// row-major element index of the first failure in its chunk, or -1. Returns the smallest such
/// index (-1 when none); chunks after a known failure are skipped.
template <typename Body>
int64_t forEachChunk(int64_t rows, int64_t chunkRows, int64_t work, Body&& body) {
  // No elements, nothing to do: a 2^62 x 0 matrix must not loop over its rows.
  if (work == 0) return -1;
  const int64_t chunks = rows / chunkRows + (rows % chunkRows != 0 ? 1 : 0);
  std::atomic<int64_t> firstFailure{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> firstFailedChunk{std::numeric_limits<int64_t>::max()};
#pragma omp parallel for schedule(static) if (work > (int64_t{1} << 15))
  for (int64_t c = 0; c < chunks; ++c) {
    if (c > firstFailedChunk.load(std::memory_order_relaxed)) continue;
    const int64_t begin = c * chunkRows, end = std::min(rows, begin + chunkRows);
    const int64_t failure = body(begin, end);
    if (failure < 0) continue;
    int64_t seen = firstFailure.load();
    while (failure < seen && !firstFailure.compare_exchange_weak(seen, failure)) {
    }
    seen = firstFailedChunk.load();
    while (c < seen && !firstFailedChunk.compare_exchange_weak(seen, c)) {
    }
  }
  const int64_t result = firstFailure.load();
  return result == std::numeric_limits<int64_t>::max() ? -1 : result;
}

/// Rows per chunk for `cols` columns: about 16 Ki elements per chunk, a multiple of `align`.
inline int64_t chunkRowsFor(int64_t cols, int64_t align) {
  int64_t rows = std::max<int64_t>(1, (int64_t{16} << 10) / std::max<int64_t>(cols, 1));
  return (rows + align - 1) / align * align;
}

// ---- arguments

/// A row-major matrix view of a dense tensor (the tensor keeps the memory alive).
struct DenseMatrix {
  Tensor tensor;  // dense row-major; a converted copy when the argument was not dense
  int64_t rows = 0, cols = 0;
  const void* data() const { return tensor.values().data(); }
};

/// Checks the pattern; `what` names the call in messages ("nm::prune").
void checkPattern(NMPattern pattern, const char* what);
/// The argument as a dense row-major matrix (expanded when stored otherwise); errors name `what`.
DenseMatrix denseMatrix(const Tensor& tensor, const char* what);
/// An empty dense row-major tensor of `rows` x `cols` values, zero-filled.
Tensor zeroMatrix(DType type, int64_t rows, int64_t cols);
/// "row 17, column 3": the position of row-major element `index` in a matrix of `cols` columns.
std::string describeElement(int64_t index, int64_t cols);
/// "NaN", "+Inf" or "-Inf" for the value of element `index` of a dense matrix.
std::string describeNonFinite(const DenseMatrix& matrix, int64_t index);
/// The factor that brings the largest magnitude of the matrices into [0.5, 1): a power of two
/// for f64 (whose squares could overflow or underflow a double), 1 for the other dtypes.
double impactScale(const DenseMatrix& a, const DenseMatrix* b = nullptr);
/// The row-major index of the first NaN/Inf of a dense matrix, or -1.
int64_t findNonFinite(const DenseMatrix& matrix);
/// The message of a group over the pattern ("row 17, columns 8..11 hold 3 nonzeros; 2:4 keeps at
/// most 2") for the group that holds element `index`.
std::string describeBadGroup(const DenseMatrix& matrix, NMPattern pattern, int64_t index);
/// The row-major index of the first element of the first group with more than n nonzeros, or -1.
int64_t findBadGroup(const DenseMatrix& matrix, NMPattern pattern);

}  // namespace sparseflow::nm::detail
