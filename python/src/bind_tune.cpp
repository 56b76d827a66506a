// sparseflow.tune and compile(..., tune=...): the autoconfigurator (docs/tune.md) from Python. The
// decision comes back as a dict with the keys `sparseflow tune --json` writes.
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "sparseflow/kernel.h"
#include "sparseflow/tune.h"

namespace sparseflow::python {
namespace {

py::dict resultDict(const TuneResult& r) {
  py::dict d;
  d["formats"] = r.formats;
  d["schedule"] = r.schedule;
  d["hand_tuned"] = r.handTuned;
  d["parallel"] = r.parallel;
  d["arguments"] = r.arguments;
  d["median_ms"] = r.medianMs;
  d["default_ms"] = r.defaultMs;
  d["space"] = r.space;
  d["measured"] = r.measured;
  d["from_database"] = r.fromDatabase;
  d["database"] = r.database;
  d["model"] = r.model;
  d["machine"] = r.machine;
  d["inputs"] = r.inputs;
  py::list candidates;
  for (const TuneCandidate& c : r.candidates) {
    py::dict j;
    j["formats"] = c.formats;
    j["schedule"] = c.schedule;
    j["hand_tuned"] = c.handTuned;
    j["parallel"] = c.parallel;
    if (std::isfinite(c.predicted)) j["predicted"] = c.predicted;
    if (c.error.empty()) {
      j["median_ms"] = c.medianMs;
    } else {
      j["error"] = c.error;
    }
    candidates.append(j);
  }
  d["candidates"] = candidates;
  return d;
}

TuneOptions tuneOptionsFrom(const std::string& database, const std::string& model, int budget,
                            bool exhaustive, bool retune, const std::vector<std::string>& tuned) {
  TuneOptions t;
  t.database = database;
  t.model = model;
  t.budget = budget;
  t.exhaustive = exhaustive;
  t.retune = retune;
  t.tuned = tuned;
  return t;
}

}  // namespace

void bindTune(py::module_& m) {
  m.def(
      "_tune",
      [](const std::string& text, const std::map<std::string, const Tensor*>& inputs,
         const std::map<std::string, std::string>& formats,
         const std::map<std::string, std::string>& dtypes, const std::string& database,
         const std::string& model, int budget, bool exhaustive, bool retune,
         const std::vector<std::string>& tuned) {
        TuneResult r;
        {
          py::gil_scoped_release release;  // timing and the JIT take seconds
          r = tuneKernel(text, inputs, kernelOptions(formats, dtypes, true, true, true),
                         tuneOptionsFrom(database, model, budget, exhaustive, retune, tuned));
        }
        return resultDict(r);
      },
      py::arg("text"), py::arg("inputs"), py::arg("formats"), py::arg("dtypes"),
      py::arg("database"), py::arg("model"), py::arg("budget"), py::arg("exhaustive"),
      py::arg("retune"), py::arg("tuned"));
  m.def(
      "_compile_tuned",
      [](const std::string& text, const std::map<std::string, const Tensor*>& inputs,
         const std::map<std::string, std::string>& formats,
         const std::map<std::string, std::string>& dtypes, bool parallel, bool useCache,
         bool handTuned, const std::string& mode, const std::string& database,
         const std::string& model, int budget) {
        KernelOptions options = kernelOptions(formats, dtypes, parallel, useCache, handTuned);
        options.tune = mode == "search" ? TuneMode::kSearch : TuneMode::kDatabase;
        TuneResult r;
        std::optional<Kernel> kernel;
        {
          py::gil_scoped_release release;
          kernel = compileTuned(text, inputs, options,
                                tuneOptionsFrom(database, model, budget, false, false, {}), &r);
        }
        return std::make_pair(*kernel, resultDict(r));
      },
      py::arg("text"), py::arg("inputs"), py::arg("formats"), py::arg("dtypes"),
      py::arg("parallel"), py::arg("use_cache"), py::arg("hand_tuned"), py::arg("mode"),
      py::arg("database"), py::arg("model"), py::arg("budget"));
  m.def(
      "_input_fingerprint",
      [](const std::map<std::string, const Tensor*>& inputs) { return tuningFingerprint(inputs); },
      py::arg("inputs"));
}

}  // namespace sparseflow::python
