// Helpers shared by the rule families: broadcasting, moving slice sets between dimensions,
// zero-preserving facts.
#include "graph/rules.h"

namespace sparseflow::graph {

int64_t broadcastDim(const TensorType& operand, const TensorType& result, int64_t dim) {
  const int64_t d = dim - (result.rank() - operand.rank());
  if (d < 0) return -1;
  const int64_t extent = operand.shape[static_cast<size_t>(d)];
  return extent == result.shape[static_cast<size_t>(dim)] ? d : -1;
}

IndexSet broadcastZeros(const Node& operand, const TensorType& result, int64_t dim) {
  const int64_t d = broadcastDim(operand.type, result, dim);
  if (d >= 0) return slicesAt(operand.tesa.zero, d);
  if (isAllZero(operand.tesa, operand.type)) {
    return IndexSet::range(0, result.shape[static_cast<size_t>(dim)]);
  }
  return {};
}

SliceSets moveSlices(const SliceSets& sets, const std::vector<int64_t>& map) {
  SliceSets out;
  for (const auto& [d, s] : sets) {
    if (d >= 0 && d < static_cast<int64_t>(map.size()) && map[static_cast<size_t>(d)] >= 0) {
      setSlices(out, map[static_cast<size_t>(d)], s);
    }
  }
  return out;
}

Tesa zeroFacts(const Tesa& tesa) {
  Tesa out;
  out.zero = tesa.zero;
  out.nm = tesa.nm;
  out.block = tesa.block;
  out.mask = tesa.mask;
  return out;
}

std::vector<SliceSets> deadPassThrough(const RuleContext& ctx) {
  std::vector<SliceSets> out(ctx.arity());
  for (size_t i = 0; i < ctx.arity(); ++i) {
    if (ctx.operand(i).type.shape == ctx.node.type.shape) out[i] = ctx.node.tesa.dead;
  }
  return out;
}

SliceSets allSlices(const TensorType& type) {
  SliceSets out;
  if (type.rank() > 0) setSlices(out, 0, IndexSet::range(0, type.shape[0]));
  return out;
}

}  // namespace sparseflow::graph
