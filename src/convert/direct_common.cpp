// Helpers shared by the direct conversion paths (see direct_common.h).
#include "convert/direct_common.h"

#include "format/counting_sort.h"
#include "format/format_shapes.h"
#include "sparseflow/error.h"
#include "support/memory.h"

namespace sparseflow::conversion {

int threadsFor(int64_t work) {
  return format::countingSortThreads(work);
}

bool allocationFits(int64_t bytes) {
  try {
    checkAllocation(bytes, "a direct conversion");
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool isEllShape(const Format& f, int64_t& k) {
  if (f.isHybrid() || f.rank() != 2 || f.numLevels() != 2 ||
      f.level(1).type.kind != LevelKind::kFixed) {
    return false;
  }
  k = f.level(1).type.k;
  return f == Format::parse("ell", 2).withFixedK(1, k).withWidths(f.posWidth(), f.crdWidth());
}

bool isCooMatrixShape(const Format& f) {
  return !f.isHybrid() && f.rank() == 2 &&
         f == Format::parse("coo", 2).withWidths(f.posWidth(), f.crdWidth());
}

bool isHybShape(const Format& f) {
  int64_t k = 0;
  return f.isHybrid() && f.parts().size() == 2 && isEllShape(f.parts()[0], k) &&
         isCooMatrixShape(f.parts()[1]);
}

bool isCsrSource(const Tensor& t) {
  int32_t rowDim = 0;
  if (!format::isCompressedRows(t.format(), rowDim) || rowDim != 0) return false;
  const int64_t rows = t.shape()[0];
  const Buffer& pos = t.level(1).pos;
  const Buffer& crd = t.level(1).crd;
  if (pos.size() != rows + 1 || pos.dtype() != indexDType(t.format().posWidth()) ||
      crd.dtype() != indexDType(t.format().crdWidth()) || pos.index(0) != 0) {
    return false;
  }
  const int64_t nnz = pos.index(rows);
  return nnz >= 0 && crd.size() >= nnz && t.values().size() >= nnz;
}

}  // namespace sparseflow::conversion
