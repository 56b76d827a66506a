// `sparseflow benchmark`'s outputs: the table on stdout, --json and --csv, and --plot (a PNG that
// plot_speedups.py draws with matplotlib); every file is written whole or not at all.
#pragma once

#include <cmath>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark_run.h"

namespace sparseflow::tools::benchmark {

/// The geometric mean of our speed-up over one peer on one kernel and format, over the cases both
/// ran and got right (NaN, 0 cases when there are none).
struct Geomean {
  std::string kernel, format, peer;
  double speedup = NAN;
  int cases = 0;
};
std::vector<Geomean> geomeans(const Results& r);

/// The table: one row per input, kernel and format with our median, GFLOP/s, GB/s, the fraction of
/// the measured bandwidth, each peer's time and our speed-up over it; then the geometric means,
/// and what the peers could not do.
void printTable(std::ostream& out, const Results& r);
/// Everything measured, for machines (docs/tools.md lists the fields).
std::string toJson(const Results& r);
/// One line per case: the table's columns, three per peer (status, seconds, speed-up).
std::string toCsv(const Results& r);

/// Output files staged beside their targets and renamed into place together by commit(); what was
/// not committed is removed when this is destroyed, so a run that fails leaves no partial file.
class StagedOutputs {
 public:
  StagedOutputs() = default;
  ~StagedOutputs();
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;

  /// A temporary path in `target`'s folder that commit() renames to `target`.
  std::string stage(const std::string& target);
  /// Stages `text` for `target`; returns the temporary path it wrote.
  std::string write(const std::string& target, const std::string& text);
  /// Renames every staged file to its target.
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> staged_;  ///< (temporary, target)
};

/// Throws sparseflow::Error naming `option` when `path` cannot be an output file: its folder does
/// not exist, or it is a folder.
void checkOutputPath(const std::string& option, const std::string& path);

}  // namespace sparseflow::tools::benchmark
