// measureImpact: what replacing a matrix by its pruned version cost, summed in float64.
#include <cstdio>
#include <vector>

#include "nm/nm_kernels.h"
#include "sparseflow/nm.h"
#include "support/check.h"

namespace sparseflow::nm {
namespace {

using detail::DenseMatrix;
using detail::impactValue;

void checkFinite(const DenseMatrix& matrix, const char* role) {
  const int64_t bad = detail::findNonFinite(matrix);
  SF_USER_CHECK(bad < 0) << "nm::measureImpact: " << role << " holds "
                         << detail::describeNonFinite(matrix, bad) << " at "
                         << detail::describeElement(bad, matrix.cols)
                         << "; the impact needs finite values";
}

template <typename TrA, typename TrB>
Impact measure(const DenseMatrix& original, const DenseMatrix& pruned) {
  // f64 values are scaled (by the same power of two on both sides) as in sparsify.
  const double scale = detail::impactScale(original, &pruned);
  const auto* a = static_cast<const typename TrA::Storage*>(original.data());
  const auto* b = static_cast<const typename TrB::Storage*>(pruned.data());
  const int64_t rows = original.rows, cols = original.cols;
  std::vector<detail::ImpactSums> rowSums(static_cast<size_t>(rows));
  detail::forEachChunk(
      rows, detail::chunkRowsFor(cols, 1), rows * cols, [&](int64_t begin, int64_t end) -> int64_t {
        for (int64_t r = begin; r < end; ++r) {
          detail::ImpactLanes lanes;
          for (int64_t c = 0; c < cols; ++c) {
            lanes.add(static_cast<int>(c & 3), impactValue<TrA>(a[r * cols + c], scale),
                      impactValue<TrB>(b[r * cols + c], scale));
          }
          rowSums[static_cast<size_t>(r)] = lanes.sum();
        }
        return -1;
      });
  // Rows summed in order: the same numbers for any thread count.
  detail::ImpactSums total;
  for (const auto& row : rowSums) total.merge(row);
  return detail::finishImpact(total, rows * cols, scale);
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", fraction * 100);
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

}  // namespace

std::string Impact::toString() const {
  return "kept " + percent(total ? static_cast<double>(kept) / static_cast<double>(total) : 1.0) +
         " (" + std::to_string(kept) + " of " + std::to_string(total) + "), max abs error " +
         number(maxAbsError) + ", mean abs error " + number(meanAbsError) +
         ", relative Frobenius error " + number(relativeFrobeniusError) + ", magnitude kept " +
         percent(keptMagnitudeFraction);
}

Impact measureImpact(const Tensor& original, const Tensor& pruned) {
  SF_USER_CHECK(original.shape() == pruned.shape())
      << "nm::measureImpact: original (" << original.summary() << ") and pruned ("
      << pruned.summary() << ") differ in shape";
  const DenseMatrix a = detail::denseMatrix(original, "nm::measureImpact");
  const DenseMatrix b = detail::denseMatrix(pruned, "nm::measureImpact");
  checkFinite(a, "original");
  checkFinite(b, "pruned");
  return detail::dispatchDType(a.tensor.dtype(), [&](auto ta) {
    return detail::dispatchDType(
        b.tensor.dtype(), [&](auto tb) { return measure<decltype(ta), decltype(tb)>(a, b); });
  });
}

}  // namespace sparseflow::nm
