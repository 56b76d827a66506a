// The propagation driver: forward sweeps in value order, backward sweeps in reverse order with the
// dead slices of each value intersected over its uses.
#include "graph/propagate.h"

#include <cmath>
#include <optional>

#include "graph/rules.h"
#include "support/check.h"

namespace sparseflow::graph {
namespace {

bool forwardSweep(Graph& graph, const RuleRegistry& rules) {
  bool changed = false;
  for (ValueId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    const ForwardRule forward = rules.rules(node.op).forward;
    if (forward == nullptr) continue;
    Tesa implied = forward(RuleContext{graph, node});
    // Bounds computed from huge ones (sums, products) may overflow: such a bound says nothing.
    if (implied.lowerBound && !std::isfinite(*implied.lowerBound)) implied.lowerBound.reset();
    const Tesa next = meet(node.tesa, implied);
    if (!(next == node.tesa)) {
      graph.setTesa(v, next);
      changed = true;
    }
  }
  return changed;
}

bool backwardSweep(Graph& graph, const RuleRegistry& rules) {
  bool changed = false;
  // For each value, the slices dead for all uses seen so far (nullopt: no use yet).
  std::vector<std::optional<SliceSets>> fromUses(static_cast<size_t>(graph.size()));
  for (ValueId v = graph.size() - 1; v >= 0; --v) {
    // Every use of v comes after it: its dead slices are complete now.
    const Node& node = graph.node(v);
    SliceSets dead;
    if (graph.isOutput(v)) {
      dead = {};
    } else if (fromUses[static_cast<size_t>(v)]) {
      dead = *fromUses[static_cast<size_t>(v)];
    } else {
      dead = allSlices(node.type);
    }
    Tesa next = node.tesa;
    next.dead = uniteSlices(node.tesa.dead, dead);
    if (!(next == node.tesa)) {
      graph.setTesa(v, next);
      changed = true;
    }
    const Node& current = graph.node(v);
    const BackwardRule backward = rules.rules(current.op).backward;
    if (current.inputs.empty()) continue;
    // A wholly dead use constrains nothing (the identity of the intersection): its operands are
    // dead where their other uses allow, and wholly dead when it is their only kind of use.
    if (isAllDead(current.tesa, current.type)) continue;
    std::vector<SliceSets> perOperand(current.inputs.size());
    if (backward != nullptr) {
      perOperand = backward(RuleContext{graph, current});
      SF_ICHECK(perOperand.size() == current.inputs.size())
          << "backward rule of " << opName(current.op) << " gave " << perOperand.size()
          << " operand sets for " << current.inputs.size() << " operands";
    }
    for (size_t i = 0; i < current.inputs.size(); ++i) {
      auto& slot = fromUses[static_cast<size_t>(current.inputs[i])];
      slot = slot ? intersectSlices(*slot, perOperand[i]) : perOperand[i];
    }
  }
  return changed;
}

}  // namespace

PropagationStats propagate(Graph& graph, int maxSweeps) {
  const RuleRegistry& rules = defaultRules();
  PropagationStats stats;
  while (stats.iterations < maxSweeps) {
    ++stats.iterations;
    const bool forward = forwardSweep(graph, rules);
    const bool backward = backwardSweep(graph, rules);
    if (!forward && !backward) {
      stats.converged = true;
      break;
    }
  }
  return stats;
}

}  // namespace sparseflow::graph
