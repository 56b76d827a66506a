// OutputAssembly (see assembly.h): the statements of the two phases for one nest.
#include "lower/assembly.h"

#include "support/check.h"

namespace sparseflow::lower {

using ir::Expr;
using ir::ScalarType;
using ir::Stmt;

OutputAssembly::OutputAssembly(AssemblyPhase phase, const Operand& target, int nestId,
                               ScalarType compute)
    : phase_(phase), target_(target), compute_(compute) {
  if (!active()) return;
  level_ = target.format.numLevels() - 1;
  const std::string n = std::to_string(nestId), l = std::to_string(level_);
  count_ = "nnz" + n;
  cursor_ = "w" + n;
  pos_ = {target.arrayPrefix + "_pos" + l, widthType(target.format.posWidth())};
  crd_ = {target.arrayPrefix + "_crd" + l, widthType(target.format.crdWidth())};
  vals_ = {target.arrayPrefix + "_vals", target.valueType};
  wsValues_ = {"ws" + n + "_vals", compute};
  wsMarks_ = {"ws" + n + "_mark", ScalarType::kU8};
  wsList_ = {"ws" + n + "_list", ScalarType::kI64};
}

void OutputAssembly::beginRow(bool append) {
  append_ = append;
  usedWorkspace_ = usedWorkspace_ || !append;
}

Stmt OutputAssembly::row(const Expr& parent, Stmt rest) const {
  const Expr count = ir::var(count_, ScalarType::kI64);
  const Expr rowBegin = ir::cast(ir::load(pos_, parent), ScalarType::kI64);
  if (append_ && !symbolic()) return ir::block({ir::let(cursor_, rowBegin), rest});
  std::vector<Stmt> out{ir::let(count_, ir::intImm(0)), rest};
  if (symbolic()) {
    out.push_back(ir::store(pos_, ir::add(parent, ir::intImm(1)), ir::UpdateOp::kSet,
                            ir::cast(count, pos_.element)));
    if (!append_) {  // clear the marks of the coordinates seen
      const Expr t = ir::var("t_mark", ScalarType::kI64);
      out.push_back(ir::forLoop("t_mark", ScalarType::kI64, ir::intImm(0), count,
                                ir::store(wsMarks_, ir::load(wsList_, t), ir::UpdateOp::kSet,
                                          ir::intImm(0, ScalarType::kU8))));
    }
    return ir::block(std::move(out));
  }
  // Numeric through the workspace: sort the coordinates seen, write them out, zero the workspace.
  out.push_back(ir::sortRange(wsList_, ir::intImm(0), count));
  out.push_back(ir::let("row_begin", rowBegin));
  const Expr t = ir::var("t_flush", ScalarType::kI64);
  const Expr j = ir::var("j_flush", ScalarType::kI64);
  const Expr at = ir::add(ir::var("row_begin", ScalarType::kI64), t);
  out.push_back(ir::forLoop(
      "t_flush", ScalarType::kI64, ir::intImm(0), count,
      ir::block({ir::let("j_flush", ir::load(wsList_, t)),
                 ir::store(crd_, at, ir::UpdateOp::kSet, ir::cast(j, crd_.element)),
                 ir::store(vals_, at, ir::UpdateOp::kSet,
                           ir::cast(ir::load(wsValues_, j), vals_.element)),
                 ir::store(wsValues_, j, ir::UpdateOp::kSet, ir::floatImm(0.0, compute_)),
                 ir::store(wsMarks_, j, ir::UpdateOp::kSet, ir::intImm(0, ScalarType::kU8))})));
  return ir::block(std::move(out));
}

Stmt OutputAssembly::write(const Expr& coord, const Expr& value) const {
  if (append_) {
    if (symbolic()) return ir::assign(count_, ir::UpdateOp::kAdd, ir::intImm(1));
    const Expr at = ir::var(cursor_, ScalarType::kI64);
    return ir::block({ir::store(crd_, at, ir::UpdateOp::kSet, ir::cast(coord, crd_.element)),
                      ir::store(vals_, at, ir::UpdateOp::kSet, ir::cast(value, vals_.element)),
                      ir::assign(cursor_, ir::UpdateOp::kAdd, ir::intImm(1))});
  }
  const Stmt firstVisit = ir::ifThen(
      ir::binary(ir::BinaryOp::kEq, ir::load(wsMarks_, coord), ir::intImm(0, ScalarType::kU8)),
      ir::block({ir::store(wsMarks_, coord, ir::UpdateOp::kSet, ir::intImm(1, ScalarType::kU8)),
                 ir::store(wsList_, ir::var(count_, ScalarType::kI64), ir::UpdateOp::kSet, coord),
                 ir::assign(count_, ir::UpdateOp::kAdd, ir::intImm(1))}));
  if (symbolic()) return firstVisit;
  return ir::block({firstVisit, ir::store(wsValues_, coord, ir::UpdateOp::kAdd, value)});
}

Stmt OutputAssembly::withWorkspaces(Stmt nest, const Expr& extent) const {
  if (!usedWorkspace_) return nest;
  Stmt out = ir::allocate(wsList_, extent, std::move(nest), true);
  out = ir::allocate(wsMarks_, extent, std::move(out), true);
  if (!symbolic()) out = ir::allocate(wsValues_, extent, std::move(out), true);
  return out;
}

}  // namespace sparseflow::lower
