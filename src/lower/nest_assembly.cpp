// NestBuilder: the rows of a sparse output assembled in two phases (lower/assembly.h).
#include "lower/nest_builder_impl.h"
#include "support/check.h"

namespace sparseflow::lower::detail {

void NestBuilder::noteOuterLoop(int v, bool unique) {
  if (!assembly_.active() || rowOpen_) return;
  if (isReduction(v) || !unique || v == assembledVar_) outerRepeats_ = true;
}

Stmt NestBuilder::openRow(int depth) {
  if (assembly_.list()) {  // the whole nest is one list, in any loop order
    rowOpen_ = true;
    return assembly_.row(ir::intImm(0), emit(depth));
  }
  const int32_t level = assembly_.level();
  SF_CHECK_CODE(!outerRepeats_, ErrorCode::kNotSupported)
      << "output " << target_.tensor << " (" << target_.format.toString() << "): the loops ("
      << orderText_ << ") reach each of its rows more than once, so it cannot be assembled "
      << "row by row; bind the inputs in the output's level order (e.g. csr inputs for a csr "
      << "output, csc for csc) or bind the output as dense";
  rowOpen_ = true;
  // Appended when the assembled coordinate is the next loop, walked in increasing order once
  // each, and every loop after it reduces.
  bool append = depth < static_cast<int>(loopOrder_.size()) &&
                loopOrder_[static_cast<size_t>(depth)] == assembledVar_;
  for (size_t d = static_cast<size_t>(depth) + 1; append && d < loopOrder_.size(); ++d)
    append = isReduction(loopOrder_[d]);
  if (append) {
    const auto levels = driverLevels(assembledVar_);
    if (levels.size() == 1) {
      const LevelType& type = ops_[levels[0].first].format.level(levels[0].second).type;
      append = levelIteration(type.kind).coIterable(type);
    }
  }
  assembly_.beginRow(append);
  const Expr parent =
      level == 0 ? ir::intImm(0) : positions_[ops_.size()][static_cast<size_t>(level - 1)];
  return assembly_.row(parent, emit(depth));
}

bool NestBuilder::parentKnown() const {
  const int32_t level = assembly_.level();
  return level == 0 || positions_[ops_.size()][static_cast<size_t>(level - 1)] != nullptr;
}

std::vector<Expr> NestBuilder::outputCoordinates() const {
  std::vector<Expr> coords;
  for (const std::string& index : target_.indices) {
    // A whole loop variable, or the whole index bound from its block and in-block parts.
    const int whole = varId(index, LevelExpr::Op::kIdentity);
    coords.push_back(ir::var(whole >= 0 ? vars_[static_cast<size_t>(whole)].name() : "v_" + index,
                             ScalarType::kI64));
  }
  return coords;
}

}  // namespace sparseflow::lower::detail
