// Dense levels: every coordinate of the extent; position = parent × extent + coordinate.
#include "lower/levels/level_kinds.h"

namespace sparseflow::lower {
namespace {

class DenseIteration final : public LevelIteration {
 public:
  bool randomAccess() const override { return true; }
  bool uniqueCoordinates(const LevelType&) const override { return true; }
  LevelLoop iterate(const LevelContext& ctx, const ir::Expr& v) const override {
    LevelLoop loop;
    loop.begin = ir::intImm(0);
    loop.end = ctx.extent;
    loop.coordinate = v;
    loop.position = locate(ctx, v);
    return loop;
  }
  ir::Expr locate(const LevelContext& ctx, const ir::Expr& coord) const override {
    return ir::add(ir::mul(ctx.parentPos, ctx.extent), coord);
  }
};

}  // namespace

const LevelIteration& denseIteration() {
  static const DenseIteration impl;
  return impl;
}

}  // namespace sparseflow::lower
