// `sparseflow audit`: what sparsity buys for each weight matrix on this machine (measured), and
// what that means for memory, latency, throughput and the cost of serving a load.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sparseflow/audit_stats.h"
#include "sparseflow/nm.h"
#include "sparseflow/tensor.h"

namespace sparseflow::tools {

struct AuditOptions {
  std::vector<int64_t> batches = {1, 32};  ///< rows of X in Y = X · Wᵀ, each timed
  /// Rounds at least: each round times every kernel of the layer once, in a rotating order, so
  /// that a burst of load hits the kernels compared alike; the medians are kept.
  int runs = 7;
  double minRunMs = 1;  ///< a run repeats the call until it lasts this long (short layers)
  /// Rounds go on until each kernel's samples add up to this many milliseconds and its median
  /// is stable (StopRule), up to 3 x runs rounds.
  double minTimeMs = 10;
  /// A layer whose speed-ups are noisy (isNoisy: the middle half of the paired ratios spans more
  /// than kNoisySpread of the median) is measured again, up to this many times in all; the least
  /// noisy measurement is kept and the report marks what stays noisy.
  int attempts = 2;
  /// The unstructured formats compiled and timed for each layer.
  std::vector<std::string> formats = {"csr", "bsr:4x4", "ell"};
  double load = 1000;         ///< inferences per second to serve (the cost calculator)
  double machineCost = 0.10;  ///< currency units per machine-hour
  uint64_t seed = 0;          ///< of the random inputs X
};

/// Times of one layer at one batch size, milliseconds per call (medians over the rounds).
struct LayerTiming {
  int64_t batch = 0;
  double denseMs = 0;  ///< DenseLinear
  double nmMs = 0;     ///< NMLinear on the 2:4 weights (pruned if they did not fit)
  std::map<std::string, double> formatMs;  ///< compiled Y(b,o) = sum(i, X(b,i) * W(o,i)) per format
  /// The spread of each kernel's samples, and of the speed-ups dense / kernel taken round by
  /// round (their median is robust to a burst that slowed both kernels of a round).
  Spread dense, nm, nmSpeedup;
  std::map<std::string, Spread> formats, formatSpeedup;
  int rounds = 0;    ///< rounds of the measurement kept
  int attempts = 0;  ///< measurements made (more than one when the first was noisy)
  /// The kernels ("2:4", format names) whose speed-up is noisy even in the measurement kept.
  std::vector<std::string> noisy;
  std::string bestFormat;  ///< the fastest of formatMs
  double bestMs = 0;
  /// The exact plan: the fastest of dense, the best format, and 2:4 when W fits it as is.
  std::string exactChoice;
  double exactMs = 0;
};

/// What the audit found for one weight matrix (out_features × in_features).
struct LayerAudit {
  std::string name, origin, dtype;
  /// The value type of W and X in the timed layers: bf16 and f16 weights are timed in their own
  /// type (DenseLinear and NMLinear take both), everything else in f32. The compiled kernels of
  /// the formats always run in f32 (the compiler's value types are f32 and f64).
  DType timedType = DType::kF32;
  int64_t rows = 0, cols = 0, nonzeros = 0;
  double density = 0;
  bool fits24 = false;     ///< every group of 4 along a row holds at most 2 nonzeros
  nm::Impact prune24;      ///< what pruning to 2:4 costs (zero error when it fits)
  int64_t denseBytes = 0;  ///< rows × cols values of timedType
  int64_t nmBytes = 0;     ///< the 2:4 tensor (values of timedType + metadata)
  std::map<std::string, int64_t> formatBytes;  ///< each format of AuditOptions::formats (timedType)
  std::string smallestFormat;  ///< the smallest exact format: dense, a format, or 2:4 if it fits
  int64_t smallestBytes = 0;
  /// Relative Frobenius error of the outputs against DenseLinear's on the same random X (the
  /// largest batch): 2:4 (its pruning, as the network would see it) and the worst exact format
  /// (a correctness check: rounding only).
  double outputError24 = 0, outputErrorExact = 0;
  std::vector<LayerTiming> timings;  ///< one per AuditOptions::batches
};

/// The machine the times were measured on.
struct MachineInfo {
  std::string cpu;
  int threads = 0;
  std::string nmTarget;  ///< NMLinear's SIMD target and plan at batch 1
  /// The 1-minute load average when the audit started: times taken on a machine busier than
  /// its thread count are not to be trusted, and the report says so.
  double loadAverage = 0;
  /// The same when the audit ended (negative until then).
  double loadAverageAtEnd = -1;
};

MachineInfo describeMachine();
/// The 1-minute load average now (/proc/loadavg), or -1 where it cannot be read.
double loadAverageNow();

/// Audits one weight matrix (any 2-d float tensor; timed in LayerAudit::timedType): compiles
/// (once per format, cached) and times every kernel, interleaved round by round.
class LayerAuditor {
 public:
  explicit LayerAuditor(AuditOptions options);
  ~LayerAuditor();
  LayerAudit audit(const std::string& name, const Tensor& weights) const;

 private:
  struct Impl;
  Impl* impl_;
};

/// The text report: per-layer table, totals, the cost calculator and its assumptions.
std::string auditText(const std::vector<LayerAudit>& layers, const AuditOptions& options,
                      const MachineInfo& machine, const std::string& input);
/// The same as JSON (one object; docs/tools.md lists the fields).
std::string auditJson(const std::vector<LayerAudit>& layers, const AuditOptions& options,
                      const MachineInfo& machine, const std::string& input);

}  // namespace sparseflow::tools
