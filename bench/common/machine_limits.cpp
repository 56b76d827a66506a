// Measures streaming read bandwidth and FP32 FMA peak with Highway kernels built for this CPU
// (-O3 -march=native), and saves/loads them as "key value" lines.
#include "common/machine_limits.h"

#include <hwy/highway.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "support/cache_info.h"

namespace sparseflow::bench {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Sums [p, p + n) with four independent vector accumulators so the loop is bound by loads, not
/// by the latency of one add chain. `n` is a multiple of 4 vectors.
uint64_t sumWords(const uint64_t* HWY_RESTRICT p, int64_t n) {
  const hn::ScalableTag<uint64_t> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  for (int64_t i = 0; i < n; i += 4 * lanes) {
    s0 = hn::Add(s0, hn::LoadU(d, p + i));
    s1 = hn::Add(s1, hn::LoadU(d, p + i + lanes));
    s2 = hn::Add(s2, hn::LoadU(d, p + i + 2 * lanes));
    s3 = hn::Add(s3, hn::LoadU(d, p + i + 3 * lanes));
  }
  const auto all = hn::Add(hn::Add(s0, s1), hn::Add(s2, s3));
  return hn::GetLane(hn::SumOfLanes(d, all));
}

/// Runs `iterations` steps of kChains independent FMA chains (a = a * m + c, which converges and
/// never reaches denormals) and returns their sum so the work cannot be dropped. Twelve chains
/// cover the FMA latency (4 cycles) times the issue rate (2 per cycle of 256-bit FMAs on Zen).
constexpr int kChains = 12;
float fmaChains(int64_t iterations, float seed) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 0.999999f);
  const auto c = hn::Set(d, 1e-6f);
  auto a0 = hn::Set(d, seed), a1 = hn::Set(d, seed + 1), a2 = hn::Set(d, seed + 2);
  auto a3 = hn::Set(d, seed + 3), a4 = hn::Set(d, seed + 4), a5 = hn::Set(d, seed + 5);
  auto a6 = hn::Set(d, seed + 6), a7 = hn::Set(d, seed + 7), a8 = hn::Set(d, seed + 8);
  auto a9 = hn::Set(d, seed + 9), a10 = hn::Set(d, seed + 10), a11 = hn::Set(d, seed + 11);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = hn::MulAdd(a0, m, c);
    a1 = hn::MulAdd(a1, m, c);
    a2 = hn::MulAdd(a2, m, c);
    a3 = hn::MulAdd(a3, m, c);
    a4 = hn::MulAdd(a4, m, c);
    a5 = hn::MulAdd(a5, m, c);
    a6 = hn::MulAdd(a6, m, c);
    a7 = hn::MulAdd(a7, m, c);
    a8 = hn::MulAdd(a8, m, c);
    a9 = hn::MulAdd(a9, m, c);
    a10 = hn::MulAdd(a10, m, c);
    a11 = hn::MulAdd(a11, m, c);
  }
  auto s =
      hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  s = hn::Add(s, hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)));
  return hn::GetLane(hn::SumOfLanes(d, s));
}

/// Where results go so the compiler keeps the loops that produce them.
volatile uint64_t gSinkWords = 0;
volatile float gSinkFloat = 0;

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

}  // namespace

double MachineLimits::readBandwidth(int runThreads) const {
  return runThreads <= 1 ? readBandwidth1 : readBandwidthAll;
}

double MachineLimits::fmaPeak(int runThreads) const {
  return runThreads <= 1 ? fmaPeak1 : fmaPeakAll;
}

double MachineLimits::l2ReadBandwidth(int runThreads) const {
  return runThreads <= 1 ? l2ReadBandwidth1 : l2ReadBandwidthAll;
}

std::string MachineLimits::toString() const {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s (%s), %d threads: streaming read %.1f GB/s (1 thread), %.1f GB/s (%d); "
                "L2 read %.0f GB/s (1 thread), %.0f GB/s (%d); "
                "FP32 FMA %.1f GFLOP/s (1 thread), %.1f GFLOP/s (%d)",
                cpu.c_str(), simd.c_str(), threads, readBandwidth1 / 1e9, readBandwidthAll / 1e9,
                threads, l2ReadBandwidth1 / 1e9, l2ReadBandwidthAll / 1e9, threads, fmaPeak1 / 1e9,
                fmaPeakAll / 1e9, threads);
  return line;
}

double measureReadBandwidth(int threads, int64_t bytes, int passes) {
  const hn::ScalableTag<uint64_t> d;
  // Every thread's part is a whole number of 4-vector steps.
  const int64_t step = 4 * static_cast<int64_t>(hn::Lanes(d)) * threads;
  const int64_t words = std::max<int64_t>(step, bytes / 8 / step * step);
  std::unique_ptr<uint64_t, decltype(&std::free)> buffer(
      static_cast<uint64_t*>(std::aligned_alloc(64, static_cast<size_t>(words) * 8)), &std::free);
  if (!buffer) throw std::runtime_error("measureReadBandwidth: out of memory");
  uint64_t* data = buffer.get();
  const int64_t part = words / threads;
#pragma omp parallel num_threads(threads)
  {  // first touch by the thread that later reads the part
    const int64_t begin = part * omp_get_thread_num();
    for (int64_t i = begin; i < begin + part; ++i) data[i] = static_cast<uint64_t>(i);
  }
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    uint64_t total = 0;
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += sumWords(data + part * omp_get_thread_num(), part);
    const double seconds = secondsSince(start);
    gSinkWords = gSinkWords + total;
    best = std::max(best, static_cast<double>(part * threads * 8) / seconds);
  }
  return best;
}

double measureCacheReadBandwidth(int threads, int64_t bytesPerThread, int repeats, int passes) {
  const hn::ScalableTag<uint64_t> d;
  const int64_t step = 4 * static_cast<int64_t>(hn::Lanes(d));
  const int64_t words = std::max<int64_t>(step, bytesPerThread / 8 / step * step);
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    uint64_t total = 0;
    double slowest = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total) reduction(max : slowest)
    {
      // Each thread's own buffer, touched and read once before the timed repeats.
      std::unique_ptr<uint64_t, decltype(&std::free)> buffer(
          static_cast<uint64_t*>(std::aligned_alloc(64, static_cast<size_t>(words) * 8)),
          &std::free);
      if (buffer) {
        for (int64_t i = 0; i < words; ++i) buffer.get()[i] = static_cast<uint64_t>(i);
        total += sumWords(buffer.get(), words);
#pragma omp barrier
        const auto start = Clock::now();
        for (int r = 0; r < repeats; ++r) {
          asm volatile("" ::: "memory");  // the buffer may have changed: read it again
          total += sumWords(buffer.get(), words);
        }
        slowest = secondsSince(start);
      }
    }
    gSinkWords = gSinkWords + total;
    if (slowest > 0) {
      best = std::max(best, static_cast<double>(words) * 8 * repeats * threads / slowest);
    }
  }
  return best;
}

double measureFmaPeak(int threads, double seconds) {
  const hn::ScalableTag<float> d;
  const double flopsPerIteration = 2.0 * kChains * static_cast<double>(hn::Lanes(d));
  // Calibrate on one thread: iterations that take about `seconds`.
  int64_t iterations = 1 << 16;
  for (;;) {
    const auto start = Clock::now();
    gSinkFloat = fmaChains(iterations, 1.0f);
    const double took = secondsSince(start);
    if (took > seconds / 4 || iterations > (int64_t{1} << 40)) {
      iterations = static_cast<int64_t>(static_cast<double>(iterations) * seconds / took) + 1;
      break;
    }
    iterations *= 4;
  }
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    float total = 0;
    const auto start = Clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += fmaChains(iterations, static_cast<float>(omp_get_thread_num()));
    const double took = secondsSince(start);
    gSinkFloat = total;
    best = std::max(best, flopsPerIteration * static_cast<double>(iterations) * threads / took);
  }
  return best;
}

MachineLimits measureMachineLimits(const LimitsOptions& options) {
  MachineLimits limits;
  limits.cpu = cpuModel();
  limits.simd = hwy::TargetName(HWY_STATIC_TARGET);
  limits.threads = omp_get_max_threads();
  limits.readBandwidthAll =
      measureReadBandwidth(limits.threads, options.bandwidthBytes, options.bandwidthPasses);
  limits.readBandwidth1 = measureReadBandwidth(1, options.bandwidthBytes, options.bandwidthPasses);
  // Half the L2 per thread (the rest holds what the OS and the loop touch).
  const int64_t l2Bytes = std::max<int64_t>(support::cacheSizes().l2 / 2, 64 << 10);
  limits.l2ReadBandwidthAll = measureCacheReadBandwidth(limits.threads, l2Bytes, 200, 5);
  limits.l2ReadBandwidth1 = measureCacheReadBandwidth(1, l2Bytes, 200, 5);
  limits.fmaPeak1 = measureFmaPeak(1, options.fmaSeconds);
  limits.fmaPeakAll = measureFmaPeak(limits.threads, options.fmaSeconds);
  return limits;
}

void saveLimits(const std::string& path, const MachineLimits& limits) {
  std::ofstream out(path);
  out.precision(17);
  out << "cpu " << limits.cpu << "\n"
      << "simd " << limits.simd << "\n"
      << "threads " << limits.threads << "\n"
      << "read_bandwidth_1 " << limits.readBandwidth1 << "\n"
      << "read_bandwidth_all " << limits.readBandwidthAll << "\n"
      << "fma_peak_1 " << limits.fmaPeak1 << "\n"
      << "fma_peak_all " << limits.fmaPeakAll << "\n"
      << "l2_read_bandwidth_1 " << limits.l2ReadBandwidth1 << "\n"
      << "l2_read_bandwidth_all " << limits.l2ReadBandwidthAll << "\n";
  if (!out) throw std::runtime_error(path + ": cannot write the machine limits");
}

MachineLimits loadLimits(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the machine limits");
  std::map<std::string, std::string> fields;
  std::string line;
  while (std::getline(in, line)) {
    auto space = line.find(' ');
    if (space != std::string::npos) fields[line.substr(0, space)] = line.substr(space + 1);
  }
  auto number = [&](const char* key) {
    auto it = fields.find(key);
    if (it == fields.end()) throw std::runtime_error(path + ": no '" + key + "' line");
    return std::stod(it->second);
  };
  MachineLimits limits;
  limits.cpu = fields.count("cpu") ? fields["cpu"] : "unknown CPU";
  limits.simd = fields.count("simd") ? fields["simd"] : "unknown SIMD";
  limits.threads = static_cast<int>(number("threads"));
  limits.readBandwidth1 = number("read_bandwidth_1");
  limits.readBandwidthAll = number("read_bandwidth_all");
  limits.fmaPeak1 = number("fma_peak_1");
  limits.fmaPeakAll = number("fma_peak_all");
  // Older limits files have no L2 lines: 0 (not measured).
  if (fields.count("l2_read_bandwidth_1")) limits.l2ReadBandwidth1 = number("l2_read_bandwidth_1");
  if (fields.count("l2_read_bandwidth_all")) {
    limits.l2ReadBandwidthAll = number("l2_read_bandwidth_all");
  }
  return limits;
}

}  // namespace sparseflow::bench
