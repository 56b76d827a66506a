// Specialization: each linear layer (or matmul by a weight) with the bias and activation after it
// becomes one sparseflow kernel whose weight format is chosen by measurement (or by rule); every
// other operator runs on dense values.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "graph/exec/executor_impl.h"
#include "kernels/batched_gemm/batched_gemm.h"
#include "kernels/nm_gemm/nm_gemm.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "support/check.h"

namespace sparseflow::graph {
namespace {

const char* fusableActivation(OpKind op) {
  switch (op) {
    case OpKind::kRelu: return "relu";
    case OpKind::kGelu: return "gelu";
    case OpKind::kGeluTanh: return "gelu_tanh";
    case OpKind::kSilu: return "silu";
    case OpKind::kTanh: return "tanh";
    case OpKind::kSigmoid: return "sigmoid";
    default: return nullptr;
  }
}

/// The uses of every value (operator nodes reading it).
std::vector<std::vector<ValueId>> usesOf(const Graph& g) {
  std::vector<std::vector<ValueId>> uses(static_cast<size_t>(g.size()));
  for (ValueId v = 0; v < g.size(); ++v) {
    for (ValueId in : g.node(v).inputs) uses[static_cast<size_t>(in)].push_back(v);
  }
  return uses;
}

bool isParam(const Graph& g, ValueId v) {
  return g.node(v).op == OpKind::kParam;
}

/// A linear layer found in the graph: x, the weight as [out, in], the nodes fused after it.
struct LinearChain {
  ValueId x = -1;
  Tensor weight;  ///< [out, in]
  std::string weightName;
  std::optional<ValueId> bias;
  const char* activation = nullptr;
  std::optional<float> clipLow, clipHigh;
  /// A computed value added to the result last (a transformer's `x + W·h + b`): R in the kernel.
  std::optional<ValueId> residual;
  std::vector<ValueId> nodes;  ///< the linear node first, then what is fused
};

/// Whether the chain's clip goes into its kernel (a clamp the providers fuse): finite bounds.
bool clipInKernel(const LinearChain& c) {
  return (!c.clipLow || std::isfinite(*c.clipLow)) && (!c.clipHigh || std::isfinite(*c.clipHigh));
}

/// The chain of the linear layer at `v`, if it is one. `materialized(u)`: whether the value u
/// (defined before v) is held when v's step runs (an input, or a step's result), so that it can
/// be the residual.
std::optional<LinearChain> findChain(const Model& m, ValueId v,
                                     const std::vector<std::vector<ValueId>>& uses,
                                     const std::function<bool(ValueId)>& materialized) {
  const Graph& g = m.graph;
  const Node& node = g.node(v);
  LinearChain c;
  if (node.op == OpKind::kLinear && isParam(g, node.inputs[1]) &&
      (node.inputs.size() < 3 || isParam(g, node.inputs[2]))) {
    c.weightName = g.node(node.inputs[1]).name;
    c.weight = m.params.at(c.weightName);
    if (node.inputs.size() > 2) c.bias = node.inputs[2];
  } else if (node.op == OpKind::kMatmul && isParam(g, node.inputs[1])) {
    c.weightName = g.node(node.inputs[1]).name;
    const Tensor& w = m.params.at(c.weightName);  // [in, out]
    c.weight = transpose(w, Format::parse("csr", 2));
  } else {
    return std::nullopt;
  }
  if (node.type.dtype != DType::kF32) return std::nullopt;
  c.x = node.inputs[0];
  c.nodes.push_back(v);
  auto single = [&](ValueId at) -> std::optional<ValueId> {
    if (g.isOutput(at) || uses[static_cast<size_t>(at)].size() != 1) return std::nullopt;
    return uses[static_cast<size_t>(at)][0];
  };
  ValueId at = v;
  if (auto u = single(at); u && !c.bias) {
    const Node& b = g.node(*u);
    if (b.op == OpKind::kBiasAdd && b.inputs[0] == at && isParam(g, b.inputs[1])) {
      c.bias = b.inputs[1];
      c.nodes.push_back(*u);
      at = *u;
    }
  }
  if (auto u = single(at)) {
    if (const char* act = fusableActivation(g.node(*u).op)) {
      c.activation = act;
      c.nodes.push_back(*u);
      at = *u;
    }
  }
  // A clip by constants (the Graph Challenge's min(y, 32)): minimum / maximum with a one-element
  // weight, applied to the kernel's result in place.
  for (int k = 0; k < 2; ++k) {
    auto u = single(at);
    if (!u) break;
    const Node& clip = g.node(*u);
    if (clip.op != OpKind::kMinimum && clip.op != OpKind::kMaximum) break;
    const ValueId other = clip.inputs[0] == at ? clip.inputs[1] : clip.inputs[0];
    if (!isParam(g, other) || numElements(g.node(other).type.shape) != 1 ||
        clip.type.shape != node.type.shape) {
      break;
    }
    const double bound = toDense(m.params.at(g.node(other).name))[0];
    if (std::isnan(bound)) break;
    const auto b = static_cast<float>(bound);
    if (clip.op == OpKind::kMinimum) {
      // Applied as maximum first, then minimum: a minimum after a maximum, or a second minimum
      // (the tighter bound wins).
      c.clipHigh = c.clipHigh ? std::min(*c.clipHigh, b) : b;
    } else {
      // A maximum after a minimum is the same clamp only where lo <= hi; a second maximum: the
      // tighter bound wins.
      if (c.clipHigh && b > *c.clipHigh) break;
      c.clipLow = c.clipLow ? std::max(*c.clipLow, b) : b;
    }
    c.nodes.push_back(*u);
    at = *u;
  }
  // A residual: the result plus a value of its shape that is already held when the layer runs
  // (a transformer's attention output and FFN: `x + W·h + b`), added in the kernel's store. Not
  // after a clip applied outside the kernel (the add would come before it).
  if (auto u = single(at); u && clipInKernel(c)) {
    const Node& add = g.node(*u);
    if (add.op == OpKind::kAdd && add.inputs.size() == 2 && add.inputs[0] != add.inputs[1]) {
      const ValueId other = add.inputs[0] == at ? add.inputs[1] : add.inputs[0];
      if (other < v && !isParam(g, other) && g.node(other).type.shape == add.type.shape &&
          add.type.shape == g.node(at).type.shape && g.node(other).type.dtype == DType::kF32 &&
          materialized(other)) {
        c.residual = other;
        c.nodes.push_back(*u);
      }
    }
  }
  return c;
}

std::string kernelText(const LinearChain& c) {
  std::string e = "sum(k, X(n,k) * W(o,k))";
  if (c.bias) e += " + b(o)";
  if (c.activation) e = std::string(c.activation) + "(" + e + ")";
  if (clipInKernel(c) && (c.clipLow || c.clipHigh)) {
    auto bound = [](float v) {  // the float's shortest exact text, as a literal
      std::ostringstream text;
      text.precision(9);
      text << v;
      return text.str();
    };
    if (c.clipLow) e = "maximum(" + e + ", " + bound(*c.clipLow) + ")";
    if (c.clipHigh) e = "minimum(" + e + ", " + bound(*c.clipHigh) + ")";
  }
  if (c.residual) e += " + R(n,o)";
  return "Y(n,o) = " + e;
}

double densityOf(const Tensor& w) {
  const Coo coo = toCoo(w);
  int64_t nonzero = 0;
  for (double v : coo.values) nonzero += v != 0;
  const int64_t n = numElements(w.shape());
  return n == 0 ? 0 : static_cast<double>(nonzero) / static_cast<double>(n);
}

/// Median milliseconds per call of `run` over `reps` calls after one warm-up call (packing,
/// caches).
template <typename F>
double medianMs(F run, int reps) {
  run();
  std::vector<double> ms;
  for (int r = 0; r < std::max(1, reps); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

/// Median milliseconds per call of `step` on random X.
double timeStep(const ExecStep& step, int reps) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<size_t>(step.rows * step.in)),
      y(static_cast<size_t>(step.rows * step.out)), r(step.residual ? y.size() : 0);
  for (float& e : x) e = u(rng);
  for (float& e : r) e = u(rng);
  const Format dense = Format::parse("dense", 2);
  const Tensor X({step.rows, step.in}, DType::kF32, dense, {{}, {}},
                 Buffer::view(DType::kF32, x.data(), step.rows * step.in));
  Tensor Y({step.rows, step.out}, DType::kF32, dense, {{}, {}},
           Buffer::view(DType::kF32, y.data(), step.rows * step.out));
  const Tensor R({step.rows, step.out}, DType::kF32, dense, {{}, {}},
                 Buffer::view(DType::kF32, r.data(), static_cast<int64_t>(r.size())));
  std::map<std::string, const Tensor*> args = {{"X", &X}, {"W", &step.weight}};
  if (step.bias) args["b"] = &*step.bias;
  if (step.residual) args["R"] = &R;
  return medianMs([&] { step.kernel.run(args, Y); }, reps);
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

/// The kernel step of a chain with the weight in `format`.
ExecStep kernelStep(const Model& m, const LinearChain& c, const std::string& format) {
  const Graph& g = m.graph;
  ExecStep step;
  step.isKernel = true;
  const std::string activation = c.activation ? c.activation : "";
  step.activation = activation == "gelu" ? Activation::kGeluErf : Activation::kNone;
  for (Activation a : allActivations()) {
    if (activation == activationName(a)) step.activation = a;
  }
  step.result = c.nodes.back();
  step.x = c.x;
  step.clipLow = c.clipLow;
  step.clipHigh = c.clipHigh;
  step.clipInKernel = clipInKernel(c);
  step.residual = c.residual;
  step.out = c.weight.shape()[0];
  step.in = c.weight.shape()[1];
  const int64_t elements = numElements(g.node(c.x).type.shape);
  step.rows = step.in == 0 ? 0 : elements / step.in;
  // convert copies (even to the same format): the executor owns its weights (executor.h).
  step.weight = convert(c.weight, Format::parse(format, 2));
  if (c.bias) {
    step.bias = convert(m.params.at(g.node(*c.bias).name), Format::parse("dense", 1));
  }
  KernelOptions options;
  options.formats = {{"W", format}};
  step.kernel = Kernel::compile(kernelText(c), options);
  // The sparse-input path (relu activations are often mostly zero): X in csr against W^T dense.
  if (step.in * step.out <= (int64_t{1} << 26)) {
    step.weightT = transpose(c.weight, Format::parse("dense", 2));
    KernelOptions sparseX;
    sparseX.formats = {{"X", "csr"}};
    std::string text = kernelText(c);
    text.replace(text.find("W(o,k)"), 6, "Wt(k,o)");
    step.sparseInputKernel = Kernel::compile(text, sparseX);
    step.hasSparseInputPath = true;
  }
  return step;
}

/// How the batched product runs: the hand-tuned kernels::batchedGemm (register blocks of 4 rows
/// by 2 vectors), or the generated kernel in the default loop order (q, i, j, l) or in (q, l, i,
/// j), which streams a row of B into every row of C (attention's PV: 128 x 128 by 128 x 32 took
/// 10.7 ms per call of 384 products by default, 4.1 ms reordered; QK^T, 32 wide inside, 3.3 and
/// 3.9 ms). Measured on random values of the step's shapes; by rule the hand-tuned kernel.
void chooseBatchedSchedule(ExecStep& step, const SpecializeOptions& options, StepReport& report) {
  const std::string text = "C(q,i,j) = sum(l, A(q,i,l) * B(q,l,j))";
  const std::string reordered = "reorder(q, l, i, j)";
  auto compile = [&](const std::string& schedule) {
    KernelOptions o;
    if (!schedule.empty()) o.schedule = Schedule(schedule);
    return Kernel::compile(text, o);
  };
  if (!options.measure || step.batches * step.m * step.k * step.n > (int64_t{1} << 33)) {
    step.handTuned = true;
    report.why = "rule: the hand-tuned batched GEMM";
    return;
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>(step.batches * step.m * step.k));
  std::vector<float> b(static_cast<size_t>(step.batches * step.k * step.n));
  std::vector<float> c(static_cast<size_t>(step.batches * step.m * step.n));
  for (float& e : a) e = u(rng);
  for (float& e : b) e = u(rng);
  const Format dense3 = Format::parse("dense", 3);
  const Tensor A({step.batches, step.m, step.k}, DType::kF32, dense3, {{}, {}, {}},
                 Buffer::view(DType::kF32, a.data(), static_cast<int64_t>(a.size())));
  const Tensor B({step.batches, step.k, step.n}, DType::kF32, dense3, {{}, {}, {}},
                 Buffer::view(DType::kF32, b.data(), static_cast<int64_t>(b.size())));
  Tensor C({step.batches, step.m, step.n}, DType::kF32, dense3, {{}, {}, {}},
           Buffer::view(DType::kF32, c.data(), static_cast<int64_t>(c.size())));
  double best = 0;
  std::ostringstream why;
  why << "measured per call:";
  best = medianMs(
      [&] {
        kernels::batchedGemm(a.data(), b.data(), c.data(), step.batches, step.m, step.k, step.n);
      },
      options.measureReps);
  report.candidateMs["batched_gemm"] = best;
  why << " batched_gemm " << fixed(best, 3) << " ms";
  step.handTuned = true;
  for (const std::string& schedule : {std::string(), reordered}) {
    const Kernel k = compile(schedule);
    const double t = medianMs([&] { k.run({{"A", &A}, {"B", &B}}, C); }, options.measureReps);
    report.candidateMs[schedule.empty() ? "default order" : schedule] = t;
    why << " " << (schedule.empty() ? "default order" : schedule) << " " << fixed(t, 3) << " ms";
    if (t < best) {
      best = t;
      step.kernel = k;
      step.handTuned = false;
    }
  }
  report.why = why.str();
}

/// The step of a strided plan; parameters it reads (as operand sources) loaded as dense values.
ExecStep stridedStep(const Model& model, const BatchedPlan& plan, StepReport& report,
                     std::map<ValueId, DenseValue<float>>& paramValues) {
  const Graph& g = model.graph;
  ExecStep step;
  step.isBatchedProduct = true;
  step.handTuned = true;
  step.node = plan.product;
  step.result = plan.result;
  step.batches = 1;
  for (int64_t e : plan.batchShape) step.batches *= e;
  step.m = plan.m;
  step.k = plan.k;
  step.n = plan.n;
  step.strided = plan;
  for (ValueId in : {plan.a.source, plan.b.source, plan.add.source}) {
    if (in >= 0 && isParam(g, in) && !paramValues.count(in)) {
      paramValues[in] = denseValue<float>(model.params.at(g.node(in).name));
    }
  }
  std::vector<ValueId> taken = plan.absorbed;
  if (plan.result != plan.product) taken.push_back(plan.result);
  std::sort(taken.begin(), taken.end());
  std::ostringstream what, why;
  what << opName(g.node(plan.product).op) << " %" << plan.product;
  for (ValueId n : taken) what << " + " << opName(g.node(n).op) << " %" << n;
  why << "strided batched GEMM over " << step.batches << " products of " << plan.m << "x" << plan.k
      << " by " << plan.k << "x" << plan.n << ": reshapes and transposes read and written in place";
  if (plan.scale != 1.0f) why << ", scale " << plan.scale;
  if (plan.add.source >= 0) why << ", + %" << plan.add.source;
  if (plan.softmax) why << ", softmax";
  why << " fused";
  report.what = what.str();
  report.provider = "batched_gemm";
  report.why = why.str();
  return step;
}

/// Whether `w` is a csr f32 weight with int32 indices (what kernels::csrLinearPair reads).
bool pairableCsr(const Tensor& w) {
  return w.format().toString() == "csr" && w.dtype() == DType::kF32 &&
         w.level(1).pos.dtype() == DType::kI32 && w.level(1).crd.dtype() == DType::kI32;
}

bool pairable24(const Tensor& w) {
  return w.format().toString() == "2:4" && w.dtype() == DType::kF32;
}

/// Adjacent kernel steps of csr weights, or of 2:4 weights, where the second reads only the
/// first's result (an MLP block: linear + gelu, linear) run as one pair kernel: the hidden
/// activations are never written (at 90% sparsity MiniLM's FFN went 11.4 -> 7.5 ms at 4,096 rows
/// with kernels::csrLinearPair; 2:4, 20.7 -> 19.0 ms with kernels::runNMGemmPair). Not after a
/// relu or a clip: those activations are often mostly zero, which the second step's own paths
/// (zero rows skipped, X made csr) exploit.
void pairLayers(Executor::Impl& impl, const std::vector<std::vector<ValueId>>& uses) {
  const Graph& g = impl.graph;
  for (size_t s = 1; s < impl.steps.size(); ++s) {
    ExecStep& first = impl.steps[s - 1];
    ExecStep& second = impl.steps[s];
    const bool kernels = first.isKernel && second.isKernel && !first.isBatchedProduct &&
                         !second.isBatchedProduct && !first.runByLaterStep && !first.pairFirst;
    if (!kernels || second.x != first.result || g.isOutput(first.result) ||
        uses[static_cast<size_t>(first.result)].size() != 1 || first.clipLow || first.clipHigh ||
        first.residual || second.residual || first.activation == Activation::kRelu ||
        first.rows != second.rows) {
      continue;
    }
    const bool csr = pairableCsr(first.weight) && pairableCsr(second.weight);
    const bool nm = pairable24(first.weight) && pairable24(second.weight);
    if (!csr && !nm) continue;
    if (nm) {
      const int32_t lanes = kernels::nmGemmLanes();
      second.pairPacked[0] = std::make_shared<const kernels::PackedNMWeights>(
          kernels::packNMWeights(first.weight, lanes));
      second.pairPacked[1] = std::make_shared<const kernels::PackedNMWeights>(
          kernels::packNMWeights(second.weight, lanes));
    }
    second.pairFirst = std::make_shared<const ExecStep>(first);
    first.runByLaterStep = true;
    for (size_t r : {s - 1, s}) {
      impl.reports[r].provider = csr ? "csr_linear_pair" : "nm_linear_pair";
      impl.reports[r].why += "; with the " + std::string(r == s ? "previous" : "next") +
                             " layer as one pair kernel (hidden activations kept in cache)";
    }
  }
}

/// A strided product whose result only the next strided product reads, product for product, as
/// its A operand (attention's QKᵀ + mask + softmax, then PV), and that has no epilogue of its
/// own: both run as one kernels::batchedAttention step, the scores kept per product in cache
/// (MiniLM at 32 x 128: 25 MB per layer neither written nor read).
void fuseAttention(Executor::Impl& impl, const std::vector<std::vector<ValueId>>& uses) {
  const Graph& g = impl.graph;
  std::map<ValueId, size_t> byResult;
  for (size_t s = 0; s < impl.steps.size(); ++s) {
    ExecStep& step = impl.steps[s];
    if (!step.strided) continue;
    const BatchedPlan& consumer = *step.strided;
    auto it = byResult.find(consumer.a.source);
    byResult[consumer.result] = s;
    if (it == byResult.end() || consumer.scale != 1.0f || consumer.add.source >= 0 ||
        consumer.softmax) {
      continue;
    }
    ExecStep& producerStep = impl.steps[it->second];
    const BatchedPlan& producer = *producerStep.strided;
    if (g.isOutput(producer.result) || producerStep.runByLaterStep ||
        !readsProductForProduct(producer, consumer)) {
      continue;
    }
    // Every reader of the scores is the consumer's product or a node it took over.
    bool onlyConsumer = true;
    for (ValueId u : uses[static_cast<size_t>(producer.result)]) {
      onlyConsumer = onlyConsumer && (u == consumer.product ||
                                      std::find(consumer.absorbed.begin(), consumer.absorbed.end(),
                                                u) != consumer.absorbed.end());
    }
    if (!onlyConsumer) continue;
    step.scores = producer;
    step.liveFrom = -1;
    producerStep.runByLaterStep = true;
    for (size_t r : {it->second, s}) {
      impl.reports[r].provider = "batched_attention";
      impl.reports[r].why +=
          "; " + std::string(r == s ? "with the scores' product" : "with the product reading it") +
          " as one batchedAttention (the scores kept per product in cache)";
    }
  }
}

}  // namespace

Executor Executor::build(const Model& model, const SpecializeOptions& options) {
  checkModel(model);
  auto impl = std::make_shared<Impl>();
  impl->graph = model.graph;
  const Graph& g = impl->graph;
  for (const Node& node : g.nodes()) {
    SF_USER_CHECK(node.type.dtype == DType::kF32 || node.op == OpKind::kInput)
        << "the executor runs f32 models; " << node.name << " (" << opName(node.op) << ") is "
        << dtypeName(node.type.dtype);
  }
  const auto uses = usesOf(g);
  std::vector<bool> done(static_cast<size_t>(g.size()), false);
  // Products of computed values that take over the layout changes and the epilogue around them:
  // their nodes get no steps; the plan's step runs where its result is defined.
  std::map<ValueId, BatchedPlan> plansByResult;
  std::set<ValueId> claimed;
  for (ValueId v = 0; v < g.size(); ++v) {
    const Node& node = g.node(v);
    const bool computedProduct = node.op == OpKind::kBatchMatmul ||
                                 (node.op == OpKind::kMatmul && !isParam(g, node.inputs[1]));
    if (!computedProduct || claimed.count(v)) continue;
    if (auto plan = planBatchedProduct(model, v, uses, claimed)) {
      claimed.insert({plan->product, plan->result});
      claimed.insert(plan->absorbed.begin(), plan->absorbed.end());
      for (ValueId n : plan->absorbed) done[static_cast<size_t>(n)] = true;
      done[static_cast<size_t>(plan->product)] = plan->result != plan->product;
      plansByResult.emplace(plan->result, std::move(*plan));
    }
  }
  for (ValueId v = 0; v < g.size(); ++v) {
    const Node& node = g.node(v);
    if (isSource(node.op) || done[static_cast<size_t>(v)]) continue;
    StepReport report;
    if (auto planned = plansByResult.find(v); planned != plansByResult.end()) {
      impl->steps.push_back(stridedStep(model, planned->second, report, impl->paramValues));
    } else if (auto chain = findChain(model, v, uses, [&](ValueId u) {
                 if (g.node(u).op == OpKind::kInput) return true;
                 return std::any_of(impl->steps.begin(), impl->steps.end(),
                                    [&](const ExecStep& s) { return s.result == u; });
               })) {
      std::ostringstream what;
      for (ValueId n : chain->nodes) {
        what << (n == chain->nodes.front() ? "" : " + ") << opName(g.node(n).op) << " %" << n;
        done[static_cast<size_t>(n)] = true;
      }
      report.what = what.str();
      report.weight = chain->weightName;
      report.density = densityOf(chain->weight);
      const Tesa facts = measuredFacts(chain->weight);
      const bool exact24 = facts.nm && facts.nm->m == 4 && facts.nm->n <= 2 && facts.nm->axis == 1;
      // csr is a candidate below half density (above it cannot beat dense: it stores more bytes
      // per nonzero and the dense GEMM runs at a higher fraction of peak); 2:4 where exact.
      std::vector<std::string> candidates = {"dense"};
      if (report.density <= 0.5) candidates.push_back("csr");
      if (exact24) candidates.insert(candidates.begin(), "2:4");
      std::string format;
      ExecStep step;
      if (auto it = options.formats.find(chain->weightName); it != options.formats.end()) {
        format = it->second;
        step = kernelStep(model, *chain, format);
        report.why = "format given";
      } else if (options.measure) {
        double best = 0;
        std::ostringstream why;
        why << "measured per call:";
        for (const std::string& f : candidates) {
          ExecStep s = kernelStep(model, *chain, f);
          const double ms = timeStep(s, options.measureReps);
          report.candidateMs[f] = ms;
          why << " " << f << " " << fixed(ms, 3) << " ms";
          if (format.empty() || ms < best) {
            best = ms;
            format = f;
            step = std::move(s);
          }
        }
        report.why = why.str();
      } else {
        // A weight far sparser than 2:4 (Graph Challenge layers are 2:4 by accident at 3%) runs
        // as csr: 2:4 stores half the elements.
        const bool sparse = report.density < options.sparseThreshold;
        format = sparse ? "csr" : exact24 ? "2:4" : "dense";
        step = kernelStep(model, *chain, format);
        report.why = "rule: density " + fixed(report.density, 3) +
                     (sparse    ? " below " + fixed(options.sparseThreshold, 2)
                      : exact24 ? ", exactly 2:4"
                                : " at least " + fixed(options.sparseThreshold, 2));
      }
      report.format = format;
      report.provider = step.kernel.provider();
      impl->steps.push_back(std::move(step));
    } else if ((node.op == OpKind::kBatchMatmul || node.op == OpKind::kMatmul) &&
               node.type.dtype == DType::kF32) {
      // Both operands computed (attention's QK^T and PV): one generated kernel over [q, m, k] x
      // [q, k, n] views (leading dimensions merged), vectorized for this machine by the JIT.
      const std::vector<int64_t>& a = g.node(node.inputs[0]).type.shape;
      const std::vector<int64_t>& b = g.node(node.inputs[1]).type.shape;
      ExecStep step;
      step.isBatchedProduct = true;
      step.node = v;
      step.result = v;
      step.m = a[a.size() - 2];
      step.k = a.back();
      step.n = b.back();
      step.batches = numElements(a) / std::max<int64_t>(step.m * step.k, 1);
      for (ValueId in : node.inputs) {
        if (isParam(g, in) && !impl->paramValues.count(in)) {
          impl->paramValues[in] = denseValue<float>(model.params.at(g.node(in).name));
        }
      }
      chooseBatchedSchedule(step, options, report);
      report.what = std::string(opName(node.op)) + " %" + std::to_string(v);
      report.provider = step.handTuned ? "batched_gemm" : step.kernel.provider();
      impl->steps.push_back(std::move(step));
    } else {
      ExecStep step;
      step.node = v;
      step.result = v;
      for (ValueId in : node.inputs) {
        if (isParam(g, in) && !impl->paramValues.count(in)) {
          impl->paramValues[in] = denseValue<float>(model.params.at(g.node(in).name));
        }
      }
      report.what = std::string(opName(node.op)) + " %" + std::to_string(v);
      impl->steps.push_back(std::move(step));
    }
    impl->reports.push_back(std::move(report));
  }
  for (const auto& entry : options.formats) {
    const std::string& name = entry.first;
    const bool used = std::any_of(impl->reports.begin(), impl->reports.end(),
                                  [&](const StepReport& r) { return r.weight == name; });
    SF_USER_CHECK(used) << "a format is given for \"" << name
                        << "\", which is not the weight of a linear layer of the model";
  }
  for (ValueId o : g.outputs()) {  // an output that is a weight as it is (a constant)
    if (isParam(g, o) && !impl->paramValues.count(o)) {
      impl->paramValues[o] = denseValue<float>(model.params.at(g.node(o).name));
    }
  }
  pairLayers(*impl, uses);
  // Attention's PV after its QKᵀ + mask + softmax: the masked keys' columns of P are zeros.
  std::map<ValueId, int64_t> stridedByResult;
  for (size_t s = 0; s < impl->steps.size(); ++s) {
    ExecStep& step = impl->steps[s];
    if (!step.strided) continue;
    auto producer = stridedByResult.find(step.strided->a.source);
    if (producer != stridedByResult.end() &&
        passesLiveColumns(*impl->steps[static_cast<size_t>(producer->second)].strided,
                          *step.strided)) {
      step.liveFrom = producer->second;
    }
    stridedByResult[step.strided->result] = static_cast<int64_t>(s);
  }
  fuseAttention(*impl, uses);
  // Free every computed value after the last step that reads it (outputs never).
  std::vector<int64_t> last(static_cast<size_t>(g.size()), -1);
  for (size_t s = 0; s < impl->steps.size(); ++s) {
    const ExecStep& step = impl->steps[s];
    if (step.runByLaterStep) continue;  // reads nothing: the next step runs it
    if (step.pairFirst) last[static_cast<size_t>(step.pairFirst->x)] = static_cast<int64_t>(s);
    if (step.isKernel && !step.isBatchedProduct) {
      last[static_cast<size_t>(step.x)] = static_cast<int64_t>(s);
      if (step.residual) last[static_cast<size_t>(*step.residual)] = static_cast<int64_t>(s);
    } else if (step.strided) {
      for (ValueId in : {step.strided->a.source, step.strided->b.source, step.strided->add.source})
        if (in >= 0) last[static_cast<size_t>(in)] = static_cast<int64_t>(s);
      if (step.scores) {
        for (ValueId in : {step.scores->a.source, step.scores->b.source, step.scores->add.source})
          if (in >= 0) last[static_cast<size_t>(in)] = static_cast<int64_t>(s);
      }
    } else {
      for (ValueId in : g.node(step.node).inputs)
        last[static_cast<size_t>(in)] = static_cast<int64_t>(s);
    }
  }
  impl->freeAfter.resize(impl->steps.size());
  for (ValueId v = 0; v < g.size(); ++v) {
    if (last[static_cast<size_t>(v)] >= 0 && !g.isOutput(v) && !isParam(g, v)) {
      impl->freeAfter[static_cast<size_t>(last[static_cast<size_t>(v)])].push_back(v);
    }
  }
  Executor e;
  e.impl_ = std::move(impl);
  return e;
}

}  // namespace sparseflow::graph
