// Reads the loop IR's text form (what ir::toString prints) back into IR: the input side of the
// stage tests (`sparseflow opt`, tests/lit). parse(toString(s)) is s again (ir/equal.h).
#pragma once

#include <map>
#include <string>

#include "ir/ir.h"

namespace sparseflow::ir {

/// What the text uses without declaring it: the kernel's arrays (element types) and its free
/// scalars (extents, parameters), as the entry point declares them.
struct ParseEnvironment {
  std::map<std::string, ScalarType> arrays;
  std::map<std::string, ScalarType> scalars;
};

/// Parses one statement list. Errors throw kInvalidArgument naming `source`, the line (counted from
/// `firstLine`) and what was expected; a name neither declared in the text nor in `env` is an
/// error.
Stmt parseStmt(const std::string& text, const ParseEnvironment& env,
               const std::string& source = "<ir>", int firstLine = 1);

/// The type named by its C++ spelling ("int64_t", "double"...), as cppTypeName writes it; false
/// when `name` is none.
bool scalarTypeNamed(const std::string& name, ScalarType* type);

}  // namespace sparseflow::ir
