// The graph IR, models, compaction and the executor from Python (python/sparseflow/optimize.py
// builds the graph text from a torch.fx trace): _GraphModel and _Executor.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "graph/exec/executor.h"
#include "graph/model/compact.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/propagate.h"

namespace sparseflow::python {
namespace {

using graph::DenseValue;
using graph::Executor;
using graph::Model;

/// A float32 copy of a C-contiguous array.
DenseValue<float> denseOfArray(const py::array& array, const std::string& name) {
  const auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!a) invalid("input \"" + name + "\" is not a numeric array");
  DenseValue<float> v;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) v.shape.push_back(static_cast<int64_t>(a.shape(d)));
  v.data.assign(a.data(), a.data() + a.size());
  return v;
}

/// A numpy array that takes over the value's memory.
py::array arrayOfDense(DenseValue<float>&& v) {
  auto* owned = new std::vector<float>(std::move(v.data));
  py::capsule free(owned, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  std::vector<py::ssize_t> shape(v.shape.begin(), v.shape.end());
  return py::array_t<float>(shape, owned->data(), free);
}

py::dict compactionDict(const graph::CompactionReport& r) {
  py::dict d;
  py::list removed;
  for (const graph::RemovedSlices& s : r.removed) {
    py::dict e;
    e["param"] = s.param;
    e["dim"] = s.dim;
    e["extent"] = s.extent;
    e["removed"] = s.slices.count();
    removed.append(e);
  }
  d["removed"] = removed;
  d["param_elements_before"] = r.paramElementsBefore;
  d["param_elements_after"] = r.paramElementsAfter;
  d["param_stored_before"] = r.paramStoredBefore;
  d["param_stored_after"] = r.paramStoredAfter;
  d["text"] = r.toString();
  return d;
}

}  // namespace

void bindGraph(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>>(m, "_GraphModel")
      .def(py::init([](const std::string& text, const std::map<std::string, Tensor>& params) {
             auto model = std::make_shared<Model>();
             model->graph = graph::parseGraph(text, "<graph>");
             model->params = params;
             graph::checkModel(*model);
             return model;
           }),
           py::arg("text"), py::arg("params"))
      .def("text", [](const Model& model) { return graph::print(model.graph); })
      .def(
          "annotated",
          [](const Model& model) {
            Model m = model;
            graph::annotateParams(m);
            graph::propagate(m.graph);
            return graph::print(m.graph);
          },
          "The graph text with the weights' measured facts and everything propagation adds.")
      .def("compact",
           [](const Model& model) {
             graph::CompactionReport report;
             auto out = std::make_shared<Model>();
             {
               py::gil_scoped_release release;
               *out = graph::compact(model, &report);
             }
             return py::make_tuple(out, compactionDict(report));
           })
      .def("param",
           [](const Model& model, const std::string& name) { return model.params.at(name); });

  py::class_<Executor>(m, "_Executor")
      .def(py::init([](const Model& model, bool measure, int reps,
                       const std::map<std::string, std::string>& formats) {
             graph::SpecializeOptions options;
             options.measure = measure;
             options.measureReps = reps;
             options.formats = formats;
             py::gil_scoped_release release;  // measuring and the JIT take seconds
             return Executor::build(model, options);
           }),
           py::arg("model"), py::arg("measure") = true, py::arg("reps") = 5,
           py::arg("formats") = std::map<std::string, std::string>{})
      .def("run",
           [](const Executor& e, const std::map<std::string, py::array>& inputs) {
             std::map<std::string, DenseValue<float>> in;
             for (const auto& [name, array] : inputs) in.emplace(name, denseOfArray(array, name));
             std::vector<DenseValue<float>> out;
             {
               py::gil_scoped_release release;
               out = e.run(in);
             }
             py::list result;
             for (DenseValue<float>& v : out) result.append(arrayOfDense(std::move(v)));
             return result;
           })
      .def(
          "profile",
          [](const Executor& e, const std::map<std::string, py::array>& inputs) {
            std::map<std::string, DenseValue<float>> in;
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
           [](const Executor& e) {
             py::list steps;
             for (const graph::StepReport& r : e.steps()) {
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
      .def("describe", &Executor::describe);
}

}  // namespace sparseflow::python
