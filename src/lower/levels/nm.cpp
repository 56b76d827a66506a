// n:m levels: every group of m coordinates keeps n slots (padding slots are zero-valued entries
// at unused offsets, so they need no skipping); slot q's offset is packed in meta.
#include "format/levels/level_impl.h"
#include "lower/levels/level_kinds.h"

namespace sparseflow::lower {
namespace {

class NMIteration final : public LevelIteration {
 public:
  bool randomAccess() const override { return false; }
  bool uniqueCoordinates(const LevelType&) const override { return true; }
  LevelLoop iterate(const LevelContext& ctx, const ir::Expr& v) const override {
    using ir::BinaryOp;
    using ir::intImm;
    const int64_t n = ctx.type.n, m = ctx.type.m;
    const int64_t bits = format::nmMetaBits(ctx.type.m);
    // groups per parent = ceil(extent / m); slots per parent = groups × n.
    const ir::Expr groups =
        ir::binary(BinaryOp::kDiv, ir::add(ctx.extent, intImm(m - 1)), intImm(m));
    const ir::Expr slots = ir::mul(groups, intImm(n));
    LevelLoop loop;
    loop.begin = ir::mul(ctx.parentPos, slots);
    loop.end = ir::add(loop.begin, slots);
    loop.position = v;
    // offset = (meta[bit >> 3] >> (bit & 7)) & (2^bits - 1) with bit = v · bits.
    const ir::Expr bit = ir::mul(v, intImm(bits));
    const ir::Expr byte = ir::cast(ir::load(ctx.meta, ir::binary(BinaryOp::kShr, bit, intImm(3))),
                                   ir::ScalarType::kI64);
    const ir::Expr offset =
        ir::binary(BinaryOp::kBitAnd,
                   ir::binary(BinaryOp::kShr, byte, ir::binary(BinaryOp::kBitAnd, bit, intImm(7))),
                   intImm((int64_t{1} << bits) - 1));
    const ir::Expr group = ir::binary(BinaryOp::kDiv, ir::sub(v, loop.begin), intImm(n));
    loop.coordinate = ir::add(ir::mul(group, intImm(m)), offset);
    return loop;
  }
};

}  // namespace

const LevelIteration& nmIteration() {
  static const NMIteration impl;
  return impl;
}

}  // namespace sparseflow::lower
