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
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/dense_linear.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm_linear.h"

namespace sparseflow::tools {
namespace {

/// The linear layer as index notation: Y = X · Wᵀ with W stored out × in.
constexpr const char* kLinear = "Y(b,o) = sum(i, X(b,i) * W(o,i))";

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The median over `runs` runs of the time per call of `call`, each run repeating the call until
/// it lasts `minRunMs` (so that short layers are not timed at the clock's resolution).
double medianMs(const std::function<void()>& call, int runs, double minRunMs) {
  call();  // warm caches, pages and the JIT-loaded code
  auto start = Clock::now();
  call();
  const double once = std::max(msSince(start), 1e-6);
  const int repeat = static_cast<int>(std::clamp(std::ceil(minRunMs / once), 1.0, 10000.0));
  std::vector<double> samples;
  for (int r = 0; r < runs; ++r) {
    start = Clock::now();
    for (int i = 0; i < repeat; ++i) call();
    samples.push_back(msSince(start) / repeat);
  }
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

Tensor denseMatrix(int64_t rows, int64_t cols, const std::vector<double>& values) {
  return fromDense({rows, cols}, values.data(), Format::parse("dense", 2), DType::kF32);
}

Tensor zerosMatrix(int64_t rows, int64_t cols) {
  Format dense = Format::parse("dense", 2);
  return Tensor({rows, cols}, DType::kF32, dense, std::vector<LevelStorage>(2),
                Buffer::zeros(DType::kF32, rows * cols));
}

/// ||a - b||_F / ||b||_F over two f32 arrays of n values.
double relativeError(const float* a, const float* b, int64_t n) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    diff += d * d;
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace

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
  std::ifstream loadavg("/proc/loadavg");
  loadavg >> m.loadAverage;
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
  a.rows = weights.shape()[0];
  a.cols = weights.shape()[1];
  // Everything runs in f32, from the dense matrix.
  const std::vector<double> values = toDense(weights);
  const Tensor dense = denseMatrix(a.rows, a.cols, values);
  for (double v : values) a.nonzeros += v != 0;
  const int64_t total = a.rows * a.cols;
  a.density = total ? static_cast<double>(a.nonzeros) / static_cast<double>(total) : 0;
  a.denseBytes = total * 4;

  a.fits24 = nm::isNM(dense, {2, 4});
  nm::Sparsified nm24 = nm::sparsify(dense, {2, 4});
  a.prune24 = nm24.impact;
  a.nmBytes = nm24.compressed.storageBytes();
  a.smallestFormat = "dense";
  a.smallestBytes = a.denseBytes;
  if (a.fits24 && a.nmBytes < a.smallestBytes)
    a.smallestFormat = "2:4", a.smallestBytes = a.nmBytes;
  std::map<std::string, Tensor> stored;
  for (const std::string& f : options.formats) {
    stored.emplace(f, convert(dense, f));
    a.formatBytes[f] = stored.at(f).storageBytes();
    if (a.formatBytes[f] < a.smallestBytes)
      a.smallestFormat = f, a.smallestBytes = a.formatBytes[f];
  }

  const DenseLinear denseLayer(dense, {}, Epilogue{});
  const NMLinear nmLayer(nm24.compressed, {}, Epilogue{});
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (size_t bi = 0; bi < options.batches.size(); ++bi) {
    const int64_t batch = options.batches[bi];
    std::vector<double> xs(static_cast<size_t>(batch * a.cols));
    for (double& v : xs) v = uniform(rng);
    const Tensor x = denseMatrix(batch, a.cols, xs);
    const float* xp = x.values().as<float>();
    LayerTiming t;
    t.batch = batch;
    std::vector<float> yDense(static_cast<size_t>(batch * a.rows));
    std::vector<float> yNM(yDense.size());
    t.denseMs = medianMs([&] { denseLayer.forward(xp, DType::kF32, batch, yDense.data()); },
                         options.runs, options.minRunMs);
    t.nmMs = medianMs([&] { nmLayer.forward(xp, DType::kF32, batch, yNM.data()); }, options.runs,
                      options.minRunMs);
    const bool last = bi + 1 == options.batches.size();
    if (last) a.outputError24 = relativeError(yNM.data(), yDense.data(), batch * a.rows);
    t.bestMs = -1;
    for (const std::string& f : options.formats) {
      const Kernel& k = impl_->kernel(f);
      Tensor y = zerosMatrix(batch, a.rows);
      const std::map<std::string, const Tensor*> inputs = {{"X", &x}, {"W", &stored.at(f)}};
      const double ms = medianMs([&] { k.run(inputs, y); }, options.runs, options.minRunMs);
      t.formatMs[f] = ms;
      if (t.bestMs < 0 || ms < t.bestMs) t.bestFormat = f, t.bestMs = ms;
      if (last) {
        a.outputErrorExact =
            std::max(a.outputErrorExact,
                     relativeError(y.values().as<float>(), yDense.data(), batch * a.rows));
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
