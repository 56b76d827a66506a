// Helpers of the graph tests: parse, propagate and read back one value's attributes as text.
#pragma once

#include <string>

#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/propagate.h"

namespace sparseflow::graph::testing {

/// The graph of `text` after propagation to its fixpoint (which must be reached).
inline Graph propagated(const std::string& text) {
  Graph g = parseGraph(text);
  const PropagationStats stats = propagate(g);
  if (!stats.converged) throw std::runtime_error("propagation did not converge");
  return g;
}

/// The attributes of value `v` as printed ("{zero@1=[2], ge=0}", "" for none).
inline std::string tesaOf(const Graph& g, ValueId v) {
  return printTesa(g.node(v).tesa);
}

}  // namespace sparseflow::graph::testing
