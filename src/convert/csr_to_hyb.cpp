// Direct csr → hyb[:K] (ell:K part + coo remainder): the first K entries of every row go to the ell
// part, the rest, in row-major order, to the coo part; K, when not given, is the general path's
// choice (format::chooseHybridWidth), so both parts equal those splitForHybrid and fromCoo build.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "convert/csr_rows.h"
#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "convert/ell_rows.h"
#include "format/hybrid_split.h"

namespace sparseflow::conversion {
namespace {

template <typename SrcPos, typename SrcCrd, typename Crd, typename V>
std::optional<Tensor> csrToHybTyped(const Tensor& src, const Format& target) {
  const int64_t rows = src.shape()[0], cols = src.shape()[1];
  const auto* pos = src.level(1).pos.as<SrcPos>();
  const auto* crd = src.level(1).crd.as<SrcCrd>();
  const auto* vals = src.values().as<V>();
  if (!csrRowsAreOrdered(pos, crd, rows, cols)) return std::nullopt;
  const Format& ellPart = target.parts()[0];
  const Format& cooPart = target.parts()[1];
  int64_t k = ellPart.level(1).type.k;
  int64_t splitK = target.splitK();
  if (k == 0) {
    std::vector<int64_t> lengths(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) lengths[static_cast<size_t>(r)] = pos[r + 1] - pos[r];
    k = format::chooseHybridWidth(lengths);
    if (splitK == 0) splitK = k;
  }
  // The general path's refusals for the ell part (built with K known: its position count, rows x
  // cols, and its memory guard) and the 32-bit widths of both parts.
  if (cols > 0 && rows > INT64_MAX / 16 / cols) return std::nullopt;
  if (rows > INT64_MAX / 16 / k || !allocationFits(16 * rows * k)) return std::nullopt;
  if ((sizeof(Crd) == 4 && cols - 1 > INT32_MAX) ||
      (sizeof(Crd) == 4 && std::max(rows, cols) - 1 > INT32_MAX)) {
    return std::nullopt;
  }
  // Where each row's remainder starts in the coo part.
  std::vector<int64_t> restStart(static_cast<size_t>(rows) + 1, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = static_cast<int64_t>(pos[r + 1]) - pos[r];
    restStart[static_cast<size_t>(r) + 1] =
        restStart[static_cast<size_t>(r)] + std::max<int64_t>(0, length - k);
  }
  const int64_t rest = restStart.back();
  if (cooPart.posWidth() == 32 && rest > INT32_MAX) return std::nullopt;

  const int threads = threadsFor(rows * k + rest);
  Buffer ellCrd = Buffer::zeros(indexDType(ellPart.crdWidth()), rows * k);
  Buffer ellVals = Buffer::zeros(src.dtype(), rows * k);
  fillEllSlots(pos, crd, vals, rows, k, ellCrd.as<Crd>(), ellVals.as<V>(), threads);

  Buffer cooPos = Buffer::fromIndices(indexDType(cooPart.posWidth()), {0, rest}, "coo positions");
  Buffer cooRow = Buffer::zeros(indexDType(cooPart.crdWidth()), rest);
  Buffer cooCol = Buffer::zeros(indexDType(cooPart.crdWidth()), rest);
  Buffer cooVals = Buffer::zeros(src.dtype(), rest);
  auto* outRow = cooRow.as<Crd>();
  auto* outCol = cooCol.as<Crd>();
  auto* outVals = cooVals.as<V>();
  if (rest > 0) {
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = restStart[static_cast<size_t>(r)];
      for (int64_t q = pos[r] + k; q < pos[r + 1]; ++q, ++at) {
        outRow[at] = static_cast<Crd>(r);
        outCol[at] = static_cast<Crd>(crd[q]);
        outVals[at] = vals[q];
      }
    }
  }
  std::vector<LevelStorage> ellLevels(2), cooLevels(2);
  ellLevels[1].crd = std::move(ellCrd);
  cooLevels[0].pos = std::move(cooPos);
  cooLevels[0].crd = std::move(cooRow);
  cooLevels[1].crd = std::move(cooCol);
  const Format ellBuilt = ellPart.withFixedK(1, k);
  std::vector<Tensor> parts;
  parts.emplace_back(src.shape(), src.dtype(), ellBuilt, std::move(ellLevels), std::move(ellVals));
  parts.emplace_back(src.shape(), src.dtype(), cooPart, std::move(cooLevels), std::move(cooVals));
  return Tensor::hybrid(src.shape(), src.dtype(), Format::hybrid({ellBuilt, cooPart}, splitK),
                        std::move(parts));
}

}  // namespace

std::optional<Tensor> csrToHyb(const Tensor& tensor, const Format& target) {
  if (!isHybShape(target) || !isCsrSource(tensor)) return std::nullopt;
  const Format& from = tensor.format();
  const Format& ellPart = target.parts()[0];
  const Format& cooPart = target.parts()[1];
  // One coordinate width for both parts keeps the instantiations few; mixed widths take the
  // general path.
  if (ellPart.crdWidth() != cooPart.crdWidth()) return std::nullopt;
  return withIndex(from.posWidth(), [&](auto sp) {
    return withIndex(from.crdWidth(), [&](auto sc) {
      return withIndex(ellPart.crdWidth(), [&](auto c) {
        return withValueBits(tensor.dtype(), [&](auto v) {
          return csrToHybTyped<decltype(sp), decltype(sc), decltype(c), decltype(v)>(tensor,
                                                                                     target);
        });
      });
    });
  });
}

}  // namespace sparseflow::conversion
