// Running a specialized model: values in definition order, each dropped after its last use.
#include <sstream>

#include "graph/exec/executor_impl.h"
#include "graph/model/dense_ops.h"
#include "graph/model/evaluate.h"
#include "support/check.h"

namespace sparseflow::graph {

std::vector<DenseValue<float>> Executor::run(
    const std::map<std::string, DenseValue<float>>& inputs) const {
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
  const Format dense = Format::parse("dense", 2);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const ExecStep& step = p.steps[s];
    DenseValue<float>& result = values[static_cast<size_t>(step.result)];
    if (step.isKernel) {
      const DenseValue<float>& x = value(step.x);
      result.shape = g.node(step.result).type.shape;
      result.data.assign(static_cast<size_t>(step.rows * step.out), 0.0f);
      const Tensor X({step.rows, step.in}, DType::kF32, dense, {{}, {}},
                     Buffer::view(DType::kF32, const_cast<float*>(x.data.data()), x.size()));
      Tensor Y({step.rows, step.out}, DType::kF32, dense, {{}, {}},
               Buffer::view(DType::kF32, result.data.data(), step.rows * step.out));
      std::map<std::string, const Tensor*> args = {{"X", &X}, {"W", &step.weight}};
      if (step.bias) args["b"] = &*step.bias;
      step.kernel.run(args, Y);
    } else {
      const Node& node = g.node(step.node);
      std::vector<const DenseValue<float>*> operands;
      for (ValueId in : node.inputs) operands.push_back(&value(in));
      result = evaluateOp<float>(g, node, operands);
    }
    for (ValueId v : p.freeAfter[s]) values[static_cast<size_t>(v)] = {};
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
