// Operators that exporters write out as several ONNX nodes, found again before translation:
// layer normalization (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, then Mul and Add by the
// scale and shift), GELU in its erf form (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5) and in
// its tanh form (x cubed, times 0.044715, plus x, times sqrt(2/pi), Tanh, Add 1, Mul by x and by
// 0.5: torch's export of gelu(approximate="tanh"), GPT-2's gelu_new) and SiLU (x * Sigmoid(x)). A
// pattern is taken only where its inner values have no other reader.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "graph/import/onnx_constant.h"

namespace onnx {
class GraphProto;
}

namespace sparseflow::graph::onnx_import {

enum class FusedKind { kLayerNorm, kGelu, kGeluTanh, kSilu };

struct Fusion {
  FusedKind kind = FusedKind::kGelu;
  std::string x;             ///< the operand
  int64_t axis = -1;         ///< layer norm: the normalized axis as written (may be negative)
  double eps = 0;            ///< layer norm
  std::string scale, shift;  ///< layer norm's Mul and Add operands ("" when not part of it)
};

struct Fusions {
  std::map<int, Fusion> at;  ///< by the index of the pattern's last node
  std::set<int> absorbed;    ///< the pattern's other nodes (not translated)
};

/// The patterns in `graph`. `constantOf` gives the value of an initializer or Constant node's
/// output (nullptr for other names); `opset` is the default domain's.
Fusions findFusions(const onnx::GraphProto& graph,
                    const std::function<const Constant*(const std::string&)>& constantOf,
                    int64_t opset);

}  // namespace sparseflow::graph::onnx_import
