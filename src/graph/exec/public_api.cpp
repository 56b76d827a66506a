// The public model API (include/sparseflow/graph.h) over the graph library's model, compaction and
// executor.
#include "graph/exec/executor.h"
#include "graph/import/onnx_import.h"
#include "graph/model/compact.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/propagate.h"
#include "sparseflow/graph.h"

namespace sparseflow {

struct GraphModel::Impl {
  graph::Model model;
};

struct ModelExecutor::Impl {
  graph::Executor executor;
};

GraphModel::GraphModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

GraphModel GraphModel::fromText(const std::string& text, std::map<std::string, Tensor> params,
                                const std::string& source) {
  auto impl = std::make_shared<Impl>();
  impl->model.graph = graph::parseGraph(text, source);
  impl->model.params = std::move(params);
  graph::checkModel(impl->model);
  return GraphModel(std::move(impl));
}

GraphModel GraphModel::fromOnnx(const std::string& path, const OnnxOptions& options) {
  graph::OnnxImportOptions o;
  o.inputShapes = options.inputShapes;
  auto impl = std::make_shared<Impl>();
  impl->model = graph::importOnnx(path, o);
  return GraphModel(std::move(impl));
}

std::string GraphModel::text() const {
  return graph::print(impl_->model.graph);
}

std::string GraphModel::annotatedText() const {
  graph::Model m = impl_->model;
  graph::annotateParams(m);
  graph::propagate(m.graph);
  return graph::print(m.graph);
}

GraphModel GraphModel::compacted(CompactionSummary* summary) const {
  graph::CompactionReport report;
  auto impl = std::make_shared<Impl>();
  impl->model = graph::compact(impl_->model, &report);
  if (summary) {
    *summary = {};
    for (const graph::RemovedSlices& r : report.removed) {
      summary->removed.push_back({r.param, r.dim, r.extent, r.slices.count()});
    }
    summary->paramElementsBefore = report.paramElementsBefore;
    summary->paramElementsAfter = report.paramElementsAfter;
    summary->paramStoredBefore = report.paramStoredBefore;
    summary->paramStoredAfter = report.paramStoredAfter;
    summary->text = report.toString();
  }
  return GraphModel(std::move(impl));
}

const std::map<std::string, Tensor>& GraphModel::params() const {
  return impl_->model.params;
}

ModelExecutor ModelExecutor::build(const GraphModel& model, const ModelExecutorOptions& options) {
  graph::SpecializeOptions o;
  o.measure = options.measure;
  o.measureReps = options.measureReps;
  o.sparseThreshold = options.sparseThreshold;
  o.formats = options.formats;
  auto impl = std::make_shared<Impl>();
  impl->executor = graph::Executor::build(model.impl().model, o);
  ModelExecutor e;
  e.impl_ = std::move(impl);
  return e;
}

std::vector<DenseArray> ModelExecutor::run(const std::map<std::string, DenseArray>& inputs,
                                           std::vector<double>* stepMs) const {
  std::map<std::string, graph::DenseValue<float>> in;
  for (const auto& [name, a] : inputs) in.emplace(name, graph::DenseValue<float>{a.shape, a.data});
  std::vector<DenseArray> out;
  for (graph::DenseValue<float>& v : impl_->executor.run(in, stepMs)) {
    out.push_back(DenseArray{std::move(v.shape), std::move(v.data)});
  }
  return out;
}

std::vector<ModelStep> ModelExecutor::steps() const {
  std::vector<ModelStep> out;
  for (const graph::StepReport& r : impl_->executor.steps()) {
    out.push_back({r.what, r.weight, r.format, r.provider, r.why, r.density, r.candidateMs});
  }
  return out;
}

std::string ModelExecutor::describe() const {
  return impl_->executor.describe();
}

}  // namespace sparseflow
