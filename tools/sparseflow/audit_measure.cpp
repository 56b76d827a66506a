// LayerAuditor: sizes, 2:4 fit and pruning cost, and the measured times of one weight matrix as
// a linear layer (DenseLinear, NMLinear, and compiled kernels for the unstructured formats).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>

#include "sparseflow/audit.h"
#include "sparseflow/audit_stats.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/dense_linear.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm_linear.h"
#include "sparseflow/quick_timing.h"

namespace sparseflow::tools {
namespace {

/// The linear layer as index notation: Y = X · Wᵀ with W stored out × in.
constexpr const char* kLinear = "Y(b,o) = sum(i, X(b,i) * W(o,i))";

using Clock = std::chrono::steady_clock;

/// One kernel of a layer being timed: the call, how often a run repeats it, and its samples (ms
/// per call, one per round).
struct Timed {
  Timed(std::string n, std::function<void()> c) : name(std::move(n)), call(std::move(c)) {}
  std::string name;
  std::function<void()> call;
  int repeat = 1;
  std::vector<double> samples;
};

/// Times every kernel of `kernels` in rounds: each round runs each kernel once (a run repeats the
/// call until it lasts `minRunMs`), starting with a different kernel each round, so that a burst
/// of load lands on the kernels being compared alike. Stops when every kernel's samples satisfy
/// `rule` (enough rounds, enough time, a stable median). Returns the number of rounds.
int timeInterleaved(std::vector<Timed>& kernels, double minRunMs, const StopRule& rule) {
  for (Timed& k : kernels) {
    k.samples.clear();
    k.call();  // warm caches, pages and the JIT-loaded code
    const auto start = Clock::now();
    k.call();
    const double once = std::max(msSince(start), 1e-6);
    k.repeat = static_cast<int>(std::clamp(std::ceil(minRunMs / once), 1.0, 10000.0));
  }
  int rounds = 0;
  while (true) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      Timed& k = kernels[(i + static_cast<size_t>(rounds)) % kernels.size()];
      const auto start = Clock::now();
      for (int r = 0; r < k.repeat; ++r) k.call();
      k.samples.push_back(msSince(start) / k.repeat);
    }
    ++rounds;
    bool enough = true;
    for (const Timed& k : kernels) enough = enough && enoughRounds(k.samples, rule);
    if (enough) return rounds;
  }
}

/// The noisiest speed-up among the timing's cells (relative spread of the paired ratios).
double worstSpread(const LayerTiming& t) {
  double worst = t.nmSpeedup.relative();
  for (const auto& [f, s] : t.formatSpeedup) worst = std::max(worst, s.relative());
  return worst;
}

Tensor denseMatrix(int64_t rows, int64_t cols, const std::vector<double>& values,
                   DType type = DType::kF32) {
  return fromDense({rows, cols}, values.data(), Format::parse("dense", 2), type);
}

Tensor zerosMatrix(int64_t rows, int64_t cols, DType type = DType::kF32) {
  Format dense = Format::parse("dense", 2);
  return Tensor({rows, cols}, type, dense, std::vector<LevelStorage>(2),
                Buffer::zeros(type, rows * cols));
}

/// ||a - b||_F / ||b||_F over two arrays of n values of `type` (f32, bf16 or f16).
double relativeError(const Buffer& a, const Buffer& b, int64_t n) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = a.value(i), y = b.value(i);
    diff += (x - y) * (x - y);
    norm += y * y;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// The type layers of weights of `type` are timed in: bf16 and f16 as they are, else f32.
DType timedTypeOf(DType type) {
  return type == DType::kBF16 || type == DType::kF16 ? type : DType::kF32;
}

}  // namespace

double loadAverageNow() {
  std::ifstream loadavg("/proc/loadavg");
  double load = -1;
  if (!(loadavg >> load)) return -1;
  return load;
}

MachineInfo describeMachine() {
  MachineInfo m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      m.cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (m.cpu.empty()) m.cpu = "unknown CPU";
  m.threads = omp_get_max_threads();
  m.loadAverage = loadAverageNow();
  // A 2:4 layer of a size every target handles says which SIMD target runs.
  std::vector<double> w(8 * 8, 0.0);
  for (int r = 0; r < 8; ++r) w[static_cast<size_t>(r * 8 + r % 4)] = 1;
  NMLinear probe(convert(denseMatrix(8, 8, w), "2:4"), {}, Epilogue{});
  m.nmTarget = probe.describe(1);
  return m;
}

struct LayerAuditor::Impl {
  AuditOptions options;
  mutable std::mutex mutex;
  mutable std::map<std::string, Kernel> kernels;

  const Kernel& kernel(const std::string& format) const {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = kernels.find(format);
    if (found != kernels.end()) return found->second;
    KernelOptions ko;
    ko.formats = {{"W", format}};
    return kernels.emplace(format, Kernel::compile(kLinear, ko)).first->second;
  }
};

LayerAuditor::LayerAuditor(AuditOptions options) : impl_(new Impl{std::move(options), {}, {}}) {}
LayerAuditor::~LayerAuditor() {
  delete impl_;
}

LayerAudit LayerAuditor::audit(const std::string& name, const Tensor& weights) const {
  const AuditOptions& options = impl_->options;
  if (weights.rank() != 2) {
    throw Error(ErrorCode::kInvalidArgument, "tensor '" + name + "' is not a matrix");
  }
  LayerAudit a;
  a.name = name;
  a.dtype = dtypeName(weights.dtype());
  a.timedType = timedTypeOf(weights.dtype());
  a.rows = weights.shape()[0];
  a.cols = weights.shape()[1];
  // The layers run in the weights' own type (bf16, f16) or f32; the compiled kernels in f32.
  const std::vector<double> values = toDense(weights);
  const Tensor dense = denseMatrix(a.rows, a.cols, values, a.timedType);
  const Tensor dense32 = a.timedType == DType::kF32 ? dense : denseMatrix(a.rows, a.cols, values);
  for (double v : values) a.nonzeros += v != 0;
  const int64_t total = a.rows * a.cols;
  a.density = total ? static_cast<double>(a.nonzeros) / static_cast<double>(total) : 0;
  a.denseBytes = dense.storageBytes();

  a.fits24 = nm::isNM(dense, {2, 4});
  nm::Sparsified nm24 = nm::sparsify(dense, {2, 4});
  a.prune24 = nm24.impact;
  a.nmBytes = nm24.compressed.storageBytes();
  a.smallestFormat = "dense";
  a.smallestBytes = a.denseBytes;
  if (a.fits24 && a.nmBytes < a.smallestBytes)
    a.smallestFormat = "2:4", a.smallestBytes = a.nmBytes;
  std::map<std::string, Tensor> stored;  // f32, for the compiled kernels
  for (const std::string& f : options.formats) {
    stored.emplace(f, convert(dense32, f));
    a.formatBytes[f] =
        a.timedType == DType::kF32 ? stored.at(f).storageBytes() : convert(dense, f).storageBytes();
    if (a.formatBytes[f] < a.smallestBytes)
      a.smallestFormat = f, a.smallestBytes = a.formatBytes[f];
  }

  const DenseLinear denseLayer(dense, {}, Epilogue{});
  const NMLinear nmLayer(nm24.compressed, {}, Epilogue{});
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  StopRule rule;
  rule.minRounds = options.runs;
  rule.maxRounds = 3 * options.runs;
  rule.minTotalMs = options.minTimeMs;
  for (size_t bi = 0; bi < options.batches.size(); ++bi) {
    const int64_t batch = options.batches[bi];
    std::vector<double> xs(static_cast<size_t>(batch * a.cols));
    for (double& v : xs) v = uniform(rng);
    const Tensor x = denseMatrix(batch, a.cols, xs, a.timedType);
    const Tensor x32 = a.timedType == DType::kF32 ? x : denseMatrix(batch, a.cols, xs);
    const void* xp = x.values().data();
    Tensor yDense = zerosMatrix(batch, a.rows, a.timedType);
    Tensor yNM = zerosMatrix(batch, a.rows, a.timedType);
    std::map<std::string, Tensor> yFormats;
    std::vector<Timed> kernels;
    kernels.emplace_back("dense", [&] {
      denseLayer.forward(xp, a.timedType, batch, yDense.mutableValues().data());
    });
    kernels.emplace_back(
        "2:4", [&] { nmLayer.forward(xp, a.timedType, batch, yNM.mutableValues().data()); });
    for (const std::string& f : options.formats) {
      const Kernel& k = impl_->kernel(f);
      Tensor& y = yFormats.emplace(f, zerosMatrix(batch, a.rows)).first->second;
      kernels.emplace_back(f, [&k, &x32, &y, w = &stored.at(f)] {
        k.run({{"X", &x32}, {"W", w}}, y);
      });
    }
    // Measured until no speed-up is noisy, or `attempts` times; the least noisy one is kept.
    LayerTiming best;
    int made = 0;
    while (made < std::max(options.attempts, 1)) {
      ++made;
      LayerTiming t;
      t.batch = batch;
      t.rounds = timeInterleaved(kernels, options.minRunMs, rule);
      const std::vector<double>& denseSamples = kernels[0].samples;
      t.dense = summarize(denseSamples);
      t.nm = summarize(kernels[1].samples);
      t.nmSpeedup = summarize(pairedRatios(denseSamples, kernels[1].samples));
      for (size_t k = 2; k < kernels.size(); ++k) {
        t.formats[kernels[k].name] = summarize(kernels[k].samples);
        t.formatSpeedup[kernels[k].name] =
            summarize(pairedRatios(denseSamples, kernels[k].samples));
      }
      if (made == 1 || worstSpread(t) < worstSpread(best)) best = std::move(t);
      if (worstSpread(best) <= kNoisySpread) break;
    }
    LayerTiming& t = best;
    t.attempts = made;
    t.denseMs = t.dense.median;
    t.nmMs = t.nm.median;
    if (isNoisy(t.nmSpeedup)) t.noisy.push_back("2:4");
    const bool last = bi + 1 == options.batches.size();
    if (last) {
      a.outputError24 = relativeError(yNM.values(), yDense.values(), batch * a.rows);
    }
    t.bestMs = -1;
    for (const std::string& f : options.formats) {
      const double ms = t.formats.at(f).median;
      t.formatMs[f] = ms;
      if (isNoisy(t.formatSpeedup.at(f))) t.noisy.push_back(f);
      if (t.bestMs < 0 || ms < t.bestMs) t.bestFormat = f, t.bestMs = ms;
    }
    if (last && !options.formats.empty()) {
      // The exact formats against dense in f32 (a correctness check: rounding only).
      const DenseLinear reference32(dense32, {}, Epilogue{});
      Tensor y32 = zerosMatrix(batch, a.rows);
      reference32.forward(x32.values().data(), DType::kF32, batch, y32.mutableValues().data());
      for (const auto& [f, y] : yFormats) {
        a.outputErrorExact =
            std::max(a.outputErrorExact, relativeError(y.values(), y32.values(), batch * a.rows));
      }
    }
    t.exactChoice = "dense";
    t.exactMs = t.denseMs;
    if (t.bestMs >= 0 && t.bestMs < t.exactMs) t.exactChoice = t.bestFormat, t.exactMs = t.bestMs;
    if (a.fits24 && t.nmMs < t.exactMs) t.exactChoice = "2:4", t.exactMs = t.nmMs;
    a.timings.push_back(std::move(t));
  }
  return a;
}

}  // namespace sparseflow::tools
