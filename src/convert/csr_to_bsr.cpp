// Direct csr → bsr:RxC: per block row, a marker array finds the blocks the rows touch (every stored
// entry, explicit zeros too, makes its block exist, as in the general path); the values are then
// scattered into the zero-filled blocks.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "convert/csr_rows.h"
#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "format/format_shapes.h"

namespace sparseflow::conversion {
namespace {

template <typename SrcPos, typename SrcCrd, typename DstPos, typename DstCrd, typename V>
std::optional<Tensor> csrToBsrTyped(const Tensor& src, const Format& target, int64_t R, int64_t C) {
  const int64_t rows = src.shape()[0], cols = src.shape()[1];
  const auto* pos = src.level(1).pos.as<SrcPos>();
  const auto* crd = src.level(1).crd.as<SrcCrd>();
  const auto* vals = src.values().as<V>();
  const int64_t nnz = pos[rows];
  const int64_t blockRows = ceilDiv(rows, R), blockCols = ceilDiv(cols, C);
  // The marker arrays hold one slot per block column and thread: for a very wide, nearly empty
  // matrix they would outweigh the input, and the general path is the better one.
  if (blockCols > 4 * nnz + (int64_t{1} << 20)) return std::nullopt;
  if (sizeof(DstCrd) == 4 && blockCols - 1 > INT32_MAX) return std::nullopt;
  if (!csrRowsAreOrdered(pos, crd, rows, cols)) return std::nullopt;
  const int threads = threadsFor(nnz);

  // Pass 1: blocks per block row.
  std::vector<int64_t> blockCount(static_cast<size_t>(blockRows) + 1, 0);
#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> stamp(static_cast<size_t>(blockCols), -1);
#pragma omp for schedule(dynamic, 64)
    for (int64_t br = 0; br < blockRows; ++br) {
      int64_t distinct = 0;
      for (int64_t i = br * R; i < std::min(rows, br * R + R); ++i) {
        for (int64_t q = pos[i]; q < pos[i + 1]; ++q) {
          const auto bc = static_cast<size_t>(static_cast<int64_t>(crd[q]) / C);
          if (stamp[bc] != br) stamp[bc] = br, ++distinct;
        }
      }
      blockCount[static_cast<size_t>(br) + 1] = distinct;
    }
  }
  for (int64_t br = 0; br < blockRows; ++br) {
    blockCount[static_cast<size_t>(br) + 1] += blockCount[static_cast<size_t>(br)];
  }
  const int64_t blocks = blockCount.back();
  // The general path's guards: 32-bit positions, and the memory of its largest level (16 bytes
  // per value slot).
  if (sizeof(DstPos) == 4 && blocks > INT32_MAX) return std::nullopt;
  const int64_t volume = R * C;
  if (blocks > 0 && volume > INT64_MAX / 16 / blocks) return std::nullopt;
  if (!allocationFits(16 * blockRows) || !allocationFits(16 * blocks * volume)) return std::nullopt;

  Buffer outPos = Buffer::zeros(indexDType(target.posWidth()), blockRows + 1);
  Buffer outCrd = Buffer::zeros(indexDType(target.crdWidth()), blocks);
  Buffer outVals = Buffer::zeros(src.dtype(), blocks * volume);
  auto* bpos = outPos.as<DstPos>();
  auto* bcrd = outCrd.as<DstCrd>();
  auto* bvals = outVals.as<V>();
  for (int64_t br = 0; br <= blockRows; ++br) {
    bpos[br] = static_cast<DstPos>(blockCount[static_cast<size_t>(br)]);
  }

  // Pass 2: each block row's block columns in order, then its values into their blocks.
#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> stamp(static_cast<size_t>(blockCols), -1);
    std::vector<int64_t> slot(static_cast<size_t>(blockCols));
    std::vector<int64_t> found;
#pragma omp for schedule(dynamic, 64)
    for (int64_t br = 0; br < blockRows; ++br) {
      const int64_t firstRow = br * R, lastRow = std::min(rows, br * R + R);
      found.clear();
      for (int64_t i = firstRow; i < lastRow; ++i) {
        for (int64_t q = pos[i]; q < pos[i + 1]; ++q) {
          const int64_t bc = static_cast<int64_t>(crd[q]) / C;
          if (stamp[static_cast<size_t>(bc)] != br) {
            stamp[static_cast<size_t>(bc)] = br;
            found.push_back(bc);
          }
        }
      }
      if (R > 1) std::sort(found.begin(), found.end());  // one row's blocks come in order
      const int64_t base = blockCount[static_cast<size_t>(br)];
      for (size_t t = 0; t < found.size(); ++t) {
        bcrd[base + static_cast<int64_t>(t)] = static_cast<DstCrd>(found[t]);
        slot[static_cast<size_t>(found[t])] = base + static_cast<int64_t>(t);
      }
      for (int64_t i = firstRow; i < lastRow; ++i) {
        if (pos[i] == pos[i + 1]) continue;  // also: no blocks at all leaves bvals null
        V* rowInBlocks = bvals + (i - firstRow) * C;
        for (int64_t q = pos[i]; q < pos[i + 1]; ++q) {
          const int64_t j = crd[q];
          const int64_t bc = j / C;
          rowInBlocks[slot[static_cast<size_t>(bc)] * volume + (j - bc * C)] = vals[q];
        }
      }
    }
  }
  std::vector<LevelStorage> levels(4);
  levels[1].pos = std::move(outPos);
  levels[1].crd = std::move(outCrd);
  return Tensor(src.shape(), src.dtype(), target, std::move(levels), std::move(outVals));
}

}  // namespace

std::optional<Tensor> csrToBsr(const Tensor& tensor, const Format& target) {
  int64_t R = 0, C = 0;
  if (!format::isBlockedRows(target, R, C) || !isCsrSource(tensor)) return std::nullopt;
  const Format& from = tensor.format();
  return withWidths(from, target, tensor.dtype(), [&](auto sp, auto sc, auto dp, auto dc, auto v) {
    return csrToBsrTyped<decltype(sp), decltype(sc), decltype(dp), decltype(dc), decltype(v)>(
        tensor, target, R, C);
  });
}

}  // namespace sparseflow::conversion
