// Direct N:M matrix → dense through nm::decompress. A stored -0 would come out as -0 there but as
// +0 on the general path (toCoo drops it as zero fill), so such a tensor goes the general way.
#include "convert/direct_common.h"
#include "convert/direct_paths.h"
#include "format/format_shapes.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"

namespace sparseflow::conversion {
namespace {

bool holdsNegativeZero(const Buffer& values) {
  return withValueBits(values.dtype(), [&](auto zero) {
    using V = decltype(zero);
    const V negativeZero = static_cast<V>(V{1} << (8 * sizeof(V) - 1));
    const V* v = values.as<V>();
    bool found = false;
    for (int64_t i = 0; i < values.size(); ++i) found |= v[i] == negativeZero;
    return found;
  });
}

}  // namespace

std::optional<Tensor> nmToDense(const Tensor& tensor, const Format& target) {
  const Format& from = tensor.format();
  if (!target.isDenseRowMajor() || !format::isMatrixNM(from) ||
      holdsNegativeZero(tensor.values())) {
    return std::nullopt;
  }
  Tensor dense;
  try {
    dense = nm::decompress(tensor);
  } catch (const Error&) {
    return std::nullopt;  // storage that breaks the format: the general path decides
  }
  std::vector<LevelStorage> levels = dense.levels();
  return Tensor(dense.shape(), dense.dtype(), target, std::move(levels), dense.values());
}

}  // namespace sparseflow::conversion
