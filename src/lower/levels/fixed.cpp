// Fixed(k) levels (ELL): k slots per parent at positions p·k .. p·k + k; padding slots hold
// coordinate -1 and are skipped.
#include "lower/levels/level_kinds.h"

namespace sparseflow::lower {
namespace {

class FixedIteration final : public LevelIteration {
 public:
  bool randomAccess() const override { return false; }
  bool uniqueCoordinates(const LevelType&) const override { return true; }
  LevelLoop iterate(const LevelContext& ctx, const ir::Expr& v) const override {
    LevelLoop loop;
    const ir::Expr k = ctx.slots;
    loop.begin = ir::mul(ctx.parentPos, k);
    loop.end = ir::add(loop.begin, k);
    loop.position = v;
    loop.coordinate = ir::cast(ir::load(ctx.crd, v), ir::ScalarType::kI64);
    loop.skip = ir::lt(loop.coordinate, ir::intImm(0));
    return loop;
  }
};

}  // namespace

const LevelIteration& fixedIteration() {
  static const FixedIteration impl;
  return impl;
}

}  // namespace sparseflow::lower
