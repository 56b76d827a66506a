// The default rule registry: every rule family registered once, on first use (thread-safe).
#include "graph/rules.h"

namespace sparseflow::graph {

const RuleRegistry& defaultRules() {
  static const RuleRegistry registry = [] {
    RuleRegistry r;
    addLinearRules(r);
    addElementwiseRules(r);
    addShapeRules(r);
    addNormalizeRules(r);
    addPoolRules(r);
    return r;
  }();
  return registry;
}

}  // namespace sparseflow::graph
