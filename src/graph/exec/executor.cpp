// Running a specialized model: values in definition order, each dropped after its last use.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "graph/exec/executor_impl.h"
#include "graph/model/dense_ops.h"
#include "graph/model/evaluate.h"
#include "kernels/batched_gemm/batched_gemm.h"
#include "kernels/csr_spmm/csr_spmm.h"
#include "kernels/epilogue_apply.h"
#include "kernels/nm_gemm/nm_gemm.h"
#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow::graph {
namespace {

/// Buffers of values no later step reads, kept for steps whose results have the same number of
/// elements (a model's layers repeat their shapes): taking one costs neither zeroing nor the page
/// faults of fresh memory. The steps that take them write every element.
class BufferPool {
 public:
  std::vector<float> take(size_t elements) {
    auto it = free_.find(elements);
    if (it == free_.end() || it->second.empty()) return std::vector<float>(elements);
    std::vector<float> v = std::move(it->second.back());
    it->second.pop_back();
    return v;
  }
  void give(std::vector<float>&& v) {
    auto& same = free_[v.size()];
    if (!v.empty() && same.size() < kPerSize) same.push_back(std::move(v));
  }

 private:
  static constexpr size_t kPerSize = 4;
  std::map<size_t, std::vector<std::vector<float>>> free_;
};

/// Nonzeros per row of x [rows, in] (a NaN counts), rows in parallel.
std::vector<int64_t> rowCounts(const float* x, int64_t rows, int64_t in) {
  std::vector<int64_t> counts(static_cast<size_t>(rows));
#pragma omp parallel for schedule(static) if (rows * in > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * in;
    int64_t c = 0;
    for (int64_t k = 0; k < in; ++k) c += row[k] != 0 || row[k] != row[k];
    counts[static_cast<size_t>(r)] = c;
  }
  return counts;
}

/// x [rows, in] as csr (int32 indices), from its row counts; rows filled in parallel.
Tensor csrOf(const float* x, int64_t rows, int64_t in, const std::vector<int64_t>& counts,
             int64_t nnz) {
  Buffer pos = Buffer::zeros(DType::kI32, rows + 1), crd = Buffer::zeros(DType::kI32, nnz);
  Buffer values = Buffer::zeros(DType::kF32, nnz);
  int32_t* p = pos.as<int32_t>();
  int32_t* c = crd.as<int32_t>();
  float* v = values.as<float>();
  for (int64_t r = 0; r < rows; ++r)
    p[r + 1] = static_cast<int32_t>(p[r] + counts[static_cast<size_t>(r)]);
#pragma omp parallel for schedule(static) if (nnz > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    int32_t q = p[r];
    const float* row = x + r * in;
    for (int64_t k = 0; k < in; ++k) {
      if (row[k] == 0 && row[k] == row[k]) continue;
      c[q] = static_cast<int32_t>(k);
      v[q++] = row[k];
    }
  }
  return Tensor({rows, in}, DType::kF32, Format::parse("csr", 2),
                {LevelStorage{}, LevelStorage{std::move(pos), std::move(crd), Buffer()}},
                std::move(values));
}

void clip(const ExecStep& step, DenseValue<float>& result);

/// Whether x [rows, in] may have zero rows or few nonzeros, from a sample of about 64 rows: the
/// full count (a pass over x) is made only then. Dense activations (after a GELU) skip it; a
/// wrong guess costs only speed (every row then runs through the weight's kernel, which is
/// exact for zero rows too).
bool mayHaveZeros(const float* x, int64_t rows, int64_t in) {
  const int64_t stride = std::max<int64_t>(1, rows / 64);
  int64_t sampled = 0, nonzero = 0;
  for (int64_t r = 0; r < rows; r += stride) {
    const float* row = x + r * in;
    int64_t c = 0;
    for (int64_t k = 0; k < in; ++k) c += row[k] != 0 || row[k] != row[k];
    if (c == 0) return true;
    nonzero += c;
    sampled += in;
  }
  return 2 * nonzero < sampled;  // at most half nonzero: worth counting every row
}

/// The residual's values [rows, out] as a tensor (a view), or an empty tensor without one.
Tensor residualView(const ExecStep& step, const float* r, int64_t rows) {
  if (r == nullptr) return Tensor();
  return Tensor({rows, step.out}, DType::kF32, Format::parse("dense", 2), {{}, {}},
                Buffer::view(DType::kF32, const_cast<float*>(r), rows * step.out));
}

/// Runs the weight's kernel of `step` on rows x[rows, in] into y[rows, out] (r: the residual's
/// rows, when the step has one).
void runKernel(const ExecStep& step, const float* x, int64_t rows, float* y, const float* r) {
  const Format dense = Format::parse("dense", 2);
  Tensor Y({rows, step.out}, DType::kF32, dense, {{}, {}},
           Buffer::view(DType::kF32, y, rows * step.out));
  const Tensor X({rows, step.in}, DType::kF32, dense, {{}, {}},
                 Buffer::view(DType::kF32, const_cast<float*>(x), rows * step.in));
  const Tensor R = residualView(step, r, rows);
  std::map<std::string, const Tensor*> args = {{"X", &X}, {"W", &step.weight}};
  if (step.bias) args["b"] = &*step.bias;
  if (r != nullptr) args["R"] = &R;
  step.kernel.run(args, Y);
}

/// A kernel step. Activations after a relu are often mostly zero (the Graph Challenge's deeper
/// layers: whole images go to zero): one pass counts each row's nonzeros; with few nonzeros in
/// all, X is made csr (empty rows for zero rows) and the sparse-input kernel runs against W^T, its
/// work following X's nonzeros; else, when at least a quarter of the rows are zero, the weight's
/// kernel runs on the nonzero rows only and every zero row gets the kernel's value of a zero row
/// (its epilogue of the bias), computed once; else on all rows. The clip fused into the step
/// (minimum and maximum by constants) is in its kernels, or else applied to the result in place.
/// `residual`: R's values when the step has one (a zero row's value then differs per row: the
/// rows are not gathered).
void runKernelStep(const ExecStep& step, const DenseValue<float>& x,
                   const std::vector<int64_t>& shape, DenseValue<float>& result, BufferPool& pool,
                   const DenseValue<float>* residual = nullptr) {
  result.shape = shape;
  result.data = pool.take(static_cast<size_t>(step.rows * step.out));
  const float* r = residual != nullptr ? residual->data.data() : nullptr;
  if (!mayHaveZeros(x.data.data(), step.rows, step.in)) {
    runKernel(step, x.data.data(), step.rows, result.data.data(), r);
    clip(step, result);
    return;
  }
  const std::vector<int64_t> counts = rowCounts(x.data.data(), step.rows, step.in);
  int64_t nnz = 0, liveRows = 0;
  for (int64_t c : counts) {
    nnz += c;
    liveRows += c > 0;
  }
  const auto limit = static_cast<int64_t>(
      kSparseInputDensity * static_cast<double>(std::max<int64_t>(liveRows, 1) * step.in));
  if (step.hasSparseInputPath && nnz <= limit && nnz < (int64_t{1} << 31)) {
    const Tensor xs = csrOf(x.data.data(), step.rows, step.in, counts, nnz);
    Tensor Y({step.rows, step.out}, DType::kF32, Format::parse("dense", 2), {{}, {}},
             Buffer::view(DType::kF32, result.data.data(), step.rows * step.out));
    const Tensor R = residualView(step, r, step.rows);
    std::map<std::string, const Tensor*> args = {{"X", &xs}, {"Wt", &step.weightT}};
    if (step.bias) args["b"] = &*step.bias;
    if (r != nullptr) args["R"] = &R;
    step.sparseInputKernel.run(args, Y);
  } else if (4 * liveRows > 3 * step.rows || r != nullptr) {
    runKernel(step, x.data.data(), step.rows, result.data.data(), r);
  } else {
    const std::vector<float> zeroRow(static_cast<size_t>(step.in), 0.0f);
    std::vector<float> zeroOut(static_cast<size_t>(step.out));
    runKernel(step, zeroRow.data(), 1, zeroOut.data(), nullptr);
    std::vector<int64_t> live;
    for (int64_t r = 0; r < step.rows; ++r) {
      if (counts[static_cast<size_t>(r)] > 0) live.push_back(r);
    }
    std::vector<float> gathered(live.size() * static_cast<size_t>(step.in));
    for (size_t r = 0; r < live.size(); ++r) {
      std::copy_n(x.data.begin() + live[r] * step.in, step.in,
                  gathered.begin() + static_cast<int64_t>(r) * step.in);
    }
    std::vector<float> computed(live.size() * static_cast<size_t>(step.out));
    if (!live.empty()) {
      runKernel(step, gathered.data(), static_cast<int64_t>(live.size()), computed.data(), nullptr);
    }
    size_t next = 0;
    for (int64_t r = 0; r < step.rows; ++r) {
      const bool isLive = next < live.size() && live[next] == r;
      const float* from =
          isLive ? computed.data() + next * static_cast<size_t>(step.out) : zeroOut.data();
      std::copy_n(from, step.out, result.data.begin() + r * step.out);
      next += isLive;
    }
  }
  clip(step, result);
}

/// The clip fused into a kernel step (minimum and maximum by constants), in place.
void clip(const ExecStep& step, DenseValue<float>& result) {
  if ((step.clipLow || step.clipHigh) && !step.clipInKernel) {
    const float lo = step.clipLow.value_or(-HUGE_VALF), hi = step.clipHigh.value_or(HUGE_VALF);
    const int64_t n = step.rows * step.out;
    float* y = result.data.data();
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t e = 0; e < n; ++e) {
      const float v = y[e];
      y[e] = v != v ? v : std::min(std::max(v, lo), hi);  // NaN stays, as torch.clamp
    }
  }
}

template <typename T>
kernels::StridedMatrices<T> matrices(T* data, const OperandView& v) {
  kernels::StridedMatrices<T> m;
  m.data = data;
  std::copy(v.batch.begin(), v.batch.end(), m.batch.begin());
  m.row = v.row;
  m.col = v.col;
  return m;
}

/// The strided problem of a plan over its operands' buffers (C: `out`, may be null).
template <typename ValueOf>
kernels::BatchedGemmProblem stridedProblem(const BatchedPlan& plan, const ValueOf& value,
                                           float* out) {
  kernels::BatchedGemmProblem p;
  p.batchShape = plan.batchShape;
  p.m = plan.m;
  p.k = plan.k;
  p.n = plan.n;
  if (plan.a.source >= 0) p.a = matrices(value(plan.a.source).data.data(), plan.a);
  p.b = matrices(value(plan.b.source).data.data(), plan.b);
  if (plan.add.source >= 0) p.add = matrices(value(plan.add.source).data.data(), plan.add);
  p.scale = plan.scale;
  p.softmax = plan.softmax;
  // Masked keys (an added mask broadcast over rows, then the softmax) are skipped.
  p.skipMaskedColumns = plan.add.source >= 0 && plan.softmax && plan.add.row == 0;
  p.c = matrices(out, plan.c);
  return p;
}

/// A strided plan's step: the result (contiguous in its shape, every element written) computed
/// from its operands' buffers; the columns it computed per product (masked keys skipped) are
/// kept for the product reading it (`liveInner`: those of the product this one reads).
template <typename ValueOf>
void runStridedStep(const BatchedPlan& plan, const ValueOf& value,
                    const std::vector<int64_t>& shape, DenseValue<float>& result, BufferPool& pool,
                    std::vector<int32_t>& liveColumns, const std::vector<int32_t>* liveInner) {
  result.shape = shape;
  result.data = pool.take(static_cast<size_t>(numElements(shape)));
  kernels::BatchedGemmProblem p = stridedProblem(plan, value, result.data.data());
  if (p.skipMaskedColumns) {
    int64_t batches = 1;
    for (int64_t e : plan.batchShape) batches *= e;
    liveColumns.resize(static_cast<size_t>(batches));
    p.liveColumns = liveColumns.data();
  }
  if (liveInner != nullptr && !liveInner->empty()) p.liveInner = liveInner->data();
  kernels::batchedGemm(p);
}

/// Attention in one step (step.scores, then step.strided reading its result): the scores are
/// never stored.
template <typename ValueOf>
void runAttentionStep(const ExecStep& step, const ValueOf& value, const std::vector<int64_t>& shape,
                      DenseValue<float>& result, BufferPool& pool) {
  result.shape = shape;
  result.data = pool.take(static_cast<size_t>(numElements(shape)));
  const kernels::BatchedGemmProblem scores = stridedProblem(*step.scores, value, nullptr);
  BatchedPlan context = *step.strided;
  context.a.source = -1;  // the scores: kept in the kernel
  kernels::batchedAttention(scores, stridedProblem(context, value, result.data.data()));
}

/// The csr arguments of a kernel step's weight and epilogue (kernels::csrLinearPair's halves).
kernels::CsrSpmmArgs csrArgs(const ExecStep& step) {
  kernels::CsrSpmmArgs a;
  a.rows = step.out;
  a.cols = step.rows;
  a.inner = step.in;
  a.pos = static_cast<const int32_t*>(step.weight.level(1).pos.data());
  a.crd = static_cast<const int32_t*>(step.weight.level(1).crd.data());
  a.vals = static_cast<const float*>(step.weight.values().data());
  a.bias = step.bias ? static_cast<const float*>(step.bias->values().data()) : nullptr;
  a.activation = step.activation;
  if (step.clipInKernel) {
    a.clampLow = step.clipLow.value_or(-HUGE_VALF);
    a.clampHigh = step.clipHigh.value_or(HUGE_VALF);
  }
  return a;
}

/// The 2:4 GEMM arguments of a kernel step's bias and epilogue (kernels::runNMGemmPair's halves).
kernels::GemmArgs gemmArgs(const ExecStep& step) {
  kernels::GemmArgs a;
  a.batch = step.rows;
  a.bias = step.bias ? static_cast<const float*>(step.bias->values().data()) : nullptr;
  a.activation = step.activation;
  if (step.clipInKernel) {
    a.clampLow = step.clipLow.value_or(-HUGE_VALF);
    a.clampHigh = step.clipHigh.value_or(HUGE_VALF);
  }
  return a;
}

/// Two csr or 2:4 layers (step.pairFirst, then step) on x: one pair kernel, or, when x may have
/// zero rows or few nonzeros (the paths a single step takes then) or the 2:4 pair declines, the
/// two steps one after the other.
void runPairStep(const ExecStep& step, const DenseValue<float>& x,
                 const std::vector<int64_t>& shape, DenseValue<float>& result, BufferPool& pool) {
  const ExecStep& first = *step.pairFirst;
  auto oneByOne = [&] {
    DenseValue<float> hidden;
    runKernelStep(first, x, {first.rows, first.out}, hidden, pool);
    runKernelStep(step, hidden, shape, result, pool);
    pool.give(std::move(hidden.data));
  };
  if (mayHaveZeros(x.data.data(), first.rows, first.in)) return oneByOne();
  result.shape = shape;
  result.data = pool.take(static_cast<size_t>(step.rows * step.out));
  if (step.pairPacked[0]) {
    kernels::GemmArgs a = gemmArgs(first), b = gemmArgs(step);
    a.x = x.data.data();
    b.y = result.data.data();
    if (!kernels::runNMGemmPair(*step.pairPacked[0], a, *step.pairPacked[1], b,
                                omp_get_max_threads())) {
      pool.give(std::move(result.data));
      return oneByOne();
    }
  } else {
    kernels::CsrSpmmArgs a = csrArgs(first), b = csrArgs(step);
    a.b = x.data.data();
    b.c = result.data.data();
    b.overwrite = true;
    kernels::csrLinearPair(a, b);
  }
  clip(step, result);
}

}  // namespace

std::vector<DenseValue<float>> Executor::run(const std::map<std::string, DenseValue<float>>& inputs,
                                             std::vector<double>* stepMs) const {
  const Impl& p = *impl_;
  const Graph& g = p.graph;
  checkInputs(g, inputs);
  std::vector<DenseValue<float>> values(static_cast<size_t>(g.size()));
  for (ValueId v = 0; v < g.size(); ++v) {
    const Node& node = g.node(v);
    if (node.op == OpKind::kInput) values[static_cast<size_t>(v)] = inputs.at(node.name);
  }
  auto value = [&](ValueId v) -> const DenseValue<float>& {
    auto it = p.paramValues.find(v);
    return it != p.paramValues.end() ? it->second : values[static_cast<size_t>(v)];
  };
  if (stepMs) stepMs->assign(p.steps.size(), 0.0);
  BufferPool pool;
  std::vector<std::vector<int32_t>> liveColumns(p.steps.size());  // per strided step (masks)
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const ExecStep& step = p.steps[s];
    const auto t0 = std::chrono::steady_clock::now();
    DenseValue<float>& result = values[static_cast<size_t>(step.result)];
    if (step.runByLaterStep) {  // the next step runs it
      if (stepMs) (*stepMs)[s] = 0.0;
      continue;
    }
    if (step.scores) {
      runAttentionStep(step, value, g.node(step.result).type.shape, result, pool);
    } else if (step.pairFirst) {
      runPairStep(step, value(step.pairFirst->x), g.node(step.result).type.shape, result, pool);
    } else if (step.strided) {
      runStridedStep(
          *step.strided, value, g.node(step.result).type.shape, result, pool, liveColumns[s],
          step.liveFrom >= 0 ? &liveColumns[static_cast<size_t>(step.liveFrom)] : nullptr);
    } else if (step.isBatchedProduct && step.handTuned) {
      const Node& node = g.node(step.node);
      const DenseValue<float>& a = value(node.inputs[0]);
      const DenseValue<float>& b = value(node.inputs[1]);
      result.shape = node.type.shape;
      result.data = pool.take(static_cast<size_t>(step.batches * step.m * step.n));  // all written
      kernels::batchedGemm(a.data.data(), b.data.data(), result.data.data(), step.batches, step.m,
                           step.k, step.n);
    } else if (step.isBatchedProduct) {
      const Node& node = g.node(step.node);
      const DenseValue<float>& a = value(node.inputs[0]);
      const DenseValue<float>& b = value(node.inputs[1]);
      result.shape = node.type.shape;
      result.data.assign(static_cast<size_t>(step.batches * step.m * step.n), 0.0f);
      const Format dense3 = Format::parse("dense", 3);
      const Tensor A({step.batches, step.m, step.k}, DType::kF32, dense3, {{}, {}, {}},
                     Buffer::view(DType::kF32, const_cast<float*>(a.data.data()), a.size()));
      const Tensor B({step.batches, step.k, step.n}, DType::kF32, dense3, {{}, {}, {}},
                     Buffer::view(DType::kF32, const_cast<float*>(b.data.data()), b.size()));
      Tensor C({step.batches, step.m, step.n}, DType::kF32, dense3, {{}, {}, {}},
               Buffer::view(DType::kF32, result.data.data(), step.batches * step.m * step.n));
      step.kernel.run({{"A", &A}, {"B", &B}}, C);
    } else if (step.isKernel) {
      runKernelStep(step, value(step.x), g.node(step.result).type.shape, result, pool,
                    step.residual ? &value(*step.residual) : nullptr);
    } else {
      const Node& node = g.node(step.node);
      const ValueId in0 = node.inputs.empty() ? -1 : node.inputs[0];
      const auto& dying = p.freeAfter[s];
      const bool operandDies = in0 >= 0 && !p.paramValues.count(in0) &&
                               std::find(dying.begin(), dying.end(), in0) != dying.end();
      const bool lastAxisSoftmax = node.op == OpKind::kSoftmax &&
                                   std::get<int64_t>(node.attrs.at("axis")) == node.type.rank() - 1;
      const bool lastAxisLayerNorm =
          node.op == OpKind::kLayerNorm &&
          std::get<int64_t>(node.attrs.at("axis")) == node.type.rank() - 1;
      if (node.op == OpKind::kReshape && operandDies) {
        // The same row-major data: the operand's buffer is taken over (it is freed here anyway).
        result.shape = node.type.shape;
        result.data = std::move(values[static_cast<size_t>(in0)].data);
      } else if ((lastAxisSoftmax || lastAxisLayerNorm) && node.type.rank() > 0) {
        // Rows of the last axis in place, in vectors (the providers' row epilogues): the operand's
        // buffer taken over when it dies here, else copied.
        if (operandDies) {
          result.data = std::move(values[static_cast<size_t>(in0)].data);
        } else {
          result.data = value(in0).data;
        }
        result.shape = node.type.shape;
        const int64_t cols = node.type.shape.back();
        const int64_t rows = cols == 0 ? 0 : static_cast<int64_t>(result.data.size()) / cols;
        if (lastAxisSoftmax) {
          kernels::applyRowEpilogue(kernels::RowEpilogue::kSoftmax, result.data.data(), rows, cols);
        } else {  // layer norm with its scale and shift (any eps)
          const float* gamma = node.inputs.size() > 1 ? value(node.inputs[1]).data.data() : nullptr;
          const float* beta = node.inputs.size() > 2 ? value(node.inputs[2]).data.data() : nullptr;
          auto eps = node.attrs.find("eps");
          kernels::layerNormRows(
              result.data.data(), rows, cols,
              eps == node.attrs.end() ? 1e-5f : static_cast<float>(std::get<double>(eps->second)),
              gamma, beta);
        }
      } else {
        std::vector<const DenseValue<float>*> operands;
        for (ValueId in : node.inputs) operands.push_back(&value(in));
        // An element-wise operator whose operand 0 dies here and has the result's shape writes
        // into that operand's buffer (no allocation, one pass less).
        const bool sameOperands = node.inputs.size() > 1 && node.inputs[1] == in0;
        bool done = false;
        if (operandDies && !sameOperands && value(in0).shape == node.type.shape) {
          DenseValue<float> target = std::move(values[static_cast<size_t>(in0)]);
          operands[0] = &target;
          done = evaluateInPlace<float>(node, target, operands);
          if (done) {
            result = std::move(target);
          } else {
            values[static_cast<size_t>(in0)] = std::move(target);  // not element-wise: put back
            operands[0] = &value(in0);
          }
        }
        if (!done) result = evaluateOp<float>(g, node, operands);
      }
    }
    for (ValueId v : p.freeAfter[s]) {
      pool.give(std::move(values[static_cast<size_t>(v)].data));
      values[static_cast<size_t>(v)] = {};
    }
    if (stepMs) {
      (*stepMs)[s] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  std::vector<DenseValue<float>> outputs;
  for (ValueId o : g.outputs()) outputs.push_back(value(o));
  return outputs;
}

const std::vector<StepReport>& Executor::steps() const {
  return impl_->reports;
}

std::string Executor::describe() const {
  std::ostringstream os;
  for (const StepReport& r : impl_->reports) {
    os << r.what;
    if (!r.weight.empty()) {
      os << ": " << r.weight << " as " << r.format << " (density " << r.density << "), provider "
         << r.provider << "; " << r.why;
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace sparseflow::graph
