// The graph IR, models, compaction and the executor from Python (python/sparseflow/optimize.py
// builds the graph text from a torch.fx trace): _GraphModel and _Executor.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "sparseflow/graph.h"

namespace sparseflow::python {
namespace {

/// A float32 copy of a C-contiguous array.
DenseArray denseOfArray(const py::array& array, const std::string& name) {
  const auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!a) invalid("input \"" + name + "\" is not a numeric array");
  DenseArray v;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) v.shape.push_back(static_cast<int64_t>(a.shape(d)));
  v.data.assign(a.data(), a.data() + a.size());
  return v;
}

/// A numpy array that takes over the value's memory.
py::array arrayOfDense(DenseArray&& v) {
  auto* owned = new std::vector<float>(std::move(v.data));
  py::capsule free(owned, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  std::vector<py::ssize_t> shape(v.shape.begin(), v.shape.end());
  return py::array_t<float>(shape, owned->data(), free);
}

py::dict compactionDict(const CompactionSummary& r) {
  py::dict d;
  py::list removed;
  for (const CompactionSummary::Removed& s : r.removed) {
    py::dict e;
    e["param"] = s.param;
    e["dim"] = s.dim;
    e["extent"] = s.extent;
    e["removed"] = s.removed;
    removed.append(e);
  }
  d["removed"] = removed;
  d["param_elements_before"] = r.paramElementsBefore;
  d["param_elements_after"] = r.paramElementsAfter;
  d["param_stored_before"] = r.paramStoredBefore;
  d["param_stored_after"] = r.paramStoredAfter;
  d["text"] = r.text;
  return d;
}

}  // namespace

void bindGraph(py::module_& m) {
  py::class_<GraphModel>(m, "_GraphModel")
      .def(py::init([](const std::string& text, const std::map<std::string, Tensor>& params) {
             return GraphModel::fromText(text, params);
           }),
           py::arg("text"), py::arg("params"))
      .def_static(
          "from_onnx",
          [](const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
            OnnxOptions options;
            options.inputShapes = shapes;
            py::gil_scoped_release release;
            return GraphModel::fromOnnx(path, options);
          },
          py::arg("path"), py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{})
      .def("text", &GraphModel::text)
      .def("annotated", &GraphModel::annotatedText,
           "The graph text with the weights' measured facts and everything propagation adds.")
      .def("compact",
           [](const GraphModel& model) {
             CompactionSummary summary;
             std::optional<GraphModel> out;
             {
               py::gil_scoped_release release;
               out.emplace(model.compacted(&summary));
             }
             return py::make_tuple(*out, compactionDict(summary));
           })
      .def("param", [](const GraphModel& model, const std::string& name) {
        return model.params().at(name);
      });

  py::class_<ModelExecutor>(m, "_Executor")
      .def(py::init([](const GraphModel& model, bool measure, int reps,
                       const std::map<std::string, std::string>& formats) {
             ModelExecutorOptions options;
             options.measure = measure;
             options.measureReps = reps;
             options.formats = formats;
             py::gil_scoped_release release;  // measuring and the JIT take seconds
             return ModelExecutor::build(model, options);
           }),
           py::arg("model"), py::arg("measure") = true, py::arg("reps") = 5,
           py::arg("formats") = std::map<std::string, std::string>{})
      .def("run",
           [](const ModelExecutor& e, const std::map<std::string, py::array>& inputs) {
             std::map<std::string, DenseArray> in;
             for (const auto& [name, array] : inputs) in.emplace(name, denseOfArray(array, name));
             std::vector<DenseArray> out;
             {
               py::gil_scoped_release release;
               out = e.run(in);
             }
             py::list result;
             for (DenseArray& v : out) result.append(arrayOfDense(std::move(v)));
             return result;
           })
      .def(
          "profile",
          [](const ModelExecutor& e, const std::map<std::string, py::array>& inputs) {
            std::map<std::string, DenseArray> in;
            for (const auto& [name, array] : inputs) in.emplace(name, denseOfArray(array, name));
            std::vector<double> ms;
            {
              py::gil_scoped_release release;
              e.run(in, &ms);
            }
            return ms;
          },
          "Milliseconds of each step (steps() order) in one run.")
      .def("steps",
           [](const ModelExecutor& e) {
             py::list steps;
             for (const ModelStep& r : e.steps()) {
               py::dict d;
               d["what"] = r.what;
               d["weight"] = r.weight;
               d["format"] = r.format;
               d["provider"] = r.provider;
               d["density"] = r.density;
               d["candidate_ms"] = r.candidateMs;
               d["why"] = r.why;
               steps.append(d);
             }
             return steps;
           })
      .def("describe", &ModelExecutor::describe);
}

}  // namespace sparseflow::python
