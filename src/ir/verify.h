// The loop IR's scoping rules, checked: what every transform must leave true before code
// generation (the C++ emitter refuses IR that breaks them rather than emit code that does not
// compile or that reads another variable than the one meant).
#pragma once

#include <set>
#include <string>

#include "ir/ir.h"

namespace sparseflow::ir {

/// The scopes of the IR, as the C++ emitter writes them:
/// - a Block is a scope: a Let is visible from its statement to the end of the innermost
///   enclosing Block (so two sibling Blocks, such as two loop nests, may declare the same name);
/// - a For's variable is visible in its body; an Allocate's array in its body; the branches of
///   an IfThenElse and the body of a While are scopes of their own;
/// - a name may be declared only where no declaration of it is visible (no redeclaration and no
///   shadowing: an inner declaration would silently hide the outer one);
/// - every variable read or assigned, and every array loaded, stored or sorted, is declared and
///   visible there, or is one of `external` (what the entry point declares: extents, tensor
///   arrays, parameters).
/// Returns "" when `s` follows the rules, else the first problem found ("'v_i_begin' is declared
/// twice in one scope", "'acc0' is used where it is not declared").
std::string verifyScopes(const Stmt& s, const std::set<std::string>& external);

}  // namespace sparseflow::ir
