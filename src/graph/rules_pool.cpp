// Rules of max_pool2d and avg_pool2d (x [N, C, H, W]) -> [N, C, Ho, Wo]: every window holds at
// least one element of its (image, channel) plane, padding never wins a max and counts as zeros in
// an average, so a zero plane pools to zeros; the bound holds (for an average that counts padding,
// down to 0); the spatial dimensions mix (their facts are dropped).
#include <algorithm>

#include "graph/rules.h"

namespace sparseflow::graph {
namespace {

Tesa maxPoolForward(const RuleContext& ctx) {
  const Tesa& x = ctx.operand(0).tesa;
  Tesa t;
  for (int64_t d = 0; d < 2; ++d) setSlices(t.zero, d, slicesAt(x.zero, d));
  t.lowerBound = x.lowerBound;
  return t;
}

/// The average of a window: above x's bound, or above min(bound, 0) where padded zeros count.
Tesa avgPoolForward(const RuleContext& ctx) {
  Tesa t = maxPoolForward(ctx);
  const auto& padding = std::get<std::vector<int64_t>>(ctx.node.attrs.at("padding"));
  const bool padsCount =
      std::get<int64_t>(ctx.node.attrs.at("count_include_pad")) == 1 &&
      std::any_of(padding.begin(), padding.end(), [](int64_t p) { return p > 0; });
  if (t.lowerBound && padsCount) t.lowerBound = std::min(*t.lowerBound, 0.0);
  return t;
}

/// Images and channels no output reads are dead in x.
std::vector<SliceSets> maxPoolBackward(const RuleContext& ctx) {
  std::vector<SliceSets> out(1);
  for (int64_t d = 0; d < 2; ++d) setSlices(out[0], d, slicesAt(ctx.node.tesa.dead, d));
  return out;
}

}  // namespace

void addPoolRules(RuleRegistry& registry) {
  registry.add(OpKind::kMaxPool2d, {maxPoolForward, maxPoolBackward});
  registry.add(OpKind::kAvgPool2d, {avgPoolForward, maxPoolBackward});
}

}  // namespace sparseflow::graph
