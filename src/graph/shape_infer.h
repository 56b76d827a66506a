// Result types of the graph operators, with errors that name the operator and the value.
#pragma once

#include <string>
#include <vector>

#include "graph/ops.h"
#include "graph/tensor_type.h"

namespace sparseflow::graph {

/// One operand as shape inference sees it: its type and how messages name it.
struct InferOperand {
  const TensorType* type = nullptr;
  std::string label;  ///< "%0 (input "x")"
};

/// The type of `op` applied to `operands`; normalizes `attrs` in place (negative axes, reshape's
/// -1). Throws kInvalidArgument beginning with `where` (the operator and the value it defines).
TensorType inferType(OpKind op, const std::vector<InferOperand>& operands, OpAttrs& attrs,
                     const std::string& where);

}  // namespace sparseflow::graph
