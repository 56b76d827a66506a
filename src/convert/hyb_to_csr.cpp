// Direct hyb (ell:K part + coo remainder) → csr: each row's ell slots merged by column with its coo
// entries (explicit zeros kept, as toCoo keeps them in both parts).
#include <vector>

#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "convert/ell_rows.h"
#include "format/format_shapes.h"

namespace sparseflow::conversion {
namespace {

/// The coo part read as rows: nullopt unless its arrays have their sizes, its rows never decrease
/// and lie in the matrix, and its columns strictly increase within a row and lie in the matrix.
template <typename CooCrd, typename V>
std::optional<CooRows<CooCrd, V>> cooRowsOf(const Tensor& coo) {
  const int64_t rows = coo.shape()[0], cols = coo.shape()[1];
  const int64_t n = coo.values().size();
  const Buffer& pos = coo.level(0).pos;
  const Buffer& rowCrd = coo.level(0).crd;
  const Buffer& colCrd = coo.level(1).crd;
  const DType crdType = indexDType(coo.format().crdWidth());
  if (pos.size() != 2 || pos.dtype() != indexDType(coo.format().posWidth()) || pos.index(0) != 0 ||
      pos.index(1) != n || rowCrd.size() != n || colCrd.size() != n || rowCrd.dtype() != crdType ||
      colCrd.dtype() != crdType) {
    return std::nullopt;
  }
  CooRows<CooCrd, V> out;
  out.row = rowCrd.as<CooCrd>();
  out.col = colCrd.as<CooCrd>();
  out.vals = coo.values().as<V>();
  out.start.assign(static_cast<size_t>(rows) + 1, 0);
  for (int64_t e = 0; e < n; ++e) {
    const int64_t r = out.row[e], c = out.col[e];
    if (r < 0 || r >= rows || c < 0 || c >= cols) return std::nullopt;
    if (e > 0 && (r < out.row[e - 1] || (r == out.row[e - 1] && c <= out.col[e - 1]))) {
      return std::nullopt;
    }
    ++out.start[static_cast<size_t>(r) + 1];
  }
  for (int64_t r = 0; r < rows; ++r) {
    out.start[static_cast<size_t>(r) + 1] += out.start[static_cast<size_t>(r)];
  }
  return out;
}

template <typename EllCrd, typename CooCrd, typename DstPos, typename DstCrd, typename V>
std::optional<Tensor> hybToCsrTyped(const Tensor& src, const Format& target, int64_t k) {
  auto coo = cooRowsOf<CooCrd, V>(src.parts()[1]);
  if (!coo) return std::nullopt;
  const Tensor& ell = src.parts()[0];
  return mergeEllRows<EllCrd, CooCrd, DstPos, DstCrd, V>(src.shape(), src.dtype(), target,
                                                         ell.level(1).crd.as<EllCrd>(),
                                                         ell.values().as<V>(), k, *coo);
}

}  // namespace

std::optional<Tensor> hybToCsr(const Tensor& tensor, const Format& target) {
  int32_t rowDim = 0;
  if (!isHybShape(tensor.format()) || !format::isCompressedRows(target, rowDim) || rowDim != 0 ||
      tensor.parts().size() != 2) {
    return std::nullopt;
  }
  const Tensor& ell = tensor.parts()[0];
  const int64_t k = ell.format().level(1).type.k;
  const int64_t rows = tensor.shape()[0], cols = tensor.shape()[1];
  const Buffer& crd = ell.level(1).crd;
  if (k <= 0 || ell.format() != tensor.format().parts()[0] ||
      tensor.parts()[1].format() != tensor.format().parts()[1] || rows > INT64_MAX / k ||
      crd.size() != rows * k || ell.values().size() != rows * k ||
      crd.dtype() != indexDType(ell.format().crdWidth()) ||
      (target.crdWidth() != 64 && cols > INT32_MAX + 1LL) || rows > UINT32_MAX) {
    return std::nullopt;
  }
  const Format& cooPart = tensor.format().parts()[1];
  // One coordinate width for both parts keeps the instantiations few; mixed widths take the
  // general path.
  if (ell.format().crdWidth() != cooPart.crdWidth()) return std::nullopt;
  return withIndex(cooPart.crdWidth(), [&](auto c) {
    return withIndex(target.posWidth(), [&](auto dp) {
      return withIndex(target.crdWidth(), [&](auto dc) {
        return withValueBits(tensor.dtype(), [&](auto v) {
          return hybToCsrTyped<decltype(c), decltype(c), decltype(dp), decltype(dc), decltype(v)>(
              tensor, target, k);
        });
      });
    });
  });
}

}  // namespace sparseflow::conversion
