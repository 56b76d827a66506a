// Compaction: link every (value, dimension) pair to the pairs that must keep the same slices,
// remove the slices that are zero or dead in every pair of a class, rebuild graph and weights.
#include "graph/model/compact.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "graph/propagate.h"
#include "graph/rules.h"
#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow::graph {
namespace {

/// Union-find over the (value, dimension) pairs of a graph, with a pinned flag per class.
class DimClasses {
 public:
  explicit DimClasses(const Graph& g) : graph_(g) {
    for (const Node& node : g.nodes()) {
      offset_.push_back(static_cast<int64_t>(parent_.size()));
      for (int64_t d = 0; d < node.type.rank(); ++d)
        parent_.push_back(static_cast<int64_t>(parent_.size()));
    }
    pinned_.assign(parent_.size(), false);
  }
  int64_t key(ValueId v, int64_t d) const { return offset_[static_cast<size_t>(v)] + d; }
  int64_t find(int64_t k) {
    while (parent_[static_cast<size_t>(k)] != k) {
      parent_[static_cast<size_t>(k)] =
          parent_[static_cast<size_t>(parent_[static_cast<size_t>(k)])];
      k = parent_[static_cast<size_t>(k)];
    }
    return k;
  }
  void link(ValueId a, int64_t da, ValueId b, int64_t db) {
    const int64_t ra = find(key(a, da)), rb = find(key(b, db));
    if (ra == rb) return;
    parent_[static_cast<size_t>(rb)] = ra;
    pinned_[static_cast<size_t>(ra)] =
        pinned_[static_cast<size_t>(ra)] || pinned_[static_cast<size_t>(rb)];
  }
  void pin(ValueId v, int64_t d) { pinned_[static_cast<size_t>(find(key(v, d)))] = true; }
  void pinAll(ValueId v) {
    for (int64_t d = 0; d < graph_.node(v).type.rank(); ++d) pin(v, d);
  }
  bool pinned(ValueId v, int64_t d) { return pinned_[static_cast<size_t>(find(key(v, d)))]; }
  size_t size() const { return parent_.size(); }

 private:
  const Graph& graph_;
  std::vector<int64_t> offset_;
  std::vector<int64_t> parent_;
  std::vector<bool> pinned_;
};

int64_t integerAttr(const Node& node, const char* key) {
  return std::get<int64_t>(node.attrs.at(key));
}

/// Links the dimensions that `node` (value v) carries from its operands to its result, and pins
/// those it needs whole.
void linkNode(const Graph& g, ValueId v, DimClasses& dims) {
  const Node& node = g.node(v);
  const int64_t rank = node.type.rank();
  auto operandRank = [&](size_t i) { return g.node(node.inputs[i]).type.rank(); };
  auto in = [&](size_t i) { return node.inputs[i]; };
  switch (node.op) {
    case OpKind::kInput: dims.pinAll(v); break;
    case OpKind::kParam: break;
    case OpKind::kLinear:  // y[..., o] = x[..., i] W[o, i] + b[o]
      for (int64_t d = 0; d + 1 < rank; ++d) dims.link(v, d, in(0), d);
      dims.link(in(0), rank - 1, in(1), 1);
      dims.link(v, rank - 1, in(1), 0);
      if (node.inputs.size() > 2) dims.link(v, rank - 1, in(2), 0);
      break;
    case OpKind::kMatmul:
    case OpKind::kBatchMatmul:  // [.., m, k] x [.., k, n]
      for (int64_t d = 0; d + 2 < rank; ++d) {
        dims.link(v, d, in(0), d);
        dims.link(v, d, in(1), d);
      }
      dims.link(v, rank - 2, in(0), rank - 2);
      dims.link(v, rank - 1, in(1), rank - 1);
      dims.link(in(0), rank - 1, in(1), rank - 2);
      break;
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kWhere:
    case OpKind::kBiasAdd:
    case OpKind::kMinimum:
    case OpKind::kMaximum:
    case OpKind::kEqual:
    case OpKind::kGreater:
    case OpKind::kLess:
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        for (int64_t d = 0; d < rank; ++d) {
          const int64_t od = broadcastDim(g.node(in(i)).type, node.type, d);
          if (od >= 0) dims.link(v, d, in(i), od);
        }
      }
      break;
    case OpKind::kRelu:
    case OpKind::kGelu:
    case OpKind::kGeluTanh:
    case OpKind::kSilu:
    case OpKind::kTanh:
    case OpKind::kSqrt:
    case OpKind::kSigmoid:
    case OpKind::kExp:
    case OpKind::kSin:
    case OpKind::kCos:
    case OpKind::kNot:
      for (int64_t d = 0; d < rank; ++d) dims.link(v, d, in(0), d);
      break;
    case OpKind::kSoftmax:
    case OpKind::kLayerNorm:
      for (int64_t d = 0; d < rank; ++d) dims.link(v, d, in(0), d);
      for (size_t i = 1; i < node.inputs.size(); ++i) dims.link(v, rank - 1, in(i), 0);
      dims.pin(v, integerAttr(node, "axis"));
      break;
    case OpKind::kTranspose: {
      const auto& perm = std::get<std::vector<int64_t>>(node.attrs.at("perm"));
      for (int64_t d = 0; d < rank; ++d) dims.link(v, d, in(0), perm[static_cast<size_t>(d)]);
      break;
    }
    case OpKind::kSlice:
    case OpKind::kConcat: {
      const int64_t axis = integerAttr(node, "axis");
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        for (int64_t d = 0; d < rank; ++d) {
          if (d == axis) {
            dims.pin(in(i), d);
          } else {
            dims.link(v, d, in(i), d);
          }
        }
      }
      dims.pin(v, axis);
      break;
    }
    case OpKind::kReshape:
      dims.pinAll(v);
      dims.pinAll(in(0));
      break;
    case OpKind::kConv2d: {  // x [N, C, H, W], w [O, C/g, kh, kw], b [O] -> y [N, O, Ho, Wo]
      dims.link(v, 0, in(0), 0);
      dims.link(v, 1, in(1), 0);
      if (node.inputs.size() > 2) dims.link(v, 1, in(2), 0);
      if (std::get<int64_t>(node.attrs.at("groups")) == 1) {
        dims.link(in(0), 1, in(1), 1);
      } else {  // channels split in groups: removing some would move the group boundaries
        dims.pin(v, 1);
        dims.pin(in(0), 1);
        dims.pin(in(1), 1);
      }
      for (int64_t d = 2; d < 4; ++d) {
        dims.pin(v, d);
        dims.pin(in(0), d);
        dims.pin(in(1), d);
      }
      break;
    }
    case OpKind::kMaxPool2d:  // x [N, C, H, W] -> [N, C, Ho, Wo]: images and channels pass
    case OpKind::kAvgPool2d:
      dims.link(v, 0, in(0), 0);
      dims.link(v, 1, in(0), 1);
      for (int64_t d = 2; d < 4; ++d) {
        dims.pin(v, d);
        dims.pin(in(0), d);
      }
      break;
    case OpKind::kEmbedding:  // table [V, D], ids [...] -> [..., D]
      dims.link(v, rank - 1, in(0), 1);
      dims.pin(in(0), 0);
      dims.pinAll(in(1));
      dims.pinAll(v);  // the id dimensions come from a graph input
      break;
    case OpKind::kReduceSum:
    case OpKind::kReduceMax: {
      const int64_t axis = integerAttr(node, "axis");
      for (int64_t d = 0; d < operandRank(0); ++d) {
        if (d != axis) dims.link(v, d < axis ? d : d - 1, in(0), d);
      }
      if (node.op == OpKind::kReduceMax) dims.pin(in(0), axis);
      break;
    }
  }
}

/// New index of every old index along a dimension of `extent` (-1 where removed).
std::vector<int64_t> indexMap(const IndexSet& removed, int64_t extent) {
  std::vector<int64_t> map(static_cast<size_t>(extent));
  int64_t next = 0;
  for (int64_t i = 0; i < extent; ++i)
    map[static_cast<size_t>(i)] = removed.contains(i) ? -1 : next++;
  return map;
}

IndexSet remapSet(const IndexSet& set, const std::vector<int64_t>& map) {
  IndexSet out;
  for (const auto& [b, e] : set.ranges()) {
    for (int64_t i = b; i < e && i < static_cast<int64_t>(map.size()); ++i) {
      if (map[static_cast<size_t>(i)] >= 0) out.add(map[static_cast<size_t>(i)]);
    }
  }
  return out;
}

/// The weight without the removed slices, in its format when the result still fits it, else csr
/// (rank 2) or dense.
Tensor sliceWeight(const Tensor& weight, const std::vector<std::vector<int64_t>>& maps) {
  const Coo coo = toCoo(weight);
  const int32_t rank = coo.rank();
  Coo out;
  for (int32_t d = 0; d < rank; ++d) {
    const auto& map = maps[static_cast<size_t>(d)];
    out.shape.push_back(static_cast<int64_t>(
        std::count_if(map.begin(), map.end(), [](int64_t i) { return i >= 0; })));
  }
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    bool keep = true;
    for (int32_t d = 0; d < rank && keep; ++d) {
      keep = maps[static_cast<size_t>(d)]
                 [static_cast<size_t>(coo.coords[static_cast<size_t>(e * rank + d)])] >= 0;
    }
    if (!keep) continue;
    for (int32_t d = 0; d < rank; ++d) {
      out.coords.push_back(maps[static_cast<size_t>(d)][static_cast<size_t>(
          coo.coords[static_cast<size_t>(e * rank + d)])]);
    }
    out.values.push_back(coo.values[static_cast<size_t>(e)]);
  }
  const BuildOptions options{weight.dtype(), Duplicates::kReject};
  try {
    return fromCoo(out, weight.format(), options);
  } catch (const Error&) {
    // n:m groups or blocks no longer line up: a general format; specialization chooses later.
    return fromCoo(out, Format::parse(rank == 2 ? "csr" : "dense", rank), options);
  }
}

}  // namespace

std::string CompactionReport::toString() const {
  std::ostringstream os;
  for (const RemovedSlices& r : removed) {
    os << r.param << " dim " << r.dim << ": " << r.extent << " -> " << r.extent - r.slices.count()
       << " (removed " << r.slices.count() << ")\n";
  }
  os << "parameters: " << paramElementsBefore << " -> " << paramElementsAfter << " elements, "
     << paramStoredBefore << " -> " << paramStoredAfter << " stored\n";
  return os.str();
}

Model compact(const Model& model, CompactionReport* report) {
  Model m = model;
  annotateParams(m);
  const PropagationStats stats = propagate(m.graph);
  SF_ICHECK(stats.converged) << "propagation did not converge";
  const Graph& g = m.graph;

  // Operators no output depends on are dropped (they would pin what they read).
  std::vector<bool> live(static_cast<size_t>(g.size()), false);
  for (ValueId o : g.outputs()) live[static_cast<size_t>(o)] = true;
  for (ValueId v = g.size(); v-- > 0;) {
    const Node& node = g.node(v);
    if (node.op == OpKind::kInput) live[static_cast<size_t>(v)] = true;  // the interface stays
    if (!live[static_cast<size_t>(v)]) continue;
    for (ValueId in : node.inputs) live[static_cast<size_t>(in)] = true;
  }
  DimClasses dims(g);
  for (ValueId v = 0; v < g.size(); ++v) {
    if (live[static_cast<size_t>(v)]) linkNode(g, v, dims);
  }
  for (ValueId out : g.outputs()) dims.pinAll(out);

  // Per class: the slices zero or dead in every member.
  std::vector<std::optional<IndexSet>> removable(dims.size());
  for (ValueId v = 0; v < g.size(); ++v) {
    if (!live[static_cast<size_t>(v)]) continue;
    const Node& node = g.node(v);
    for (int64_t d = 0; d < node.type.rank(); ++d) {
      const int64_t c = dims.find(dims.key(v, d));
      const IndexSet here = unite(slicesAt(node.tesa.zero, d), slicesAt(node.tesa.dead, d));
      auto& slot = removable[static_cast<size_t>(c)];
      slot = slot ? intersect(*slot, here) : here;
    }
  }
  // Maps per value and dimension.
  std::vector<std::vector<std::vector<int64_t>>> maps(static_cast<size_t>(g.size()));
  for (ValueId v = 0; v < g.size(); ++v) {
    if (!live[static_cast<size_t>(v)]) continue;
    const Node& node = g.node(v);
    for (int64_t d = 0; d < node.type.rank(); ++d) {
      const int64_t extent = node.type.shape[static_cast<size_t>(d)];
      IndexSet removed;
      if (!dims.pinned(v, d)) removed = *removable[static_cast<size_t>(dims.find(dims.key(v, d)))];
      if (removed.covers(extent)) removed = intersect(removed, IndexSet::range(1, extent));
      maps[static_cast<size_t>(v)].push_back(indexMap(removed, extent));
    }
  }

  CompactionReport rep;
  Model out;
  std::vector<ValueId> newId(static_cast<size_t>(g.size()), -1);
  for (ValueId v = 0; v < g.size(); ++v) {
    if (!live[static_cast<size_t>(v)]) continue;
    const Node& node = g.node(v);
    const auto& vmaps = maps[static_cast<size_t>(v)];
    bool changed = false;
    for (const auto& map : vmaps)
      changed = changed || std::find(map.begin(), map.end(), -1) != map.end();
    if (node.op == OpKind::kInput) {
      newId[static_cast<size_t>(v)] = out.graph.addInput(node.name, node.type);
    } else if (node.op == OpKind::kParam) {
      const Tensor& data = m.params.at(node.name);
      Tensor sliced = changed ? sliceWeight(data, vmaps) : data;
      TensorType type{node.type.dtype, sliced.shape()};
      rep.paramElementsBefore += numElements(node.type.shape);
      rep.paramElementsAfter += numElements(sliced.shape());
      rep.paramStoredBefore += data.numStored();
      rep.paramStoredAfter += sliced.numStored();
      for (int64_t d = 0; d < node.type.rank(); ++d) {
        const auto& map = vmaps[static_cast<size_t>(d)];
        IndexSet removed;
        for (size_t i = 0; i < map.size(); ++i) {
          if (map[i] < 0) removed.add(static_cast<int64_t>(i));
        }
        if (!removed.empty()) {
          rep.removed.push_back({node.name, d, node.type.shape[static_cast<size_t>(d)], removed});
        }
      }
      newId[static_cast<size_t>(v)] = out.graph.addParam(node.name, type);
      out.params.emplace(node.name, std::move(sliced));
    } else {
      std::vector<ValueId> inputs;
      for (ValueId in : node.inputs) inputs.push_back(newId[static_cast<size_t>(in)]);
      newId[static_cast<size_t>(v)] = out.graph.addOp(node.op, inputs, node.attrs);
    }
    // The facts, renumbered; structures over a dimension that lost slices are dropped.
    Tesa t;
    for (const auto& [d, s] : node.tesa.zero)
      setSlices(t.zero, d, remapSet(s, vmaps[static_cast<size_t>(d)]));
    for (const auto& [d, s] : node.tesa.dead)
      setSlices(t.dead, d, remapSet(s, vmaps[static_cast<size_t>(d)]));
    t.lowerBound = node.tesa.lowerBound;
    if (!changed) {
      t.nm = node.tesa.nm;
      t.block = node.tesa.block;
      t.mask = node.tesa.mask;
    }
    out.graph.setTesa(newId[static_cast<size_t>(v)], t);
  }
  for (ValueId o : g.outputs()) out.graph.addOutput(newId[static_cast<size_t>(o)]);
  if (report) *report = std::move(rep);
  return out;
}

}  // namespace sparseflow::graph
