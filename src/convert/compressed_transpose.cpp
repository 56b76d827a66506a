// CSR↔CSC by a stable counting sort of the entries by target row (format/counting_sort.h: parallel
// and cache-friendly); the result is sorted by construction.
#include "convert/compressed_transpose.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "format/counting_sort.h"
#include "format/format_shapes.h"
#include "support/check.h"

namespace sparseflow::conversion {
namespace {

template <typename SrcPos, typename SrcCrd, typename DstPos, typename DstCrd, typename V>
Tensor transposeCompressed(const Tensor& src, const Format& target, int32_t targetRowDim) {
  const int64_t outer = src.shape()[1 - targetRowDim];  // source rows
  const int64_t inner = src.shape()[targetRowDim];      // target rows
  const auto* pos = src.level(1).pos.as<SrcPos>();
  const auto* crd = src.level(1).crd.as<SrcCrd>();
  const auto* vals = src.values().as<V>();
  const int64_t nnz = static_cast<int64_t>(pos[outer]);
  SF_CHECK_CODE(target.posWidth() == 64 || nnz <= INT32_MAX, ErrorCode::kOutOfRange)
      << nnz << " entries do not fit 32-bit positions; use a 64-bit format (suffix @i64)";
  SF_CHECK_CODE(target.crdWidth() == 64 || outer <= INT32_MAX + 1LL, ErrorCode::kOutOfRange)
      << "dimension of size " << outer
      << " does not fit 32-bit coordinates; use a 64-bit format (suffix @i64)";
  Buffer outPos = Buffer::zeros(target.posWidth() == 64 ? DType::kI64 : DType::kI32, inner + 1);
  Buffer outCrd = Buffer::zeros(target.crdWidth() == 64 ? DType::kI64 : DType::kI32, nnz);
  Buffer outVals = Buffer::zeros(src.dtype(), nnz);
  // Entry q of the source, in storage order, goes to target row crd[q] with coordinate "its
  // source row"; a stable sort by target row leaves every target row sorted.
  auto scan = [pos, crd, vals, outer](int64_t begin, int64_t end, const auto& f) {
    int64_t row = std::upper_bound(pos, pos + outer + 1, static_cast<SrcPos>(begin)) - pos - 1;
    for (int64_t q = begin; q < end; ++row) {
      const int64_t rowEnd = std::min<int64_t>(end, static_cast<int64_t>(pos[row + 1]));
      for (; q < rowEnd; ++q) f(static_cast<uint32_t>(crd[q]), static_cast<DstCrd>(row), vals[q]);
    }
  };
  format::countingSortByKey<uint32_t>(nnz, inner, scan, outPos.as<DstPos>(), outCrd.as<DstCrd>(),
                                      outVals.as<V>(), [](int64_t, int64_t) {});
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(outPos);
  levels[1].crd = std::move(outCrd);
  return Tensor(src.shape(), src.dtype(), target, std::move(levels), std::move(outVals));
}

template <typename SrcPos, typename SrcCrd, typename V>
Tensor dispatchTarget(const Tensor& src, const Format& target, int32_t targetRowDim) {
  const bool p64 = target.posWidth() == 64, c64 = target.crdWidth() == 64;
  if (p64 && c64)
    return transposeCompressed<SrcPos, SrcCrd, int64_t, int64_t, V>(src, target, targetRowDim);
  if (p64)
    return transposeCompressed<SrcPos, SrcCrd, int64_t, int32_t, V>(src, target, targetRowDim);
  if (c64)
    return transposeCompressed<SrcPos, SrcCrd, int32_t, int64_t, V>(src, target, targetRowDim);
  return transposeCompressed<SrcPos, SrcCrd, int32_t, int32_t, V>(src, target, targetRowDim);
}

template <typename V>
Tensor dispatchSource(const Tensor& src, const Format& target, int32_t targetRowDim) {
  const bool p64 = src.format().posWidth() == 64, c64 = src.format().crdWidth() == 64;
  if (p64 && c64) return dispatchTarget<int64_t, int64_t, V>(src, target, targetRowDim);
  if (p64) return dispatchTarget<int64_t, int32_t, V>(src, target, targetRowDim);
  if (c64) return dispatchTarget<int32_t, int64_t, V>(src, target, targetRowDim);
  return dispatchTarget<int32_t, int32_t, V>(src, target, targetRowDim);
}

}  // namespace

std::optional<Tensor> convertCompressed(const Tensor& tensor, const Format& target) {
  int32_t srcRowDim = 0, dstRowDim = 0;
  if (!format::isCompressedRows(tensor.format(), srcRowDim) ||
      !format::isCompressedRows(target, dstRowDim) || srcRowDim == dstRowDim ||
      tensor.shape()[static_cast<size_t>(dstRowDim)] > UINT32_MAX) {  // 32-bit sort keys
    return std::nullopt;
  }
  // Values move as raw elements of their size; no rounding happens.
  switch (dtypeSize(tensor.dtype())) {
    case 2: return dispatchSource<uint16_t>(tensor, target, dstRowDim);
    case 4: return dispatchSource<uint32_t>(tensor, target, dstRowDim);
    default: return dispatchSource<uint64_t>(tensor, target, dstRowDim);
  }
}

}  // namespace sparseflow::conversion
