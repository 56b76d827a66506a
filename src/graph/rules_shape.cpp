// Rules of the data-movement operators: transpose permutes the facts, slice and concat shift them
// along their axis, reshape keeps what it can map (reshape_map.h) and drops the rest.
#include <algorithm>

#include "graph/reshape_map.h"
#include "graph/rules.h"

namespace sparseflow::graph {
namespace {

const std::vector<int64_t>& permAttr(const RuleContext& ctx) {
  return std::get<std::vector<int64_t>>(ctx.node.attrs.at("perm"));
}

/// For transpose: the result dimension that reads operand dimension d.
std::vector<int64_t> inversePerm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    inv[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
  return inv;
}

Tesa transposeForward(const RuleContext& ctx) {
  const Tesa& x = ctx.operand(0).tesa;
  const std::vector<int64_t>& perm = permAttr(ctx);
  const std::vector<int64_t> inv = inversePerm(perm);
  Tesa t;
  t.zero = moveSlices(x.zero, inv);
  t.lowerBound = x.lowerBound;
  if (x.nm) t.nm = NmStructure{x.nm->n, x.nm->m, inv[static_cast<size_t>(x.nm->axis)]};
  if (x.block) {
    BlockStructure b;
    for (int64_t p : perm) b.shape.push_back(x.block->shape[static_cast<size_t>(p)]);
    for (const auto& coord : x.block->zeroBlocks) {
      std::vector<int64_t> c;
      for (int64_t p : perm) c.push_back(coord[static_cast<size_t>(p)]);
      b.zeroBlocks.push_back(std::move(c));
    }
    std::sort(b.zeroBlocks.begin(), b.zeroBlocks.end());
    t.block = std::move(b);
  }
  return t;
}

std::vector<SliceSets> transposeBackward(const RuleContext& ctx) {
  return {moveSlices(ctx.node.tesa.dead, permAttr(ctx))};
}

Tesa sliceForward(const RuleContext& ctx) {
  const Tesa& x = ctx.operand(0).tesa;
  const int64_t axis = ctx.intAttr("axis");
  const int64_t start = ctx.intAttr("start");
  const int64_t end = ctx.intAttr("end");
  Tesa t;
  t.zero = x.zero;
  setSlices(t.zero, axis, slicesAt(x.zero, axis).shifted(-start, 0, end - start));
  t.lowerBound = x.lowerBound;
  // Groups stay whole when the cut is along another axis or on a group boundary.
  if (x.nm && (x.nm->axis != axis || start % x.nm->m == 0)) t.nm = x.nm;
  return t;
}

std::vector<SliceSets> sliceBackward(const RuleContext& ctx) {
  const int64_t axis = ctx.intAttr("axis");
  const int64_t start = ctx.intAttr("start");
  const int64_t end = ctx.intAttr("end");
  const int64_t extent = ctx.operand(0).type.shape[static_cast<size_t>(axis)];
  SliceSets dead = ctx.node.tesa.dead;
  IndexSet along = slicesAt(dead, axis).shifted(start, start, end);
  along.addRange(0, start);  // what the slice leaves out does not reach its result
  along.addRange(end, extent);
  setSlices(dead, axis, std::move(along));
  return {dead};
}

Tesa concatForward(const RuleContext& ctx) {
  const int64_t axis = ctx.intAttr("axis");
  Tesa t;
  IndexSet along;
  int64_t offset = 0;
  const int64_t total = ctx.node.type.shape[static_cast<size_t>(axis)];
  for (size_t i = 0; i < ctx.arity(); ++i) {
    const Tesa& x = ctx.operand(i).tesa;
    along = unite(along, slicesAt(x.zero, axis).shifted(offset, 0, total));
    offset += ctx.operand(i).type.shape[static_cast<size_t>(axis)];
    SliceSets others = x.zero;
    others.erase(axis);
    t.zero = i == 0 ? others : intersectSlices(t.zero, others);
    if (i == 0 || (t.lowerBound && x.lowerBound)) {
      t.lowerBound = i == 0 ? x.lowerBound : std::min(*t.lowerBound, *x.lowerBound);
    } else {
      t.lowerBound.reset();
    }
  }
  setSlices(t.zero, axis, std::move(along));
  return t;
}

std::vector<SliceSets> concatBackward(const RuleContext& ctx) {
  const int64_t axis = ctx.intAttr("axis");
  std::vector<SliceSets> out(ctx.arity());
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.arity(); ++i) {
    const int64_t extent = ctx.operand(i).type.shape[static_cast<size_t>(axis)];
    out[i] = ctx.node.tesa.dead;
    setSlices(out[i], axis, slicesAt(ctx.node.tesa.dead, axis).shifted(-offset, 0, extent));
    offset += extent;
  }
  return out;
}

Tesa reshapeForward(const RuleContext& ctx) {
  const Node& x = ctx.operand(0);
  Tesa t;
  t.zero = reshapeSlices(x.tesa.zero, x.type.shape, ctx.node.type.shape);
  t.lowerBound = x.tesa.lowerBound;
  t.mask = x.tesa.mask;  // row-major order is the same in both shapes
  return t;
}

std::vector<SliceSets> reshapeBackward(const RuleContext& ctx) {
  return {reshapeSlices(ctx.node.tesa.dead, ctx.node.type.shape, ctx.operand(0).type.shape)};
}

}  // namespace

void addShapeRules(RuleRegistry& registry) {
  registry.add(OpKind::kTranspose, {transposeForward, transposeBackward});
  registry.add(OpKind::kSlice, {sliceForward, sliceBackward});
  registry.add(OpKind::kConcat, {concatForward, concatBackward});
  registry.add(OpKind::kReshape, {reshapeForward, reshapeBackward});
}

}  // namespace sparseflow::graph
