// The audit's report: the per-layer table, the totals of three plans (dense, 2:4, best exact),
// the cost calculator and every assumption behind it; as text or JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "sparseflow/audit.h"
#include "sparseflow/audit_stats.h"
#include "sparseflow/process.h"
#include "sparseflow/text_table.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {
namespace {

using Json = nlohmann::ordered_json;

std::string format(const char* pattern, double v) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, v);
  return text;
}

/// One way of running every layer: its memory and its summed times per batch size.
struct Plan {
  const char* key = "";    // JSON
  const char* title = "";  // text
  int64_t bytes = 0;
  std::vector<double> ms;  // per batch: sum over layers
  // The cost calculator at the serving batch (the largest one).
  double throughput = 0, machines = 0, costPerMillion = 0, costPerHour = 0;
};

std::vector<Plan> plans(const std::vector<LayerAudit>& layers, const AuditOptions& options) {
  std::vector<Plan> p(3);
  p[0].key = "dense", p[0].title = "dense";
  p[1].key = "nm_2_4", p[1].title = "2:4 (pruned)";
  p[2].key = "best_exact", p[2].title = "best exact";
  const size_t nb = options.batches.size();
  for (Plan& plan : p) plan.ms.assign(nb, 0);
  for (const LayerAudit& l : layers) {
    p[0].bytes += l.denseBytes;
    p[1].bytes += l.nmBytes;
    const std::string& chosen = l.timings.back().exactChoice;
    p[2].bytes += chosen == "dense" ? l.denseBytes
                  : chosen == "2:4" ? l.nmBytes
                                    : l.formatBytes.at(chosen);
    for (size_t b = 0; b < nb; ++b) {
      p[0].ms[b] += l.timings[b].denseMs;
      p[1].ms[b] += l.timings[b].nmMs;
      p[2].ms[b] += l.timings[b].exactMs;
    }
  }
  const double serving = static_cast<double>(options.batches.back());
  for (Plan& plan : p) {
    if (plan.ms.back() <= 0) continue;
    plan.throughput = serving * 1000.0 / plan.ms.back();
    plan.machines = std::ceil(options.load / plan.throughput);
    plan.costPerMillion = options.machineCost / (plan.throughput * 3600.0) * 1e6;
    plan.costPerHour = plan.machines * options.machineCost;
  }
  return p;
}

std::vector<std::string> assumptions(const AuditOptions& options, const MachineInfo& machine) {
  const std::string serving = std::to_string(options.batches.back());
  return {
      "each weight matrix W (out x in) is timed as a linear layer Y = X * W^T on random X with "
      "`batch` rows, in the weights' type when it is bf16 or f16 (dense and 2:4) and in f32 "
      "otherwise (the compiled kernels of the formats always run in f32); the layers run one "
      "after another (sequentially), each on " +
          std::to_string(machine.threads) + " OpenMP thread(s) of this machine",
      "only these weight layers are counted: activations, normalization, attention, embedding "
      "lookups, im2col for convolutions and data movement between layers are not",
      "times are medians over rounds that run every kernel of a layer once each, in a rotating "
      "order (at least " +
          std::to_string(options.runs) + " rounds, " + format("%g", options.minTimeMs) +
          " ms per kernel, until the medians are stable), after a warm-up call; a speed-up whose "
          "round-by-round ratios spread by more than " +
          format("%.0f%%", 100 * kNoisySpread) + " of their median is measured again (up to " +
          std::to_string(options.attempts) + " times) and marked '?' if it stays noisy",
      "dense is DenseLinear; 2:4 is NMLinear on the weights pruned to 2:4 by magnitude (changes "
      "the model where 2:4 does not fit as is: see the errors); best exact is, per layer, the "
      "fastest of dense, the compiled kernels for the formats and 2:4 only where it fits as is "
      "(no value changes)",
      "throughput = batch / (sum of layer times) at the serving batch " + serving +
          " (requests always fill a batch); machines = ceil(load / throughput); cost per million "
          "inferences = machine cost per hour / (throughput x 3600) x 10^6",
      "load " + format("%g", options.load) + " inferences/s and machine cost " +
          format("%g", options.machineCost) +
          " per hour (--load, --machine-cost); the machine is this one",
  };
}

/// "1.52x", "0.0143x": three significant digits, so a slow kernel never reads "0.00x"; with '?'
/// when the measurement stayed noisy.
std::string speedup(double denseMs, double ms, bool noisy = false) {
  return ms > 0 ? format("%.3gx", denseMs / ms) + (noisy ? "?" : "") : "-";
}

bool isNoisyCell(const LayerTiming& t, const std::string& kernel) {
  return std::find(t.noisy.begin(), t.noisy.end(), kernel) != t.noisy.end();
}

nlohmann::ordered_json range(const Spread& s) {
  return {s.q1, s.q3};
}

}  // namespace

std::string auditText(const std::vector<LayerAudit>& layers, const AuditOptions& options,
                      const MachineInfo& machine, const std::string& input) {
  std::vector<std::string> header = {"layer",       "shape", "density", "2:4 fits",
                                     "2:4 rel err", "dense", "2:4",     "smallest"};
  for (int64_t b : options.batches) {
    const std::string at = "@" + std::to_string(b);
    header.insert(header.end(), {"dense ms" + at, "2:4" + at, "best fmt" + at});
  }
  TextTable table(header);
  for (const LayerAudit& l : layers) {
    std::vector<std::string> row = {
        printableMessage(l.name),
        shapeText({l.rows, l.cols}),
        format("%.4f", l.density),
        l.fits24 ? "yes" : "no",
        l.fits24 ? "0" : format("%.3g", l.prune24.relativeFrobeniusError),
        bytesText(static_cast<double>(l.denseBytes)),
        bytesText(static_cast<double>(l.nmBytes)),
        l.smallestFormat + " " + bytesText(static_cast<double>(l.smallestBytes))};
    for (const LayerTiming& t : l.timings) {
      row.push_back(format("%.4f", t.denseMs));
      row.push_back(speedup(t.denseMs, t.nmMs, isNoisyCell(t, "2:4")));
      row.push_back(t.bestFormat + " " +
                    speedup(t.denseMs, t.bestMs, isNoisyCell(t, t.bestFormat)));
    }
    table.row(std::move(row));
  }
  std::string out =
      "sparseflow audit of " + input + ": " + std::to_string(layers.size()) +
      " weight matrices\nmachine: " + machine.cpu + ", " + std::to_string(machine.threads) +
      " thread(s); 2:4 kernel: " + machine.nmTarget +
      format("; load average %.2f at the start", machine.loadAverage) +
      (machine.loadAverageAtEnd >= 0 ? format(", %.2f at the end", machine.loadAverageAtEnd)
                                     : std::string()) +
      (machine.loadAverage > machine.threads
           ? " (WARNING: a machine busier than its threads gives unreliable times)"
           : "") +
      "\n\n" + table.str();
  int noisyCells = 0;
  for (const LayerAudit& l : layers) {
    for (const LayerTiming& t : l.timings) noisyCells += static_cast<int>(t.noisy.size());
  }
  out +=
      "(density: nonzeros / elements; 2:4 rel err: relative Frobenius error of pruning to 2:4; "
      "memory in the timed type; 2:4@B and best fmt@B: speed-up over dense at batch B, measured; "
      "?: noisy, the round-by-round ratios spread by more than " +
      format("%.0f%%", 100 * kNoisySpread) + " of their median)\n";
  if (noisyCells > 0) {
    out += "WARNING: " + std::to_string(noisyCells) +
           " speed-up(s) stayed noisy after re-measuring (marked ?): the machine was busy; "
           "rerun on a quiet machine or with fewer --threads\n";
  }
  out += "\n";

  const std::vector<Plan> p = plans(layers, options);
  TextTable totals({"totals", p[0].title, p[1].title, p[2].title});
  auto row = [&](const std::string& what, auto cell) {
    std::vector<std::string> r = {what};
    for (const Plan& plan : p) r.push_back(cell(plan));
    totals.row(std::move(r));
  };
  row("weights memory", [](const Plan& q) { return bytesText(static_cast<double>(q.bytes)); });
  row("bytes saved vs dense", [&](const Plan& q) {
    return bytesText(static_cast<double>(p[0].bytes - q.bytes)) +
           format(" (%.1f%%)", 100.0 * static_cast<double>(p[0].bytes - q.bytes) /
                                   static_cast<double>(std::max<int64_t>(p[0].bytes, 1)));
  });
  for (size_t b = 0; b < options.batches.size(); ++b) {
    const std::string at = " at batch " + std::to_string(options.batches[b]);
    row("latency" + at, [&](const Plan& q) {
      return format("%.3f ms", q.ms[b]) + format(" (%.2fx)", p[0].ms[b] / q.ms[b]);
    });
    row("throughput" + at, [&](const Plan& q) {
      return format("%.0f/s", static_cast<double>(options.batches[b]) * 1000.0 / q.ms[b]);
    });
  }
  row("machines for " + format("%g", options.load) + "/s",
      [](const Plan& q) { return format("%.0f", q.machines); });
  row("cost per million inferences",
      [](const Plan& q) { return format("%.4f", q.costPerMillion); });
  row("cost per hour at that load", [](const Plan& q) { return format("%.2f", q.costPerHour); });
  out += totals.str();

  double worstErr = 0, meanKept = 0, worstExact = 0;
  std::string worstLayer;
  int fits = 0;
  for (const LayerAudit& l : layers) {
    fits += l.fits24;
    meanKept += l.prune24.keptMagnitudeFraction / static_cast<double>(layers.size());
    worstExact = std::max(worstExact, l.outputErrorExact);
    if (l.outputError24 >= worstErr) worstErr = l.outputError24, worstLayer = l.name;
  }
  out += "\naccuracy: 2:4 fits " + std::to_string(fits) + " of " + std::to_string(layers.size()) +
         " layers as is; pruning the rest keeps " + format("%.1f%%", 100 * meanKept) +
         " of the weight magnitude on average, and changes a layer's output by at most " +
         format("%.3g", worstErr) + " (relative, " + worstLayer +
         "); the exact formats agree with dense to " + format("%.2g", worstExact) +
         " (rounding)\nassumptions:\n";
  for (const std::string& a : assumptions(options, machine)) out += "  - " + a + "\n";
  return out;
}

std::string auditJson(const std::vector<LayerAudit>& layers, const AuditOptions& options,
                      const MachineInfo& machine, const std::string& input) {
  Json j;
  j["input"] = input;
  j["machine"] = {{"cpu", machine.cpu},
                  {"threads", machine.threads},
                  {"nm_target", machine.nmTarget},
                  {"load_average", machine.loadAverage},
                  {"load_average_at_end", machine.loadAverageAtEnd}};
  j["batches"] = options.batches;
  j["runs"] = options.runs;
  j["min_time_ms"] = options.minTimeMs;
  j["noisy_spread"] = kNoisySpread;
  j["formats"] = options.formats;
  Json ls = Json::array();
  for (const LayerAudit& l : layers) {
    Json timings = Json::array();
    for (const LayerTiming& t : l.timings) {
      Json formats = Json::object(), formatSpread = Json::object(),
           speedupRange = {{"nm_2_4", range(t.nmSpeedup)}};
      for (const auto& [f, ms] : t.formatMs) formats[f] = ms;
      for (const auto& [f, s] : t.formats) formatSpread[f] = range(s);
      for (const auto& [f, s] : t.formatSpeedup) speedupRange[f] = range(s);
      timings.push_back(
          {{"batch", t.batch},
           {"rounds", t.rounds},
           {"attempts", t.attempts},
           {"spread_ms",
            {{"dense", range(t.dense)}, {"nm_2_4", range(t.nm)}, {"formats", formatSpread}}},
           {"speedup_range", speedupRange},
           {"noisy", t.noisy},
           {"dense_ms", t.denseMs},
           {"nm_2_4_ms", t.nmMs},
           {"formats_ms", formats},
           {"best_format", t.bestFormat},
           {"best_ms", t.bestMs},
           {"speedup_2_4", t.denseMs / t.nmMs},
           {"speedup_best", t.denseMs / t.bestMs},
           {"exact_choice", t.exactChoice},
           {"exact_ms", t.exactMs}});
    }
    Json bytes = {{"dense", l.denseBytes}, {"nm_2_4", l.nmBytes}};
    for (const auto& [f, b] : l.formatBytes) bytes[f] = b;
    ls.push_back({{"name", l.name},
                  {"origin", l.origin},
                  {"dtype", l.dtype},
                  {"timed_dtype", dtypeName(l.timedType)},
                  {"shape", {l.rows, l.cols}},
                  {"nonzeros", l.nonzeros},
                  {"density", l.density},
                  {"fits_2_4", l.fits24},
                  {"prune_2_4",
                   {{"max_error", l.prune24.maxAbsError},
                    {"mean_error", l.prune24.meanAbsError},
                    {"relative_error", l.prune24.relativeFrobeniusError},
                    {"kept_magnitude", l.prune24.keptMagnitudeFraction},
                    {"kept", l.prune24.kept},
                    {"total", l.prune24.total}}},
                  {"bytes", bytes},
                  {"smallest_format", l.smallestFormat},
                  {"smallest_bytes", l.smallestBytes},
                  {"output_error_2_4", l.outputError24},
                  {"output_error_exact", l.outputErrorExact},
                  {"timings", timings}});
  }
  j["layers"] = ls;
  Json totals = Json::object();
  for (const Plan& p : plans(layers, options)) {
    Json latency = Json::object();
    for (size_t b = 0; b < options.batches.size(); ++b) {
      latency[std::to_string(options.batches[b])] = p.ms[b];
    }
    totals[p.key] = {{"bytes", p.bytes},
                     {"latency_ms", latency},
                     {"throughput", p.throughput},
                     {"machines", p.machines},
                     {"cost_per_million", p.costPerMillion},
                     {"cost_per_hour", p.costPerHour}};
  }
  j["totals"] = totals;
  j["cost_model"] = {{"load", options.load},
                     {"machine_cost_per_hour", options.machineCost},
                     {"serving_batch", options.batches.back()}};
  j["assumptions"] = assumptions(options, machine);
  // Names come from files: bytes that are not UTF-8 become U+FFFD instead of an exception.
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sparseflow::tools
