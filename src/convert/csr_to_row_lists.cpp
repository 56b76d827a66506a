// Direct csr → dcsr and csr → coo (a matrix, the same dimension order): the entries stay in their
// order, so the column coordinates and values are copied as they are (explicit zeros kept) and
// only the row level is rebuilt: the non-empty rows with their positions (dcsr), or each entry's
// row (coo). What an output assembled as csr and asked for as dcsr or coo goes through.
#include <cstring>

#include "convert/csr_rows.h"
#include "convert/direct_common.h"
#include "convert/direct_paths.h"

namespace sparseflow::conversion {
namespace {

/// The dcsr format at the target's widths.
bool isDcsrShape(const Format& f) {
  return !f.isHybrid() && f.rank() == 2 &&
         f == Format::parse("dcsr", 2).withWidths(f.posWidth(), f.crdWidth());
}

template <typename SrcPos, typename SrcCrd, typename DstPos, typename DstCrd, typename V>
std::optional<Tensor> csrToRowListsTyped(const Tensor& src, const Format& target, bool coo,
                                         bool reuse) {
  const int64_t rows = src.shape()[0], cols = src.shape()[1];
  const auto* pos = src.level(1).pos.as<SrcPos>();
  const auto* crd = src.level(1).crd.as<SrcCrd>();
  if (!csrRowsAreOrdered(pos, crd, rows, cols)) return std::nullopt;
  const int64_t nnz = pos[rows];
  // The general path's refusals: positions or coordinates beyond the target's widths, and its
  // memory guard (16 bytes per entry and per row).
  if (sizeof(DstPos) == 4 && nnz > INT32_MAX) return std::nullopt;
  if (sizeof(DstCrd) == 4 && (rows - 1 > INT32_MAX || cols - 1 > INT32_MAX)) return std::nullopt;
  if (!allocationFits(16 * nnz) || !allocationFits(16 * rows)) return std::nullopt;
  const DType posType = indexDType(target.posWidth()), crdType = indexDType(target.crdWidth());

  // A source the caller gives up lends the arrays it alone holds (a Buffer copy shares the
  // memory); an array it shares with another tensor (an output that copied an input's pattern) is
  // copied, so that the result never aliases memory someone else may write.
  const bool takeValues = reuse && src.values().soleOwner();
  Buffer values = takeValues ? src.values() : Buffer::zeros(src.dtype(), nnz);
  if (!takeValues && nnz > 0)
    std::memcpy(values.data(), src.values().data(), static_cast<size_t>(values.bytes()));
  const bool takeColumns =
      reuse && sizeof(SrcCrd) == sizeof(DstCrd) && src.level(1).crd.soleOwner();
  Buffer columns = takeColumns ? src.level(1).crd : Buffer::zeros(crdType, nnz);
  if (!takeColumns && nnz > 0) {
    auto* out = columns.as<DstCrd>();
#pragma omp parallel for schedule(static) num_threads(threadsFor(nnz))
    for (int64_t q = 0; q < nnz; ++q) out[q] = static_cast<DstCrd>(crd[q]);
  }
  std::vector<LevelStorage> levels(2);
  if (coo) {
    // compressed(nu) rows (every entry its own position), singleton columns.
    levels[0].pos = Buffer::zeros(posType, 2);
    levels[0].pos.as<DstPos>()[1] = static_cast<DstPos>(nnz);
    levels[0].crd = Buffer::zeros(crdType, nnz);
    auto* rowOf = levels[0].crd.as<DstCrd>();
#pragma omp parallel for schedule(static) num_threads(threadsFor(nnz))
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t q = pos[r]; q < static_cast<int64_t>(pos[r + 1]); ++q)
        rowOf[q] = static_cast<DstCrd>(r);
    }
  } else {
    int64_t nonEmpty = 0;
    for (int64_t r = 0; r < rows; ++r) nonEmpty += pos[r + 1] > pos[r];
    levels[0].pos = Buffer::zeros(posType, 2);
    levels[0].pos.as<DstPos>()[1] = static_cast<DstPos>(nonEmpty);
    levels[0].crd = Buffer::zeros(crdType, nonEmpty);
    levels[1].pos = Buffer::zeros(posType, nonEmpty + 1);
    auto* rowCrd = levels[0].crd.as<DstCrd>();
    auto* rowPos = levels[1].pos.as<DstPos>();
    int64_t k = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (pos[r + 1] == pos[r]) continue;
      rowCrd[k] = static_cast<DstCrd>(r);
      rowPos[++k] = static_cast<DstPos>(pos[r + 1]);
    }
  }
  levels[1].crd = std::move(columns);
  return Tensor(src.shape(), src.dtype(), target, std::move(levels), std::move(values));
}

std::optional<Tensor> rowLists(const Tensor& tensor, const Format& target, bool reuse) {
  const bool coo = isCooMatrixShape(target);
  if (!(coo || isDcsrShape(target)) || !isCsrSource(tensor)) return std::nullopt;
  return withWidths(
      tensor.format(), target, tensor.dtype(), [&](auto sp, auto sc, auto dp, auto dc, auto v) {
        return csrToRowListsTyped<decltype(sp), decltype(sc), decltype(dp), decltype(dc),
                                  decltype(v)>(tensor, target, coo, reuse);
      });
}

}  // namespace

std::optional<Tensor> csrToRowLists(const Tensor& tensor, const Format& target) {
  return rowLists(tensor, target, false);
}

std::optional<Tensor> csrToRowListsReusing(const Tensor& tensor, const Format& target) {
  return rowLists(tensor, target, true);
}

}  // namespace sparseflow::conversion
