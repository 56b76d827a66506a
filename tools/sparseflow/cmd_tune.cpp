// `sparseflow tune collect KERNEL --in NAME=FILE ... -o OUT.jsonl` and `sparseflow tune train
// DATA.jsonl... -o model.json [--holdout SUBSTRING]`: the autoconfigurator's data and model
// (docs/tune.md). Enumerates the space of the tuned operands (the inputs read as sparse, or those
// named with --tune), times a sample of it as a user runs it, and writes one JSON line per timed
// configuration: the configuration, its `sparseflow run` arguments, the times, and the features
// of the inputs, the kernel, the configuration and the machine.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sparseflow/assignments.h"
#include "sparseflow/commands.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/text_file.h"
#include "sparseflow/tune.h"
#include "tune/cost_model.h"
#include "tune/features.h"
#include "tune/measure.h"
#include "tune/search.h"
#include "tune/space.h"

namespace sparseflow::tools {
namespace {

struct CollectArgs {
  std::string kernel, output;
  std::vector<std::string> inputs, formats, tuned;
  int sample = 32;
  uint64_t seed = 1;
};

nlohmann::json toJson(const tune::Features& f) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t k = 0; k < f.names.size(); ++k) out[f.names[k]] = f.values[k];
  return out;
}

/// The --in tensors, read (errors name the argument), by name.
struct LoadedInputs {
  std::map<std::string, std::string> files;
  std::map<std::string, Tensor> tensors;
  std::map<std::string, const Tensor*> pointers;
};

LoadedInputs loadInputs(const std::vector<std::string>& args) {
  LoadedInputs in;
  in.files = assignments("--in", args, "FILE");
  for (const auto& [name, path] : in.files) {
    try {
      in.tensors.emplace(name, read(path));
    } catch (const Error& e) {
      throw Error(e.code(), "--in " + name + "=" + path + ": " + e.what());
    }
    in.pointers[name] = &in.tensors.at(name);
  }
  return in;
}

/// The operands to search: those named, else every sparse input not pinned; each must be an input.
std::map<std::string, const Tensor*> tunedOperands(
    const LoadedInputs& in, const std::vector<std::string>& named,
    const std::map<std::string, std::string>& pinned) {
  std::vector<std::string> names = named;
  if (names.empty()) {
    for (const auto& [name, tensor] : in.tensors) {
      if (!tensor.format().isDenseRowMajor() && !pinned.count(name)) names.push_back(name);
    }
  }
  std::map<std::string, const Tensor*> out;
  for (const std::string& name : names) {
    if (!in.pointers.count(name))
      throw Error(ErrorCode::kInvalidArgument, "--tune " + name + ": no --in gives it");
    out[name] = in.pointers.at(name);
  }
  if (out.empty())
    throw Error(ErrorCode::kInvalidArgument,
                "no sparse input to tune (name one with --tune; pinned ones are not searched)");
  return out;
}

int runCollect(const CollectArgs& args) {
  const LoadedInputs in = loadInputs(args.inputs);
  const std::map<std::string, std::string>& files = in.files;
  const std::map<std::string, const Tensor*>& inputs = in.pointers;
  tune::SpaceRequest request;
  request.kernel = args.kernel;
  // Pinned formats (an SDDMM's sparse output, say) are part of every configuration timed.
  const std::map<std::string, std::string> pinned = assignments("--format", args.formats, "FORMAT");
  for (const auto& [name, format] : pinned) request.base.formats[name] = format;
  request.tuned = tunedOperands(in, args.tuned, pinned);
  std::vector<std::string> tuned;
  for (const auto& [name, tensor] : request.tuned) tuned.push_back(name);
  const tune::Space space = tune::enumerateSpace(request);
  tune::requireLegalConfiguration(request, space);  // nothing written for a space with none
  // The default, then a seeded sample of the rest (all of them with --sample 0).
  std::vector<size_t> order(space.configs.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::mt19937_64 rng(args.seed);
  std::shuffle(order.begin() + (order.empty() ? 0 : 1), order.end(), rng);
  const size_t count =
      args.sample <= 0 ? order.size() : std::min(order.size(), static_cast<size_t>(args.sample));
  std::fprintf(stderr, "space: %lld configurations considered, %zu legal; timing %zu\n",
               static_cast<long long>(space.considered), space.configs.size(), count);
  // Features that do not depend on the configuration, once.
  const std::vector<tune::TunedOperand> operands = tune::modelOperands(args.kernel, tuned);
  const tune::Features fixed = tune::fixedFeatures(args.kernel, operands, inputs);
  std::string lines;
  int failed = 0;
  double defaultMs = 0;  // the first configuration's, once timed
  for (size_t n = 0; n < count; ++n) {
    const tune::Config& c = space.configs[order[n]];
    nlohmann::json line;
    line["kernel"] = args.kernel;
    line["inputs"] = files;
    line["arguments"] = c.arguments();
    line["formats"] = c.formats;
    line["schedule"] = c.schedule;
    line["hand_tuned"] = c.handTuned;
    line["parallel"] = c.parallel;
    line["default"] = order[n] == 0;
    try {
      // Past the default, a configuration whose first two timed calls (after the converting
      // one) take 20x the default's (and at least 20 ms) is timed no more: 1.3 s calls of
      // bsr:2x2 SDDMM on arrow.mtx took minutes.
      tune::MeasureOptions measureOptions;
      if (defaultMs > 0) measureOptions.capMs = std::max(20.0, 20 * defaultMs);
      const tune::Measurement m =
          tune::measure(args.kernel, KernelOptions{}, c, inputs, measureOptions);
      if (n == 0) defaultMs = m.medianMs;
      if (m.capped) line["capped"] = true;
      line["median_ms"] = m.medianMs;
      line["first_ms"] = m.firstMs;
      line["runs"] = m.runs;
      line["provider"] = m.provider;
    } catch (const Error& e) {
      ++failed;
      line["error"] = e.what();
    }
    tune::Features all = fixed;
    all.append(tune::configFeatures(c, operands), "cfg.");
    line["features"] = toJson(all);
    lines += line.dump() + "\n";
    std::fprintf(stderr, "[%zu/%zu] %s: %s\n", n + 1, count, c.arguments().c_str(),
                 line.contains("median_ms")
                     ? (std::to_string(line["median_ms"].get<double>()) + " ms").c_str()
                     : "failed");
  }
  writeTextFile(args.output, lines);
  std::fprintf(stderr, "wrote %zu lines to %s (%d failed to run)\n", count, args.output.c_str(),
               failed);
  return 0;
}

struct TrainArgs {
  std::vector<std::string> data, holdout;
  std::string output;
  int rounds = 200;
  int budget = 16;  ///< the search's, for the held-out report
};

/// One problem's timed configurations from the JSON lines, keyed by kernel and input files.
struct Problem {
  std::string key;
  std::vector<nlohmann::json> rows;
};

int runTrain(const TrainArgs& args) {
  std::map<std::string, Problem> problems;
  std::set<std::string> names;
  for (const std::string& path : args.data) {
    const std::string text = readTextFile(path);
    size_t start = 0;
    int lineNumber = 0;
    while (start < text.size()) {
      const size_t end = std::min(text.find('\n', start), text.size());
      ++lineNumber;
      const std::string line = text.substr(start, end - start);
      start = end + 1;
      if (line.empty()) continue;
      nlohmann::json row;
      try {
        row = nlohmann::json::parse(line);
      } catch (const std::exception& e) {
        throw Error(ErrorCode::kParseError,
                    path + ":" + std::to_string(lineNumber) + ": not a JSON line: " + e.what());
      }
      if (!row.contains("median_ms") || !row.contains("features")) continue;  // failed to run
      const std::string key = row.value("kernel", "") + " " + row["inputs"].dump();
      problems[key].key = key;
      problems[key].rows.push_back(row);
      for (const auto& [name, value] : row["features"].items()) names.insert(name);
    }
  }
  const std::vector<std::string> featureNames(names.begin(), names.end());
  auto groupOf = [&](const Problem& p) {
    tune::RankGroup g;
    for (const nlohmann::json& row : p.rows) {
      std::vector<double> values;
      for (const std::string& name : featureNames) {
        values.push_back(row["features"].contains(name) ? row["features"][name].get<double>()
                                                        : std::nan(""));
      }
      g.rows.push_back(std::move(values));
      g.milliseconds.push_back(row["median_ms"].get<double>());
    }
    return g;
  };
  std::vector<tune::RankGroup> train;
  struct HeldOut {
    std::string key;
    tune::RankGroup group;
    double defaultMs;  ///< NaN when the default was not timed
  };
  std::vector<HeldOut> held;
  for (const auto& [key, p] : problems) {
    const bool out =
        std::any_of(args.holdout.begin(), args.holdout.end(),
                    [&](const std::string& h) { return key.find(h) != std::string::npos; });
    if (out) {
      double defaultMs = std::nan("");
      for (const nlohmann::json& row : p.rows) {
        if (row.value("default", false)) defaultMs = row["median_ms"].get<double>();
      }
      held.push_back({key, groupOf(p), defaultMs});
    } else {
      train.push_back(groupOf(p));
    }
  }
  tune::TrainOptions options;
  options.rounds = args.rounds;
  const tune::CostModel model = tune::CostModel::train(featureNames, train, options);
  model.save(args.output);
  std::printf("trained on %zu problems (%zu features), %zu held out; wrote %s\n", train.size(),
              featureNames.size(), held.size(), args.output.c_str());
  // Held-out problems: what the search would choose (the default and the model's top
  // min(budget, 5%) timed, the fastest kept) against the best measured and the default.
  std::vector<double> regrets, speedups;
  for (const auto& [key, g, defaultMs] : held) {
    const std::vector<double> score = model.score(g.rows);
    std::vector<size_t> order(score.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
    const double best = *std::min_element(g.milliseconds.begin(), g.milliseconds.end());
    const size_t top =
        std::min<size_t>(static_cast<size_t>(args.budget), std::max<size_t>(1, order.size() / 20));
    double chosen = std::isnan(defaultMs) ? g.milliseconds[order[0]] : defaultMs;
    for (size_t k = 0; k < top; ++k) chosen = std::min(chosen, g.milliseconds[order[k]]);
    regrets.push_back(chosen / best);
    if (!std::isnan(defaultMs)) speedups.push_back(defaultMs / chosen);
    std::printf(
        "held out %s: %zu configurations; model's pick %.4g ms, search (default + top %zu) "
        "%.4g ms, best %.4g ms, default %.4g ms: search/best %.3fx, default/search %.3fx\n",
        key.c_str(), order.size(), g.milliseconds[order[0]], top, chosen, best, defaultMs,
        chosen / best, defaultMs / chosen);
  }
  if (!regrets.empty()) {
    std::sort(regrets.begin(), regrets.end());
    double logSum = 0;
    for (double v : speedups) logSum += std::log(v);
    std::printf(
        "held out: %zu problems; search/best median %.3fx, max %.3fx; speed-up over the default "
        "geomean %.3fx\n",
        regrets.size(), regrets[regrets.size() / 2], regrets.back(),
        speedups.empty() ? std::nan("") : std::exp(logSum / static_cast<double>(speedups.size())));
  }
  return 0;
}

struct SearchArgs {
  std::string kernel, model, json, database;
  std::vector<std::string> inputs, formats, tuned;
  int budget = 16;
  bool exhaustive = false, retune = false, noDatabase = false;
};

nlohmann::json configJson(const std::map<std::string, std::string>& formats,
                          const std::string& schedule, bool handTuned, bool parallel) {
  tune::Config c;
  c.formats = formats;
  c.schedule = schedule;
  c.handTuned = handTuned;
  c.parallel = parallel;
  return {{"formats", formats},
          {"schedule", schedule},
          {"hand_tuned", handTuned},
          {"parallel", parallel},
          {"arguments", c.arguments()}};
}

int runSearch(const SearchArgs& args) {
  if (args.kernel.empty())
    throw Error(ErrorCode::kInvalidArgument, "sparseflow tune: give a KERNEL (or collect, train)");
  const LoadedInputs in = loadInputs(args.inputs);
  KernelOptions options;
  const std::map<std::string, std::string> pinned = assignments("--format", args.formats, "FORMAT");
  for (const auto& [name, format] : pinned) options.formats[name] = format;
  TuneOptions t;
  t.model = args.model;
  t.budget = args.budget;
  t.exhaustive = args.exhaustive;
  t.retune = args.retune;
  t.database = args.noDatabase ? "-" : args.database;
  for (const auto& [name, tensor] : tunedOperands(in, args.tuned, pinned)) t.tuned.push_back(name);
  const TuneResult r = tuneKernel(args.kernel, in.pointers, options, t);
  nlohmann::json out = configJson(r.formats, r.schedule, r.handTuned, r.parallel);
  out["median_ms"] = r.medianMs;
  out["default_ms"] = r.defaultMs;
  out["space"] = r.space;
  out["measured"] = r.measured;
  out["model"] = r.model;
  out["from_database"] = r.fromDatabase;
  out["database"] = r.database;
  out["machine"] = r.machine;
  out["inputs"] = r.inputs;
  out["candidates"] = nlohmann::json::array();
  for (const TuneCandidate& c : r.candidates) {
    nlohmann::json j = configJson(c.formats, c.schedule, c.handTuned, c.parallel);
    if (std::isfinite(c.predicted)) j["predicted"] = c.predicted;
    if (c.error.empty()) {
      j["median_ms"] = c.medianMs;
    } else {
      j["error"] = c.error;
    }
    out["candidates"].push_back(j);
  }
  if (r.fromDatabase) {
    std::printf("chosen: %s\n  from the tuning database %s (%.4g ms, default %.4g ms when tuned)\n",
                r.arguments.c_str(), r.database.c_str(), r.medianMs, r.defaultMs);
  } else {
    std::printf(
        "chosen: %s\n  %.4g ms (default %.4g ms, %.2fx); timed %d of %lld configurations%s\n",
        r.arguments.c_str(), r.medianMs, r.defaultMs, r.defaultMs / r.medianMs, r.measured,
        static_cast<long long>(r.space),
        r.database.empty() ? "" : ("; recorded in " + r.database).c_str());
  }
  if (!args.json.empty()) writeTextFile(args.json, out.dump(2) + "\n");
  return 0;
}

}  // namespace

void addTuneCommand(CLI::App& app, Action& action) {
  auto* tune = app.add_subcommand(
      "tune",
      "The autoconfigurator (docs/tune.md): search a kernel's configurations, or collect, "
      "train");
  tune->require_subcommand(0, 1);
  auto sargs = std::make_shared<SearchArgs>();
  tune->add_option("kernel", sargs->kernel, "kernel in index notation (the search)");
  tune->add_option("--in", sargs->inputs, "NAME=FILE: an input tensor (repeat for each)")
      ->allow_extra_args(false);
  tune->add_option("--format", sargs->formats, "NAME=FMT: pin an operand's format (not searched)")
      ->allow_extra_args(false);
  tune->add_option("--tune", sargs->tuned, "NAME: an operand to search (default: sparse inputs)")
      ->allow_extra_args(false);
  tune->add_option("--model", sargs->model,
                   "the cost model (sparseflow tune train; default: the one that ships)");
  tune->add_option("--db", sargs->database,
                   "the tuning database (JSON lines; default: $SPARSEFLOW_TUNE_DB, else "
                   "tuning.jsonl in the kernel cache directory)");
  tune->add_flag("--no-db", sargs->noDatabase, "neither reuse nor record a decision");
  tune->add_flag("--retune", sargs->retune, "search even when the database holds a decision");
  tune->add_option("--budget", sargs->budget,
                   "configurations timed besides the default, at most (and 5% of the space)");
  tune->add_flag("--exhaustive", sargs->exhaustive, "time every configuration (evaluation)");
  tune->add_option("--json", sargs->json, "write the result as JSON");
  tune->callback([&action, sargs, tune] {
    if (tune->get_subcommands().empty()) action = [sargs] { return runSearch(*sargs); };
  });
  auto* collect = tune->add_subcommand(
      "collect", "Time a sample of a kernel's configuration space on given inputs (JSON lines)");
  auto args = std::make_shared<CollectArgs>();
  collect->add_option("kernel", args->kernel, "kernel in index notation")->required();
  collect->add_option("--in", args->inputs, "NAME=FILE: an input tensor (repeat for each)")
      ->required()
      ->allow_extra_args(false);
  collect
      ->add_option("--format", args->formats,
                   "NAME=FMT: pin an operand's or the output's format (not searched)")
      ->allow_extra_args(false);
  collect
      ->add_option("--tune", args->tuned,
                   "NAME: an operand whose format is searched (default: the sparse inputs)")
      ->allow_extra_args(false);
  collect->add_option("--sample", args->sample,
                      "configurations to time, the default included (0: all; default 32)");
  collect->add_option("--seed", args->seed, "seed of the sample (default 1)");
  collect->add_option("-o,--output", args->output, "the JSON lines file to write")->required();
  collect->callback([&action, args] { action = [args] { return runCollect(*args); }; });

  auto* train = tune->add_subcommand(
      "train", "Fit the cost model (XGBoost pairwise ranker) to collected JSON lines");
  auto targs = std::make_shared<TrainArgs>();
  train->add_option("data", targs->data, "JSON lines files written by `tune collect`")->required();
  train
      ->add_option("--holdout", targs->holdout,
                   "SUBSTRING of an input path: problems whose inputs match are not trained on "
                   "but evaluated (repeat for each)")
      ->allow_extra_args(false);
  train->add_option("--rounds", targs->rounds, "boosting rounds (default 200)");
  train->add_option("--budget", targs->budget,
                    "the search's budget the held-out report simulates (default 16)");
  train->add_option("-o,--output", targs->output, "the model file to write (.json)")->required();
  train->callback([&action, targs] { action = [targs] { return runTrain(*targs); }; });
}

}  // namespace sparseflow::tools
