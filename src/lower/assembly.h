// Assembly of a sparse output with a pattern of its own (SpGEMM into csr, sparse add), in two
// phases compiled from the same nest: the symbolic phase counts the entries under each parent of
// the output's last (compressed) level into pos[p + 1]; the runtime sums the counts and allocates;
// the numeric phase writes coordinates and values. A row whose coordinates arrive in increasing
// order, once each, is appended directly; any other row goes through a per-thread dense
// workspace (values, a mark per coordinate, the list of coordinates seen), sorted and flushed at
// the end of the row, which leaves the workspace zeroed for the next one. When the coordinate's
// extent is too large for a dense workspace per thread (hypersparse products), a hash workspace
// holds the row instead: open addressing with linear probing over `kHashCapacity` slots (keys are
// coordinate + 1, 0 for an empty slot), the slots used listed so that clearing needs no probing.
//
// When the loops reach an output row more than once (a coo or bsr driver, a reduction outside the
// row), rows cannot be assembled one at a time; the output is then collected as a list instead
// (insertion with a final sort): the symbolic phase counts the writes into pos[1] of the list's
// first level, the numeric phase stores each write's coordinates (one array per output dimension)
// and value in the order the loops reach them, repeats included, and the runtime sorts the list
// and sums repeated coordinates into the requested format (runtime/listed_output.h). The nest runs
// on one thread (one cursor).
#pragma once

#include "ir/ir.h"
#include "lower/nest_builder.h"

namespace sparseflow::lower {

/// The runtime value (an extent slot after the index variables, see LoweredKernel) giving the
/// hash workspace's number of slots: a power of two at least twice the row's possible entries.
inline constexpr const char* kHashCapacity = "sf_ws_capacity";

class OutputAssembly {
 public:
  OutputAssembly(AssemblyPhase phase, const Operand& target, int nestId, ir::ScalarType compute,
                 bool hash, bool list);

  bool active() const { return phase_ != AssemblyPhase::kNone; }
  bool symbolic() const { return phase_ == AssemblyPhase::kSymbolic; }
  /// Collected as a list of writes (the target is the list: listFormat()), not row by row.
  bool list() const { return list_; }
  /// The level assembled (the target's last; a list: its first, the whole nest is one "row").
  int32_t level() const { return level_; }

  /// The assembled coordinate's extent (set before the rows are built).
  void setExtent(ir::Expr extent) { extent_ = std::move(extent); }
  /// Starts a row: `append` when its coordinates come in order, once each.
  void beginRow(bool append);
  /// The row's statements around `rest` (the loops inside the row), for parent position `parent`.
  ir::Stmt row(const ir::Expr& parent, ir::Stmt rest) const;
  /// Records `value` at the target coordinates `coords` (one per dimension; rows use the
  /// assembled level's) of the current row (value unused when symbolic).
  ir::Stmt write(const std::vector<ir::Expr>& coords, const ir::Expr& value) const;
  /// The nest with its per-thread workspaces of `extent` elements (or the hash capacity), if a
  /// row used them.
  ir::Stmt withWorkspaces(ir::Stmt nest, const ir::Expr& extent) const;
  /// Whether some row went through the workspace (rather than being appended in order).
  bool usedWorkspace() const { return usedWorkspace_; }

 private:
  AssemblyPhase phase_;
  const Operand& target_;
  int32_t level_ = 0;
  ir::ScalarType compute_;
  std::string count_, cursor_;             // entries in the row; next write position
  ir::Array pos_, crd_, vals_;             // the target's arrays
  std::vector<ir::Array> listCrd_;         // a list's coordinate array per level
  std::vector<int32_t> listDims_;          // the dimension each list level stores
  ir::Array wsValues_, wsMarks_, wsList_;  // the workspace
  ir::Array wsKeys_, wsSlots_;             // the hash workspace's keys and slots used
  ir::Expr extent_;                        // the assembled coordinate's extent
  bool hash_ = false;
  bool list_ = false;
  bool append_ = true;
  bool usedWorkspace_ = false;
  mutable int probes_ = 0;  // numbers the probe variables of the writes

  /// Statements that leave `slot` (a fresh variable) at coord's slot of the hash workspace.
  std::vector<ir::Stmt> probe(const std::string& slot, const ir::Expr& coord) const;
};

}  // namespace sparseflow::lower
