// sortedFromList (see listed_output.h).
#include "runtime/listed_output.h"

#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow::runtime {

Tensor sortedFromList(const Tensor& list, const Format& format) {
  const int32_t rank = list.rank();
  SF_ICHECK(rank >= 1 && list.format().numLevels() == rank) << "a list of rank " << rank;
  const int64_t entries = list.values().size();
  Coo coo;
  coo.shape = list.shape();
  coo.coords.resize(static_cast<size_t>(entries * rank));
  coo.values.resize(static_cast<size_t>(entries));
  for (int32_t l = 0; l < rank; ++l) {
    const int32_t dim = list.format().level(l).expr.dim;
    const int64_t* crd = list.level(l).crd.as<int64_t>();
    for (int64_t e = 0; e < entries; ++e) coo.coords[static_cast<size_t>(e * rank + dim)] = crd[e];
  }
  if (list.dtype() == DType::kF64) {
    const double* v = list.values().as<double>();
    coo.values.assign(v, v + entries);
  } else {
    const float* v = list.values().as<float>();
    coo.values.assign(v, v + entries);
  }
  BuildOptions options;
  options.dtype = list.dtype();
  options.duplicates = Duplicates::kSum;
  return fromCoo(coo, format, options);
}

}  // namespace sparseflow::runtime
