// Direct dense matrix → N:M through nm::compress (one pass, SIMD where built); an input that does
// not fit the pattern goes to the general path, whose error names the first group that does not.
#include "convert/direct_paths.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"

namespace sparseflow::conversion {

std::optional<Tensor> denseToNM(const Tensor& tensor, const Format& target) {
  if (tensor.rank() != 2 || !tensor.format().isDenseRowMajor() || target.isHybrid() ||
      target.numLevels() != 2 || target.level(1).type.kind != LevelKind::kNM) {
    return std::nullopt;
  }
  const nm::NMPattern pattern{target.level(1).type.n, target.level(1).type.m};
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
