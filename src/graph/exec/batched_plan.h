// Planning one strided batched product (kernels::batchedGemm's strided problem) for a batch_matmul
// or matmul of two computed values: the reshapes and transposes that make its operands from other
// values (attention's head split, the key's transpose) and its result into another layout (the
// heads merged back) are read and written through strides, and a scale by a constant, an added
// broadcast operand (the attention mask) and a last-axis softmax after it are applied to each
// product while it is in cache. None of these nodes gets a step or a buffer of its own.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "graph/model/model.h"

namespace sparseflow::graph {

/// Where one operand of the strided problem lives: the value whose buffer is read (or, for the
/// result, written) and the element strides over the plan's batch dimensions, rows and columns.
struct OperandView {
  ValueId source = -1;
  std::vector<int64_t> batch;
  int64_t row = 0, col = 0;
};

struct BatchedPlan {
  ValueId product = -1;
  ValueId result = -1;  ///< the value the step defines, contiguous in its own shape
  std::vector<int64_t> batchShape;
  int64_t m = 0, k = 0, n = 0;
  OperandView a, b, c;  ///< c.source == result
  OperandView add;      ///< source -1: no added operand
  float scale = 1.0f;
  bool softmax = false;
  std::vector<ValueId> absorbed;  ///< nodes the step computes, besides product and result
};

/// Whether `consumer` reads `producer`'s result as its A operand product for product: product q
/// of each at the same element offsets, rows and columns (`consumer.m` rows, `producer.n`
/// columns).
bool readsProductForProduct(const BatchedPlan& producer, const BatchedPlan& consumer);

/// Whether the masked-key skipping of `producer` (scale, an added mask broadcast over rows,
/// softmax) can tell `consumer` which columns of its A operand are zeros: consumer reads
/// producer's result as A, product q for product q (the same element offsets for every
/// product, rows and columns).
bool passesLiveColumns(const BatchedPlan& producer, const BatchedPlan& consumer);

/// The plan for the product node `product` (batch_matmul, or matmul of two computed values) where
/// it takes over at least one node around it, or nullopt. Nodes in `claimed` (absorbed by or
/// defined by earlier plans) are left alone; `uses` lists the readers of every value.
std::optional<BatchedPlan> planBatchedProduct(const Model& model, ValueId product,
                                              const std::vector<std::vector<ValueId>>& uses,
                                              const std::set<ValueId>& claimed);

}  // namespace sparseflow::graph
