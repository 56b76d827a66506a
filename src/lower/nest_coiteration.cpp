// NestBuilder: co-iteration of several drivers of one index (merge lattices as one presence
// predicate, lower/presence.h).
#include "lower/nest_builder_impl.h"
#include "lower/presence.h"
#include "support/check.h"

namespace sparseflow::lower::detail {

std::vector<std::pair<size_t, int32_t>> NestBuilder::driverLevels(int v) const {
  std::vector<std::pair<size_t, int32_t>> out;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const Operand& op = ops_[k];
    if (!op.driver) continue;
    for (int32_t l = 0; l < op.format.numLevels(); ++l) {
      if (positions_[k][static_cast<size_t>(l)]) continue;
      if (levelIteration(op.format.level(l).type.kind).randomAccess()) break;
      if (levelVar(op, l) == v) out.emplace_back(k, l);
      break;
    }
  }
  return out;
}

size_t NestBuilder::operandOf(const expr::Access& a) const {
  for (size_t k = 0; k < ops_.size(); ++k) {
    if (ops_[k].tensor == a.tensor && ops_[k].indices == a.indices) return k;
  }
  SF_FAIL(kInternal) << "no operand for access to " << a.tensor;
}

Expr NestBuilder::nonzeroWhere(const std::function<Expr(size_t)>& presence) const {
  return nonzeroCondition(*pass_.body, [&](const expr::Access& a) {
    const Expr p = presence(operandOf(a));
    return p ? p : boolConstant(true);
  });
}

Stmt NestBuilder::emitCoIteration(int depth, int v,
                                  const std::vector<std::pair<size_t, int32_t>>& levels) {
  const LoopVar& lv = vars_[static_cast<size_t>(v)];
  SF_ICHECK(lv.part == LevelExpr::Op::kIdentity) << "co-iteration of a blocked index";
  std::vector<Stmt> before, inner;
  std::map<size_t, Expr> remaining;
  Expr least;
  std::vector<std::string> suffixes;
  for (const auto& [k, l] : levels) {
    const std::string suffix =
        std::to_string(nestId_) + "_" + std::to_string(k) + "_" + std::to_string(l);
    suffixes.push_back(suffix);
    const Expr q = ir::var("q" + suffix, ScalarType::kI64);
    const Expr e = ir::var("e" + suffix, ScalarType::kI64);
    const LevelLoop loop =
        levelIteration(ops_[k].format.level(l).type.kind).iterate(levelContext(k, l), q);
    Expr begin = loop.begin, end = loop.end;
    if (present_[k]) {  // absent at an outer level: nothing to walk here
      begin = ir::select(present_[k], begin, ir::intImm(0));
      end = ir::select(present_[k], end, ir::intImm(0));
    }
    before.push_back(ir::let("q" + suffix, begin));
    before.push_back(ir::let("e" + suffix, end));
    inner.push_back(
        ir::let("c" + suffix, ir::select(ir::lt(q, e), loop.coordinate, extentOf(lv.index))));
    const Expr c = ir::var("c" + suffix, ScalarType::kI64);
    least = least ? ir::binary(ir::BinaryOp::kMin, least, c) : c;
    remaining[k] = ir::lt(q, e);
  }
  const Expr condition = nonzeroWhere([&](size_t k) {
    auto it = remaining.find(k);
    return it != remaining.end() ? it->second : present_[k];
  });
  inner.push_back(ir::let(lv.name(), least));
  const std::vector<Expr> saved = present_;
  for (size_t g = 0; g < levels.size(); ++g) {
    const auto [k, l] = levels[g];
    const std::string in = "in" + suffixes[g];
    inner.push_back(
        ir::let(in, ir::binary(ir::BinaryOp::kEq, ir::var("c" + suffixes[g], ScalarType::kI64),
                               ir::var(lv.name(), ScalarType::kI64))));
    present_[k] = ir::var(in, ScalarType::kBool);
    positions_[k][static_cast<size_t>(l)] = ir::var("q" + suffixes[g], ScalarType::kI64);
  }
  noteOuterLoop(v, true);
  boundVars_.insert(v);
  bindIndex(v, inner);
  bindAvailable(inner);
  inner.push_back(emit(depth + 1));
  for (size_t g = 0; g < levels.size(); ++g) {
    inner.push_back(
        ir::assign("q" + suffixes[g], ir::UpdateOp::kAdd,
                   ir::cast(ir::var("in" + suffixes[g], ScalarType::kBool), ScalarType::kI64)));
  }
  present_ = saved;
  before.push_back(ir::comment("co-iterate " + lv.index + " over " + coIteratedNames(levels)));
  before.push_back(ir::whileLoop(condition, ir::block(std::move(inner))));
  return ir::block(std::move(before));
}

std::string NestBuilder::coIteratedNames(
    const std::vector<std::pair<size_t, int32_t>>& levels) const {
  std::string out;
  for (const auto& [k, l] : levels) out += (out.empty() ? "" : ", ") + ops_[k].tensor;
  return out;
}

}  // namespace sparseflow::lower::detail
