// Direct bsr:RxC → csr: each row is the nonzeros of its slice of every block in its block row, in
// block order (so in column order); zero fill, explicit zeros and edge padding are dropped, as
// toCoo drops them on the general path.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "format/format_shapes.h"

namespace sparseflow::conversion {
namespace {

/// Block positions that never decrease, block columns that strictly increase within a block row
/// and lie inside the matrix, and arrays of the sizes they imply.
template <typename SrcPos, typename SrcCrd>
bool blocksAreOrdered(const Tensor& src, int64_t blockRows, int64_t blockCols, int64_t volume) {
  const Buffer& posBuffer = src.level(1).pos;
  const Buffer& crdBuffer = src.level(1).crd;
  if (posBuffer.size() != blockRows + 1 || crdBuffer.dtype() != indexDType(sizeof(SrcCrd) * 8) ||
      posBuffer.dtype() != indexDType(sizeof(SrcPos) * 8)) {
    return false;
  }
  const auto* pos = posBuffer.as<SrcPos>();
  const auto* crd = crdBuffer.as<SrcCrd>();
  if (pos[0] != 0) return false;
  for (int64_t br = 0; br < blockRows; ++br) {
    if (pos[br] > pos[br + 1]) return false;
  }
  const int64_t blocks = pos[blockRows];
  if (crdBuffer.size() < blocks || blocks > INT64_MAX / std::max<int64_t>(volume, 1) ||
      src.values().size() != blocks * volume) {
    return false;
  }
  for (int64_t br = 0; br < blockRows; ++br) {
    int64_t previous = -1;
    for (int64_t q = pos[br]; q < pos[br + 1]; ++q) {
      if (crd[q] <= previous || crd[q] >= blockCols) return false;
      previous = crd[q];
    }
  }
  return true;
}

template <typename SrcPos, typename SrcCrd, typename DstPos, typename DstCrd, typename V>
std::optional<Tensor> bsrToCsrTyped(const Tensor& src, const Format& target, int64_t R, int64_t C) {
  const int64_t rows = src.shape()[0], cols = src.shape()[1];
  const int64_t blockRows = ceilDiv(rows, R), blockCols = ceilDiv(cols, C), volume = R * C;
  if (!blocksAreOrdered<SrcPos, SrcCrd>(src, blockRows, blockCols, volume)) return std::nullopt;
  // The general path's CSR builder refuses columns beyond 32 bits, and leaves more rows than its
  // 32-bit sort keys to the generic builder.
  if ((sizeof(DstCrd) == 4 && cols > INT32_MAX + 1LL) || rows > UINT32_MAX) return std::nullopt;
  const auto* bpos = src.level(1).pos.as<SrcPos>();
  const auto* bcrd = src.level(1).crd.as<SrcCrd>();
  const auto* bvals = src.values().as<V>();
  const int threads = threadsFor(static_cast<int64_t>(bpos[blockRows]) * volume);

  // Calls f(column, value) for the nonzeros of row i, in column order.
  auto forRow = [=](int64_t i, auto&& f) {
    const int64_t br = i / R, ri = i - br * R;
    for (int64_t q = bpos[br]; q < bpos[br + 1]; ++q) {
      const int64_t firstCol = static_cast<int64_t>(bcrd[q]) * C;
      const int64_t width = std::min(C, cols - firstCol);
      const V* slice = bvals + (q * R + ri) * C;
      for (int64_t c = 0; c < width; ++c) {
        if (!isZeroBits(slice[c])) f(firstCol + c, slice[c]);
      }
    }
  };
  std::vector<int64_t> rowStart(static_cast<size_t>(rows) + 1, 0);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
  for (int64_t i = 0; i < rows; ++i) {
    int64_t count = 0;
    forRow(i, [&count](int64_t, V) { ++count; });
    rowStart[static_cast<size_t>(i) + 1] = count;
  }
  for (int64_t i = 0; i < rows; ++i) {
    rowStart[static_cast<size_t>(i) + 1] += rowStart[static_cast<size_t>(i)];
  }
  const int64_t nnz = rowStart.back();
  if (sizeof(DstPos) == 4 && nnz > INT32_MAX) return std::nullopt;

  Buffer outPos = Buffer::zeros(indexDType(target.posWidth()), rows + 1);
  Buffer outCrd = Buffer::zeros(indexDType(target.crdWidth()), nnz);
  Buffer outVals = Buffer::zeros(src.dtype(), nnz);
  auto* pos = outPos.as<DstPos>();
  auto* crd = outCrd.as<DstCrd>();
  auto* vals = outVals.as<V>();
  for (int64_t i = 0; i <= rows; ++i)
    pos[i] = static_cast<DstPos>(rowStart[static_cast<size_t>(i)]);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
  for (int64_t i = 0; i < rows; ++i) {
    int64_t at = rowStart[static_cast<size_t>(i)];
    forRow(i, [&](int64_t column, V value) {
      crd[at] = static_cast<DstCrd>(column);
      vals[at] = value;
      ++at;
    });
  }
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(outPos);
  levels[1].crd = std::move(outCrd);
  return Tensor(src.shape(), src.dtype(), target, std::move(levels), std::move(outVals));
}

}  // namespace

std::optional<Tensor> bsrToCsr(const Tensor& tensor, const Format& target) {
  int64_t R = 0, C = 0;
  int32_t rowDim = 0;
  if (!format::isBlockedRows(tensor.format(), R, C) || !format::isCompressedRows(target, rowDim) ||
      rowDim != 0) {
    return std::nullopt;
  }
  const Format& from = tensor.format();
  return withWidths(from, target, tensor.dtype(), [&](auto sp, auto sc, auto dp, auto dc, auto v) {
    return bsrToCsrTyped<decltype(sp), decltype(sc), decltype(dp), decltype(dc), decltype(v)>(
        tensor, target, R, C);
  });
}

}  // namespace sparseflow::conversion
