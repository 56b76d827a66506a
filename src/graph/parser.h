// Reads the graph's text form (what print() writes) back into a Graph: parse(print(g)) equals g.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"

namespace sparseflow::graph {

/// Parses a graph. Blank lines and lines starting with '#' are skipped; value ids (%N) may be any
/// distinct numbers, each defined before its use, and become indices in order. A result type
/// after an operator is optional and, when written, must be the inferred one. Errors throw
/// kParseError (syntax) or the builder's code (shapes), both as "source:line:column: ...".
Graph parseGraph(std::string_view text, const std::string& source = "<graph>");

}  // namespace sparseflow::graph
