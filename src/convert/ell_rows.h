// The row kernels shared by the ell and hyb direct paths: CSR rows into K slots each (the rest of
// a row left to a remainder), and ELL rows, merged with a row-sorted COO remainder, back into CSR.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "convert/direct_common.h"

namespace sparseflow::conversion {

/// Writes the first min(length, k) entries of every CSR row into its k slots of outCrd/outVals;
/// the slots after them get crd -1 (their values stay the zeros the buffer holds).
template <typename SrcPos, typename SrcCrd, typename DstCrd, typename V>
void fillEllSlots(const SrcPos* pos, const SrcCrd* crd, const V* vals, int64_t rows, int64_t k,
                  DstCrd* outCrd, V* outVals, int threads) {
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t begin = pos[r];
    const int64_t stored = std::min<int64_t>(k, static_cast<int64_t>(pos[r + 1]) - begin);
    DstCrd* slotCrd = outCrd + r * k;
    V* slotVals = outVals + r * k;
    for (int64_t s = 0; s < stored; ++s) {
      slotCrd[s] = static_cast<DstCrd>(crd[begin + s]);
      slotVals[s] = vals[begin + s];
    }
    std::fill(slotCrd + stored, slotCrd + k, static_cast<DstCrd>(-1));
  }
}

/// A coo remainder of a hyb tensor, read as rows of entries.
template <typename CooCrd, typename V>
struct CooRows {
  const CooCrd* row = nullptr;
  const CooCrd* col = nullptr;
  const V* vals = nullptr;
  std::vector<int64_t> start;  ///< entries of row r: [start[r], start[r + 1]); empty when no coo
};

/// CSR arrays (pos, crd, values) from ELL rows of k slots (each row's stored slots end at the
/// first negative crd, as toCoo reads them) and an optional COO remainder whose rows are merged in
/// by column. nullopt where the general path must decide: slots out of order or outside the
/// matrix, a column both parts hold (the general path sums them), or more entries than 32-bit
/// positions hold.
template <typename EllCrd, typename CooCrd, typename DstPos, typename DstCrd, typename V>
std::optional<Tensor> mergeEllRows(const std::vector<int64_t>& shape, DType dtype,
                                   const Format& target, const EllCrd* ellCrd, const V* ellVals,
                                   int64_t k, const CooRows<CooCrd, V>& coo) {
  const int64_t rows = shape[0], cols = shape[1];
  const bool hasCoo = !coo.start.empty();
  const int threads = threadsFor(rows * k + (hasCoo ? coo.start.back() : 0));
  std::vector<int64_t> rowStart(static_cast<size_t>(rows) + 1, 0);
  unsigned bad = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(| : bad) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    const EllCrd* slots = ellCrd + r * k;
    int64_t stored = 0, previous = -1;
    for (; stored < k && slots[stored] >= 0; ++stored) {
      bad |= static_cast<unsigned>(slots[stored] <= previous) |
             static_cast<unsigned>(slots[stored] >= cols);
      previous = slots[stored];
    }
    rowStart[static_cast<size_t>(r) + 1] =
        stored +
        (hasCoo ? coo.start[static_cast<size_t>(r) + 1] - coo.start[static_cast<size_t>(r)] : 0);
  }
  if (bad) return std::nullopt;
  for (int64_t r = 0; r < rows; ++r) {
    rowStart[static_cast<size_t>(r) + 1] += rowStart[static_cast<size_t>(r)];
  }
  const int64_t nnz = rowStart.back();
  if (sizeof(DstPos) == 4 && nnz > INT32_MAX) return std::nullopt;

  Buffer outPos = Buffer::zeros(indexDType(target.posWidth()), rows + 1);
  Buffer outCrd = Buffer::zeros(indexDType(target.crdWidth()), nnz);
  Buffer outVals = Buffer::zeros(dtype, nnz);
  auto* pos = outPos.as<DstPos>();
  auto* crd = outCrd.as<DstCrd>();
  auto* vals = outVals.as<V>();
  for (int64_t r = 0; r <= rows; ++r)
    pos[r] = static_cast<DstPos>(rowStart[static_cast<size_t>(r)]);
#pragma omp parallel for schedule(dynamic, 1024) reduction(| : bad) num_threads(threads)
  for (int64_t r = 0; r < rows; ++r) {
    const EllCrd* slots = ellCrd + r * k;
    const V* slotVals = ellVals + r * k;
    int64_t at = rowStart[static_cast<size_t>(r)];
    const int64_t end = rowStart[static_cast<size_t>(r) + 1];
    int64_t s = 0;
    int64_t e = hasCoo ? coo.start[static_cast<size_t>(r)] : 0;
    const int64_t eEnd = hasCoo ? coo.start[static_cast<size_t>(r) + 1] : 0;
    while (at < end) {
      const bool fromEll =
          s < k && slots[s] >= 0 && (e == eEnd || static_cast<int64_t>(slots[s]) <= coo.col[e]);
      if (fromEll) {
        bad |= static_cast<unsigned>(e < eEnd && static_cast<int64_t>(slots[s]) == coo.col[e]);
        crd[at] = static_cast<DstCrd>(slots[s]);
        vals[at++] = slotVals[s++];
      } else {
        crd[at] = static_cast<DstCrd>(coo.col[e]);
        vals[at++] = coo.vals[e++];
      }
    }
  }
  if (bad) return std::nullopt;
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(outPos);
  levels[1].crd = std::move(outCrd);
  return Tensor(shape, dtype, target, std::move(levels), std::move(outVals));
}

}  // namespace sparseflow::conversion
