// Loop-order choice (see loop_order.h): a topological sort with a preference key.
#include "lower/loop_order.h"

#include <algorithm>
#include <tuple>

#include "support/check.h"

namespace sparseflow::lower {

std::vector<int> chooseLoopOrder(const std::vector<LoopVarInfo>& vars,
                                 const std::vector<std::pair<int, int>>& edges,
                                 const std::vector<std::vector<int>>& chains) {
  const int n = static_cast<int>(vars.size());
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  for (const auto& [from, to] : edges) {
    if (from != to) ++indegree[static_cast<size_t>(to)];
  }
  std::vector<bool> placed(static_cast<size_t>(n), false);
  std::vector<int> order;
  while (static_cast<int>(order.size()) < n) {
    // Does placing v continue an operand whose previous level's variable is already placed?
    auto continues = [&](int v) {
      for (const std::vector<int>& chain : chains) {
        for (size_t k = 1; k < chain.size(); ++k) {
          if (chain[k] == v && placed[static_cast<size_t>(chain[k - 1])]) return true;
        }
      }
      return false;
    };
    int best = -1;
    std::tuple<int, double, int, int> bestKey;
    for (int v = 0; v < n; ++v) {
      if (placed[static_cast<size_t>(v)] || indegree[static_cast<size_t>(v)] != 0) continue;
      const auto& info = vars[static_cast<size_t>(v)];
      std::tuple<int, double, int, int> key{continues(v) ? 0 : 1, info.position,
                                            info.isOutputIndex ? 0 : 1, v};
      if (best < 0 || key < bestKey) {
        best = v;
        bestKey = key;
      }
    }
    if (best < 0) {
      std::string cycle;
      for (int v = 0; v < n; ++v) {
        if (!placed[static_cast<size_t>(v)])
          cycle += (cycle.empty() ? "" : ", ") + vars[static_cast<size_t>(v)].name;
      }
      SF_FAIL(kNotSupported) << "the sparse operands' storage orders conflict over the loops "
                             << cycle
                             << " (one operand needs a transposed copy: bind it in the other "
                                "order, e.g. csc instead of csr, or as dense)";
    }
    placed[static_cast<size_t>(best)] = true;
    order.push_back(best);
    for (const auto& [from, to] : edges) {
      if (from == best && from != to) --indegree[static_cast<size_t>(to)];
    }
  }
  return order;
}

}  // namespace sparseflow::lower
