// Structural equality of graphs, reporting the first difference (for round-trip tests).
#include "graph/graph.h"
#include "graph/printer.h"

namespace sparseflow::graph {

bool graphsEqual(const Graph& a, const Graph& b, std::string* why) {
  auto differ = [&](const std::string& what) {
    if (why != nullptr) *why = what;
    return false;
  };
  if (a.size() != b.size()) {
    return differ("value counts differ: " + std::to_string(a.size()) + " and " +
                  std::to_string(b.size()));
  }
  for (ValueId v = 0; v < a.size(); ++v) {
    if (!(a.node(v) == b.node(v))) {
      return differ("value %" + std::to_string(v) + " differs: '" + printNode(a, v) + "' and '" +
                    printNode(b, v) + "'");
    }
  }
  if (a.outputs() != b.outputs()) return differ("outputs differ");
  if (why != nullptr) why->clear();
  return true;
}

}  // namespace sparseflow::graph
