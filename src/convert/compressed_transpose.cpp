// CSR↔CSC by a two-pass counting sort: per-thread counts of the target's rows, a prefix sum, and
// a scatter in which each thread writes its own slots; the result is sorted by construction.
#include "convert/compressed_transpose.h"

#include <omp.h>

#include <cstring>
#include <vector>

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
  Buffer outPos = Buffer::zeros(target.posWidth() == 64 ? DType::kI64 : DType::kI32, inner + 1);
  Buffer outCrd = Buffer::zeros(target.crdWidth() == 64 ? DType::kI64 : DType::kI32, nnz);
  Buffer outVals = Buffer::zeros(src.dtype(), nnz);
  auto* op = outPos.as<DstPos>();
  auto* oc = outCrd.as<DstCrd>();
  auto* ov = outVals.as<V>();
  const int threads = std::max(1, std::min(omp_get_max_threads(), nnz > 100000 ? 64 : 1));
  // offsets[t * (inner + 1) + r]: where thread t writes its first entry of target row r.
  std::vector<int64_t> offsets(static_cast<size_t>(threads) * static_cast<size_t>(inner + 1), 0);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    // Split source rows by nonzeros so each thread gets an equal share.
    auto firstRow = [&](int part) {
      int64_t goal = nnz * part / nt, lo = 0, hi = outer;
      while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (static_cast<int64_t>(pos[mid]) < goal) lo = mid + 1; else hi = mid;
      }
      return part == nt ? outer : lo;
    };
    const int64_t rowBegin = firstRow(t), rowEnd = firstRow(t + 1);
    int64_t* mine = offsets.data() + static_cast<size_t>(t) * static_cast<size_t>(inner + 1);
    for (int64_t q = static_cast<int64_t>(pos[rowBegin]); q < static_cast<int64_t>(pos[rowEnd]); ++q) {
      ++mine[crd[q]];
    }
#pragma omp barrier
#pragma omp single
    {
      int64_t running = 0;
      for (int64_t r = 0; r < inner; ++r) {
        op[r] = static_cast<DstPos>(running);
        for (int u = 0; u < nt; ++u) {
          int64_t& slot = offsets[static_cast<size_t>(u) * static_cast<size_t>(inner + 1) + r];
          int64_t count = slot;
          slot = running;
          running += count;
        }
      }
      op[inner] = static_cast<DstPos>(running);
    }
    for (int64_t r = rowBegin; r < rowEnd; ++r) {
      for (int64_t q = static_cast<int64_t>(pos[r]); q < static_cast<int64_t>(pos[r + 1]); ++q) {
        int64_t at = mine[crd[q]]++;
        oc[at] = static_cast<DstCrd>(r);
        ov[at] = vals[q];
      }
    }
  }
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(outPos);
  levels[1].crd = std::move(outCrd);
  return Tensor(src.shape(), src.dtype(), target, std::move(levels), std::move(outVals));
}

template <typename SrcPos, typename SrcCrd, typename V>
Tensor dispatchTarget(const Tensor& src, const Format& target, int32_t targetRowDim) {
  const bool p64 = target.posWidth() == 64, c64 = target.crdWidth() == 64;
  if (p64 && c64) return transposeCompressed<SrcPos, SrcCrd, int64_t, int64_t, V>(src, target, targetRowDim);
  if (p64) return transposeCompressed<SrcPos, SrcCrd, int64_t, int32_t, V>(src, target, targetRowDim);
  if (c64) return transposeCompressed<SrcPos, SrcCrd, int32_t, int64_t, V>(src, target, targetRowDim);
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
      !format::isCompressedRows(target, dstRowDim) || srcRowDim == dstRowDim) {
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
