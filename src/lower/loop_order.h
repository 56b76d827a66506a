// Chooses the order of a loop nest's variables: every sparse operand's levels in storage order
// (a cycle between operands is reported), then, among the free choices, continue the operand
// being walked, prefer variables that index their tensors early (row-major locality), and prefer
// output indices (so the outer loop may run in parallel).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sparseflow::lower {

struct LoopVarInfo {
  std::string name;
  double position = 0;  ///< smallest relative position (0 = outermost) in the tensors it indexes
  bool isOutputIndex = false;
};

/// `edges` are (before, after) pairs over indices into `vars`; `chains` the per-operand level
/// sequences (for the "continue the operand" preference). Throws kNotSupported on a cycle, naming
/// the variables in it.
std::vector<int> chooseLoopOrder(const std::vector<LoopVarInfo>& vars,
                                 const std::vector<std::pair<int, int>>& edges,
                                 const std::vector<std::vector<int>>& chains);

}  // namespace sparseflow::lower
