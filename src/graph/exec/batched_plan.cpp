// planBatchedProduct (see batched_plan.h): the operand chains walked back, the result chain walked
// forward (epilogue operators first, then layout changes), every view put on one batch shape.
#include "graph/exec/batched_plan.h"

#include <algorithm>
#include <cmath>

#include "graph/exec/strided_view.h"
#include "kernels/batched_gemm/batched_gemm.h"
#include "sparseflow/build.h"

namespace sparseflow::graph {
namespace {

const std::vector<int64_t>& shapeOf(const Graph& g, ValueId v) {
  return g.node(v).type.shape;
}

const std::vector<int64_t>& permOf(const Node& node) {
  return std::get<std::vector<int64_t>>(node.attrs.at("perm"));
}

/// `to` regroups only the batch (leading) dimensions of `from`: the last two extents agree.
bool batchRegroup(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  return from.size() >= 2 && to.size() >= 2 && from[from.size() - 1] == to[to.size() - 1] &&
         from[from.size() - 2] == to[to.size() - 2];
}

/// The one reader of `v`, where it has exactly one and is not a graph output.
std::optional<ValueId> soleUse(const Graph& g, ValueId v,
                               const std::vector<std::vector<ValueId>>& uses) {
  const auto& u = uses[static_cast<size_t>(v)];
  if (g.isOutput(v) || u.size() != 1) return std::nullopt;
  return u[0];
}

struct SourcedView {
  ValueId source = -1;
  StridedView view;
  std::vector<ValueId> absorbed;
};

/// `operand` seen in the buffer of the earliest value that single-use reshapes and transposes
/// make it from. A last reshape that merges batch dimensions not laid out together keeps them
/// apart (the plan's batch shape refines it).
SourcedView operandView(const Graph& g, ValueId operand,
                        const std::vector<std::vector<ValueId>>& uses,
                        const std::set<ValueId>& claimed) {
  std::vector<ValueId> chain;
  ValueId cur = operand;
  while (!claimed.count(cur) && soleUse(g, cur, uses) &&
         (g.node(cur).op == OpKind::kReshape || g.node(cur).op == OpKind::kTranspose)) {
    chain.insert(chain.begin(), cur);
    cur = g.node(cur).inputs[0];
  }
  for (size_t s = 0; s <= chain.size(); ++s) {
    const ValueId source = s == 0 ? cur : chain[s - 1];
    StridedView v = StridedView::contiguous(shapeOf(g, source));
    bool ok = true;
    for (size_t i = s; i < chain.size() && ok; ++i) {
      const Node& node = g.node(chain[i]);
      if (node.op == OpKind::kTranspose) {
        v = transposeView(v, permOf(node));
      } else if (auto r = reshapeView(v, node.type.shape)) {
        v = *r;
      } else {
        ok = i + 1 == chain.size() && batchRegroup(v.shape, node.type.shape);
      }
    }
    if (ok)
      return {source, v,
              std::vector<ValueId>(chain.begin() + static_cast<ptrdiff_t>(s), chain.end())};
  }
  return {operand, StridedView::contiguous(shapeOf(g, operand)), {}};
}

/// The product's result chain: the nodes after it, in order, that the step takes over.
struct ResultChain {
  std::vector<ValueId> nodes;
  float scale = 1.0f;
  ValueId add = -1, addNode = -1;
  bool softmax = false;
};

ResultChain resultChain(const Model& model, ValueId product,
                        const std::vector<std::vector<ValueId>>& uses,
                        const std::set<ValueId>& claimed) {
  const Graph& g = model.graph;
  ResultChain r;
  bool epiloguePhase = true, scaled = false;
  ValueId cur = product;
  while (auto u = soleUse(g, cur, uses)) {
    if (claimed.count(*u)) break;
    const Node& node = g.node(*u);
    const bool sameShape = node.type.shape == shapeOf(g, cur);
    auto other = [&] { return node.inputs[0] == cur ? node.inputs[1] : node.inputs[0]; };
    if (node.op == OpKind::kReshape) {
      epiloguePhase = epiloguePhase && batchRegroup(shapeOf(g, cur), node.type.shape);
    } else if (node.op == OpKind::kTranspose) {
      epiloguePhase = false;
    } else if (!epiloguePhase || r.softmax || !sameShape) {
      break;
    } else if (node.op == OpKind::kMul && !scaled && r.add < 0 && node.inputs.size() == 2 &&
               node.inputs[0] != node.inputs[1] && g.node(other()).op == OpKind::kParam &&
               numElements(shapeOf(g, other())) == 1) {
      const double s = toDense(model.params.at(g.node(other()).name))[0];
      if (!std::isfinite(s)) break;
      r.scale = static_cast<float>(s);
      scaled = true;
    } else if (node.op == OpKind::kAdd && r.add < 0 && node.inputs.size() == 2 &&
               node.inputs[0] != node.inputs[1] &&
               shapeOf(g, other()).size() <= node.type.shape.size()) {
      r.add = other();
      r.addNode = *u;
    } else if (node.op == OpKind::kSoftmax &&
               std::get<int64_t>(node.attrs.at("axis")) == node.type.rank() - 1) {
      r.softmax = true;
    } else {
      break;
    }
    r.nodes.push_back(*u);
    cur = *u;
  }
  return r;
}

/// The view of the product's [batch..., m, n] elements inside the contiguous buffer of
/// `nodes.back()` (walking the chain back), or nullopt where strides cannot describe it.
std::optional<StridedView> resultView(const Graph& g, ValueId product,
                                      const std::vector<ValueId>& nodes) {
  if (nodes.empty()) return StridedView::contiguous(shapeOf(g, product));
  StridedView v = StridedView::contiguous(shapeOf(g, nodes.back()));
  bool refined = false;  // v keeps batch dimensions finer than the value it stands for
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& node = g.node(nodes[i]);
    const std::vector<int64_t>& operandShape = shapeOf(g, i == 0 ? product : nodes[i - 1]);
    if (node.op == OpKind::kTranspose) {
      if (refined) return std::nullopt;
      v = untransposeView(v, permOf(node));
    } else if (node.op == OpKind::kReshape) {
      if (auto r = refined ? std::nullopt : reshapeView(v, operandShape)) {
        v = *r;
      } else if (batchRegroup(v.shape, operandShape)) {
        refined = true;
      } else {
        return std::nullopt;
      }
    }
  }
  return v;
}

/// Extents 1 dropped from the batch part (all but the last two dimensions) of `v`.
StridedView batchPart(const StridedView& v) {
  StridedView b;
  for (size_t d = 0; d + 2 < v.shape.size(); ++d) {
    if (v.shape[d] != 1) {
      b.shape.push_back(v.shape[d]);
      b.strides.push_back(v.strides[d]);
    }
  }
  return b;
}

}  // namespace

std::optional<BatchedPlan> planBatchedProduct(const Model& model, ValueId product,
                                              const std::vector<std::vector<ValueId>>& uses,
                                              const std::set<ValueId>& claimed) {
  const Graph& g = model.graph;
  const Node& node = g.node(product);
  if (node.inputs.size() != 2 || node.type.dtype != DType::kF32) return std::nullopt;
  const SourcedView a = operandView(g, node.inputs[0], uses, claimed);
  const SourcedView b = operandView(g, node.inputs[1], uses, claimed);
  ResultChain chain = resultChain(model, product, uses, claimed);
  // Layout nodes at the end that strides cannot describe are left to their own steps.
  std::optional<StridedView> c;
  while (!(c = resultView(g, product, chain.nodes))) chain.nodes.pop_back();
  if (std::find(chain.nodes.begin(), chain.nodes.end(), chain.addNode) == chain.nodes.end()) {
    chain.add = -1;
  }
  BatchedPlan plan;
  plan.product = product;
  plan.result = chain.nodes.empty() ? product : chain.nodes.back();
  plan.absorbed = a.absorbed;
  plan.absorbed.insert(plan.absorbed.end(), b.absorbed.begin(), b.absorbed.end());
  plan.absorbed.insert(plan.absorbed.end(), chain.nodes.begin(), chain.nodes.end());
  if (!chain.nodes.empty()) plan.absorbed.pop_back();  // the result: defined, not absorbed
  if (plan.result == product && plan.absorbed.empty()) return std::nullopt;
  for (ValueId v : chain.nodes) {  // the epilogue's parts only where still in the chain
    const OpKind op = g.node(v).op;
    if (op == OpKind::kMul) plan.scale = chain.scale;
    if (op == OpKind::kSoftmax) plan.softmax = true;
  }
  const std::vector<int64_t>& shape = node.type.shape;
  plan.m = shape[shape.size() - 2];
  plan.n = shape.back();
  plan.k = shapeOf(g, node.inputs[0]).back();
  std::vector<StridedView> views = {a.view, b.view, *c};
  if (chain.add >= 0) {
    views.push_back(
        broadcastView(StridedView::contiguous(shapeOf(g, chain.add)), shapeOf(g, chain.addNode)));
  }
  std::vector<std::vector<int64_t>> batchShapes;
  for (const StridedView& v : views) batchShapes.push_back(batchPart(v).shape);
  const auto batch = commonRefinement(batchShapes);
  if (!batch || batch->size() > static_cast<size_t>(kernels::kMaxBatchDims)) return std::nullopt;
  plan.batchShape = *batch;
  std::vector<OperandView*> targets = {&plan.a, &plan.b, &plan.c, &plan.add};
  const std::vector<ValueId> sources = {a.source, b.source, plan.result, chain.add};
  for (size_t i = 0; i < views.size(); ++i) {
    const StridedView& v = views[i];
    const auto onBatch = reshapeView(batchPart(v), *batch);
    if (!onBatch) return std::nullopt;
    *targets[i] = {sources[i], onBatch->strides, v.strides[v.strides.size() - 2], v.strides.back()};
  }
  return plan;
}

namespace {

int64_t productOffset(const OperandView& v, const std::vector<int64_t>& shape, int64_t q) {
  int64_t offset = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    offset += (q % shape[d]) * v.batch[d];
    q /= shape[d];
  }
  return offset;
}

}  // namespace

bool readsProductForProduct(const BatchedPlan& producer, const BatchedPlan& consumer) {
  if (consumer.a.source != producer.result || consumer.k != producer.n ||
      consumer.m != producer.m || consumer.a.row != producer.c.row ||
      consumer.a.col != producer.c.col) {
    return false;
  }
  int64_t batches = 1, consumerBatches = 1;
  for (int64_t e : producer.batchShape) batches *= e;
  for (int64_t e : consumer.batchShape) consumerBatches *= e;
  if (batches != consumerBatches) return false;
  for (int64_t q = 0; q < batches; ++q) {
    if (productOffset(producer.c, producer.batchShape, q) !=
        productOffset(consumer.a, consumer.batchShape, q)) {
      return false;
    }
  }
  return true;
}

bool passesLiveColumns(const BatchedPlan& producer, const BatchedPlan& consumer) {
  return producer.softmax && producer.add.source >= 0 && producer.add.row == 0 &&
         readsProductForProduct(producer, consumer);
}

}  // namespace sparseflow::graph
