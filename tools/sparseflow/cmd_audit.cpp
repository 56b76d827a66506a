// `sparseflow audit IN` (also `sparseflow-audit`): per weight matrix of a checkpoint, a directory
// or a file, the density, 2:4 fit and pruning error, memory, and measured speed-ups over dense;
// then totals and the cost calculator, as a text table or JSON.
#include <omp.h>

#include <cstdio>

#include "sparseflow/audit.h"
#include "sparseflow/commands.h"
#include "sparseflow/error.h"
#include "sparseflow/process.h"
#include "sparseflow/progress.h"
#include "sparseflow/quick_timing.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {
namespace {

struct AuditArgs {
  std::string input;
  WeightOptions weights;
  AuditOptions audit;
  int threads = 0;
  bool json = false;
};

int runAudit(AuditArgs& args) {
  if (args.threads > 0) omp_set_num_threads(args.threads);
  if (quickTiming()) {  // a smoke test of the command: two rounds, no minimum time, no re-measuring
    args.audit.runs = 2;
    args.audit.minTimeMs = 0;
    args.audit.attempts = 1;
  }
  std::vector<std::string> ignored;
  std::vector<Weight> weights = listWeights(args.input, args.weights, &ignored);
  MachineInfo machine = describeMachine();
  LayerAuditor auditor(args.audit);
  std::vector<LayerAudit> layers;
  std::vector<std::pair<std::string, std::string>> skipped;
  Progress bar("audit", static_cast<int64_t>(weights.size()));
  for (Weight& w : weights) {
    bar.step(w.name);
    Tensor t;
    if (!w.checkpoint) {
      t = w.load();
      w.shape = t.shape();
      w.dtype = dtypeName(t.dtype());
    }
    std::string reason = skipReason(w, args.weights);
    if (reason.empty()) reason = embeddingReason(w.name, w.shape);
    if (!reason.empty()) {
      skipped.emplace_back(w.name, reason);
      continue;
    }
    if (w.checkpoint) t = w.load();
    try {
      layers.push_back(auditor.audit(w.name, t));
    } catch (const Error& e) {
      throw Error(e.code(), w.origin + ": tensor '" + w.name + "': " + e.what());
    }
    layers.back().origin = w.origin;
    layers.back().dtype = w.dtype;
  }
  bar.clear();
  machine.loadAverageAtEnd = loadAverageNow();
  if (layers.empty()) {
    throw Error(ErrorCode::kInvalidArgument, args.input + ": no weight matrix to audit (" +
                                                 std::to_string(weights.size()) + " tensors, " +
                                                 std::to_string(skipped.size()) + " skipped)");
  }
  if (args.json) {
    std::printf("%s\n", auditJson(layers, args.audit, machine, args.input).c_str());
    return 0;
  }
  std::printf("%s", auditText(layers, args.audit, machine, args.input).c_str());
  for (const auto& [name, reason] : skipped) {
    std::printf("not audited: %s (%s)\n", printableMessage(name).c_str(),
                printableMessage(reason).c_str());
  }
  if (!ignored.empty()) {
    std::printf("ignored %zu file(s) that are not weights:", ignored.size());
    for (const std::string& f : ignored) std::printf(" %s", printableMessage(f).c_str());
    std::printf("\n");
  }
  return 0;
}

}  // namespace

void addAuditCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "audit",
      "Per weight matrix: density, 2:4 fit and pruning error, memory, measured speed-up of the "
      "sparse kernels over dense; totals and the cost of serving a load");
  auto args = std::make_shared<AuditArgs>();
  cmd->add_option("IN", args->input,
                  "a .safetensors checkpoint, a directory of weight files (.smtx, .mtx, .npy, "
                  ".sft) or one weight file")
      ->required();
  addWeightOptions(*cmd, args->weights);
  cmd->add_option("--batch", args->audit.batches,
                  "batch sizes (rows of X) to time, comma-separated; the last one is the serving "
                  "batch of the cost calculator")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--runs", args->audit.runs,
                  "rounds at least: each times every kernel of a layer once, in a rotating order "
                  "(the medians are reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--min-time-ms", args->audit.minTimeMs,
                  "rounds go on until each kernel's samples add up to this much time and its "
                  "median is stable (at most 3 x --runs rounds)")
      ->check(CLI::Range(0.0, 60000.0))
      ->capture_default_str();
  cmd->add_option("--attempts", args->audit.attempts,
                  "measurements of a layer whose speed-ups are noisy, in all (the least noisy is "
                  "kept; what stays noisy is marked ?)")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  cmd->add_option("--formats", args->audit.formats,
                  "unstructured formats to compile and time, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--load", args->audit.load, "inferences per second to serve (cost calculator)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--machine-cost", args->audit.machineCost,
                  "cost of one machine like this one per hour (cost calculator)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--input-seed", args->audit.seed, "seed of the random inputs X")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([&action, args] { action = [args] { return runAudit(*args); }; });
}

}  // namespace sparseflow::tools
