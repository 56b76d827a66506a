// Structural equality of loop IR: the check behind parse(print(ir)) == ir and the stage tests.
#pragma once

#include "ir/ir.h"

namespace sparseflow::ir {

/// Same nodes, operators, types, names, values and loop annotations. Blocks compare as the list
/// of statements they run: a one-statement block equals its statement and a block nested in a
/// block without declarations of its own is spliced (as ir::block does); a nested block that
/// declares names is a scope and must be one in both. Floating-point constants compare by bits
/// (NaN equals NaN).
bool equal(const Expr& a, const Expr& b);
bool equal(const Stmt& a, const Stmt& b);

}  // namespace sparseflow::ir
