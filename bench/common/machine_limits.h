// This machine's physical limits (streaming read bandwidth from memory and from L2, FP32 FMA
// peak), measured once per benchmark run so that every result can be printed as a fraction of
// what the hardware allows.
#pragma once

#include <cstdint>
#include <string>

namespace sparseflow::bench {

/// Limits in SI units (bytes/s, flop/s). "all" means every OpenMP thread (omp_get_max_threads()).
struct MachineLimits {
  std::string cpu;              ///< model name from /proc/cpuinfo
  std::string simd;             ///< the instruction set the kernels ran with, e.g. "AVX2"
  int threads = 1;              ///< threads behind the "all" numbers
  double readBandwidth1 = 0;    ///< streaming read, one thread, bytes/s
  double readBandwidthAll = 0;  ///< streaming read, all threads, bytes/s
  double fmaPeak1 = 0;          ///< FP32 fused multiply-add, one thread, flop/s (an FMA is 2 flops)
  double fmaPeakAll = 0;        ///< FP32 FMA, all threads, flop/s
  /// Reads of a buffer of half the L2 (per thread) that stays there, bytes/s: what kernels that
  /// re-read an operand from L2 (SpMM's rows of B) can stream into L1. 0 when not measured (a
  /// limits file of an older bench_limits).
  double l2ReadBandwidth1 = 0;
  double l2ReadBandwidthAll = 0;

  /// The bandwidth for a run on `runThreads` threads (1 → one-thread figure, else all-thread).
  double readBandwidth(int runThreads) const;
  /// The FP32 FMA peak for `runThreads` threads.
  double fmaPeak(int runThreads) const;
  /// The L2 read bandwidth for `runThreads` threads (0: not measured).
  double l2ReadBandwidth(int runThreads) const;
  /// "AMD EPYC (AVX2), 2 threads: streaming read 19.1 GB/s (1 thread), 38.9 GB/s (2); FP32 FMA
  /// 111 GFLOP/s (1 thread), 222 GFLOP/s (2)".
  std::string toString() const;
};

struct LimitsOptions {
  int64_t bandwidthBytes = int64_t{1} << 30;  ///< buffer size: far larger than the last-level cache
  int bandwidthPasses = 5;                    ///< the best pass counts
  double fmaSeconds = 0.1;                    ///< length of one FMA measurement; best of 3
};

/// Streaming read bandwidth (bytes/s) of `threads` threads over a buffer of `bytes`, best of
/// `passes`; each thread reads the part it first touched, so pages stay local.
double measureReadBandwidth(int threads, int64_t bytes, int passes);
/// Read bandwidth (bytes/s) of `threads` threads each summing a buffer of `bytesPerThread` of its
/// own (sized to stay in L2) `repeats` times after a first warm pass, best of `passes`.
double measureCacheReadBandwidth(int threads, int64_t bytesPerThread, int repeats, int passes);
/// FP32 FMA throughput (flop/s) of `threads` threads, each running a register-blocked loop of
/// independent accumulators for about `seconds`.
double measureFmaPeak(int threads, double seconds);
/// All four figures, with `threads` = omp_get_max_threads().
MachineLimits measureMachineLimits(const LimitsOptions& options = {});

/// Writes the limits as "key value" lines, so later programs of the same run can reuse them.
void saveLimits(const std::string& path, const MachineLimits& limits);
/// Reads what saveLimits wrote; throws std::runtime_error naming the path on a bad file.
MachineLimits loadLimits(const std::string& path);

}  // namespace sparseflow::bench
