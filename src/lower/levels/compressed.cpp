// Compressed levels: children of parent p are positions pos[p] .. pos[p+1], coordinates crd[q].
#include "lower/levels/level_kinds.h"

namespace sparseflow::lower {
namespace {

class CompressedIteration final : public LevelIteration {
 public:
  bool randomAccess() const override { return false; }
  bool coIterable(const LevelType& type) const override {
    return type.props.ordered && type.props.unique;
  }
  LevelLoop iterate(const LevelContext& ctx, const ir::Expr& v) const override {
    LevelLoop loop;
    loop.begin = ir::cast(ir::load(ctx.pos, ctx.parentPos), ir::ScalarType::kI64);
    loop.end =
        ir::cast(ir::load(ctx.pos, ir::add(ctx.parentPos, ir::intImm(1))), ir::ScalarType::kI64);
    loop.position = v;
    loop.coordinate = ir::cast(ir::load(ctx.crd, v), ir::ScalarType::kI64);
    return loop;
  }
};

}  // namespace

const LevelIteration& compressedIteration() {
  static const CompressedIteration impl;
  return impl;
}

}  // namespace sparseflow::lower
