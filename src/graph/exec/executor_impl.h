// The executor's plan (shared by specialize.cpp, which builds it, and executor.cpp, which runs
// it).
#pragma once

#include <memory>
#include <optional>

#include "graph/exec/batched_plan.h"
#include "graph/exec/executor.h"
#include "kernels/nm_gemm/packed_weights.h"
#include "sparseflow/epilogue.h"
#include "sparseflow/kernel.h"

namespace sparseflow::graph {

/// One step: a sparseflow kernel for a linear layer and what is fused into it, or one operator on
/// dense float values.
struct ExecStep {
  bool isKernel = false;
  /// A product of two computed values, C[q] = A[q] B[q] for q < batches (batch_matmul, or matmul
  /// of non-weights), run by a compiled kernel over views of the operands, or (`handTuned`) by
  /// kernels::batchedGemm.
  bool isBatchedProduct = false;
  bool handTuned = false;
  /// A strided product (kernels::batchedGemm's strided problem) that also computes the reshapes,
  /// transposes, scale, mask and softmax around it; the step defines `strided->result`.
  std::optional<BatchedPlan> strided;
  /// A strided step whose A operand is the result of the strided step with this index, which
  /// skips masked keys: it reads only the live rows of B (-1: none).
  int64_t liveFrom = -1;
  /// Attention in one step: the plan of the product whose result this step's A operand is (its
  /// step runs nothing), both run by kernels::batchedAttention, the scores never stored.
  std::optional<BatchedPlan> scores;
  int64_t batches = 0, m = 0, k = 0, n = 0;
  ValueId result = -1;  ///< the value the step defines (the last node of a fused chain)
  ValueId node = -1;    ///< the operator (dense steps)
  // Kernel steps: Y[rows, out] = epilogue(X[rows, in] W[out, in]^T + b).
  ValueId x = -1;
  int64_t rows = 0, in = 0, out = 0;
  Kernel kernel;
  Tensor weight;
  std::optional<Tensor> bias;
  // For inputs with few nonzeros (activations after a relu): Y = epilogue(X Wt + b) with X made
  // csr at run time and Wt = W^T dense [in, out], so the work follows X's nonzeros.
  Kernel sparseInputKernel;
  Tensor weightT;
  bool hasSparseInputPath = false;
  // A clip after the activation (minimum / maximum by a one-element constant): in the kernels'
  // text (`clipInKernel`: the providers fuse it into their store), else applied in place.
  std::optional<float> clipLow, clipHigh;
  bool clipInKernel = false;
  /// A computed value added last (`x + W·h + b`): R of the kernels, read when the step runs.
  std::optional<ValueId> residual;
  Activation activation = Activation::kNone;  ///< kernel steps: the activation fused into it
  // Two csr or two 2:4 layers in a row (an MLP block, the first not a relu): the first step's
  // work is done by the second (`runByLaterStep`), which holds the first (`pairFirst`) and runs
  // both through kernels::csrLinearPair or kernels::runNMGemmPair (packed weights in
  // `pairPacked`), the hidden activations kept in cache.
  bool runByLaterStep = false;
  std::shared_ptr<const ExecStep> pairFirst;
  std::shared_ptr<const kernels::PackedNMWeights> pairPacked[2];  ///< 2:4 pairs: first, second
};

/// Below this fraction of nonzeros in X's live rows, a kernel step with a sparse-input path takes
/// it.
inline constexpr double kSparseInputDensity = 0.12;

struct Executor::Impl {
  Graph graph;
  std::vector<ExecStep> steps;
  std::vector<StepReport> reports;
  std::map<ValueId, DenseValue<float>> paramValues;  ///< parameters read by dense steps
  std::vector<std::vector<ValueId>> freeAfter;       ///< per step: values no later step reads
};

}  // namespace sparseflow::graph
