// TeSA propagation over a whole graph: every operator's rules, forward and backward, iterated to a
// fixpoint (SparTA's propagator).
#pragma once

#include "graph/graph.h"

namespace sparseflow::graph {

/// What a propagation did.
struct PropagationStats {
  int iterations = 0;      ///< forward + backward sweeps run
  bool converged = false;  ///< the last sweep changed nothing
};

/// Adds to every value's attributes what the rules imply, until a sweep changes nothing (at most
/// `maxSweeps`). Forward: each result meets what its operands imply. Backward: a value's dead
/// slices are those dead for every use; outputs have none, values without a use are wholly dead.
/// Facts only grow, so the iteration ends.
PropagationStats propagate(Graph& graph, int maxSweeps = 64);

}  // namespace sparseflow::graph
