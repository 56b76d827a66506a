// OutputAssembly (see assembly.h): the statements of the two phases for one nest.
#include "lower/assembly.h"

#include "lower/array_names.h"
#include "support/check.h"

namespace sparseflow::lower {

using ir::Expr;
using ir::ScalarType;
using ir::Stmt;

OutputAssembly::OutputAssembly(AssemblyPhase phase, const Operand& target, int nestId,
                               ScalarType compute, bool hash, bool list)
    : phase_(phase), target_(target), compute_(compute), hash_(hash && !list), list_(list) {
  if (!active()) return;
  const std::string n = std::to_string(nestId);
  count_ = "nnz" + n;
  cursor_ = "w" + n;
  if (list_) {
    level_ = 0;
    pos_ = {posArray(target.arrayPrefix, 0), widthType(target.format.posWidth())};
    for (int32_t l = 0; l < target.format.numLevels(); ++l) {
      listCrd_.push_back({crdArray(target.arrayPrefix, l), widthType(target.format.crdWidth())});
      listDims_.push_back(target.format.level(l).expr.dim);
    }
    vals_ = {valuesArray(target.arrayPrefix), target.valueType};
    return;
  }
  level_ = target.format.numLevels() - 1;
  pos_ = {posArray(target.arrayPrefix, level_), widthType(target.format.posWidth())};
  crd_ = {crdArray(target.arrayPrefix, level_), widthType(target.format.crdWidth())};
  vals_ = {valuesArray(target.arrayPrefix), target.valueType};
  const std::string ws = workspacePrefix(nestId);
  wsValues_ = {ws + "_vals", compute};
  wsMarks_ = {ws + "_mark", ScalarType::kU8};
  wsList_ = {ws + "_list", ScalarType::kI64};
  wsKeys_ = {ws + "_keys", ScalarType::kI64};
  wsSlots_ = {ws + "_slots", ScalarType::kI64};
}

std::vector<Stmt> OutputAssembly::probe(const std::string& slot, const Expr& coord) const {
  // Hash the coordinate, then probe linearly to its key or an empty slot.
  const Expr mask = ir::sub(ir::var(kHashCapacity, ScalarType::kI64), ir::intImm(1));
  const Expr key = ir::add(coord, ir::intImm(1));
  const Expr h = ir::var(slot, ScalarType::kI64);
  const Expr stored = ir::load(wsKeys_, h);
  // Multiplicative hashing of the low 32 bits (an odd 31-bit constant: the product stays below
  // 2^63, no signed overflow), its middle bits plus the high half of the coordinate.
  const Expr low = ir::binary(ir::BinaryOp::kBitAnd, coord, ir::intImm(0xFFFFFFFFLL));
  const Expr mixed = ir::add(
      ir::binary(ir::BinaryOp::kShr, ir::mul(low, ir::intImm(1327217885LL)), ir::intImm(16)),
      ir::binary(ir::BinaryOp::kShr, coord, ir::intImm(32)));
  const Expr start = ir::binary(ir::BinaryOp::kBitAnd, mixed, mask);
  return {ir::let(slot, start),
          ir::whileLoop(
              ir::binary(ir::BinaryOp::kAnd, ir::binary(ir::BinaryOp::kNe, stored, ir::intImm(0)),
                         ir::binary(ir::BinaryOp::kNe, stored, key)),
              ir::assign(slot, ir::UpdateOp::kSet,
                         ir::binary(ir::BinaryOp::kBitAnd, ir::add(h, ir::intImm(1)), mask)))};
}

void OutputAssembly::beginRow(bool append) {
  append_ = append;
  usedWorkspace_ = usedWorkspace_ || !append;
}

Stmt OutputAssembly::row(const Expr& parent, Stmt rest) const {
  const Expr count = ir::var(count_, ScalarType::kI64);
  if (list_) {  // the whole nest: count the writes, or write them from the list's start
    if (!symbolic()) return ir::block({ir::let(cursor_, ir::intImm(0)), rest});
    return ir::block(
        {ir::let(count_, ir::intImm(0)), rest,
         ir::store(pos_, ir::intImm(1), ir::UpdateOp::kSet, ir::cast(count, pos_.element))});
  }
  const Expr rowBegin = ir::cast(ir::load(pos_, parent), ScalarType::kI64);
  if (append_ && !symbolic()) return ir::block({ir::let(cursor_, rowBegin), rest});
  std::vector<Stmt> out{ir::let(count_, ir::intImm(0)), rest};
  if (symbolic()) {
    out.push_back(ir::store(pos_, ir::add(parent, ir::intImm(1)), ir::UpdateOp::kSet,
                            ir::cast(count, pos_.element)));
    if (!append_) {  // clear the marks (or keys) of the coordinates seen
      const Expr t = ir::var("t_mark", ScalarType::kI64);
      out.push_back(ir::forLoop(
          "t_mark", ScalarType::kI64, ir::intImm(0), count,
          hash_ ? ir::store(wsKeys_, ir::load(wsSlots_, t), ir::UpdateOp::kSet, ir::intImm(0))
                : ir::store(wsMarks_, ir::load(wsList_, t), ir::UpdateOp::kSet,
                            ir::intImm(0, ScalarType::kU8))));
    }
    return ir::block(std::move(out));
  }
  if (hash_) {
    // Numeric through the hash workspace: sort the coordinates seen, find each one's slot and
    // write it out; then clear the slots used (keys and values), listed as they were taken.
    out.push_back(ir::sortRange(wsList_, ir::intImm(0), count));
    out.push_back(ir::let("row_begin", rowBegin));
    const Expr t = ir::var("t_flush", ScalarType::kI64);
    const Expr j = ir::var("j_flush", ScalarType::kI64);
    const Expr h = ir::var("h_flush", ScalarType::kI64);
    const Expr at = ir::add(ir::var("row_begin", ScalarType::kI64), t);
    std::vector<Stmt> flush{ir::let("j_flush", ir::load(wsList_, t))};
    for (Stmt& s : probe("h_flush", j)) flush.push_back(std::move(s));
    flush.push_back(ir::store(crd_, at, ir::UpdateOp::kSet, ir::cast(j, crd_.element)));
    flush.push_back(
        ir::store(vals_, at, ir::UpdateOp::kSet, ir::cast(ir::load(wsValues_, h), vals_.element)));
    out.push_back(ir::forLoop("t_flush", ScalarType::kI64, ir::intImm(0), count,
                              ir::block(std::move(flush))));
    const Expr u = ir::var("t_clear", ScalarType::kI64);
    const Expr used = ir::load(wsSlots_, u);
    out.push_back(ir::forLoop(
        "t_clear", ScalarType::kI64, ir::intImm(0), count,
        ir::block({ir::store(wsKeys_, used, ir::UpdateOp::kSet, ir::intImm(0)),
                   ir::store(wsValues_, used, ir::UpdateOp::kSet, ir::floatImm(0.0, compute_))})));
    return ir::block(std::move(out));
  }
  // Numeric through the workspace: the coordinates seen in increasing order, written out, the
  // workspace zeroed behind them. A row that holds more than a sixteenth of the extent is read
  // off the marks in one pass over the extent; a shorter one sorts its list (n log n < extent).
  out.push_back(ir::let("row_begin", rowBegin));
  const Expr t = ir::var("t_flush", ScalarType::kI64);
  const Expr j = ir::var("j_flush", ScalarType::kI64);
  const Expr at = ir::add(ir::var("row_begin", ScalarType::kI64), t);
  auto flushOne = [&](Stmt next) {
    std::vector<Stmt> body{
        ir::store(crd_, at, ir::UpdateOp::kSet, ir::cast(j, crd_.element)),
        ir::store(vals_, at, ir::UpdateOp::kSet, ir::cast(ir::load(wsValues_, j), vals_.element)),
        ir::store(wsValues_, j, ir::UpdateOp::kSet, ir::floatImm(0.0, compute_)),
        ir::store(wsMarks_, j, ir::UpdateOp::kSet, ir::intImm(0, ScalarType::kU8))};
    if (next) body.push_back(std::move(next));
    return ir::block(std::move(body));
  };
  const Stmt sorted = ir::block(
      {ir::sortRange(wsList_, ir::intImm(0), count),
       ir::forLoop("t_flush", ScalarType::kI64, ir::intImm(0), count,
                   ir::block({ir::let("j_flush", ir::load(wsList_, t)), flushOne(nullptr)}))});
  const Stmt scanned = ir::block(
      {ir::let("t_flush", ir::intImm(0)),
       ir::forLoop(
           "j_flush", ScalarType::kI64, ir::intImm(0), extent_,
           ir::ifThen(
               ir::binary(ir::BinaryOp::kNe, ir::load(wsMarks_, j), ir::intImm(0, ScalarType::kU8)),
               flushOne(ir::assign("t_flush", ir::UpdateOp::kAdd, ir::intImm(1)))))});
  out.push_back(ir::ifThen(ir::binary(ir::BinaryOp::kLe, ir::mul(count, ir::intImm(16)), extent_),
                           sorted, scanned));
  return ir::block(std::move(out));
}

Stmt OutputAssembly::write(const std::vector<Expr>& coords, const Expr& value) const {
  if (list_) {
    if (symbolic()) return ir::assign(count_, ir::UpdateOp::kAdd, ir::intImm(1));
    const Expr at = ir::var(cursor_, ScalarType::kI64);
    std::vector<Stmt> out;
    for (size_t l = 0; l < listCrd_.size(); ++l) {
      const Expr& c = coords.at(static_cast<size_t>(listDims_[l]));
      out.push_back(
          ir::store(listCrd_[l], at, ir::UpdateOp::kSet, ir::cast(c, listCrd_[l].element)));
    }
    out.push_back(ir::store(vals_, at, ir::UpdateOp::kSet, ir::cast(value, vals_.element)));
    out.push_back(ir::assign(cursor_, ir::UpdateOp::kAdd, ir::intImm(1)));
    return ir::block(std::move(out));
  }
  const Expr& coord = coords.at(static_cast<size_t>(target_.format.level(level_).expr.dim));
  if (append_) {
    if (symbolic()) return ir::assign(count_, ir::UpdateOp::kAdd, ir::intImm(1));
    const Expr at = ir::var(cursor_, ScalarType::kI64);
    return ir::block({ir::store(crd_, at, ir::UpdateOp::kSet, ir::cast(coord, crd_.element)),
                      ir::store(vals_, at, ir::UpdateOp::kSet, ir::cast(value, vals_.element)),
                      ir::assign(cursor_, ir::UpdateOp::kAdd, ir::intImm(1))});
  }
  if (hash_) {
    const std::string slot = "h" + std::to_string(probes_++);
    const Expr h = ir::var(slot, ScalarType::kI64);
    std::vector<Stmt> out = probe(slot, coord);
    out.push_back(ir::ifThen(
        ir::binary(ir::BinaryOp::kEq, ir::load(wsKeys_, h), ir::intImm(0)),
        ir::block({ir::store(wsKeys_, h, ir::UpdateOp::kSet, ir::add(coord, ir::intImm(1))),
                   ir::store(wsList_, ir::var(count_, ScalarType::kI64), ir::UpdateOp::kSet, coord),
                   ir::store(wsSlots_, ir::var(count_, ScalarType::kI64), ir::UpdateOp::kSet, h),
                   ir::assign(count_, ir::UpdateOp::kAdd, ir::intImm(1))})));
    if (!symbolic()) out.push_back(ir::store(wsValues_, h, ir::UpdateOp::kAdd, value));
    return ir::block(std::move(out));
  }
  // Without a branch (whether a coordinate is new is data-dependent, a mispredict in ~1 of 10
  // products of an SpGEMM row): the coordinate always goes to the list's next slot (the list has
  // one spare), which only a first visit keeps by counting it; then it is marked.
  const Stmt firstVisit =
      ir::block({ir::store(wsList_, ir::var(count_, ScalarType::kI64), ir::UpdateOp::kSet, coord),
                 ir::assign(count_, ir::UpdateOp::kAdd,
                            ir::cast(ir::binary(ir::BinaryOp::kEq, ir::load(wsMarks_, coord),
                                                ir::intImm(0, ScalarType::kU8)),
                                     ScalarType::kI64)),
                 ir::store(wsMarks_, coord, ir::UpdateOp::kSet, ir::intImm(1, ScalarType::kU8))});
  if (symbolic()) return firstVisit;
  return ir::block({firstVisit, ir::store(wsValues_, coord, ir::UpdateOp::kAdd, value)});
}

Stmt OutputAssembly::withWorkspaces(Stmt nest, const Expr& extent) const {
  if (!usedWorkspace_) return nest;
  if (hash_) {
    const Expr capacity = ir::var(kHashCapacity, ScalarType::kI64);
    Stmt out = ir::allocate(wsSlots_, capacity, std::move(nest), true);
    out = ir::allocate(wsList_, capacity, std::move(out), true);
    out = ir::allocate(wsKeys_, capacity, std::move(out), true);
    if (!symbolic()) out = ir::allocate(wsValues_, capacity, std::move(out), true);
    return out;
  }
  // The list has a spare slot: write() stores every coordinate at its end before counting it.
  Stmt out = ir::allocate(wsList_, ir::add(extent, ir::intImm(1)), std::move(nest), true);
  out = ir::allocate(wsMarks_, extent, std::move(out), true);
  if (!symbolic()) out = ir::allocate(wsValues_, extent, std::move(out), true);
  return out;
}

}  // namespace sparseflow::lower
