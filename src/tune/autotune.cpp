// The autoconfigurator's public API (sparseflow/tune.h): the database first, then the search.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "sparseflow/error.h"
#include "sparseflow/tune.h"
#include "support/check.h"
#include "tune/cost_model.h"
#include "tune/database.h"
#include "tune/measure.h"
#include "tune/search.h"
#include "tune/space.h"

namespace sparseflow {
namespace {

std::string modelPath(const TuneOptions& t) {
  if (!t.model.empty()) return t.model;
  if (const char* env = std::getenv("SPARSEFLOW_TUNE_MODEL"); env != nullptr && *env != '\0')
    return env;
  return SPARSEFLOW_SHIPPED_TUNE_MODEL;
}

std::map<std::string, const Tensor*> tunedOperands(
    const std::map<std::string, const Tensor*>& inputs, const TuneOptions& t) {
  std::map<std::string, const Tensor*> out;
  if (!t.tuned.empty()) {
    for (const std::string& name : t.tuned) {
      const auto it = inputs.find(name);
      SF_USER_CHECK(it != inputs.end() && it->second != nullptr)
          << "tuned operand '" << name << "' is not among the inputs";
      out[name] = it->second;
    }
    return out;
  }
  for (const auto& [name, tensor] : inputs) {
    if (tensor != nullptr && !tensor->format().isDenseRowMajor() && tensor->rank() == 2)
      out[name] = tensor;
  }
  SF_USER_CHECK(!out.empty()) << "no sparse 2-d input to tune (name one in TuneOptions::tuned)";
  return out;
}

void describeConfig(const tune::Config& c, TuneResult& r) {
  r.formats = c.formats;
  r.schedule = c.schedule;
  r.handTuned = c.handTuned;
  r.parallel = c.parallel;
  r.arguments = c.arguments();
}

}  // namespace

std::string tuningFingerprint(const std::map<std::string, const Tensor*>& inputs) {
  return tune::inputFingerprint(inputs);
}

TuneResult tuneKernel(const std::string& text, const std::map<std::string, const Tensor*>& inputs,
                      const KernelOptions& options, const TuneOptions& t) {
  KernelOptions base = options;
  base.tune = TuneMode::kOff;
  TuneResult result;
  const tune::TuningDatabase db(t.database);
  const bool useDb = !db.path().empty();
  result.database = db.path().string();
  result.machine = tune::machineFingerprint();
  result.inputs = tune::inputFingerprint(inputs);
  const std::map<std::string, const Tensor*> tuned = tunedOperands(inputs, t);
  const std::string key = tune::decisionKey(text, base, tuned);
  if (useDb && !t.retune && !t.exhaustive) {
    if (const std::optional<tune::TuningRecord> hit = db.find(key, result.machine, result.inputs)) {
      describeConfig(hit->chosen, result);
      result.medianMs = hit->medianMs;
      result.defaultMs = hit->defaultMs;
      result.model = hit->model;
      result.fromDatabase = true;
      return result;
    }
  }
  tune::SpaceRequest request;
  request.kernel = text;
  request.base = base;
  request.tuned = tuned;
  const tune::Space space = tune::enumerateSpace(request);
  std::optional<tune::CostModel> model;
  if (!t.exhaustive) {
    result.model = modelPath(t);
    SF_CHECK_CODE(std::filesystem::exists(result.model), ErrorCode::kIoError)
        << "no cost model at '" << result.model
        << "' (TuneOptions::model, $SPARSEFLOW_TUNE_MODEL; scripts/tune_corpus.sh builds one)";
    model = tune::CostModel::load(result.model);
  }
  tune::SearchOptions search;
  search.model = model ? &*model : nullptr;
  search.budget = t.budget;
  search.exhaustive = t.exhaustive;
  const tune::SearchResult found = tune::search(request, space, inputs, search);
  describeConfig(found.chosen, result);
  result.medianMs = found.medianMs;
  result.defaultMs = found.defaultMs;
  result.space = found.space;
  result.measured = found.measured;
  for (const tune::Candidate& c : found.candidates) {
    result.candidates.push_back({c.config.formats, c.config.schedule, c.config.handTuned,
                                 c.config.parallel, c.predicted, c.medianMs, c.error});
  }
  if (useDb) {
    tune::TuningRecord record;
    record.kernel = key;
    record.machine = result.machine;
    record.inputs = result.inputs;
    record.chosen = found.chosen;
    record.medianMs = found.medianMs;
    record.defaultMs = found.defaultMs;
    record.space = found.space;
    record.measured = found.measured;
    record.model = result.model;
    db.add(record);
  }
  return result;
}

Kernel compileTuned(const std::string& text, const std::map<std::string, const Tensor*>& inputs,
                    const KernelOptions& options, const TuneOptions& t, TuneResult* result) {
  KernelOptions plain = options;
  plain.tune = TuneMode::kOff;
  if (options.tune == TuneMode::kOff) return Kernel::compile(text, plain);
  TuneResult decision;
  if (options.tune == TuneMode::kSearch) {
    decision = tuneKernel(text, inputs, plain, t);
  } else {
    const tune::TuningDatabase db(t.database);
    decision.database = db.path().string();
    decision.machine = tune::machineFingerprint();
    decision.inputs = tune::inputFingerprint(inputs);
    const std::optional<tune::TuningRecord> hit =
        db.find(tune::decisionKey(text, plain, tunedOperands(inputs, t)), decision.machine,
                decision.inputs);
    tune::Config config;
    if (hit) {
      config = hit->chosen;
      decision.medianMs = hit->medianMs;
      decision.defaultMs = hit->defaultMs;
      decision.model = hit->model;
      decision.fromDatabase = true;
    } else {
      config.formats = plain.formats;
      config.schedule = plain.schedule.toString();
      config.handTuned = plain.handTuned;
      config.parallel = plain.parallel;
    }
    describeConfig(config, decision);
  }
  tune::Config chosen;
  chosen.formats = decision.formats;
  chosen.schedule = decision.schedule;
  chosen.handTuned = decision.handTuned;
  chosen.parallel = decision.parallel;
  const Kernel kernel = Kernel::compile(text, tune::optionsFor(plain, chosen));
  if (result != nullptr) *result = std::move(decision);
  return kernel;
}

}  // namespace sparseflow
