// buildNest: one pass of the lowering as loops (see nest_builder.h).
#include "lower/nest_builder.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>

#include "format/levels/level_impl.h"
#include "lower/array_names.h"
#include "lower/level_iteration.h"
#include "lower/loop_order.h"
#include "lower/lower.h"
#include "lower/nest_builder_impl.h"
#include "lower/presence.h"
#include "support/check.h"

namespace sparseflow::lower {

using ir::Expr;
using ir::ScalarType;
using ir::Stmt;

ScalarType widthType(int32_t width) {
  return width == 64 ? ScalarType::kI64 : ScalarType::kI32;
}

bool isDenseFormat(const Format& f) {
  if (f.isHybrid()) return false;
  for (const LevelSpec& l : f.levels()) {
    if (!format::levelImpl(l.type.kind).capabilities().allCoordinates) return false;
  }
  return true;
}

/// Row-major dense (no levels for a scalar).
Format denseFormat(int32_t rank) {
  return rank == 0 ? Format(0, {}) : Format::parse("dense", rank);
}

}  // namespace sparseflow::lower

namespace sparseflow::lower::detail {

Stmt NestBuilder::build(std::string* orderText) {
  planLoopVars();
  order();
  for (size_t k = 0; k < loopOrder_.size(); ++k) {
    *orderText += (k ? ", " : "") + vars_[static_cast<size_t>(loopOrder_[k])].name().substr(2);
  }
  orderText_ = *orderText;
  for (size_t k = 0; k < ops_.size(); ++k) {
    if (ops_[k].outputPattern) patternOperand_ = static_cast<int>(k);
  }
  SF_ICHECK(isDenseFormat(target_.format) || patternOperand_ >= 0 || assembly_.active())
      << "sparse target without a pattern";
  if (assembly_.list()) {
    parallel_ = false;  // one list, one cursor
  } else if (assembly_.active()) {
    // A sparse vector output is one row: the nest runs serially.
    parallel_ = parallel_ && assembly_.level() > 0;
    assembledVar_ = levelVar(target_, assembly_.level());
    SF_CHECK_CODE(assembledVar_ >= 0 &&
                      vars_[static_cast<size_t>(assembledVar_)].part == LevelExpr::Op::kIdentity,
                  ErrorCode::kNotSupported)
        << "output " << target_.tensor << " (" << target_.format.toString()
        << "): assembling a blocked index is not supported";
    assembly_.setExtent(loopExtent(vars_[static_cast<size_t>(assembledVar_)]));
  }
  present_.assign(ops_.size(), nullptr);
  positions_.assign(ops_.size() + 1, {});
  for (size_t k = 0; k <= ops_.size(); ++k) {
    positions_[k].assign(static_cast<size_t>(operandAt(k).format.numLevels()), nullptr);
  }
  // The first accumulator depth: from there on every loop reduces.
  accDepth_ = static_cast<int>(loopOrder_.size());
  while (accDepth_ > 0 && isReduction(loopOrder_[static_cast<size_t>(accDepth_ - 1)])) --accDepth_;
  std::vector<Stmt> prologue;
  bindAvailable(prologue);
  Stmt nest = emit(0);
  if (assembly_.active() && !assembly_.list()) {
    const Expr extent = loopExtent(vars_[static_cast<size_t>(assembledVar_)]);
    nest = assembly_.withWorkspaces(nest, extent);
    if (assembly_.usedWorkspace()) workspaceExtent = extent;
  }
  prologue.push_back(nest);
  return ir::block(std::move(prologue));
}

bool NestBuilder::isReduction(int v) const {
  const std::string& index = vars_[static_cast<size_t>(v)].index;
  return std::find(pass_.targetIndices.begin(), pass_.targetIndices.end(), index) ==
         pass_.targetIndices.end();
}

int NestBuilder::varId(const std::string& index, LevelExpr::Op part) const {
  for (size_t v = 0; v < vars_.size(); ++v) {
    if (vars_[v].index == index && vars_[v].part == part) return static_cast<int>(v);
  }
  return -1;
}

int NestBuilder::levelVar(const Operand& op, int32_t l) const {
  const LevelExpr& e = op.format.level(l).expr;
  const std::string& index = op.indices[static_cast<size_t>(e.dim)];
  int v = varId(index, e.op);
  if (v < 0 && e.op == LevelExpr::Op::kIdentity) v = varId(index, LevelExpr::Op::kDiv);
  return v;
}

void NestBuilder::planLoopVars() {
  std::vector<std::string> indices = pass_.targetIndices;
  for (const std::string& r : pass_.reductions) indices.push_back(r);
  for (const Operand& op : ops_) {
    for (const std::string& i : op.indices) {
      if (std::find(indices.begin(), indices.end(), i) == indices.end()) indices.push_back(i);
    }
  }
  for (const std::string& index : indices) {
    int64_t block = 0;
    for (const Operand& op : ops_) {
      if (!op.driver) continue;
      for (const LevelSpec& l : op.format.levels()) {
        if (l.expr.op == LevelExpr::Op::kIdentity ||
            op.indices[static_cast<size_t>(l.expr.dim)] != index)
          continue;
        SF_CHECK_CODE(block == 0 || block == l.expr.block, ErrorCode::kNotSupported)
            << "index '" << index << "' is blocked by " << block << " and by " << l.expr.block
            << " in different operands";
        block = l.expr.block;
      }
    }
    for (const Operand& op : ops_) {
      if (!op.driver || block == 0) continue;
      for (const LevelSpec& l : op.format.levels()) {
        SF_CHECK_CODE(l.expr.op != LevelExpr::Op::kIdentity ||
                          op.indices[static_cast<size_t>(l.expr.dim)] != index ||
                          levelIteration(l.type.kind).randomAccess(),
                      ErrorCode::kNotSupported)
            << "index '" << index << "' is blocked by " << block << " in one operand and iterated "
            << "whole by " << op.tensor;
      }
    }
    if (block > 0) {
      vars_.push_back({index, LevelExpr::Op::kDiv, block});
      vars_.push_back({index, LevelExpr::Op::kMod, block});
    } else {
      vars_.push_back({index, LevelExpr::Op::kIdentity, 1});
    }
  }
}

void NestBuilder::order() {
  std::vector<LoopVarInfo> info(vars_.size());
  for (size_t v = 0; v < vars_.size(); ++v) {
    info[v].name = vars_[v].name().substr(2);
    info[v].isOutputIndex = !isReduction(static_cast<int>(v));
    info[v].position = 2.0;
    if (vars_[v].part == LevelExpr::Op::kMod) info[v].position = 1.5;
  }
  std::vector<const Operand*> all;
  for (const Operand& op : ops_) all.push_back(&op);
  all.push_back(&target_);
  for (const Operand* op : all) {
    if (op->indices.size() < 2) continue;  // a vector's index order says nothing of locality
    const double denominator = std::max<double>(1.0, static_cast<double>(op->indices.size()) - 1);
    for (size_t d = 0; d < op->indices.size(); ++d) {
      for (size_t v = 0; v < vars_.size(); ++v) {
        if (vars_[v].index != op->indices[d] || vars_[v].part == LevelExpr::Op::kMod) continue;
        info[v].position = std::min(info[v].position, static_cast<double>(d) / denominator);
      }
    }
  }
  std::vector<std::pair<int, int>> edges;
  std::vector<std::vector<int>> chains;
  for (const Operand& op : ops_) {
    if (!op.driver) continue;
    std::vector<int> chain;
    for (int32_t l = 0; l < op.format.numLevels(); ++l) {
      const int v = levelVar(op, l);
      if (!chain.empty() && chain.back() != v) edges.emplace_back(chain.back(), v);
      if (chain.empty() || chain.back() != v) chain.push_back(v);
      // A level over a whole index that another operand blocks (csr B(k,j) beside bsr A(i,k))
      // is located from both parts: the levels below it wait for the in-block part too.
      const LevelExpr& e = op.format.level(l).expr;
      const std::string& index = op.indices[static_cast<size_t>(e.dim)];
      const int in = varId(index, LevelExpr::Op::kMod);
      if (e.op == LevelExpr::Op::kIdentity && varId(index, e.op) < 0 && in >= 0) {
        for (int32_t below = l + 1; below < op.format.numLevels(); ++below) {
          const int w = levelVar(op, below);
          if (w != v && w != in) edges.emplace_back(in, w);
        }
      }
    }
    chains.push_back(chain);
  }
  if (pass_.op == expr::ReduceOp::kMax) {  // the accumulator needs every reduction innermost
    for (size_t a = 0; a < vars_.size(); ++a) {
      for (size_t b = 0; b < vars_.size(); ++b) {
        if (!isReduction(static_cast<int>(a)) && isReduction(static_cast<int>(b))) {
          edges.emplace_back(static_cast<int>(a), static_cast<int>(b));
        }
      }
    }
  }
  // The schedule's reorder(): consecutive names present in this nest.
  int previous = -1;
  for (const std::string& name : requested_) {
    int id = -1;
    for (size_t v = 0; v < vars_.size(); ++v) {
      if (info[v].name == name) id = static_cast<int>(v);
    }
    if (id < 0) continue;
    namesUsed.insert(name);
    if (previous >= 0) edges.emplace_back(previous, id);
    previous = id;
  }
  if (assembly_.active()) {
    // An assembled output prefers its own level order (rows outermost) where the drivers'
    // storage orders allow it.
    std::vector<std::pair<int, int>> preferred = edges;
    int previousVar = -1;
    for (int32_t l = 0; l < target_.format.numLevels(); ++l) {
      const int v = levelVar(target_, l);
      if (v >= 0 && previousVar >= 0 && v != previousVar) preferred.emplace_back(previousVar, v);
      previousVar = v;
    }
    try {
      loopOrder_ = chooseLoopOrder(info, preferred, chains);
      return;
    } catch (const Error&) {
      // the drivers decide; openRow() says so if the rows then repeat
    }
  }
  try {
    loopOrder_ = chooseLoopOrder(info, edges, chains);
  } catch (const Error& e) {
    if (requested_.empty()) throw;
    std::string storage;
    for (const Operand& op : ops_) {
      if (!op.driver) continue;
      storage +=
          (storage.empty() ? "" : "; ") + op.tensor + " (" + op.format.toString() + ") walks";
      for (int32_t l = 0; l < op.format.numLevels(); ++l) {
        storage += " " + vars_[static_cast<size_t>(levelVar(op, l))].name().substr(2);
      }
    }
    std::string asked;
    for (const std::string& n : requested_) asked += (asked.empty() ? "" : ", ") + n;
    const std::string maxRule = pass_.op == expr::ReduceOp::kMax
                                    ? "the rule that a max reduction keeps its reduced loops "
                                      "innermost (one accumulator per "
                                      "output)"
                                : storage.empty() ? "the order the kernel's loops need"
                                                  : "";
    SF_FAIL(kInvalidArgument) << "reorder(" << asked << ") conflicts with "
                              << (storage.empty() ? maxRule
                                                  : "the storage order of the sparse operands: " +
                                                        storage + " in that order" +
                                                        (maxRule.empty() ? "" : "; " + maxRule));
  }
}

Expr NestBuilder::extentOf(const std::string& index) const {
  return ir::var(extentName(index), ScalarType::kI64);
}

Expr NestBuilder::loopExtent(const LoopVar& v) const {
  if (v.part == LevelExpr::Op::kDiv) {
    return ir::binary(ir::BinaryOp::kDiv, ir::add(extentOf(v.index), ir::intImm(v.block - 1)),
                      ir::intImm(v.block));
  }
  if (v.part == LevelExpr::Op::kMod) return ir::intImm(v.block);
  return extentOf(v.index);
}

LevelContext NestBuilder::levelContext(size_t k, int32_t l) const {
  const Operand& op = operandAt(k);
  const LevelSpec& spec = op.format.level(l);
  LevelContext ctx;
  ctx.type = spec.type;
  ctx.pos = {posArray(op.arrayPrefix, l), widthType(op.format.posWidth())};
  ctx.crd = {crdArray(op.arrayPrefix, l), widthType(op.format.crdWidth())};
  ctx.meta = {metaArray(op.arrayPrefix, l), ScalarType::kU8};
  ctx.slots = spec.type.k > 0 ? ir::intImm(spec.type.k)
                              : ir::var(slotsArray(op.arrayPrefix, l), ScalarType::kI64);
  const Expr dim = extentOf(op.indices[static_cast<size_t>(spec.expr.dim)]);
  switch (spec.expr.op) {
    case LevelExpr::Op::kIdentity: ctx.extent = dim; break;
    case LevelExpr::Op::kDiv:
      ctx.extent = ir::binary(ir::BinaryOp::kDiv, ir::add(dim, ir::intImm(spec.expr.block - 1)),
                              ir::intImm(spec.expr.block));
      break;
    case LevelExpr::Op::kMod: ctx.extent = ir::intImm(spec.expr.block); break;
  }
  ctx.parentPos = l == 0 ? ir::intImm(0) : positions_[k][static_cast<size_t>(l - 1)];
  return ctx;
}

Expr NestBuilder::levelCoordinate(size_t k, int32_t l) const {
  const Operand& op = operandAt(k);
  const LevelExpr& e = op.format.level(l).expr;
  const std::string& index = op.indices[static_cast<size_t>(e.dim)];
  const int whole = varId(index, LevelExpr::Op::kIdentity);
  if (whole >= 0) {
    if (!boundVars_.count(whole)) return nullptr;
    const Expr v = ir::var(vars_[static_cast<size_t>(whole)].name(), ScalarType::kI64);
    if (e.op == LevelExpr::Op::kDiv) return ir::binary(ir::BinaryOp::kDiv, v, ir::intImm(e.block));
    if (e.op == LevelExpr::Op::kMod) return ir::binary(ir::BinaryOp::kMod, v, ir::intImm(e.block));
    return v;
  }
  const int part = e.op == LevelExpr::Op::kIdentity ? -1 : varId(index, e.op);
  if (part >= 0 && vars_[static_cast<size_t>(part)].block == e.block) {
    return boundVars_.count(part)
               ? ir::var(vars_[static_cast<size_t>(part)].name(), ScalarType::kI64)
               : nullptr;
  }
  // Whole index (or another blocking) from a blocked pair: needs both parts.
  if (!boundIndices_.count(index)) return nullptr;
  const Expr v = ir::var("v_" + index, ScalarType::kI64);
  if (e.op == LevelExpr::Op::kDiv) return ir::binary(ir::BinaryOp::kDiv, v, ir::intImm(e.block));
  if (e.op == LevelExpr::Op::kMod) return ir::binary(ir::BinaryOp::kMod, v, ir::intImm(e.block));
  return v;
}

void NestBuilder::bindAvailable(std::vector<Stmt>& out) {
  for (size_t k = 0; k <= ops_.size(); ++k) {
    const Operand& op = operandAt(k);
    if (k == ops_.size() && patternOperand_ >= 0) continue;
    for (int32_t l = 0; l < op.format.numLevels(); ++l) {
      if (positions_[k][static_cast<size_t>(l)]) continue;
      const LevelIteration& it = levelIteration(op.format.level(l).type.kind);
      if (!it.randomAccess()) break;
      if (l > 0 && !positions_[k][static_cast<size_t>(l - 1)]) break;
      const Expr coord = levelCoordinate(k, l);
      if (!coord) break;
      const std::string name =
          "p" + std::to_string(nestId_) + "_" + std::to_string(k) + "_" + std::to_string(l);
      out.push_back(ir::let(name, it.locate(levelContext(k, l), coord)));
      positions_[k][static_cast<size_t>(l)] = ir::var(name, ScalarType::kI64);
    }
  }
}

Expr NestBuilder::bindIndex(int v, std::vector<Stmt>& out) {
  const LoopVar& lv = vars_[static_cast<size_t>(v)];
  if (lv.part == LevelExpr::Op::kIdentity) {
    boundIndices_.insert(lv.index);
    return nullptr;
  }
  const int blk = varId(lv.index, LevelExpr::Op::kDiv), in = varId(lv.index, LevelExpr::Op::kMod);
  if (!boundVars_.count(blk) || !boundVars_.count(in)) return nullptr;
  const Expr whole =
      ir::add(ir::mul(ir::var(vars_[static_cast<size_t>(blk)].name(), ScalarType::kI64),
                      ir::intImm(lv.block)),
              ir::var(vars_[static_cast<size_t>(in)].name(), ScalarType::kI64));
  out.push_back(ir::let("v_" + lv.index, whole));
  boundIndices_.insert(lv.index);
  return ir::lt(ir::var("v_" + lv.index, ScalarType::kI64), extentOf(lv.index));
}

Stmt NestBuilder::emit(int depth) {
  if (assembly_.active() && !rowOpen_ && parentKnown()) return openRow(depth);
  if (depth == accDepth_ && depth < static_cast<int>(loopOrder_.size()))
    return emitAccumulated(depth);
  if (depth == static_cast<int>(loopOrder_.size())) return innermost();
  return emitLoop(depth);
}

Stmt NestBuilder::emitLoop(int depth) {
  const int v = loopOrder_[static_cast<size_t>(depth)];
  const LoopVar& lv = vars_[static_cast<size_t>(v)];
  const auto levels = driverLevels(v);
  if (levels.size() > 1) return emitCoIteration(depth, v, levels);
  const std::optional<std::pair<size_t, int32_t>> driving =
      levels.empty() ? std::nullopt : std::optional(levels[0]);
  std::vector<Stmt> inner;
  LevelLoop loop;
  std::string loopName = lv.name();
  bool unique = true;
  if (driving) {
    const auto [k, l] = *driving;
    const LevelSpec& spec = ops_[k].format.level(l);
    const LevelIteration& it = levelIteration(spec.type.kind);
    unique = it.uniqueCoordinates(spec.type);
    loopName = "q" + std::to_string(nestId_) + "_" + std::to_string(k) + "_" + std::to_string(l);
    loop = it.iterate(levelContext(k, l), ir::var(loopName, ScalarType::kI64));
    if (loop.singleIteration) inner.push_back(ir::let(loopName, loop.position));
    inner.push_back(ir::let(lv.name(), loop.coordinate));
    positions_[k][static_cast<size_t>(l)] = ir::var(loopName, ScalarType::kI64);
  }
  noteOuterLoop(v, unique);
  boundVars_.insert(v);
  const Expr guard = bindIndex(v, inner);
  bindAvailable(inner);
  Stmt body = emit(depth + 1);
  if (guard) body = ir::ifThen(guard, body);
  if (loop.skip) body = ir::ifThen(ir::unary(ir::UnaryOp::kNot, loop.skip), body);
  inner.push_back(body);
  Stmt result = ir::block(std::move(inner));
  if (driving && loop.singleIteration) return result;
  ir::LoopKind kind = ir::LoopKind::kSerial;
  ir::LoopAnnotations notes;
  notes.label = lv.name().substr(2);
  notes.disjointWrites = unique && !isReduction(v);
  if (depth == 0 && parallel_ && notes.disjointWrites) kind = ir::LoopKind::kParallel;
  if (depth + 1 == static_cast<int>(loopOrder_.size()) && !driving && !accName_.empty() &&
      countName_.empty() && !assembly_.active()) {
    kind = ir::LoopKind::kVectorized;  // a dense reduction into the accumulator
    notes.reduction = accName_;
  }
  if (driving) {
    Stmt walk = ir::forLoop(loopName, ScalarType::kI64, loop.begin, loop.end, result, kind, notes);
    // Absent at an outer co-iterated level: its children are not there to walk.
    const Expr present = present_[driving->first];
    return present && !isConstant(present, true) ? ir::ifThen(present, walk) : walk;
  }
  return ir::forLoop(loopName, ScalarType::kI64, ir::intImm(0), loopExtent(lv), result, kind,
                     notes);
}

Stmt NestBuilder::emitAccumulated(int depth) {
  const std::string acc = "acc" + std::to_string(nestId_);
  const double init =
      pass_.op == expr::ReduceOp::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
  accName_ = acc;
  // A max whose reductions walk a sparse level counts the entries it visits.
  bool sparse = false;
  for (const Operand& op : ops_) {
    for (int32_t l = 0; op.driver && l < op.format.numLevels(); ++l) {
      if (levelIteration(op.format.level(l).type.kind).randomAccess()) continue;
      const int v = levelVar(op, l);
      sparse =
          sparse || std::find(loopOrder_.begin() + depth, loopOrder_.end(), v) != loopOrder_.end();
    }
  }
  const bool max = pass_.op == expr::ReduceOp::kMax && sparse;
  if (max) countName_ = "cnt" + std::to_string(nestId_);
  if (pass_.op == expr::ReduceOp::kSum && !assembly_.active()) {
    // Factors that use no index of the accumulated loops multiply the finished sum.
    std::set<std::string> inner;
    for (size_t d = static_cast<size_t>(depth); d < loopOrder_.size(); ++d)
      inner.insert(vars_[static_cast<size_t>(loopOrder_[d])].index);
    std::vector<const expr::Expr*> factors;
    productFactors(*pass_.body, factors);
    for (const expr::Expr* f : factors) {
      bool varies = false;
      for (const expr::Access* a : allAccesses(*f)) {
        for (const std::string& index : a->indices) varies = varies || inner.count(index) > 0;
      }
      (varies ? innerFactors_ : outerFactors_).push_back(f);
    }
    if (outerFactors_.empty() || innerFactors_.empty()) {
      innerFactors_.clear();
      outerFactors_.clear();
    }
  }
  Stmt loops = emitLoop(depth);
  accName_.clear();
  countName_.clear();
  Expr sum = ir::var(acc, compute_);
  if (!outerFactors_.empty()) sum = translateProduct(outerFactors_, sum);
  innerFactors_.clear();
  outerFactors_.clear();
  if (max) {
    // Fewer entries visited than the reductions' extent: the implicit zeros join the max.
    Expr total = ir::intImm(1);
    for (size_t d = static_cast<size_t>(depth); d < loopOrder_.size(); ++d)
      total = ir::mul(total, loopExtent(vars_[static_cast<size_t>(loopOrder_[d])]));
    const std::string cnt = "cnt" + std::to_string(nestId_);
    loops =
        ir::block({ir::let(cnt, ir::intImm(0)), loops,
                   ir::ifThen(ir::lt(ir::var(cnt, ScalarType::kI64), total),
                              ir::assign(acc, ir::UpdateOp::kMax, ir::floatImm(0.0, compute_)))});
  }
  if (assembly_.active()) {  // an entry only where some term was visited
    const std::string hit = "hit" + std::to_string(nestId_);
    return ir::block({ir::let(acc, ir::floatImm(init, compute_)), ir::let(hit, boolConstant(false)),
                      loops,
                      ir::ifThen(ir::var(hit, ScalarType::kBool),
                                 assembly_.write(outputCoordinates(), ir::var(acc, compute_)))});
  }
  return ir::block({ir::let(acc, ir::floatImm(init, compute_)), loops,
                    ir::store(targetArray(), targetPosition(), ir::UpdateOp::kAdd,
                              ir::cast(sum, target_.valueType))});
}

ir::UpdateOp NestBuilder::updateOp() const {
  return pass_.op == expr::ReduceOp::kMax ? ir::UpdateOp::kMax : ir::UpdateOp::kAdd;
}

Expr NestBuilder::targetPosition() const {
  const auto& pos =
      positions_[patternOperand_ >= 0 ? static_cast<size_t>(patternOperand_) : ops_.size()];
  if (pos.empty()) return ir::intImm(0);
  SF_ICHECK(pos.back() != nullptr) << "output position of " << target_.tensor << " unknown";
  return pos.back();
}

Stmt NestBuilder::innermost() {
  Stmt update;
  if (!accName_.empty()) {
    update = ir::assign(accName_, updateOp(), value());
    if (!countName_.empty())
      update = ir::block({update, ir::assign(countName_, ir::UpdateOp::kAdd, ir::intImm(1))});
    if (assembly_.active()) {
      update = ir::block(
          {assembly_.symbolic() ? nullptr : update,
           ir::assign("hit" + std::to_string(nestId_), ir::UpdateOp::kSet, boolConstant(true))});
    }
  } else if (assembly_.active()) {
    update = assembly_.write(outputCoordinates(), assembly_.symbolic() ? nullptr : value());
  } else {
    update = ir::store(targetArray(), targetPosition(), updateOp(),
                       ir::cast(value(), target_.valueType));
  }
  // After co-iteration: only where the body may be nonzero for the operands present here. A
  // list's writes also skip a zero-fill operand's padding (bsr blocks, ell slots), which is no
  // entry: a list has no pattern to copy, its entries are the writes.
  const Expr where =
      nonzeroWhere([&](size_t k) { return assembly_.list() ? entryHere(k) : present_[k]; });
  return isConstant(where, true) ? update : ir::ifThen(where, update);
}

}  // namespace sparseflow::lower::detail

namespace sparseflow::lower {

ir::Stmt buildNest(const NestInput& input, std::string* orderText, std::set<std::string>* namesUsed,
                   NestInfo* info) {
  detail::NestBuilder builder(input.pass, input.operands, input.target, input.scalars,
                              input.compute, input.parallel, input.nestId, input.requestedOrder,
                              input.assembly, input.hashWorkspace, input.listOutput);
  ir::Stmt nest = builder.build(orderText);
  namesUsed->insert(builder.namesUsed.begin(), builder.namesUsed.end());
  if (info != nullptr) info->workspaceExtent = builder.workspaceExtent;
  return nest;
}

}  // namespace sparseflow::lower
