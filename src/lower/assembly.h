// Assembly of a sparse output with a pattern of its own (SpGEMM into csr, sparse add), in two
// phases compiled from the same nest: the symbolic phase counts the entries under each parent of
// the output's last (compressed) level into pos[p + 1]; the runtime sums the counts and allocates;
// the numeric phase writes coordinates and values. A row whose coordinates arrive in increasing
// order, once each, is appended directly; any other row goes through a per-thread dense
// workspace (values, a mark per coordinate, the list of coordinates seen), sorted and flushed at
// the end of the row, which leaves the workspace zeroed for the next one.
#pragma once

#include "ir/ir.h"
#include "lower/nest_builder.h"

namespace sparseflow::lower {

class OutputAssembly {
 public:
  OutputAssembly(AssemblyPhase phase, const Operand& target, int nestId, ir::ScalarType compute);

  bool active() const { return phase_ != AssemblyPhase::kNone; }
  bool symbolic() const { return phase_ == AssemblyPhase::kSymbolic; }
  /// The level assembled (the target's last).
  int32_t level() const { return level_; }

  /// Starts a row: `append` when its coordinates come in order, once each.
  void beginRow(bool append);
  /// The row's statements around `rest` (the loops inside the row), for parent position `parent`.
  ir::Stmt row(const ir::Expr& parent, ir::Stmt rest) const;
  /// Records `value` at coordinate `coord` of the current row (value unused when symbolic).
  ir::Stmt write(const ir::Expr& coord, const ir::Expr& value) const;
  /// The nest with its per-thread workspaces of `extent` elements, if a row used them.
  ir::Stmt withWorkspaces(ir::Stmt nest, const ir::Expr& extent) const;

 private:
  AssemblyPhase phase_;
  const Operand& target_;
  int32_t level_ = 0;
  ir::ScalarType compute_;
  std::string count_, cursor_;             // entries in the row; next write position
  ir::Array pos_, crd_, vals_;             // the target's arrays
  ir::Array wsValues_, wsMarks_, wsList_;  // the workspace
  bool append_ = true;
  bool usedWorkspace_ = false;
};

}  // namespace sparseflow::lower
