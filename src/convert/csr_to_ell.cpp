// Direct csr → ell[:K]: every row's entries (explicit zeros kept) in its K slots, padding crd -1;
// K is the longest row when the format leaves it to the data, as the general path chooses it.
#include <algorithm>

#include "convert/csr_rows.h"
#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "convert/ell_rows.h"

namespace sparseflow::conversion {
namespace {

template <typename SrcPos, typename SrcCrd, typename DstCrd, typename V>
std::optional<Tensor> csrToEllTyped(const Tensor& src, const Format& target, int64_t givenK) {
  const int64_t rows = src.shape()[0], cols = src.shape()[1];
  const auto* pos = src.level(1).pos.as<SrcPos>();
  const auto* crd = src.level(1).crd.as<SrcCrd>();
  if (!csrRowsAreOrdered(pos, crd, rows, cols)) return std::nullopt;
  int64_t widest = 0;
  for (int64_t r = 0; r < rows; ++r) {
    widest = std::max<int64_t>(widest, static_cast<int64_t>(pos[r + 1]) - pos[r]);
  }
  const int64_t k = givenK > 0 ? givenK : std::max<int64_t>(widest, 1);
  // The general path's refusals: a row longer than K, columns beyond 32 bits, its position count
  // for a given K (rows x cols), and its memory guard (16 bytes per slot).
  if (widest > k || (sizeof(DstCrd) == 4 && cols - 1 > INT32_MAX)) return std::nullopt;
  if (givenK > 0 && cols > 0 && rows > INT64_MAX / 16 / cols) return std::nullopt;
  if (rows > INT64_MAX / 16 / k || !allocationFits(16 * rows * k)) return std::nullopt;
  Buffer outCrd = Buffer::zeros(indexDType(target.crdWidth()), rows * k);
  Buffer outVals = Buffer::zeros(src.dtype(), rows * k);
  fillEllSlots(pos, crd, src.values().as<V>(), rows, k, outCrd.as<DstCrd>(), outVals.as<V>(),
               threadsFor(rows * k));
  std::vector<LevelStorage> levels(2);
  levels[1].crd = std::move(outCrd);
  return Tensor(src.shape(), src.dtype(), target.withFixedK(1, k), std::move(levels),
                std::move(outVals));
}

}  // namespace

std::optional<Tensor> csrToEll(const Tensor& tensor, const Format& target) {
  int64_t k = 0;
  if (!isEllShape(target, k) || !isCsrSource(tensor)) return std::nullopt;
  const Format& from = tensor.format();
  return withIndex(from.posWidth(), [&](auto sp) {
    return withIndex(from.crdWidth(), [&](auto sc) {
      return withIndex(target.crdWidth(), [&](auto dc) {
        return withValueBits(tensor.dtype(), [&](auto v) {
          return csrToEllTyped<decltype(sp), decltype(sc), decltype(dc), decltype(v)>(tensor,
                                                                                      target, k);
        });
      });
    });
  });
}

}  // namespace sparseflow::conversion
