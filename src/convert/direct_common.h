// Shared pieces of the direct conversion paths: index and value type dispatch, thread counts, the
// memory guard as a question, and recognizers of the ell, coo and hyb shapes.
#pragma once

#include <cstdint>

#include "sparseflow/format.h"
#include "sparseflow/tensor.h"

namespace sparseflow::conversion {

/// Calls f(T{}) with T the index type of a 32- or 64-bit width.
template <typename F>
decltype(auto) withIndex(int32_t width, F&& f) {
  if (width == 64) return f(int64_t{});
  return f(int32_t{});
}

/// Calls f(T{}) with T the unsigned integer of the dtype's size: values move as raw elements, so
/// no rounding happens (NaN payloads included).
template <typename F>
decltype(auto) withValueBits(DType dtype, F&& f) {
  switch (dtypeSize(dtype)) {
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

/// Calls f(SrcPos{}, SrcCrd{}, DstPos{}, DstCrd{}, Bits{}) with the index types of both
/// formats' widths and the raw value type of `dtype`: the dispatch of every direct path between two
/// compressed-row formats.
template <typename F>
decltype(auto) withWidths(const Format& from, const Format& to, DType dtype, F&& f) {
  return withIndex(from.posWidth(), [&](auto sp) {
    return withIndex(from.crdWidth(), [&](auto sc) {
      return withIndex(to.posWidth(), [&](auto dp) {
        return withIndex(to.crdWidth(), [&](auto dc) {
          return withValueBits(dtype, [&](auto v) { return f(sp, sc, dp, dc, v); });
        });
      });
    });
  });
}

/// True for +0 and -0 (the sign bit shifted out leaves nothing): what `value == 0` says of the
/// float the bits hold, as toCoo tests before dropping zero fill.
template <typename V>
inline bool isZeroBits(V bits) {
  return static_cast<V>(bits << 1) == 0;
}

/// The index buffer type of a width.
inline DType indexDType(int32_t width) {
  return width == 64 ? DType::kI64 : DType::kI32;
}

/// Threads for `work` entries: both cores only where the work is worth waking them (the counting
/// sort's threshold, format/counting_sort.h).
int threadsFor(int64_t work);

/// Whether the general path's memory guard (checkAllocation) lets `bytes` through.
bool allocationFits(int64_t bytes);

/// `ell` or `ell:K` (any widths); sets K (0 when chosen from the data).
bool isEllShape(const Format& f, int64_t& k);
/// `coo` for a matrix (any widths).
bool isCooMatrixShape(const Format& f);
/// `hyb[:K]` or `ell[:K]+coo`: two parts, an ell part then a coo part.
bool isHybShape(const Format& f);

/// ⌈a / b⌉ for a ≥ 0, b > 0, without overflow for a near INT64_MAX (block counts).
inline int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// The CSR source of a direct path: a csr tensor whose arrays have the sizes they must have.
bool isCsrSource(const Tensor& t);

}  // namespace sparseflow::conversion
