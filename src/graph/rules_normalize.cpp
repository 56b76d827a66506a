// Rules of the operators that mix entries along an axis: softmax (every output positive: zeros
// are destroyed), layer_norm (zeros destroyed, except where gamma and beta are both zero), and the
// reductions (the other axes' zero slices survive).
#include <algorithm>

#include "graph/rules.h"

namespace sparseflow::graph {
namespace {

/// Dead slices of every dimension but `axis` pass through; along the axis the entries are mixed.
SliceSets deadOffAxis(const RuleContext& ctx, int64_t axis) {
  SliceSets dead = ctx.node.tesa.dead;
  dead.erase(axis);
  return dead;
}

Tesa softmaxForward(const RuleContext& ctx) {
  Tesa t;
  t.lowerBound = 0.0;
  return t;
}

std::vector<SliceSets> softmaxBackward(const RuleContext& ctx) {
  return {deadOffAxis(ctx, ctx.intAttr("axis"))};
}

// layer_norm(x, gamma?, beta?) along the last axis: y = (x - mean) / std * gamma + beta.
Tesa layerNormForward(const RuleContext& ctx) {
  Tesa t;
  if (ctx.arity() == 3) {
    setSlices(
        t.zero, ctx.intAttr("axis"),
        intersect(slicesAt(ctx.operand(1).tesa.zero, 0), slicesAt(ctx.operand(2).tesa.zero, 0)));
  }
  return t;
}

std::vector<SliceSets> layerNormBackward(const RuleContext& ctx) {
  const int64_t axis = ctx.intAttr("axis");
  std::vector<SliceSets> out(ctx.arity());
  out[0] = deadOffAxis(ctx, axis);
  for (size_t i = 1; i < ctx.arity(); ++i) setSlices(out[i], 0, slicesAt(ctx.node.tesa.dead, axis));
  return out;
}

/// Operand dimension d goes to d (before the axis) or d - 1 (after); the axis itself goes away.
std::vector<int64_t> dropAxis(int64_t rank, int64_t axis) {
  std::vector<int64_t> map(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d)
    map[static_cast<size_t>(d)] = d < axis ? d : d == axis ? -1 : d - 1;
  return map;
}

Tesa reduceForward(const RuleContext& ctx, bool isSum) {
  const Node& x = ctx.operand(0);
  const int64_t axis = ctx.intAttr("axis");
  Tesa t;
  t.zero = moveSlices(x.tesa.zero, dropAxis(x.type.rank(), axis));
  if (isAllZero(x.tesa, x.type)) t.zero = allSlices(ctx.node.type);
  if (x.tesa.lowerBound && (!isSum || *x.tesa.lowerBound >= 0)) {
    // A sum of non-negative values is at least the bound times the count; a max is at least it.
    const int64_t extent = x.type.shape[static_cast<size_t>(axis)];
    t.lowerBound = isSum ? *x.tesa.lowerBound * static_cast<double>(extent) : *x.tesa.lowerBound;
    if (!isSum && extent == 0) t.lowerBound.reset();
  }
  return t;
}

Tesa reduceSumForward(const RuleContext& ctx) {
  return reduceForward(ctx, true);
}
Tesa reduceMaxForward(const RuleContext& ctx) {
  return reduceForward(ctx, false);
}

std::vector<SliceSets> reduceBackward(const RuleContext& ctx) {
  const int64_t axis = ctx.intAttr("axis");
  const int64_t rank = ctx.operand(0).type.rank();
  std::vector<int64_t> back(static_cast<size_t>(std::max<int64_t>(rank - 1, 0)));
  for (int64_t d = 0; d + 1 < rank; ++d) back[static_cast<size_t>(d)] = d < axis ? d : d + 1;
  return {moveSlices(ctx.node.tesa.dead, back)};
}

}  // namespace

void addNormalizeRules(RuleRegistry& registry) {
  registry.add(OpKind::kSoftmax, {softmaxForward, softmaxBackward});
  registry.add(OpKind::kLayerNorm, {layerNormForward, layerNormBackward});
  registry.add(OpKind::kReduceSum, {reduceSumForward, reduceBackward});
  registry.add(OpKind::kReduceMax, {reduceMaxForward, reduceBackward});
}

}  // namespace sparseflow::graph
