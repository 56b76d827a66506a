// `sparseflow tune collect KERNEL --in NAME=FILE ... -o OUT.jsonl`: the autoconfigurator's data
// (docs/tune.md). Enumerates the space of the tuned operands (the inputs read as sparse, or those
// named with --tune), times a sample of it as a user runs it, and writes one JSON line per timed
// configuration: the configuration, its `sparseflow run` arguments, the times, and the features
// of the inputs, the kernel, the configuration and the machine.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sparseflow/commands.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/text_file.h"
#include "tune/features.h"
#include "tune/measure.h"
#include "tune/space.h"

namespace sparseflow::tools {
namespace {

struct CollectArgs {
  std::string kernel, output;
  std::vector<std::string> inputs, tuned;
  int sample = 32;
  uint64_t seed = 1;
};

nlohmann::json toJson(const tune::Features& f) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t k = 0; k < f.names.size(); ++k) out[f.names[k]] = f.values[k];
  return out;
}

int runCollect(const CollectArgs& args) {
  std::map<std::string, std::string> files;
  for (const std::string& arg : args.inputs) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
      throw Error(ErrorCode::kInvalidArgument, "--in '" + arg + "': expected NAME=FILE");
    files[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  std::map<std::string, Tensor> tensors;
  std::map<std::string, const Tensor*> inputs;
  for (const auto& [name, path] : files) {
    try {
      tensors.emplace(name, read(path));
    } catch (const Error& e) {
      throw Error(e.code(), "--in " + name + "=" + path + ": " + e.what());
    }
    inputs[name] = &tensors.at(name);
  }
  tune::SpaceRequest request;
  request.kernel = args.kernel;
  std::vector<std::string> tuned = args.tuned;
  if (tuned.empty()) {
    for (const auto& [name, tensor] : tensors) {
      if (!tensor.format().isDenseRowMajor()) tuned.push_back(name);
    }
  }
  if (tuned.empty())
    throw Error(ErrorCode::kInvalidArgument, "no sparse input to tune (name one with --tune)");
  for (const std::string& name : tuned) {
    if (!inputs.count(name))
      throw Error(ErrorCode::kInvalidArgument, "--tune " + name + ": no --in gives it");
    request.tuned[name] = inputs.at(name);
  }
  const tune::Space space = tune::enumerateSpace(request);
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
  tune::Features fixed;
  for (const std::string& name : tuned)
    fixed.append(tune::matrixFeatures(*inputs.at(name)), name + ".");
  fixed.append(tune::kernelFeatures(args.kernel, inputs), "kernel.");
  fixed.append(tune::machineFeatures(), "machine.");
  std::string lines;
  int failed = 0;
  for (size_t n = 0; n < count; ++n) {
    const tune::Config& c = space.configs[order[n]];
    nlohmann::json line;
    line["kernel"] = args.kernel;
    line["inputs"] = files;
    line["arguments"] = c.arguments();
    line["formats"] = c.formats;
    line["schedule"] = c.schedule;
    line["hand_tuned"] = c.handTuned;
    line["default"] = order[n] == 0;
    try {
      const tune::Measurement m = tune::measure(args.kernel, KernelOptions{}, c, inputs);
      line["median_ms"] = m.medianMs;
      line["first_ms"] = m.firstMs;
      line["runs"] = m.runs;
      line["provider"] = m.provider;
    } catch (const Error& e) {
      ++failed;
      line["error"] = e.what();
    }
    tune::Features all = fixed;
    all.append(tune::configFeatures(c, tuned), "cfg.");
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

}  // namespace

void addTuneCommand(CLI::App& app, Action& action) {
  auto* tune = app.add_subcommand("tune", "The autoconfigurator (docs/tune.md)");
  tune->require_subcommand(1);
  auto* collect = tune->add_subcommand(
      "collect", "Time a sample of a kernel's configuration space on given inputs (JSON lines)");
  auto args = std::make_shared<CollectArgs>();
  collect->add_option("kernel", args->kernel, "kernel in index notation")->required();
  collect->add_option("--in", args->inputs, "NAME=FILE: an input tensor (repeat for each)")
      ->required()
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
}

}  // namespace sparseflow::tools
