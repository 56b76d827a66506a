// NestBuilder: co-iteration of several drivers of one index: merge lattices as loops over the
// sets of drivers with entries left, each split by which drivers hold the current coordinate
// (presences from lower/presence.h), or, for many drivers, one merged loop.
#include <algorithm>
#include <bitset>

#include "lower/nest_builder_impl.h"
#include "lower/presence.h"
#include "support/check.h"

namespace sparseflow::lower::detail {
namespace {

/// Most drivers that get lattice loops: 2^n - 1 loops with up to 2^n - 1 branches each (7 and 19
/// copies of the body for 3); more drivers merge in one loop.
constexpr size_t kMaxLatticeDrivers = 3;

int memberCount(unsigned set) {
  return static_cast<int>(std::bitset<32>(set).count());
}

/// The non-empty subsets of `set`, larger ones first (equal sizes in increasing bit order).
std::vector<unsigned> subsetsLargestFirst(unsigned set) {
  std::vector<unsigned> out;
  for (unsigned t = set; t != 0; t = (t - 1) & set) out.push_back(t);
  std::stable_sort(out.begin(), out.end(), [](unsigned a, unsigned b) {
    return memberCount(a) != memberCount(b) ? memberCount(a) > memberCount(b) : a < b;
  });
  return out;
}

}  // namespace

std::vector<std::pair<size_t, int32_t>> NestBuilder::driverLevels(int v) const {
  std::vector<std::pair<size_t, int32_t>> out;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const Operand& op = ops_[k];
    // Absent in this lattice branch: nothing of it to walk.
    if (!op.driver || (present_[k] && isConstant(present_[k], false))) continue;
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
  bool lattice = levels.size() <= kMaxLatticeDrivers;
  for (const auto& [k, l] : levels) {
    // Present only where an outer co-iteration found it: the merged loop's run-time flags.
    if (present_[k] && !isConstant(present_[k], true)) lattice = false;
  }
  return lattice ? emitLatticeLoops(depth, v, levels) : emitMergedLoop(depth, v, levels);
}

Stmt NestBuilder::emitLatticeLoops(int depth, int v,
                                   const std::vector<std::pair<size_t, int32_t>>& levels) {
  const LoopVar& lv = vars_[static_cast<size_t>(v)];
  SF_ICHECK(lv.part == LevelExpr::Op::kIdentity) << "co-iteration of a blocked index";
  struct Driver {
    size_t operand;
    std::string suffix;
    Expr q, e, coordinate;
  };
  std::vector<Driver> drivers;
  std::vector<Stmt> out;
  for (const auto& [k, l] : levels) {
    const std::string suffix =
        std::to_string(nestId_) + "_" + std::to_string(k) + "_" + std::to_string(l);
    const Expr q = ir::var("q" + suffix, ScalarType::kI64);
    const LevelLoop loop =
        levelIteration(ops_[k].format.level(l).type.kind).iterate(levelContext(k, l), q);
    out.push_back(ir::let("q" + suffix, loop.begin));
    out.push_back(ir::let("e" + suffix, loop.end));
    drivers.push_back({k, suffix, q, ir::var("e" + suffix, ScalarType::kI64), loop.coordinate});
    positions_[k][static_cast<size_t>(l)] = q;
  }
  const std::vector<Expr> saved = present_;
  /// Presences where exactly the drivers in `set` hold the current coordinate.
  const auto presentIn = [&](unsigned set) {
    return [&, set](size_t k) -> Expr {
      for (size_t i = 0; i < drivers.size(); ++i) {
        if (drivers[i].operand == k) return boolConstant(((set >> i) & 1U) != 0);
      }
      return present_[k];
    };
  };
  const unsigned all = (1U << drivers.size()) - 1;
  out.push_back(ir::comment("co-iterate " + lv.index + " over " + coIteratedNames(levels) +
                            ": a loop per set of them with entries left"));
  noteOuterLoop(v, true);
  boundVars_.insert(v);
  const EmitState start = saveState();
  for (const unsigned set : subsetsLargestFirst(all)) {
    restoreState(start);
    const Expr may = nonzeroWhere(presentIn(set));
    if (isConstant(may, false)) continue;  // zero wherever only these drivers are left
    Expr guard = boolConstant(true), least;
    std::vector<Stmt> body;
    for (size_t i = 0; i < drivers.size(); ++i) {
      if (((set >> i) & 1U) == 0) continue;
      guard = andCondition(guard, ir::lt(drivers[i].q, drivers[i].e));
      body.push_back(ir::let("c" + drivers[i].suffix, drivers[i].coordinate));
      const Expr c = ir::var("c" + drivers[i].suffix, ScalarType::kI64);
      least = least ? ir::binary(ir::BinaryOp::kMin, least, c) : c;
    }
    guard = andCondition(guard, may);
    body.push_back(ir::let(lv.name(), least));
    const Expr at = ir::var(lv.name(), ScalarType::kI64);
    const bool several = memberCount(set) > 1;
    for (size_t i = 0; several && i < drivers.size(); ++i) {
      if (((set >> i) & 1U) == 0) continue;
      body.push_back(ir::let(
          "in" + drivers[i].suffix,
          ir::binary(ir::BinaryOp::kEq, ir::var("c" + drivers[i].suffix, ScalarType::kI64), at)));
    }
    bindIndex(v, body);
    bindAvailable(body);
    const EmitState inLoop = saveState();
    // Branches from the last (the lone driver left when no earlier branch matched) to the first.
    const std::vector<unsigned> cases = subsetsLargestFirst(set);
    Stmt chain;
    for (auto it = cases.rbegin(); it != cases.rend(); ++it) {
      restoreState(inLoop);
      const unsigned here = *it;
      Expr hit = boolConstant(true);
      std::vector<Stmt> branch;
      for (size_t i = 0; i < drivers.size(); ++i) {  // drivers outside `set` are exhausted
        const bool holds = ((here >> i) & 1U) != 0;
        present_[drivers[i].operand] = boolConstant(holds);
        if (holds) hit = andCondition(hit, ir::var("in" + drivers[i].suffix, ScalarType::kBool));
      }
      if (!isConstant(nonzeroWhere(presentIn(here)), false)) branch.push_back(emit(depth + 1));
      for (size_t i = 0; i < drivers.size(); ++i) {
        if (((here >> i) & 1U) != 0)
          branch.push_back(ir::assign("q" + drivers[i].suffix, ir::UpdateOp::kAdd, ir::intImm(1)));
      }
      Stmt stmt = ir::block(std::move(branch));
      chain = chain ? ir::ifThen(hit, stmt, chain) : stmt;
    }
    body.push_back(chain);
    out.push_back(ir::whileLoop(guard, ir::block(std::move(body))));
  }
  restoreState(start);
  present_ = saved;
  return ir::block(std::move(out));
}

NestBuilder::EmitState NestBuilder::saveState() const {
  return {positions_,    present_, boundVars_, boundIndices_, rowOpen_,
          outerRepeats_, accName_, countName_, innerFactors_, outerFactors_};
}

void NestBuilder::restoreState(const EmitState& state) {
  positions_ = state.positions;
  present_ = state.present;
  boundVars_ = state.boundVars;
  boundIndices_ = state.boundIndices;
  rowOpen_ = state.rowOpen;
  outerRepeats_ = state.outerRepeats;
  accName_ = state.accName;
  countName_ = state.countName;
  innerFactors_ = state.innerFactors;
  outerFactors_ = state.outerFactors;
}

Stmt NestBuilder::emitMergedLoop(int depth, int v,
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
    if (present_[k] && !isConstant(present_[k], true)) {  // absent at an outer level: none here
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
