// Direct ell:K → csr: the stored slots of each row (explicit zeros kept, as toCoo keeps them).
#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "convert/ell_rows.h"
#include "format/format_shapes.h"

namespace sparseflow::conversion {
namespace {

template <typename EllCrd, typename DstPos, typename DstCrd, typename V>
std::optional<Tensor> ellToCsrTyped(const Tensor& src, const Format& target, int64_t k) {
  return mergeEllRows<EllCrd, int32_t, DstPos, DstCrd, V>(
      src.shape(), src.dtype(), target, src.level(1).crd.as<EllCrd>(), src.values().as<V>(), k,
      CooRows<int32_t, V>{});
}

}  // namespace

std::optional<Tensor> ellToCsr(const Tensor& tensor, const Format& target) {
  int64_t k = 0;
  int32_t rowDim = 0;
  if (!isEllShape(tensor.format(), k) || k <= 0 || !format::isCompressedRows(target, rowDim) ||
      rowDim != 0) {
    return std::nullopt;
  }
  const int64_t rows = tensor.shape()[0], cols = tensor.shape()[1];
  const Buffer& crd = tensor.level(1).crd;
  // Arrays of the sizes the format implies; the general CSR builder's limits (32-bit columns, and
  // 32-bit sort keys for rows).
  if (rows > INT64_MAX / k || crd.size() != rows * k || tensor.values().size() != rows * k ||
      crd.dtype() != indexDType(tensor.format().crdWidth()) ||
      (target.crdWidth() != 64 && cols > INT32_MAX + 1LL) || rows > UINT32_MAX) {
    return std::nullopt;
  }
  return withIndex(tensor.format().crdWidth(), [&](auto ec) {
    return withIndex(target.posWidth(), [&](auto dp) {
      return withIndex(target.crdWidth(), [&](auto dc) {
        return withValueBits(tensor.dtype(), [&](auto v) {
          return ellToCsrTyped<decltype(ec), decltype(dp), decltype(dc), decltype(v)>(tensor,
                                                                                      target, k);
        });
      });
    });
  });
}

}  // namespace sparseflow::conversion
