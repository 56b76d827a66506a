// Singleton levels: exactly one child per parent, at the parent's position, coordinate crd[p].
#include "lower/levels/level_kinds.h"

namespace sparseflow::lower {
namespace {

class SingletonIteration final : public LevelIteration {
 public:
  bool randomAccess() const override { return false; }
  LevelLoop iterate(const LevelContext& ctx, const ir::Expr&) const override {
    LevelLoop loop;
    loop.singleIteration = true;
    loop.position = ctx.parentPos;
    loop.coordinate = ir::cast(ir::load(ctx.crd, ctx.parentPos), ir::ScalarType::kI64);
    return loop;
  }
};

}  // namespace

const LevelIteration& singletonIteration() {
  static const SingletonIteration impl;
  return impl;
}

}  // namespace sparseflow::lower
