// Operator names both ways, from the one list in ops.h.
#include "graph/ops.h"

namespace sparseflow::graph {

const char* opName(OpKind op) {
  switch (op) {
#define SF_GRAPH_OP_NAME(e, name) \
  case OpKind::e: return name;
    SF_GRAPH_OPS(SF_GRAPH_OP_NAME)
#undef SF_GRAPH_OP_NAME
  }
  return "unknown";
}

std::optional<OpKind> opNamed(std::string_view name) {
#define SF_GRAPH_OP_LOOKUP(e, text) \
  if (name == text) return OpKind::e;
  SF_GRAPH_OPS(SF_GRAPH_OP_LOOKUP)
#undef SF_GRAPH_OP_LOOKUP
  return std::nullopt;
}

}  // namespace sparseflow::graph
