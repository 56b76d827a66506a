// The graph's text form written out: one line per value, then the outputs (parser.h reads it).
#pragma once

#include <string>

#include "graph/graph.h"

namespace sparseflow::graph {

/// The whole graph, e.g.
///   %0 = input "x" : f32[8, 512]
///   %1 = relu(%0) : f32[8, 512] {ge=0}
///   output %1
std::string print(const Graph& graph);
/// The line of one value, without its newline.
std::string printNode(const Graph& graph, ValueId value);
/// The attributes in braces ("{zero@1=[3, 5..9], ge=0}"); empty for none.
std::string printTesa(const Tesa& tesa);
/// An index set: "[0, 3, 5..9]" (a..b holds a to b inclusive).
std::string printIndexSet(const IndexSet& set);

}  // namespace sparseflow::graph
