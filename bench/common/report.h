// Result rows of the benchmarks (our median, the peer's median on the same input, the physical
// floor from the machine's limits) and the one table that prints them with ratios and reproducers.
#pragma once

#include <cmath>
#include <iosfwd>
#include <string>
#include <vector>

namespace sparseflow::bench {

/// One benchmark case. Times are seconds; NaN means "not measured" (no peer, no floor).
struct ResultRow {
  std::string name;           ///< the case, as --benchmark_filter matches it
  int threads = 1;            ///< OpenMP threads our side ran with
  double seconds = NAN;       ///< our median
  std::string peer;           ///< "scipy 1.10.1"; empty when the case has no peer
  double peerSeconds = NAN;   ///< the peer's median on the same input, in the same run
  double floorSeconds = NAN;  ///< the physical limit: bytes / bandwidth or flops / peak
  std::string floorBasis;     ///< how the floor was computed, e.g. "360 MB at 38.9 GB/s"
  std::string note;           ///< anything else worth a column, e.g. "231 MB/s"
  std::string reproducer;     ///< one shell line that reruns this case and its peer

  /// peerSeconds / seconds: above 1 we are faster than the peer.
  double ratio() const { return peerSeconds / seconds; }
  /// floorSeconds / seconds: 1 would be running at the machine's limit.
  double fractionOfLimit() const { return floorSeconds / seconds; }
};

/// The median of `samples`; NaN when empty.
double median(std::vector<double> samples);

/// Sets the floor to the time of streaming `bytes` at `bandwidth` bytes/s.
void setBandwidthFloor(ResultRow& row, double bytes, double bandwidth);
/// Sets the floor to the time of `flops` at `peak` flop/s.
void setComputeFloor(ResultRow& row, double flops, double peak);

/// "12.3 ms", "1.20 s", "830 us".
std::string formatSeconds(double seconds);
/// "12.3 MB", "1.20 GB" (decimal units, as bandwidths are quoted).
std::string formatBytes(double bytes);
/// `word` quoted for a POSIX shell when it needs quoting.
std::string shellQuote(const std::string& word);

/// A Markdown table (case, threads, ours, peer, peer time, speedup, floor, fraction of the limit,
/// note), then one reproducer line per case.
void printTable(std::ostream& out, const std::vector<ResultRow>& rows);

/// Appends rows to `path` as tab-separated lines, so several benchmark programs of one run can
/// feed one table.
void appendRows(const std::string& path, const std::vector<ResultRow>& rows);
/// The rows appendRows wrote; throws std::runtime_error naming the path and line when malformed.
std::vector<ResultRow> readRows(const std::string& path);

}  // namespace sparseflow::bench
