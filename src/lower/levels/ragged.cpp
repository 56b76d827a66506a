// Ragged levels: children of parent p are positions pos[p] .. pos[p+1] with coordinates 0, 1, ...
#include "lower/levels/level_kinds.h"

namespace sparseflow::lower {
namespace {

class RaggedIteration final : public LevelIteration {
 public:
  bool randomAccess() const override { return false; }
  bool uniqueCoordinates(const LevelType&) const override { return true; }
  LevelLoop iterate(const LevelContext& ctx, const ir::Expr& v) const override {
    LevelLoop loop;
    loop.begin = ir::cast(ir::load(ctx.pos, ctx.parentPos), ir::ScalarType::kI64);
    loop.end =
        ir::cast(ir::load(ctx.pos, ir::add(ctx.parentPos, ir::intImm(1))), ir::ScalarType::kI64);
    loop.position = v;
    loop.coordinate = ir::sub(v, loop.begin);
    return loop;
  }
};

}  // namespace

const LevelIteration& raggedIteration() {
  static const RaggedIteration impl;
  return impl;
}

}  // namespace sparseflow::lower
