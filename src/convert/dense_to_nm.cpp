// Direct dense matrix → N:M through nm::compress (one pass, SIMD where built); an input that does
// not fit the pattern goes to the general path, whose error names the first group that does not.
#include "convert/direct_paths.h"
#include "format/format_shapes.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"

namespace sparseflow::conversion {

std::optional<Tensor> denseToNM(const Tensor& tensor, const Format& target) {
  int32_t n = 0, m = 0;
  if (tensor.rank() != 2 || !tensor.format().isDenseRowMajor() ||
      !format::isMatrixNM(target, &n, &m)) {
    return std::nullopt;
  }
  const nm::NMPattern pattern{n, m};
  if (pattern.m > nm::kMaxGroupSize ||
      target.withWidths(32, 32) != Format::parse(pattern.toString(), 2) ||
      tensor.values().size() != tensor.shape()[0] * tensor.shape()[1]) {
    return std::nullopt;
  }
  Tensor compressed;
  try {
    compressed = nm::compress(tensor, pattern);
  } catch (const Error&) {
    return std::nullopt;  // the general path gives the format's own error (or its result)
  }
  // The arrays hold no indices, so the requested widths only change the format's text.
  std::vector<LevelStorage> levels = compressed.levels();
  return Tensor(compressed.shape(), compressed.dtype(), target, std::move(levels),
                compressed.values());
}

}  // namespace sparseflow::conversion
