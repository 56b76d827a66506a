// A model's parameters: checked against the graph, the facts their data shows, dense copies.
#include "graph/model/model.h"

#include <cmath>
#include <limits>

#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow::graph {

void checkModel(const Model& model) {
  size_t params = 0;
  for (ValueId v = 0; v < model.graph.size(); ++v) {
    const Node& node = model.graph.node(v);
    if (node.op != OpKind::kParam) continue;
    ++params;
    auto it = model.params.find(node.name);
    SF_USER_CHECK(it != model.params.end()) << "parameter \"" << node.name << "\" has no data";
    const Tensor& t = it->second;
    SF_USER_CHECK(t.shape() == node.type.shape && t.dtype() == node.type.dtype)
        << "parameter \"" << node.name << "\" is " << toString(node.type) << " but its data is "
        << t.summary();
  }
  if (params == model.params.size()) return;
  for (const auto& [name, tensor] : model.params) {
    bool found = false;
    for (const Node& node : model.graph.nodes()) {
      found = found || (node.op == OpKind::kParam && node.name == name);
    }
    SF_USER_CHECK(found) << "data for \"" << name << "\", which is not a parameter of the graph";
  }
}

Tesa measuredFacts(const Tensor& weight) {
  const Coo coo = toCoo(weight);
  const int32_t rank = coo.rank();
  Tesa facts;
  if (rank == 0) return facts;
  // Nonzeros per slice of every dimension (a NaN counts as nonzero).
  std::vector<std::vector<int64_t>> perSlice(static_cast<size_t>(rank));
  for (int32_t d = 0; d < rank; ++d)
    perSlice[static_cast<size_t>(d)].assign(static_cast<size_t>(coo.shape[static_cast<size_t>(d)]),
                                            0);
  const int64_t last = coo.shape.back();
  std::vector<int64_t> group4, group8;  // nonzeros per group of 4 / 8 along the last axis
  const int64_t lines = last > 0 ? numElements(coo.shape) / last : 0;
  if (last % 4 == 0) group4.assign(static_cast<size_t>(lines * (last / 4)), 0);
  if (last % 8 == 0) group8.assign(static_cast<size_t>(lines * (last / 8)), 0);
  double lowest = std::numeric_limits<double>::infinity();
  bool finite = true;
  int64_t nonzeros = 0;
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    const double v = coo.values[static_cast<size_t>(e)];
    if (v == 0) continue;
    ++nonzeros;
    if (!std::isfinite(v)) finite = false;
    lowest = std::min(lowest, v);
    int64_t line = 0;
    for (int32_t d = 0; d < rank; ++d) {
      const int64_t i = coo.coords[static_cast<size_t>(e * rank + d)];
      ++perSlice[static_cast<size_t>(d)][static_cast<size_t>(i)];
      if (d + 1 < rank) line = line * coo.shape[static_cast<size_t>(d)] + i;
    }
    const int64_t j = coo.coords[static_cast<size_t>(e * rank + rank - 1)];
    if (!group4.empty()) ++group4[static_cast<size_t>(line * (last / 4) + j / 4)];
    if (!group8.empty()) ++group8[static_cast<size_t>(line * (last / 8) + j / 8)];
  }
  for (int32_t d = 0; d < rank; ++d) {
    IndexSet zero;
    const std::vector<int64_t>& counts = perSlice[static_cast<size_t>(d)];
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] == 0) zero.add(static_cast<int64_t>(i));
    }
    setSlices(facts.zero, d, std::move(zero));
  }
  // The tightest n:m (n < m); 2:4 before 4:8 at the same ratio.
  double bestRatio = 1;
  for (const auto& [m, groups] : {std::pair<int64_t, const std::vector<int64_t>*>{4, &group4},
                                  std::pair<int64_t, const std::vector<int64_t>*>{8, &group8}}) {
    if (groups->empty()) continue;
    int64_t n = 0;
    for (int64_t c : *groups) n = std::max(n, c);
    const double ratio = static_cast<double>(n) / static_cast<double>(m);
    if (n > 0 && n < m && ratio < bestRatio) {
      bestRatio = ratio;
      facts.nm = NmStructure{n, m, rank - 1};
    }
  }
  if (finite) {
    if (nonzeros < numElements(coo.shape)) lowest = std::min(lowest, 0.0);
    if (std::isfinite(lowest)) facts.lowerBound = lowest;
  }
  return facts;
}

void annotateParams(Model& model) {
  checkModel(model);
  for (ValueId v = 0; v < model.graph.size(); ++v) {
    const Node& node = model.graph.node(v);
    if (node.op != OpKind::kParam) continue;
    model.graph.setTesa(v, meet(node.tesa, measuredFacts(model.params.at(node.name))));
  }
}

template <typename T>
DenseValue<T> denseValue(const Tensor& tensor) {
  const std::vector<double> values = toDense(tensor);
  return DenseValue<T>{tensor.shape(), std::vector<T>(values.begin(), values.end())};
}

template DenseValue<float> denseValue(const Tensor&);
template DenseValue<double> denseValue(const Tensor&);

}  // namespace sparseflow::graph
