// Rules of max_pool2d(x [N, C, H, W]) -> [N, C, Ho, Wo]: every window holds at least one element
// of its (image, channel) plane and padding never wins, so a zero plane pools to zeros and the
// bound holds; the spatial dimensions mix (their facts are dropped).
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

/// Images and channels no output reads are dead in x.
std::vector<SliceSets> maxPoolBackward(const RuleContext& ctx) {
  std::vector<SliceSets> out(1);
  for (int64_t d = 0; d < 2; ++d) setSlices(out[0], d, slicesAt(ctx.node.tesa.dead, d));
  return out;
}

}  // namespace

void addPoolRules(RuleRegistry& registry) {
  registry.add(OpKind::kMaxPool2d, {maxPoolForward, maxPoolBackward});
}

}  // namespace sparseflow::graph
